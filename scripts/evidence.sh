#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make evidence: the plain text (72 columns) a series author pastes into a
# cover letter or a Tested-by reply: the run of KERNEL (or of the
# KERNEL_SRC tree) beside the stock run of the same base, TARGET and
# VARIANT, from out/results.  Written to out/evidence-<run>.txt and shown.

set -euo pipefail
. "$(dirname "$0")/lib.sh"

target=${TARGET:-arm64-4k}
variant=${VARIANT:-default}
base=$(run_base)
run=$(result_name "$(kernel_name "${KERNEL:-reference}")" "$base" "$target" "$variant")
stock=$(result_name stock "$base" "$target" "$variant")
out=$PERF_AUX_OUT/evidence-$run.txt
python3 "$PERF_AUX_ROOT/scripts/results.py" evidence --out "$out" \
	"$PERF_AUX_OUT/results/$run" "$PERF_AUX_OUT/results/$stock"
cat "$out"
