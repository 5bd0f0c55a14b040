#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The project's tests, in two tiers, one check per line ("ok - ..." or
# "not ok - ..."), the last line "N passed, N failed, N skipped":
#
# make check (scripts/check.sh): what CI runs; one kernel build of the
# default base (mainline) serves the reference, and ccache serves most of it
# to the stock control and the mutants:
#  host        host unit tests of the glue (scripts/tests);
#  reference   the reference kernel, arm64-4k (its granule KUnit suite built
#              strict): every suite passes, on the default boot and with
#              the kselftests strict (perf_aux.strict);
#  stock       the stock kernel (the negative control): the AUX allocator,
#              map, integrity and wrap suites pass, the granule cases skip
#              with "vmap() maps base pages only", and fail when built
#              strict;
#  mutants     one kernel mutant of each family (AUX allocator, vmap/arm64,
#              synthetic PMU), each killed by the suite written for it;
#  lava_schema the LAVA jobs and test definition against lava_common's
#              schemas, broken variants rejected, lava-run --validate.
#
# make check-full (scripts/check.sh --full): the whole matrix, for every
# base: the reference on every variant, stock, the sanitizers, every mutant
# with the peers beside, the other targets; then the LAVA stage with
# lava-run of the QEMU jobs compared case by case with the direct runs;
# then integrations/ against the pinned upstream commits (integrations/
# check.py: the patches apply, KernelCI's and tuxlava's rendered jobs
# validate).
#
# scripts/check.sh [--full] STAGE... runs only the named stages (of that
# tier; the full tier's stages run for each base, or for BASE when set).

set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

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

# run_job KERNEL TARGET VARIANT [KERNEL_ARG...]: the main job on $BASE;
# sets $res to its results.
run_job()
{
	local kernel=$1 target=$2 variant=$3

	shift 3
	KERNEL=$kernel TARGET=$target VARIANT=$variant KERNEL_SRC= \
		KERNEL_ARGS="$*" "$PERF_AUX_ROOT/scripts/run.sh" || true
	res="$PERF_AUX_OUT/results/$(result_name "$kernel" "$BASE" "$target" "$variant")"
}

# The strict boots of make check run the suites strict mode changes:
# KUnit (all of it, one boot) and pagesize_test.
STRICT_TESTS="perf_aux.tests=perf_aux:pagesize_test"
# make check's stock boot: the kselftests whose outcome large vmap
# changes, and the trace through the mapping; the rest (teardown, soak,
# fragmentation, fault injection, SMP) behave alike on both kernels and run
# on the stock kernel in make check-full.
STOCK_QUICK_TESTS="perf_aux.tests=perf_aux:map_test,perf_aux:pagesize_test,perf_aux:integrity_test,perf_aux:wrap_test"

# expected_file TARGET VARIANT: the committed expected results of a run of
# $BASE (scripts/perf_aux_results/expected.py).
expected_file()
{
	echo "$PERF_AUX_ROOT/scripts/expected/$BASE/$1$([ "$2" = default ] || echo "-$2").txt"
}

# expected_results DIR [SUITE...]: the run, case by case, as its expected
# results say (in the SUITEs named, or all), one check; the differences
# are printed before it.
expected_results()
{
	local dir=$1 out rc=0 s
	local -a args=()

	shift
	for s in "$@"; do args+=(--suite "$s"); done
	out=$($RESULTS expected "$dir" "${args[@]}") || rc=$?
	echo "$out" | tail -n +2
	verdict "$rc" "$(echo "$out" | head -1)"
}

# The reference kernel must pass every suite, on every target; its
# variants change what the granule suite expects, never whether it passes.
# Where its expected results are committed, it is judged by them case by
# case; elsewhere by floors, and a skipped check says so.
reference_run()
{
	run_job reference "$1" "$2"
	# The programs' times on the 2-CPU guest, against settings.
	[ "$2" != default ] || [ "$1" != arm64-4k ] || within_timeout "$res"
	if [ -f "$(expected_file "$1" "$2")" ]; then
		expected_results "$res"
		return
	fi
	skipped=$((skipped + 1))
	echo "ok - $(basename "$res"): no expected results committed, judged by floors # SKIP"
	[ "$2" = default ] &&
		expect "$res" perf_aux_alloc --min-passed 30 --no-failure
	expect "$res" vmap_granule --min-passed 25 --no-failure
	expect "$res" perf_aux.map_test --min-passed 30 --no-failure
	# At 64K pages a PMD is 512 MiB: most pagesize buffers are more than
	# the guest can hold (KUnit covers the 64K granules).
	expect "$res" perf_aux.pagesize_test --no-failure \
		--min-passed "$([ "$1" = arm64-64k ] && echo 2 || echo 5)"
	trace_expectations "$1" "$2"
}

# Trace written through the AUX mapping arrives intact on every kernel,
# large mapping or not; SPE and TRBE are not there to test.
# trace_expectations TARGET VARIANT
trace_expectations()
{
	# 64K: a PMD buffer is 512 MiB, more than the guest can spare.
	expect "$res" perf_aux.integrity_test --no-failure \
		--min-passed "$([ "$1" = arm64-64k ] && echo 12 || echo 20)"
	expect "$res" perf_aux.wrap_test --min-passed 6 --no-failure
	# The consumer contract as perf reads it: 6 trace cases (SPE-like and
	# TRBE-like: aux_head, poll() at the watermark, snapshots) and 33 AUX
	# mmap() bounds (11 on each synthetic PMU).
	expect "$res" perf_aux.aux_contract_test --min-passed 39 --no-failure
	expect "$res" perf_aux.hw_trace_test --no-failure --min-skipped 2
	# Unmapping, closing, exiting, forking, CPU offline, thread churn
	# while trace is written; trace on every CPU at once needs four CPUs
	# (smp and sanitize boots), and skips on two; fault injection is in
	# the sanitize configuration only.
	expect "$res" perf_aux.teardown_test --min-passed 6 --no-failure
	expect "$res" perf_aux.smp_test --no-failure \
		--min-passed "$([ "$(variant_cpus "$2")" -ge 4 ] && echo 4 || echo 0)"
	expect "$res" perf_aux.fault_test --no-failure \
		--min-passed "$([ "$2" = sanitize ] && echo 4 || echo 0)"
	# Memory fragmented for real: the allowance case skips where vmap()
	# maps base pages only (stock).  At 64K pages the fill leaves two
	# groups free, which the earlier cases' kernel objects may take: the
	# two trace cases then skip (no mix of chunks to trace through).
	expect "$res" perf_aux.fragment_test --no-failure \
		--min-passed "$([ "$1" = arm64-64k ] && echo 3 || echo 4)"
	# The short soak (10 s) of every boot; make soak runs it longer.
	expect "$res" perf_aux.soak_test --min-passed 1 --no-failure
}

reference_variants()
{
	local variant

	for variant in default strict nohugevmalloc hugetlb smp; do
		reference_run arm64-4k "$variant"
	done
}

# The sanitize boot is also a plain tree's way: there test_aux_pmu is a
# module, which the kselftests loaded themselves, and every case has the
# default boot's result, except where its four CPUs (smp_test) and
# fault injection (fault_test) let cases run that skip there.
# module_compare SANITIZE_RESULTS
module_compare()
{
	local mod=$1 def n

	def=$PERF_AUX_OUT/results/$(result_name reference "$BASE" arm64-4k default)
	[ -d "$def" ] || run_job reference arm64-4k default
	n=$(grep -c 'test_aux_pmu: module loaded' \
		"$PERF_AUX_OUT/logs/$(basename "$mod")-kselftest.log" 2>/dev/null || true)
	[ "${n:-0}" -ge 4 ]
	verdict $? "$(basename "$mod"): the kselftests loaded test_aux_pmu themselves (${n:-0} programs)"
	$RESULTS flakes "$mod" "$def" \
		--except perf_aux.smp_test --except perf_aux.fault_test | tail -3
	verdict "${PIPESTATUS[0]}" "$(basename "$mod"): the results of $(basename "$def") case by case, but smp_test's and fault_test's"
}

# make check: the reference kernel on the default and the strict boot.
reference_quick()
{
	reference_run arm64-4k default
	run_job reference arm64-4k strict "$STRICT_TESTS"
	if [ -f "$(expected_file arm64-4k strict)" ]; then
		expected_results "$res" perf_aux_alloc vmap_granule perf_aux.pagesize_test
		return
	fi
	expect "$res" perf_aux_alloc --min-passed 30 --no-failure
	expect "$res" vmap_granule --min-passed 25 --no-failure
	expect "$res" perf_aux.pagesize_test --min-passed 5 --no-failure
}

# The trust run: the whole suite under KASAN, lockdep, DEBUG_VM and
# kmemleak passes, and none of them reports anything.
sanitize_run()
{
	local run logs reports

	run=$(result_name reference "$BASE" arm64-4k sanitize)

	reference_run arm64-4k sanitize
	logs="$PERF_AUX_OUT/logs/$run"
	reports=$(console_reports "$logs-kunit.log" "$logs-kselftest.log")
	[ -z "$reports" ] || echo "$reports" | head -20
	grep -q 'PERF_AUX: kmemleak: 0 unreferenced objects' "$logs-kselftest.log" &&
		[ -z "$reports" ]
	verdict $? "$run: KASAN, lockdep, DEBUG_VM, kmemleak: $(echo -n "$reports" | grep -c .) reports"
	module_compare "$PERF_AUX_OUT/results/$run"
}

# The kselftests as KernelCI and LKFT run them: test-definitions'
# kselftest.sh (at integrations/'s pin) on a Debian arm64 root filesystem
# from Debian's archive, on the reference kernel; what its parser reports
# equals the direct run case by case.
testdefs_run()
{
	local dir="$PERF_AUX_CACHE/testdefs" run res log out line rc=0

	run=$(result_name reference "$BASE" arm64-4k default)
	res="$PERF_AUX_OUT/results/$run"
	log="$PERF_AUX_OUT/logs/testdefs-$run.log"
	rm -rf "$dir"
	out=$(python3 "$PERF_AUX_ROOT/integrations/check.py" --export \
		test-definitions "$dir" automated/linux/kselftest automated/lib) || rc=$?
	if [ "$rc" -eq 3 ]; then
		skipped=$((skipped + 1))
		echo "ok - test-definitions kselftest.sh on Debian # SKIP $out"
		return
	fi
	[ "$rc" -eq 0 ] || { verdict 1 "test-definitions exported: $out"; return; }
	"$PERF_AUX_ROOT/scripts/deps.sh" testdefs || {
		verdict 1 "scripts/deps.sh testdefs"
		return
	}
	# The direct run it is compared with (make check-full's reference
	# stage made it; a named stage alone makes it here).
	[ -d "$res" ] || run_job reference arm64-4k default
	KSELFTEST_ROOTFS=$PERF_AUX_CACHE/rootfs/trixie-arm64 TESTDEFS_DIR=$dir \
		"$PERF_AUX_ROOT/scripts/kselftest.sh" reference arm64-4k default "$log" ||
		true
	# A comparison that crashed printed no check line: that fails too.
	out=$($RESULTS testdefs "$log" "$res" "$PERF_AUX_OUT/logs/$run-kselftest.log" 2>&1)
	rc=$?
	echo "$out" | grep -v '^\(not \)\?ok - '
	line=$(echo "$out" | grep -m1 '^\(not \)\?ok - ') ||
		line="not ok - test-definitions results compared: exit $rc"
	verdict "$rc" "${line#*ok - }"
}

# SERIES= as a series author uses it: the base's reference patches given as
# one mbox are git am'd onto the base, and that kernel gives the reference
# kernel's results case by case.
series_mbox_run()
{
	local mbox=$PERF_AUX_OUT/series-input/reference-$BASE.mbox series ref

	mkdir -p "$(dirname "$mbox")"
	cat "$(base_patches "$BASE")"/reference/*.patch > "$mbox"
	SERIES=$mbox KERNEL=reference TARGET=arm64-4k VARIANT=default \
		KERNEL_SRC= KERNEL_ARGS= "$PERF_AUX_ROOT/scripts/run.sh" || true
	series=$PERF_AUX_OUT/results/$(SERIES=$mbox result_name \
		"$(SERIES=$mbox kernel_name reference)" "$BASE" arm64-4k default)
	ref=$PERF_AUX_OUT/results/$(result_name reference "$BASE" arm64-4k default)
	[ -d "$ref" ] || run_job reference arm64-4k default
	grep -q '+ series ' "$series/source.txt" 2>/dev/null
	verdict $? "$(basename "$series"): built from the series: $(cat "$series/source.txt" 2>/dev/null)"
	$RESULTS flakes "$series" "$ref" | tail -3
	verdict "${PIPESTATUS[0]}" "$(basename "$series"): the same results as $(basename "$ref"), case by case"
}

# Privilege and sysctls: run by an unprivileged user every case passes or
# skips; with the setups that change a sysctl failed on purpose, every such
# sysctl is back to what it was.
# case_count DIR SUITE WHAT: the suite's cases counted in WHAT ("passed|
# skipped"), from results.py's count line.
case_count()
{
	$RESULTS expect "$1" "$2" --no-failure 2>/dev/null |
		grep -oE "[0-9]+ ($3)" | awk '{ n += $1 } END { print n + 0 }'
}

privilege_runs()
{
	local t log s before after rc def ran all

	def=$PERF_AUX_OUT/results/$(result_name reference "$BASE" arm64-4k default)
	[ -d "$def" ] || run_job reference arm64-4k default
	run_job reference arm64-4k nonroot
	for t in map_test pagesize_test integrity_test wrap_test hw_trace_test \
		aux_contract_test; do
		expect "$res" "perf_aux.$t" --no-failure
		# Every case ran (passed or skipped), not only the wrapper.
		ran=$(case_count "$res" "perf_aux.$t" "passed|skipped")
		all=$(case_count "$def" "perf_aux.$t" "passed|failed|skipped")
		[ "$ran" -ge "$all" ] && [ "$all" -gt 1 ]
		verdict $? "$(basename "$res"): perf_aux.$t: $ran of the default boot's $all cases passed or skipped"
	done
	run_job reference arm64-4k fail_setup
	# The forced failures must have happened, or nothing was shown.
	expect "$res" perf_aux.pagesize_test --failure
	expect "$res" perf_aux.map_test --failure
	expect "$res" perf_aux.fragment_test --failure
	log=$PERF_AUX_OUT/logs/$(basename "$res")-kselftest.log
	for s in kernel/kptr_restrict kernel/perf_event_mlock_kb \
		vm/compact_unevictable_allowed vm/extfrag_threshold \
		vm/compaction_proactiveness vm/watermark_boost_factor; do
		before=$(sed -n "s|.*PERF_AUX: sysctl $s before: \([0-9]*\).*|\1|p" "$log")
		after=$(sed -n "s|.*PERF_AUX: sysctl $s after: \([0-9]*\).*|\1|p" "$log")
		rc=1
		[ -z "$before" ] || [ "$before" != "$after" ] || rc=0
		verdict $rc "$(basename "$res"): $s ${before:-?} before the forced setup failures, ${after:-?} after"
	done
	plain_run reference
}

# The kselftests that change the whole machine, and the one reason they
# skip for without PERF_AUX_DESTRUCTIVE=1 (aux_common.h).
DESTRUCTIVE_TESTS="fault_test fragment_test soak_test"
DESTRUCTIVE_SKIP=$(sed -n 's/^#define NOT_DESTRUCTIVE "\(.*\)"$/\1/p' \
	"$PERF_AUX_ROOT/tools/testing/selftests/perf_aux/aux_common.h")

# kunitpy_runs: scripts/kunit.sh --series, its lines and its verdict.
kunitpy_runs()
{
	local rc=0

	"$PERF_AUX_ROOT/scripts/kunit.sh" --series || rc=$?
	verdict "$rc" "kunit.py in the series tree: each kunitconfig on x86_64, arm64 and UML, UML with every test option, KernelCI's kunit-x86_64"
}

# within_timeout RESULTS: each kselftest program's time on the guest (the
# init's "PERF_AUX: time" lines) within the timeout of the directory's
# settings, which a farm's runner applies (this guest's busybox has no
# /usr/bin/timeout for the runner to use).
within_timeout()
{
	local log limit line n=0 most=0 name secs rc=0

	log=$PERF_AUX_OUT/logs/$(basename "$1")-kselftest.log
	limit=$(sed -n 's/^timeout=//p' \
		"$PERF_AUX_ROOT/tools/testing/selftests/perf_aux/settings")
	while read -r name secs; do
		n=$((n + 1))
		[ "$secs" -le "$most" ] || { most=$secs; line=$name; }
		[ "$secs" -le "${limit:-45}" ] || { rc=1; echo "# $name: $secs s"; }
	done < <(sed -n 's/^PERF_AUX: time \(perf_aux:[a-z_]*\) \([0-9]*\) s.*/\1 \2/p' "$log")
	[ "$n" -gt 0 ] || rc=1
	verdict $rc "$(basename "$1"): $n kselftest programs each within settings' timeout=${limit:-?} s (longest ${line:-none}, $most s)"
}

# A farm's plain run (scripts/initramfs/init with perf_aux.plain): without
# PERF_AUX_DESTRUCTIVE=1, every case of the destructive programs skips with
# the one reason, none passes, and no program fails.
# plain_run KERNEL
plain_run()
{
	local t ktap

	run_job "$1" arm64-4k plain
	for t in $DESTRUCTIVE_TESTS; do
		expect "$res" "perf_aux.$t" --no-failure --min-skipped 1 \
			--skip-reason "$DESTRUCTIVE_SKIP"
		[ "$(case_count "$res" "perf_aux.$t" passed)" -eq 0 ]
		verdict $? "$(basename "$res"): perf_aux.$t: no case ran"
	done
	for ktap in "$res"/perf_aux.*.ktap; do
		t=$(basename "$ktap" .ktap)
		case " $DESTRUCTIVE_TESTS " in *" ${t#perf_aux.} "*) continue ;; esac
		expect "$res" "$t" --no-failure
	done
	within_timeout "$res"
}

# Targets other than arm64-4k come last: each is a kernel build of its own.
reference_targets()
{
	local target

	for target in $PERF_AUX_TARGETS; do
		[ "$target" = arm64-4k ] || reference_run "$target" default
	done
}

# What a kernel without large vmap ($res) must give: the AUX allocator and
# map suites pass, the granule suites skip with the one reason.
stock_expectations()
{
	local suite

	# Stock leaks the page array when no AUX page was had (reference
	# 0004): that case, and only it, fails there by design.
	expect "$res" perf_aux_alloc --min-passed 30 --no-failure \
		--allow-failing aux_alloc_first_page_fails_test
	expect "$res" perf_aux.map_test --min-passed 30 --no-failure
	for suite in vmap_granule perf_aux.pagesize_test; do
		expect "$res" "$suite" --no-failure --min-skipped 1 \
			--skip-reason "vmap() maps base pages only"
	done
}

# A reference kernel whose vmap() maps base pages only gives what the
# stock kernel ($res) gives: its granule cases must not be what the
# reference's expected results say.
stock_differs()
{
	local file n

	file=$(expected_file arm64-4k default)
	[ -f "$file" ] || return 0
	n=$($RESULTS expected "$res" --file "$file" --suite vmap_granule |
		sed -n '1s/.*, \([0-9]*\) differ$/\1/p')
	[ "${n:-0}" -gt 0 ]
	verdict $? "$(basename "$res"): vmap_granule fails the reference's expected results ($n cases differ, as without large vmap they must)"
}

# Stock kernels have the AUX allocator change (6.16; Debian 6.12.113) but
# not large vmap: the granule suites say so by skipping, or by failing when
# strict.  STOCK_STRICT_ARGS: what the strict boot runs (make check: only
# the suites strict mode changes).
stock_runs()
{
	# shellcheck disable=SC2086
	run_job stock arm64-4k default ${STOCK_DEFAULT_ARGS:-}
	stock_expectations
	if [ -z "${STOCK_DEFAULT_ARGS:-}" ]; then
		trace_expectations arm64-4k default
	else
		expect "$res" perf_aux.integrity_test --min-passed 20 --no-failure
		expect "$res" perf_aux.wrap_test --min-passed 6 --no-failure
	fi
	stock_differs
	# shellcheck disable=SC2086
	run_job stock arm64-4k strict ${STOCK_STRICT_ARGS:-}
	expect "$res" vmap_granule --failure
	expect "$res" perf_aux.pagesize_test --failure
	[ -n "${STOCK_DEFAULT_ARGS:-}" ] || plain_run stock
}

# KERNEL_SRC= a tree of the user's (here an unpacked Debian source): the
# hook-ups are chosen from its version and it is the stock control of that
# base, with the same outcome.
custom_tree()
{
	KERNEL=stock TARGET=arm64-4k VARIANT=default \
		KERNEL_SRC="$PERF_AUX_CACHE/src/$BASE" KERNEL_ARGS= \
		"$PERF_AUX_ROOT/scripts/run.sh" || true
	res="$PERF_AUX_OUT/results/$(result_name custom "$BASE" arm64-4k default)"
	stock_expectations
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

# Every boot of a mutant kernel: one that oopses panics, and panic=-1
# reboots it at once.  Otherwise KUnit waits out the dead test's thread and
# the boot its 10-minute timeout (cont_for_short_run's BUG in vmap on 7.3):
# the oops is the failure that kills the mutant either way.
MUTANT_OOPS="oops=panic"

# mutant_run NAME: the name of mutant NAME's results on this base.
mutant_run()
{
	echo "$1-$BASE-arm64-4k"
}

# peer_selftests NAME VARIANT RES: selftests/perf_events on mutant NAME.
peer_selftests()
{
	local log="$PERF_AUX_OUT/logs/mutant-$(mutant_run "$1")-perf_events.log"

	KSELFTEST_TARGETS=perf_events "$PERF_AUX_ROOT/scripts/kselftest.sh" \
		mutant arm64-4k "$2" "$log" "$MUTANT_OOPS" "$PEER_OFF" "$PEER_PERF_EVENTS" \
		> /dev/null 2>&1 || true
	$RESULTS kselftest "$log" "$3"
}

# The peers on the unmutated kernel: what they fail here kills nothing.
peer_baseline()
{
	local res log

	res="$PERF_AUX_OUT/mutants/$(mutant_run baseline)"
	log="$PERF_AUX_OUT/logs/mutant-$(mutant_run baseline)-kunit.log"
	rm -rf "$res"
	# shellcheck disable=SC2086
	mutant_build "" strict "$log" $PEER_VMALLOC || return
	$RESULTS kunit "$log" "$res"
	$RESULTS peers "$log" "$res"
	peer_selftests baseline strict "$res"
	# The peer ran: at least the three smoke tests its default
	# run_test_mask selects from 7.x passed.  What fails by design is the
	# base's (align_shift_alloc_test on 6.12, an expected failure later).
	expect "$res" peer.test_vmalloc --min-passed 3 --failure-allowed
}

# mutant_patch DIR NAME: the patch of mutant NAME for this base: a base's
# own (DIR/<base>/NAME.patch, where the code it breaks moved) or the one
# every base takes.
mutant_patch()
{
	if [ -f "$1/$BASE/$2.patch" ]; then
		echo "$1/$BASE/$2.patch"
	else
		echo "$1/$2.patch"
	fi
}

# mutant_names DIR [NAME...]: the mutants of a family, or the named ones, a
# line each.
mutant_names()
{
	local dir=$1 m

	shift
	if [ $# -gt 0 ]; then
		printf '%s\n' "$@"
		return
	fi
	for m in "$dir"/*.patch; do
		basename "$m" .patch
	done
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
		verdict 1 "mutant $name applies to $BASE"
		return 1
	fi
	"$PERF_AUX_ROOT/scripts/kunit.sh" mutant arm64-4k "$variant" "$log" \
		"$MUTANT_OOPS" "$@" > "$log.out" 2>&1 || rc=$?
	grep -E '^(ccache: |<== build |build .*: built earlier)' "$log.out" || true
	if [ "$rc" -gt 1 ]; then
		tail -20 "$log.out"
		verdict 1 "mutant $name builds on $BASE"
		return 1
	fi
}

# each_mutant DIR WHAT FN [NAME...]: FN PATCH NAME RES LOG for every mutant
# of DIR (or the named ones), saying which it is and how far along.
each_mutant()
{
	local dir=$1 what=$2 fn=$3 name run i=0 n
	local -a names

	shift 3
	mapfile -t names < <(mutant_names "$dir" "$@")
	n=${#names[@]}
	for name in "${names[@]}"; do
		i=$((i + 1))
		echo "-- $what $i of $n: $name ($BASE)"
		run=$(mutant_run "$name")
		rm -rf "$PERF_AUX_OUT/mutants/$run"
		"$fn" "$(mutant_patch "$dir" "$name")" "$name" \
			"$PERF_AUX_OUT/mutants/$run" "$PERF_AUX_OUT/logs/mutant-$run"
	done
}

# mutant_boot PATCH DEFAULT: the variant a mutant is booted (and built)
# for: its patch's "Boot: <variant>" line, else DEFAULT.
mutant_boot()
{
	local variant

	variant=$(sed -n 's/^Boot: //p' "$1")
	echo "${variant:-$2}"
}

# kernel_mutant PATCH NAME RES LOG: $mutant_suite fails on the mutant,
# booted with $mutant_variant or its own Boot: line's variant (a rule only
# one boot can break, such as nohugevmalloc honoured); with
# PERF_AUX_PEERS=1 the peers run beside.
kernel_mutant()
{
	local variant
	local -a peer_args=()

	variant=$(mutant_boot "$1" "$mutant_variant")
	[ "${PERF_AUX_PEERS:-0}" != 1 ] || read -r -a peer_args <<< "$PEER_VMALLOC"
	mutant_build "$1" "$variant" "$4-kunit.log" "${peer_args[@]}" ||
		return 0
	$RESULTS kunit "$4-kunit.log" "$3"
	if [ "${PERF_AUX_PEERS:-0}" = 1 ]; then
		$RESULTS peers "$4-kunit.log" "$3"
		peer_selftests "$2" "$variant" "$3"
	fi
	expect "$3" "$mutant_suite" --failure
}

# run_mutants DIR SUITE VARIANT [NAME...]: every patch in DIR (or the named
# ones) makes SUITE fail.
run_mutants()
{
	local mutant_suite=$2 mutant_variant=$3 dir=$1

	shift 3
	each_mutant "$dir" mutant kernel_mutant "$@"
}

# module_mutant PATCH NAME RES LOG: a kselftest fails on the mutant
# synthetic PMU: the patch's "Killed-by: perf_aux.<test>" lines (by
# default the trace integrity or wrap test), on its "Boot: <variant>" (by
# default the default boot).
module_mutant()
{
	local suite line suites variant
	local -a peer_off=()

	suites=$(sed -n 's/^Killed-by: perf_aux\.//p' "$1")
	suites=${suites:-integrity_test wrap_test}
	variant=$(mutant_boot "$1" default)
	[ "${PERF_AUX_PEERS:-0}" != 1 ] || peer_off=("$PEER_OFF")
	# Built for its boot: a configuration variant (sanitize) is a build of
	# its own, without the peers, which no module mutant runs: the peers'
	# configuration beside it would be one more cold build.
	if [ -n "$(variant_config "$variant")" ]; then
		peer_off=()
		local -x PERF_AUX_PEERS=0
	fi
	mutant_build "$1" "$variant" "$4-kunit.log" "${peer_off[@]}" || return 0
	# The boot runs the programs that must kill it, not the whole suite:
	# what the others find proves nothing about this mutant, and each of
	# them costs minutes.
	"$PERF_AUX_ROOT/scripts/kselftest.sh" mutant arm64-4k "$variant" \
		"$4-kselftest.log" "$MUTANT_OOPS" "${peer_off[@]}" \
		"${MODULE_MUTANT_TESTS:-$(killer_tests $suites)}" \
		> /dev/null 2>&1 || true
	$RESULTS kselftest "$4-kselftest.log" "$3"
	for suite in $suites; do
		line=$($RESULTS expect "$3" "perf_aux.$suite" --failure) &&
			break
	done
	verdict $? "$(basename "$3"): $line"
}

# killer_tests PROGRAM...: the boot parameter that runs only those
# kselftest programs (scripts/initramfs/init).
killer_tests()
{
	local t list=

	for t in "$@"; do
		list="$list${list:+,}perf_aux:$t"
	done
	echo "perf_aux.tests=$list"
}

# project_only PATCH: whether PATCH changes only files the project ships
# (lib/test_aux_pmu.c), the same file on every base.
project_only()
{
	local f

	for f in $(sed -n 's|^+++ b/\([^\t]*\).*|\1|p' "$1"); do
		[ -f "$PERF_AUX_ROOT/$f" ] || return 1
	done
}

# run_module_mutants DIR [NAME...]: every patch of the synthetic AUX PMU in
# DIR (or the named ones).  A mutant of the project's own file proves the
# same on every base, and costs a boot of some 4 minutes each: it runs on
# the default base; one in the kernel's code runs on every base.
run_module_mutants()
{
	local dir=$1 m
	local -a names=("${@:2}")

	if [ ${#names[@]} -eq 0 ] && [ "$BASE" != "$(default_base)" ]; then
		for m in "$dir"/*.patch; do
			project_only "$(mutant_patch "$dir" "$(basename "$m" .patch)")" ||
				names+=("$(basename "$m" .patch)")
		done
		echo "module mutants on $BASE: those in kernel code (${names[*]:-none}); the rest on $(default_base)"
		[ ${#names[@]} -gt 0 ] || return 0
	fi
	each_mutant "$dir" "module mutant" module_mutant "${names[@]}"
}

# make check's mutants: one of each family, chosen for what they prove and
# what they cost (each rebuilds one object and links):
#  watermark_ignored   perf/aux: PREFER_LARGE chunks ignore the watermark
#  cont_needs_hugetlb  vmap: cont-PTE blocks lost with CONFIG_HUGETLB_PAGE=n,
#                      the bug of v4..v7 of the posted series
#  wrap_drops_byte     synthetic PMU: a byte lost at the buffer wrap, caught
#                      by integrity_test alone (the only kselftest booted)
#  aux_head_lags       perf core: the user page's aux_head behind the
#                      records, caught by aux_contract_test alone
quick_mutants()
{
	local mutants=$1

	run_mutants "$mutants/aux_alloc" perf_aux_alloc default watermark_ignored
	run_mutants "$mutants/vmap_granule" vmap_granule strict cont_needs_hugetlb
	MODULE_MUTANT_TESTS="perf_aux.tests=perf_aux:integrity_test" \
		run_module_mutants "$mutants/test_aux_pmu" wrap_drops_byte
	run_module_mutants "$mutants/perf_core" aux_head_lags
}

# count_line LINE: an "ok - ..." / "not ok - ..." line counted as a check;
# any other line passes through.
count_line()
{
	case "$1" in
	"ok - "*"# SKIP"*) skipped=$((skipped + 1)); echo "$1" ;;
	"ok - "*) verdict 0 "${1#ok - }" ;;
	"not ok - "*) verdict 1 "${1#not ok - }" ;;
	*) echo "$1" ;;
	esac
}

# line_checks CMD ARGS...: a command that prints its own expectations as
# check lines (the LAVA checks, the series), counted here.  A command that
# fails without a failed check line of its own (it died, or checked
# nothing) is a failed check too.
line_checks()
{
	local line out rc=0 saw_failure=0

	out=$("$@" 2>&1) || rc=$?
	while read -r line; do
		count_line "$line"
		case "$line" in "not ok - "*) saw_failure=1 ;; esac
	done <<< "$out"
	[ "$rc" -eq 0 ] || [ "$saw_failure" -eq 1 ] ||
		verdict 1 "$(basename "$1") ${2:-} exited $rc with no failed check"
}

# make check's stages that build no kernel and boot nothing run beside the
# mutant stage, whose boots leave a core idle: 112 s of a cold run's
# 30 minutes.  The series stage reads the staged stock tree, so it cannot
# start before the stock stage ends.
BESIDE_STAGES="series lava_schema"

# beside_start STAGE...: runs the STAGEs in the background, their lines and
# stage times kept in $beside_log.
beside_start()
{
	beside_log=$PERF_AUX_OUT/logs/beside.log
	# shellcheck disable=SC2030 # the subshell's own table, for beside_end
	(
		stage_times=()
		for s in "$@"; do
			run_stage "$s"
		done
		[ ${#stage_times[@]} -eq 0 ] ||
			printf 'stage time: %s\n' "${stage_times[@]}"
	) > "$beside_log" 2>&1 &
	beside_pid=$!
}

# beside_end: waits for them, then counts their lines as if they had run
# here, in stage order.  Run here, a stage that dies ends the check; beside,
# it ends the background shell, which is then a failed check.
beside_end()
{
	local line rc=0

	wait "$beside_pid" || rc=$?
	while read -r line; do
		case "$line" in
		"stage time: "*)
			# shellcheck disable=SC2031 # ours, not the subshell's
			stage_times+=("${line#stage time: } (beside the mutants)") ;;
		*) count_line "$line" ;;
		esac
	done < "$beside_log"
	[ "$rc" -eq 0 ] || verdict 1 "the stages beside the mutants ended, exit $rc"
}

# Stages in order; "scripts/check.sh [--full] NAME..." runs only the named
# ones.
QUICK_STAGES="host reference stock mutants series lava_schema"
FULL_STAGES="host reference stock sanitize peers aux_mutants vmap_mutants
	module_mutants perf_core_mutants targets series kunitpy series_mbox
	privilege custom lava lava_lab integrations testdefs"
# Stages of the full tier that run on the default base only: the other
# page sizes, and the perf core's mutants (code no base's own patches
# change), prove the same on every base.  Named with BASE, they run there.
DEFAULT_BASE_STAGES="targets perf_core_mutants"
# Stages of the full tier that run once, not once per base.
ONCE_STAGES="host series series_mbox privilege custom lava lava_lab lava_schema"
# (one line each: main() matches " $ONCE_STAGES " word by word on spaces)
ONCE_STAGES="$ONCE_STAGES integrations testdefs kunitpy"

stage_times=()

# timed NAME FN ARGS...: a stage, its time kept for the table at the end.
timed()
{
	local name=$1 start

	shift
	start=$(date +%s)
	stage "$name" "$@"
	stage_times+=("$(printf '%6d s  %s' $(($(date +%s) - start)) "$name")")
}

run_stage()
{
	# PERF_AUX_MUTANTS: another catalogue (same layout), e.g. to rerun some.
	local mutants=${PERF_AUX_MUTANTS:-$PERF_AUX_ROOT/scripts/mutants}

	case "$1" in
	host) timed "host tests" host_tests ;;
	reference)
		if [ -n "$FULL" ]; then
			timed "$BASE reference kernel, arm64-4k variants" reference_variants
		else
			timed "$BASE reference kernel, default and strict" reference_quick
		fi ;;
	stock)
		if [ -n "$FULL" ]; then
			timed "$BASE stock kernel" stock_runs
		else
			STOCK_DEFAULT_ARGS=$STOCK_QUICK_TESTS STOCK_STRICT_ARGS=$STRICT_TESTS \
				timed "$BASE stock kernel" stock_runs
		fi ;;
	sanitize) timed "$BASE sanitizers" sanitize_run ;;
	peers) PERF_AUX_PEERS=${PERF_AUX_PEERS:-1} timed "$BASE peers on the unmutated kernel" peer_baseline ;;
	mutants) timed "$BASE one mutant of each family" quick_mutants "$mutants" ;;
	aux_mutants)
		PERF_AUX_PEERS=${PERF_AUX_PEERS:-1} timed "$BASE AUX allocator mutants" run_mutants \
			"$mutants/aux_alloc" perf_aux_alloc default ;;
	vmap_mutants)
		PERF_AUX_PEERS=${PERF_AUX_PEERS:-1} timed "$BASE vmap granule mutants" run_mutants \
			"$mutants/vmap_granule" vmap_granule strict ;;
	module_mutants)
		PERF_AUX_PEERS=${PERF_AUX_PEERS:-1} timed "$BASE synthetic AUX PMU mutants" \
			run_module_mutants "$mutants/test_aux_pmu" ;;
	# The perf core's side of the consumer contract (aux_head, aux_tail,
	# the watermark's wakeups, the AUX mmap() bounds), each booted with
	# the programs of its Killed-by lines.
	perf_core_mutants)
		PERF_AUX_PEERS=${PERF_AUX_PEERS:-1} \
			timed "$BASE perf core mutants" \
			run_module_mutants "$mutants/perf_core" ;;
	lava) timed "LAVA jobs, lava-run" line_checks "$PERF_AUX_ROOT/scripts/lava/check.sh" ;;
	series)
		if [ -n "$FULL" ]; then
			timed "$BASE patch series (make series), a kernel per prefix" \
				line_checks "$PERF_AUX_ROOT/scripts/series.sh" --check \
				--kernel-prefixes
		else
			timed "$BASE patch series (make series)" line_checks \
				"$PERF_AUX_ROOT/scripts/series.sh" --check
		fi ;;
	# kunit.py in the tree series.sh --check leaves, as its users run it.
	kunitpy) timed "$BASE kunit.py in the series tree" kunitpy_runs ;;
	series_mbox) timed "$BASE SERIES= the reference patches as an mbox" series_mbox_run ;;
	privilege) timed "$BASE reference kernel, unprivileged and failed setups" \
		privilege_runs ;;
	custom)
		# A mainline tree other than the default base's, where there is one.
		case " $PERF_AUX_BASES " in
		*" 7.2 "*) BASE=7.2 ;;
		esac
		"$PERF_AUX_ROOT/scripts/deps.sh" "base-$BASE" > /dev/null
		timed "KERNEL_SRC=src/$BASE (hook-ups from its version)" custom_tree ;;
	# The local LAVA lab (scripts/lava/lab.sh): jobs submitted and
	# collected through lava-server and lava-worker on 127.0.0.1, the
	# fault cases; its own check lines.
	lava_lab) timed "LAVA lab, server and worker" line_checks \
		"$PERF_AUX_ROOT/scripts/lava/lab.sh" selftest qemu ;;
	lava_schema) timed "LAVA jobs, schemas" line_checks \
		"$PERF_AUX_ROOT/scripts/lava/check.sh" --schema ;;
	targets) timed "$BASE reference kernel, other targets" reference_targets ;;
	# integrations/ against the fetched upstream repositories (a missing
	# mirror is a skipped check); Debian's python for lava_common, which
	# scripts/deps.sh lava installs with PyYAML and Jinja2.
	testdefs) timed "$BASE kselftests through test-definitions on Debian" testdefs_run ;;
	integrations)
		"$PERF_AUX_ROOT/scripts/deps.sh" lava > /dev/null ||
			verdict 1 "scripts/deps.sh lava"
		timed "integrations/, KernelCI and tuxlava patches" line_checks \
			/usr/bin/python3 "$PERF_AUX_ROOT/integrations/check.py" ;;
	*) die "unknown stage '$1' (one of:" $QUICK_STAGES $FULL_STAGES")" ;;
	esac
}

FULL=

main()
{
	local s b stages bases once=() per_base=() beside=() start

	start=$(date +%s)
	# One build serves every boot of it in this check (scripts/kunit.sh).
	export PERF_AUX_CHECK_ID=$$.$start
	if [ "${1:-}" = --full ]; then
		FULL=1
		shift
	fi
	mkdir -p "$PERF_AUX_OUT/logs"
	# A whole tier starts from nothing; named stages keep earlier results.
	[ $# -gt 0 ] || rm -rf "$PERF_AUX_OUT/results" "$PERF_AUX_OUT/mutants"
	if [ -n "$FULL" ]; then
		stages=${*:-$FULL_STAGES}
		bases=${BASE:-$PERF_AUX_BASES}
		for b in $bases; do check_base "$b"; done
	else
		stages=${*:-$QUICK_STAGES}
		bases=$(default_base)
	fi
	for s in $stages; do
		case " $ONCE_STAGES " in
		*" $s "*) once+=("$s") ;;
		*) per_base+=("$s") ;;
		esac
	done
	if [ -z "$FULL" ] && [[ " ${per_base[*]} " == *" mutants "* ]]; then
		for s in "${once[@]}"; do
			case " $BESIDE_STAGES " in
			*" $s "*) beside+=("$s") ;;
			esac
		done
	fi

	# shellcheck disable=SC2046
	timed "install packages" "$PERF_AUX_ROOT/scripts/deps.sh" \
		$([ -n "$FULL" ] && echo $PERF_AUX_TARGETS || echo arm64-4k) \
		$(for b in $bases; do echo "base-$b"; done) || exit 2
	export BASE
	for s in "${once[@]}"; do
		[ "$s" = host ] || continue
		BASE=$(default_base) run_stage host
	done
	for b in $bases; do
		BASE=$b
		for s in "${per_base[@]}"; do
			if [ -n "$FULL" ] && [ $# -eq 0 ] && [ "$b" != "$(default_base)" ] &&
				[[ " $DEFAULT_BASE_STAGES " == *" $s "* ]]; then
				echo "$s: on $(default_base) only (the same on every base)"
				continue
			fi
			[ "$s" != mutants ] || [ ${#beside[@]} -eq 0 ] ||
				beside_start "${beside[@]}"
			run_stage "$s"
		done
	done
	BASE=$(default_base)
	[ ${#beside[@]} -eq 0 ] || beside_end
	for s in "${once[@]}"; do
		case " host ${beside[*]} " in
		*" $s "*) ;;
		*) run_stage "$s" ;;
		esac
	done
	# Which test caught which mutant, the peers' kills beside.
	[ -z "$FULL" ] || [ ! -d "$PERF_AUX_OUT/mutants" ] || $RESULTS matrix
	for b in $bases; do
		[ -d "$PERF_AUX_OUT/results/stock-$b-arm64-4k" ] &&
		[ -d "$PERF_AUX_OUT/results/reference-$b-arm64-4k" ] || continue
		$RESULTS bench "$PERF_AUX_OUT/results/stock-$b-arm64-4k" \
			"$PERF_AUX_OUT/results/reference-$b-arm64-4k" || true
	done
	$RESULTS summary "$PERF_AUX_OUT"/results/*/ \
		--report "$PERF_AUX_OUT/report.md" |
		sed 's/^[0-9]* passed, .*/suites: &/'
	echo "measurements: $PERF_AUX_OUT/measurements/$tier.md"
	echo "stage times:"
	printf '%s\n' "${stage_times[@]}"
	printf '%6d s  %s\n' $(($(date +%s) - start)) "in all"
	[ "$failed" -eq 0 ] || printf 'failed: %s\n' "${failures[@]}"
	echo "$passed passed, $failed failed, $skipped skipped"
	[ "$failed" -eq 0 ]
}

# Sourced by the host tests for its functions; run, it runs the stages,
# everything it prints kept in out/logs/<tier>.log, from which
# out/measurements/<tier>.md is written (scripts/perf_aux_results/
# measurements.py): the figures of a check are generated, never copied.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	# main's closing lines name the page too.
	tier=check
	[ "${1:-}" != --full ] || tier=check-full
	mkdir -p "$PERF_AUX_OUT/logs"
	main "$@" 2>&1 | tee "$PERF_AUX_OUT/logs/$tier.log"
	rc=${PIPESTATUS[0]}
	stages=$*
	$RESULTS measurements "$PERF_AUX_OUT/logs/$tier.log" --tier "$tier" \
		--stages "${stages#--full}" \
		--out "$PERF_AUX_OUT/measurements/$tier.md" ||
		echo "perf_aux: warning: no $PERF_AUX_OUT/measurements/$tier.md" >&2
	exit "$rc"
fi
