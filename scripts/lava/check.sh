#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The LAVA checks, one "ok - lava: ..." / "not ok - lava: ..." line each
# (the lava_schema stage of make check, lava of make check-full):
# generated jobs, schemas and rejects, lava-run --validate, the FVP
# overlay, and lava-run of the QEMU jobs against the direct runs.  The
# work and its usage: scripts/perf_aux_lava/checks.py.
#
# Usage: scripts/lava/check.sh [--schema] [BUILD_DIR [RESULTS_DIR]]

PYTHONPATH="$(dirname "$0")/.." exec /usr/bin/python3 -m perf_aux_lava check "$@"
