#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The project's tests (make check):
#  1. host unit tests of the glue (scripts/tests);
#  2. the main job on the reference kernel: every suite passes;
#  3. the main job on stock Debian 6.12 (the negative control), with the
#     outcome each suite must give there;
#  4. each kernel mutant under scripts/mutants/: the suite written for the
#     rule it breaks must fail.
# Each expectation is one check; the last line counts them.
#
# Environment: TARGET (arm64-4k).

set -uo pipefail
. "$(dirname "$0")/lib.sh"

passed=0
failed=0
skipped=0
RESULTS="python3 $PERF_AUX_ROOT/scripts/results.py"

verdict()
{
	local rc=$1 what=$2

	if [ "$rc" -eq 0 ]; then
		passed=$((passed + 1))
		echo "ok - $what"
	else
		failed=$((failed + 1))
		echo "not ok - $what"
	fi
}

# expect DIR SUITE ARGS... : a results.py expectation as one check.
expect()
{
	local dir=$1 suite=$2 line rc=0

	shift 2
	line=$($RESULTS expect "$dir" "$suite" "$@") || rc=$?
	verdict "$rc" "$(basename "$dir"): $line"
}

host_tests()
{
	local out line

	out=$(cd "$PERF_AUX_ROOT/scripts" && python3 -m unittest discover \
		-s tests -p 'test_*.py' -v 2>&1)
	echo "$out" | tail -3
	while read -r line; do
		case "$line" in
		*" ... ok") verdict 0 "host: ${line% ... ok}" ;;
		*" ... skipped"*) skipped=$((skipped + 1)); echo "ok - host: $line # SKIP" ;;
		*" ... FAIL" | *" ... ERROR") verdict 1 "host: $line" ;;
		esac
	done <<< "$out"
}

# run_kernel KERNEL: the main job, then what every suite must give on it.
run_kernel()
{
	local kernel=$1 res="$PERF_AUX_OUT/results/$1-$TARGET" rc=0

	KERNEL=$kernel TARGET=$TARGET KERNEL_SRC= "$PERF_AUX_ROOT/scripts/run.sh" || rc=$?
	# The AUX allocator change is in both: 6.12.113 brought it to Debian.
	expect "$res" perf_aux_alloc --min-passed 30 --no-failure
}

# run_mutants DIR SUITE: every patch in DIR makes SUITE fail.
run_mutants()
{
	local dir=$1 suite=$2 m name res log rc

	for m in "$dir"/*.patch; do
		name=$(basename "$m" .patch)
		res="$PERF_AUX_OUT/mutants/$name-$TARGET"
		log="$PERF_AUX_OUT/logs/mutant-$name-$TARGET-kunit.log"
		rm -rf "$res"
		echo "mutant $name: $(sed -n 1p "$m")"
		if ! "$PERF_AUX_ROOT/scripts/kernel-tree.sh" mutant "$m" > "$log.tree" 2>&1; then
			cat "$log.tree"
			verdict 1 "mutant $name applies"
			continue
		fi
		rc=0
		"$PERF_AUX_ROOT/scripts/kunit.sh" mutant "$TARGET" "$log" || rc=$?
		if [ "$rc" -gt 1 ]; then
			verdict 1 "mutant $name builds"
			continue
		fi
		$RESULTS kunit "$log" "$res"
		expect "$res" "$suite" --failure
	done
}

main()
{
	TARGET=${TARGET:-arm64-4k}
	check_target "$TARGET"
	mkdir -p "$PERF_AUX_OUT/logs"

	stage "install packages" "$PERF_AUX_ROOT/scripts/deps.sh" "$TARGET" || exit 2
	# The host tests parse KTAP with the kernel tree's kunit_parser.
	stage "kernel tree stock" "$PERF_AUX_ROOT/scripts/kernel-tree.sh" stock || exit 2
	stage "host tests" host_tests
	stage "reference kernel" run_kernel reference
	stage "stock kernel" run_kernel stock
	stage "AUX allocator mutants" run_mutants \
		"$PERF_AUX_ROOT/scripts/mutants/aux_alloc" perf_aux_alloc
	echo "$passed passed, $failed failed, $skipped skipped"
	[ "$failed" -eq 0 ]
}

main "$@"
