#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make repeat: the flake hunt.  Runs the suite ROUNDS times on one boot
# (the kselftests; perf_aux.repeat= tells the initramfs) and on ROUNDS fresh
# boots (KUnit and the kselftests), then lists every case whose result is
# not the same in every round.  Same KERNEL/TARGET/VARIANT selectors as
# make run; the kernel must have been built by make run before.
#
# Usage: scripts/repeat.sh [ROUNDS]    (default 5)
# Exit: 0 when no case is flaky.

set -uo pipefail
. "$(dirname "$0")/lib.sh"

RESULTS="python3 $PERF_AUX_ROOT/scripts/results.py"

# split_rounds LOG DIR: the one-boot log cut at "PERF_AUX: round N" lines.
split_rounds()
{
	awk -v dir="$2" '
		{ sub(/\r$/, "") }	# the serial console ends lines with CR LF
		/^PERF_AUX: round [0-9]+/ { out = dir "/round" $3 ".log" }
		out { print > out }' "$1"
}

main()
{
	local rounds=${1:-5} target=${TARGET:-arm64-4k} kernel=${KERNEL:-reference}
	local variant=${VARIANT:-default} name run dir i rc=0
	# shellcheck disable=SC2206
	local -a kargs=(${KERNEL_ARGS:-})

	check_target "$target"
	check_variant "$variant"
	name=$(kernel_name "$kernel")
	run=$(result_name "$name" "$(run_base)" "$target" "$variant")
	dir="$PERF_AUX_OUT/repeat/$run"
	rm -rf "$dir"
	mkdir -p "$dir/logs"

	stage "one boot, $rounds rounds" "$PERF_AUX_ROOT/scripts/kselftest.sh" \
		"$name" "$target" "$variant" "$dir/logs/one-boot.log" \
		"${kargs[@]}" "perf_aux.repeat=$rounds" > /dev/null
	split_rounds "$dir/logs/one-boot.log" "$dir/logs"
	for i in $(seq "$rounds"); do
		$RESULTS kselftest "$dir/logs/round$i.log" "$dir/one-boot/$i"
	done
	for i in $(seq "$rounds"); do
		stage "fresh boot $i" "$PERF_AUX_ROOT/scripts/kunit.sh" "$name" \
			"$target" "$variant" "$dir/logs/kunit$i.log" \
			"${kargs[@]}" > /dev/null
		$RESULTS kunit "$dir/logs/kunit$i.log" "$dir/fresh/$i"
		"$PERF_AUX_ROOT/scripts/kselftest.sh" "$name" "$target" "$variant" \
			"$dir/logs/kselftest$i.log" "${kargs[@]}" > /dev/null
		$RESULTS kselftest "$dir/logs/kselftest$i.log" "$dir/fresh/$i"
	done
	echo "one boot:"
	$RESULTS flakes "$dir"/one-boot/* || rc=1
	echo "fresh boots:"
	$RESULTS flakes "$dir"/fresh/* || rc=1
	return "$rc"
}

main "$@"
