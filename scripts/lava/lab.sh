#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A local LAVA lab on 127.0.0.1 (lava-server, lava-worker, PostgreSQL) and
# its selftest (make lab-selftest, the lava_lab stage of make
# check-full).  The work and its usage: scripts/perf_aux_lava/lab.py and
# selftest.py.
#
# Usage: scripts/lava/lab.sh start|status|stop|selftest [qemu]|submit RUN|JOB.yaml...

PYTHONPATH="$(dirname "$0")/.." exec /usr/bin/python3 -m perf_aux_lava lab "$@"
