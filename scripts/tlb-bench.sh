#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The TLB benchmark on boards with SPE or TRBE (docs/tlb-benchmark.md). The
# work, its options and exit statuses: scripts/perf_aux/tlb_bench.py.
#
# Usage: scripts/tlb-bench.sh -p before|after|compare [OPTIONS] [-- WORKLOAD...]

PYTHONPATH="$(dirname "$0")" exec python3 -m perf_aux.tlb_bench "$@"
