#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The main job (make run): for one KERNEL and TARGET, install what is
# missing, prepare the kernel tree, build it once, run the KUnit suites at
# boot and the perf_aux kselftests from an initramfs under QEMU, then write
# out/results/<kernel>-<target>/<suite>.ktap and out/report.md.
#
# Environment: TARGET (arm64-4k), KERNEL (reference), VARIANT (default),
# KERNEL_SRC (a tree of your own instead of Debian's), KERNEL_ARGS (extra
# boot parameters).
# Exit: 0 when nothing failed.

set -euo pipefail
. "$(dirname "$0")/lib.sh"

main()
{
	local target=${TARGET:-arm64-4k} kernel=${KERNEL:-reference}
	local variant=${VARIANT:-default} name run res logs rc=0
	# shellcheck disable=SC2206
	local -a kargs=(${KERNEL_ARGS:-})

	check_target "$target"
	check_variant "$variant"
	[ -n "${KERNEL_SRC:-}" ] || check_kernel "$kernel"
	name=$(kernel_name "$kernel")
	run=$(result_name "$name" "$target" "$variant")
	res="$PERF_AUX_OUT/results/$run"
	logs="$PERF_AUX_OUT/logs"
	rm -rf "$res"
	mkdir -p "$res" "$logs"

	stage "install packages" "$PERF_AUX_ROOT/scripts/deps.sh" "$target"
	stage "kernel tree $name" "$PERF_AUX_ROOT/scripts/kernel-tree.sh" "$name"
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
