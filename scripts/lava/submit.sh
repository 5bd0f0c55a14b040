#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make submit: the jobs of runs (or job files) submitted to a LAVA lab,
# waited for and collected into out/results/.  The work and its usage:
# scripts/perf_aux_lava/submit.py (Debian's python3, which lava-jobs'
# generate.py and perf_aux_results need: python3-yaml, python3-jinja2).
#
# Usage: scripts/lava/submit.sh [RUN|JOB.yaml]...
# Exit: 0 all Complete, no test failed; 1 a test failed; 2 nothing ran;
# 3 infrastructure error (a job Incomplete, Canceled or out of LAVA_WAIT).

PYTHONPATH="$(dirname "$0")/.." exec /usr/bin/python3 -m perf_aux_lava submit "$@"
