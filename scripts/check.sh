#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check and make check-full: the project's tests, one check per line
# ("ok - ..." or "not ok - ..."), the last line "N passed, N failed, N
# skipped"; everything printed also in out/logs/<tier>.log, and the
# tier's figures in out/measurements/<tier>.md.  The stages, tiers and
# environment: scripts/perf_aux/check.py.
#
# Usage: scripts/check.sh [--full] [STAGE...]

PYTHONPATH="$(dirname "$0")" exec python3 -m perf_aux.check "$@"
