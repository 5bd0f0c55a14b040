#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make series: the suite as the patch series it would be posted as, with a
# cover letter, in out/series/<base>/; --check (the series stage) checks it
# as a maintainer would.  The work, its checks and environment:
# scripts/perf_aux/series.py.
#
# Usage: scripts/series.sh [--check [--kernel-prefixes]]

PYTHONPATH="$(dirname "$0")" exec python3 -m perf_aux.series "$@"
