#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make soak [DURATION=600]: soak_test alone for DURATION seconds (at most
# an hour) on the sanitize kernel (KASAN, lockdep, DEBUG_VM, kmemleak, fault
# injection; four CPUs) of BASE, KERNEL: trace at the generators' highest rate on every CPU
# with wraps, map/unmap churn under fault injection.  Prints what the soak
# counted and the kernel's reports in the console; exit 1 on a failure or
# a report.  SOAK_SUMMARY_ONLY=1: the summary of the last soak, not run again.
#
# The work: scripts/perf_aux/soak.py.

PYTHONPATH="$(dirname "$0")" exec python3 -m perf_aux.soak "$@"
