#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The project's tests (make check):
#  1. host unit tests of the glue (scripts/tests);
#  2. the main job on the reference kernel, on every target and variant:
#     every suite passes;
#  3. the main job on stock Debian 6.12 (the negative control), with the
#     outcome each suite must give there;
#  4. each kernel mutant under scripts/mutants/: the suite written for the
#     rule it breaks must fail;
#  5. each mutant of the synthetic AUX PMU (scripts/mutants/test_aux_pmu):
#     the trace integrity or wrap kselftests must fail.
# Each expectation is one check; the last line counts them.

set -uo pipefail
. "$(dirname "$0")/lib.sh"

passed=0
failed=0
skipped=0
failures=()	# repeated at the end, where a CI log's tail shows them
RESULTS="python3 $PERF_AUX_ROOT/scripts/results.py"

verdict()
{
	local rc=$1 what=$2

	if [ "$rc" -eq 0 ]; then
		passed=$((passed + 1))
		echo "ok - $what"
	else
		failed=$((failed + 1))
		failures+=("$what")
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

# run_job KERNEL TARGET VARIANT: the main job; sets $res to its results.
run_job()
{
	KERNEL=$1 TARGET=$2 VARIANT=$3 KERNEL_SRC= KERNEL_ARGS= \
		"$PERF_AUX_ROOT/scripts/run.sh" || true
	res="$PERF_AUX_OUT/results/$(result_name "$1" "$2" "$3")"
}

# The reference kernel must pass every suite, on every target; its
# variants change what the granule suite expects, never whether it passes.
reference_run()
{
	run_job reference "$1" "$2"
	[ "$2" = default ] &&
		expect "$res" perf_aux_alloc --min-passed 30 --no-failure
	expect "$res" vmap_granule --min-passed 25 --no-failure
	expect "$res" perf_aux.map_test --min-passed 30 --no-failure
	# At 64K pages a PMD is 512 MiB: most pagesize buffers are more than
	# the 1 GiB guest can hold (KUnit covers the 64K granules).
	expect "$res" perf_aux.pagesize_test --no-failure \
		--min-passed "$([ "$1" = arm64-64k ] && echo 2 || echo 5)"
	trace_expectations "$1"
}

# Trace written through the AUX mapping arrives intact on every kernel,
# large mapping or not; SPE and TRBE are not there to test.
trace_expectations()
{
	# 64K: a PMD buffer is 512 MiB, more than the guest can spare.
	expect "$res" perf_aux.integrity_test --no-failure \
		--min-passed "$([ "$1" = arm64-64k ] && echo 12 || echo 20)"
	expect "$res" perf_aux.wrap_test --min-passed 6 --no-failure
	expect "$res" perf_aux.hw_trace_test --no-failure --min-skipped 2
}

reference_variants()
{
	local variant

	for variant in default strict nohugevmalloc ptdump hugetlb; do
		reference_run arm64-4k "$variant"
	done
}

# The trust run: the whole suite under KASAN, lockdep, DEBUG_VM and
# kmemleak passes, and none of them reports anything.
sanitize_run()
{
	local run=reference-arm64-4k-sanitize logs reports

	reference_run arm64-4k sanitize
	logs="$PERF_AUX_OUT/logs/$run"
	reports=$(cat "$logs-kunit.log" "$logs-kselftest.log" 2>/dev/null |
		grep -E 'BUG:|WARNING:|kmemleak: [1-9][0-9]* unreferenced' | sort -u)
	[ -z "$reports" ] || echo "$reports" | head -20
	grep -q 'PERF_AUX: kmemleak: 0 unreferenced objects' "$logs-kselftest.log" &&
		[ -z "$reports" ]
	verdict $? "$run: KASAN, lockdep, DEBUG_VM, kmemleak: $(echo -n "$reports" | grep -c .) reports"
}

# Targets other than arm64-4k come last: each is a kernel build of its own.
reference_targets()
{
	local target

	for target in $PERF_AUX_TARGETS; do
		[ "$target" = arm64-4k ] || reference_run "$target" default
	done
}

# Stock 6.12 has the AUX allocator change (6.12.113) but not large vmap:
# the granule suites say so by skipping, or by failing when strict.
stock_runs()
{
	local suite

	run_job stock arm64-4k default
	expect "$res" perf_aux_alloc --min-passed 30 --no-failure
	expect "$res" perf_aux.map_test --min-passed 30 --no-failure
	trace_expectations arm64-4k
	for suite in vmap_granule perf_aux.pagesize_test; do
		expect "$res" "$suite" --no-failure --min-skipped 1 \
			--skip-reason "vmap() maps base pages only"
	done
	run_job stock arm64-4k strict
	expect "$res" vmap_granule --failure
	expect "$res" perf_aux.pagesize_test --failure
}

# The peers, on the same mutant kernels: lib/test_vmalloc.c (what
# selftests/mm/test_vmalloc.sh loads) with test_vmalloc.sh's smoke
# parameters but one repeat instead of ten, at boot beside KUnit; and
# selftests/perf_events.  They never decide a check: results.py matrix
# counts their kills beside the suite's.
PEER_VMALLOC="test_vmalloc.test_loop_count=10000 test_vmalloc.test_repeat_count=1"
PEER_OFF="test_vmalloc.run_test_mask=0"
# sigtrap_threads and remove_on_exec need hardware breakpoints, which this
# QEMU kernel cannot open: they fail (by timeout, 2 minutes) on every kernel.
PEER_PERF_EVENTS="perf_aux.tests=perf_events:watermark_signal,perf_events:mmap"

# peer_selftests NAME VARIANT RES: selftests/perf_events on mutant NAME.
peer_selftests()
{
	local log="$PERF_AUX_OUT/logs/mutant-$1-arm64-4k-perf_events.log"

	KSELFTEST_TARGETS=perf_events "$PERF_AUX_ROOT/scripts/kselftest.sh" \
		mutant arm64-4k "$2" "$log" "$PEER_OFF" "$PEER_PERF_EVENTS" \
		> /dev/null 2>&1 || true
	$RESULTS kselftest "$log" "$3"
}

# The peers on the unmutated kernel: what they fail here kills nothing.
peer_baseline()
{
	local res="$PERF_AUX_OUT/mutants/baseline-arm64-4k"
	local log="$PERF_AUX_OUT/logs/mutant-baseline-arm64-4k-kunit.log"

	rm -rf "$res"
	# shellcheck disable=SC2086
	mutant_build "" strict "$log" $PEER_VMALLOC || return
	$RESULTS kunit "$log" "$res"
	$RESULTS peers "$log" "$res"
	peer_selftests baseline strict "$res"
	expect "$res" peer.test_vmalloc --min-passed 5 --failure
}

# mutant_build PATCH VARIANT LOG [KERNEL_ARG...]: applies PATCH to the
# mutant tree (none: the unmutated baseline), builds it and runs KUnit at
# boot (console in LOG).  Returns 0
# when the kernel built; a patch that does not apply or build is a check
# that failed.
mutant_build()
{
	local m=$1 variant=$2 log=$3 name=baseline rc=0

	shift 3
	if [ -n "$m" ]; then
		name=$(basename "$m" .patch)
		echo "mutant $name: $(sed -n 1p "$m")"
	fi
	if ! "$PERF_AUX_ROOT/scripts/kernel-tree.sh" mutant "$m" > "$log.tree" 2>&1; then
		cat "$log.tree"
		verdict 1 "mutant $name applies"
		return 1
	fi
	"$PERF_AUX_ROOT/scripts/kunit.sh" mutant arm64-4k "$variant" "$log" \
		"$@" > "$log.out" 2>&1 || rc=$?
	if [ "$rc" -gt 1 ]; then
		tail -20 "$log.out"
		verdict 1 "mutant $name builds"
		return 1
	fi
}

# run_mutants DIR SUITE VARIANT: every patch in DIR makes SUITE fail.
run_mutants()
{
	local dir=$1 suite=$2 variant=$3 m name res log

	for m in "$dir"/*.patch; do
		name=$(basename "$m" .patch)
		res="$PERF_AUX_OUT/mutants/$name-arm64-4k"
		log="$PERF_AUX_OUT/logs/mutant-$name-arm64-4k-kunit.log"
		rm -rf "$res"
		# shellcheck disable=SC2086
		mutant_build "$m" "$variant" "$log" $PEER_VMALLOC || continue
		$RESULTS kunit "$log" "$res"
		$RESULTS peers "$log" "$res"
		peer_selftests "$name" "$variant" "$res"
		expect "$res" "$suite" --failure
	done
}

# run_module_mutants DIR: every patch of the synthetic AUX PMU in DIR makes
# the trace integrity or wrap kselftests fail.
run_module_mutants()
{
	local dir=$1 m name res log suite line

	for m in "$dir"/*.patch; do
		name=$(basename "$m" .patch)
		res="$PERF_AUX_OUT/mutants/$name-arm64-4k"
		log="$PERF_AUX_OUT/logs/mutant-$name-arm64-4k"
		rm -rf "$res"
		mutant_build "$m" default "$log-kunit.log" "$PEER_OFF" || continue
		"$PERF_AUX_ROOT/scripts/kselftest.sh" mutant arm64-4k default \
			"$log-kselftest.log" "$PEER_OFF" > /dev/null 2>&1 || true
		$RESULTS kselftest "$log-kselftest.log" "$res"
		for suite in integrity_test wrap_test; do
			line=$($RESULTS expect "$res" "perf_aux.$suite" --failure) &&
				break
		done
		verdict $? "$name-arm64-4k: $line"
	done
}

# The LAVA jobs: schema validation, rejects, and a lava-run of the QEMU job
# whose results must equal the direct run of the reference kernel.
lava_checks()
{
	local line

	while read -r line; do
		case "$line" in
		"ok - "*"# SKIP"*) skipped=$((skipped + 1)); echo "$line" ;;
		"ok - "*) verdict 0 "${line#ok - }" ;;
		"not ok - "*) verdict 1 "${line#not ok - }" ;;
		*) echo "$line" ;;
		esac
	done < <("$PERF_AUX_ROOT/scripts/lava/check.sh" 2>&1)
}

# Stages in order; "scripts/check.sh NAME..." runs only the named ones.
STAGES="host reference stock sanitize peers aux_mutants vmap_mutants
	module_mutants targets lava"

run_stage()
{
	# PERF_AUX_MUTANTS: another catalogue (same layout), e.g. to rerun some.
	local mutants=${PERF_AUX_MUTANTS:-$PERF_AUX_ROOT/scripts/mutants}

	case "$1" in
	host) stage "host tests" host_tests ;;
	reference) stage "reference kernel, arm64-4k variants" reference_variants ;;
	stock) stage "stock kernel" stock_runs ;;
	sanitize) stage "sanitizers" sanitize_run ;;
	peers) stage "peers on the unmutated kernel" peer_baseline ;;
	aux_mutants)
		stage "AUX allocator mutants" run_mutants \
			"$mutants/aux_alloc" perf_aux_alloc default ;;
	vmap_mutants)
		stage "vmap granule mutants" run_mutants \
			"$mutants/vmap_granule" vmap_granule strict ;;
	module_mutants)
		stage "synthetic AUX PMU mutants" run_module_mutants \
			"$mutants/test_aux_pmu" ;;
	lava) stage "LAVA jobs" lava_checks ;;
	targets) stage "reference kernel, other targets" reference_targets ;;
	*) die "unknown stage '$1' (one of:" $STAGES")" ;;
	esac
}

main()
{
	local s

	mkdir -p "$PERF_AUX_OUT/logs"
	# A full run starts from nothing; a partial one keeps earlier results.
	[ $# -gt 0 ] || rm -rf "$PERF_AUX_OUT/results" "$PERF_AUX_OUT/mutants"

	# shellcheck disable=SC2086
	stage "install packages" "$PERF_AUX_ROOT/scripts/deps.sh" \
		$PERF_AUX_TARGETS || exit 2
	# The host tests parse KTAP with the kernel tree's kunit_parser.
	stage "kernel tree stock" "$PERF_AUX_ROOT/scripts/kernel-tree.sh" stock || exit 2
	for s in ${*:-$STAGES}; do
		run_stage "$s"
	done
	# Which test caught which mutant, the peers' kills beside.
	[ -d "$PERF_AUX_OUT/mutants" ] && $RESULTS matrix
	python3 "$PERF_AUX_ROOT/scripts/results.py" bench \
		"$PERF_AUX_OUT/results/stock-arm64-4k" \
		"$PERF_AUX_OUT/results/reference-arm64-4k" || true
	python3 "$PERF_AUX_ROOT/scripts/results.py" summary \
		"$PERF_AUX_OUT"/results/*/ --report "$PERF_AUX_OUT/report.md" |
		sed 's/^[0-9]* passed, .*/suites: &/'
	[ "$failed" -eq 0 ] || printf 'failed: %s\n' "${failures[@]}"
	echo "$passed passed, $failed failed, $skipped skipped"
	[ "$failed" -eq 0 ]
}

main "$@"
