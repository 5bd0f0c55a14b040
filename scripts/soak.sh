#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make soak [DURATION=600]: soak_test alone for DURATION seconds (at most
# an hour) on the sanitize kernel (KASAN, lockdep, DEBUG_VM, kmemleak, fault
# injection; four CPUs) of BASE, KERNEL: trace at the generators' highest rate on every CPU
# with wraps, map/unmap churn under fault injection.  Prints what the soak
# counted and the kernel's reports in the console; exit 1 on a failure or
# a report.  SOAK_SUMMARY_ONLY=1: the summary of the last soak, not run again.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

export DURATION=${DURATION:-600} VARIANT=soak TARGET=arm64-4k
# soak_test's harness timeout bounds one soak (SOAK_MAX_SECONDS).
max=$(sed -n 's/^#define SOAK_MAX_SECONDS \([0-9]*\)$/\1/p' \
	"$PERF_AUX_ROOT/tools/testing/selftests/perf_aux/soak_test.c")
[ "$DURATION" -le "${max:-0}" ] ||
	die "DURATION=$DURATION: one soak is at most ${max:-?} s (soak_test's harness timeout)"
BASE=${BASE:-$(default_base)}
export BASE
[ "${SOAK_SUMMARY_ONLY:-0}" = 1 ] || "$PERF_AUX_ROOT/scripts/run.sh"
run=$(result_name "$(kernel_name "${KERNEL:-reference}")" "$(run_base)" arm64-4k soak)
log=$PERF_AUX_OUT/logs/$run-kselftest.log
sed -n 's/^#.*:\(soak: .*\)/\1/p' "$log"
reports=$(console_reports "$PERF_AUX_OUT/logs/$run-kunit.log" "$log")
echo "soak: $(echo -n "$reports" | grep -c . || true) kernel reports"
[ -z "$reports" ] || { echo "$reports" | head -20; exit 1; }
python3 "$PERF_AUX_ROOT/scripts/results.py" expect \
	"$PERF_AUX_OUT/results/$run" perf_aux.soak_test --min-passed 1 --no-failure
