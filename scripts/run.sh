#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The main job (make run): for one KERNEL and TARGET, install what is
# missing, prepare the kernel tree, build it once, run the KUnit suites at
# boot and the perf_aux kselftests from an initramfs under QEMU, then write
# out/results/<kernel>-<base>-<target>[-<variant>]/<suite>.ktap and
# out/report.md.
#
# Environment: BASE (7.3), TARGET (arm64-4k), KERNEL (reference), VARIANT (default),
# KERNEL_SRC (a tree of your own instead of Debian's), KERNEL_ARGS (extra
# boot parameters).
# Exit: 0 when nothing failed.

set -euo pipefail
. "$(dirname "$0")/lib.sh"

main()
{
	local target=${TARGET:-arm64-4k} kernel=${KERNEL:-reference}
	local variant=${VARIANT:-default} name run res logs base tree rc=0
	# shellcheck disable=SC2206
	local -a kargs=(${KERNEL_ARGS:-})

	check_target "$target"
	check_variant "$variant"
	[ -z "${SERIES:-}" ] || [ -z "${KERNEL_SRC:-}" ] ||
		die "SERIES and KERNEL_SRC: one or the other"
	if [ -z "${KERNEL_SRC:-}" ]; then
		check_kernel "$kernel"
		BASE=${BASE:-$(default_base)}
		check_base "$BASE"
		export BASE
	fi
	name=$(kernel_name "$kernel")
	base=$(run_base)
	run=$(result_name "$name" "$base" "$target" "$variant")
	res="$PERF_AUX_OUT/results/$run"
	logs="$PERF_AUX_OUT/logs"
	rm -rf "$res"
	mkdir -p "$res" "$logs"

	# shellcheck disable=SC2046
	stage "install packages" "$PERF_AUX_ROOT/scripts/deps.sh" "$target" \
		$([ -n "${KERNEL_SRC:-}" ] || echo "base-$base")
	stage "kernel tree $(tree_name "$name" "$base")" \
		"$PERF_AUX_ROOT/scripts/kernel-tree.sh" "$name"
	tree=$(tree_dir "$name")
	# What the run took the kernel to be, for the report.
	echo "source: $(cat "$tree/.perf_aux-source")" | tee "$res/source.txt"
	"$PERF_AUX_ROOT/scripts/kunit.sh" "$name" "$target" "$variant" \
		"$logs/$run-kunit.log" "${kargs[@]}" || rc=$?
	[ "$rc" -le 1 ] || die "kernel build failed, see $logs/$run-kunit.log.build"
	python3 "$PERF_AUX_ROOT/scripts/results.py" kunit \
		"$logs/$run-kunit.log" "$res"
	"$PERF_AUX_ROOT/scripts/kselftest.sh" "$name" "$target" "$variant" \
		"$logs/$run-kselftest.log" "${kargs[@]}"
	python3 "$PERF_AUX_ROOT/scripts/results.py" kselftest \
		"$logs/$run-kselftest.log" "$res"
	python3 "$PERF_AUX_ROOT/scripts/results.py" summary \
		"$res" --report "$PERF_AUX_OUT/report.md"
}

main "$@"
