#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# TLB benchmark for boards: what the trace unit's writes through the vmap()
# of the perf AUX buffer cost the traced workload in TLB walks and refills,
# on a "before" and an "after" kernel (e.g. without and with large vmap
# mappings). Each run pins the workload to one CPU and counts it with
#   perf stat -x, -e dtlb_walk,l1d_tlb,l1d_tlb_refill,l2d_tlb_refill (+ :u)
# while perf record traces it with SPE (arm_spe_0) or TRBE (cs_etm) into an
# AUX buffer of the given size. Eight events may exceed the CPU's counters:
# perf then multiplexes and scales, as it did for the published numbers.
#
# Boot the "before" kernel and run with -p before; boot the "after" kernel and
# run with -p after and the same -o: the after phase ends with the tables of
# scripts/tlb_table.py (Run1..RunN, Avg., Diff. per event). -p compare prints
# them again.
#
# Options: -p before|after|compare [-o DIR] [-m SIZE] [-t arm_spe_0|cs_etm]
#          [-r RUNS] [-C CPU] [-k] [-- WORKLOAD...]
#   -o DIR     output directory (default out/tlb-bench); DIR/PHASE/runN.csv
#              is the raw perf stat output of run N
#   -m SIZE    AUX buffer size, as perf record -m ,SIZE (default 4M)
#   -t TRACER  arm_spe_0 (default) or cs_etm with a TRBE sink
#   -r RUNS    runs per phase (default 5)
#   -C CPU     CPU to pin to (default: the first isolated CPU, else the last
#              online one)
#   -k         keep each run's perf.data
#   WORKLOAD   default: perf bench mem memset over 64 MB, 50 times
#
# Exit status: 0 done, 1 a run or the comparison failed, 2 usage error,
# 4 skipped ("SKIP: <reason>": no perf, no PMU events or no tracer, as under
# QEMU).

set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
EVENTS=dtlb_walk,l1d_tlb,l1d_tlb_refill,l2d_tlb_refill
EVENTS="$EVENTS,dtlb_walk:u,l1d_tlb:u,l1d_tlb_refill:u,l2d_tlb_refill:u"
# scripts/tests/test_tlb_table.py points this at a fake sysfs.
PMU_DIR=${TLB_BENCH_PMU_DIR:-/sys/bus/event_source/devices}
KSFT_SKIP=4

usage()
{
	echo "usage: $0 OPTIONS" >&2
	awk '/^# Options:/ { on = 1 } on && !/^#/ { exit } on' "$0" |
		sed 's/^# \{0,1\}//' >&2
	exit 2
}

# die MESSAGE [STATUS]
die()
{
	echo "tlb-bench: error: $1" >&2
	exit "${2:-1}"
}

skip()
{
	echo "SKIP: $1"
	exit "$KSFT_SKIP"
}

# cpu_in_list LIST CPU: whether CPU is in a sysfs CPU list such as "0-3,6".
cpu_in_list()
{
	local list=$1 cpu=$2 range
	local -a ranges

	IFS=, read -ra ranges <<<"$list"
	for range in "${ranges[@]}"; do
		if ((cpu >= ${range%-*} && cpu <= ${range#*-})); then
			return 0
		fi
	done
	return 1
}

default_cpu()
{
	local isolated online

	isolated=$(cat /sys/devices/system/cpu/isolated 2>/dev/null || true)
	if [ -n "$isolated" ]; then
		isolated=${isolated%%,*}
		echo "${isolated%-*}"
		return
	fi
	online=$(cat /sys/devices/system/cpu/online)
	online=${online##*,}
	echo "note: no isolated CPU (isolcpus=), the workload shares CPU ${online#*-}" >&2
	echo "${online#*-}"
}

# The environment checks: each one that fails skips with a constant reason.
check_board()
{
	local tracer=$1 cpu=$2 probe err

	[ "$(id -u)" = 0 ] || skip "needs root"
	command -v perf >/dev/null || skip "perf not installed"
	command -v taskset >/dev/null || skip "taskset not installed"

	probe=$(mktemp)
	if ! err=$(perf stat -x, -o "$probe" -e "$EVENTS" -- true 2>&1); then
		rm -f "$probe"
		if grep -q "event syntax error" <<<"$err"; then
			skip "TLB PMU events missing"
		fi
		die "perf stat failed: $err"
	fi
	if grep -q "<not supported>" "$probe"; then
		rm -f "$probe"
		skip "TLB PMU events not supported"
	fi
	rm -f "$probe"

	case "$tracer" in
	arm_spe_*)
		[ -d "$PMU_DIR/$tracer" ] || skip "no $tracer PMU"
		;;
	cs_etm)
		[ -d "$PMU_DIR/cs_etm" ] || skip "no cs_etm PMU"
		compgen -G "$PMU_DIR/cs_etm/sinks/trbe*" >/dev/null ||
			skip "no TRBE sink"
		;;
	esac
	if [ -r "$PMU_DIR/$tracer/cpumask" ] &&
	   ! cpu_in_list "$(cat "$PMU_DIR/$tracer/cpumask")" "$cpu"; then
		die "CPU $cpu has no $tracer (cpumask $(cat "$PMU_DIR/$tracer/cpumask"))" 2
	fi
}

# The settings a comparison depends on; they must match between phases.
settings()
{
	local tracer=$1 aux=$2 cpu=$3 runs=$4

	shift 4
	echo "tracer=$tracer"
	echo "aux=$aux"
	echo "cpu=$cpu"
	echo "runs=$runs"
	echo "workload=$*"
}

run_phase()
{
	local dir=$1 tracer=$2 aux=$3 cpu=$4 runs=$5 keep=$6 i log
	local -a workload

	shift 6
	workload=("$@")
	rm -rf "$dir"
	mkdir -p "$dir"
	settings "$tracer" "$aux" "$cpu" "$runs" "${workload[@]}" >"$dir/settings"
	{
		echo "kernel=$(uname -r)"
		echo "perf=$(perf --version)"
		date -u +%Y-%m-%dT%H:%M:%SZ
	} >"$dir/info"

	for ((i = 1; i <= runs; i++)); do
		echo "== $(basename "$dir") run $i/$runs on CPU $cpu, $tracer, AUX $aux"
		log="$dir/record$i.log"
		taskset -c "$cpu" perf record -e "$tracer//" -m ",$aux" \
			-o "$dir/record$i.data" -- \
			perf stat -x, -o "$dir/run$i.csv" -e "$EVENTS" -- \
			"${workload[@]}" 2> >(tee "$log" >&2) ||
			die "run $i failed (see $log)"
		if grep -qi "lost" "$log"; then
			echo "warning: run $i lost trace data (see $log)" >&2
		fi
		[ "$keep" = 1 ] || rm -f "$dir/record$i.data"
	done
}

compare()
{
	local out=$1 phase

	for phase in before after; do
		ls "$out/$phase"/run*.csv >/dev/null 2>&1 ||
			die "no $phase runs in $out/$phase"
	done
	if ! cmp -s "$out/before/settings" "$out/after/settings"; then
		echo "warning: before and after ran with different settings:" >&2
		diff "$out/before/settings" "$out/after/settings" >&2 || true
	fi
	if ! command -v python3 >/dev/null; then
		echo "python3 missing: copy $out to a host and run"
		echo "scripts/tlb_table.py compare $out/before $out/after"
		return 0
	fi
	python3 "$HERE/tlb_table.py" compare "$out/before" "$out/after" |
		tee "$out/tables.txt"
}

main()
{
	local phase="" out="" aux=4M tracer=arm_spe_0 runs=5 cpu="" keep=0 opt
	local -a workload

	while getopts "p:o:m:t:r:C:kh" opt; do
		case "$opt" in
		p) phase=$OPTARG ;;
		o) out=$OPTARG ;;
		m) aux=$OPTARG ;;
		t) tracer=$OPTARG ;;
		r) runs=$OPTARG ;;
		C) cpu=$OPTARG ;;
		k) keep=1 ;;
		*) usage ;;
		esac
	done
	shift $((OPTIND - 1))
	case "$phase" in
	before | after | compare) ;;
	*) usage ;;
	esac
	case "$tracer" in
	arm_spe_* | cs_etm) ;;
	*) die "unknown tracer $tracer" 2 ;;
	esac
	[[ "$runs" =~ ^[1-9][0-9]*$ ]] || die "bad run count $runs" 2
	[[ "$aux" =~ ^[0-9]+[BKMGbkmg]?$ ]] || die "bad AUX size $aux" 2
	out=${out:-${PERF_AUX_OUT:-$HERE/../out}/tlb-bench}

	if [ "$phase" = compare ]; then
		compare "$out"
		return
	fi

	if [ $# -gt 0 ]; then
		workload=("$@")
	else
		workload=(perf bench mem memset -f default -s 64MB -l 50)
	fi
	if [ -z "$cpu" ]; then
		cpu=$(default_cpu)
	fi
	[[ "$cpu" =~ ^[0-9]+$ ]] || die "bad CPU $cpu" 2

	check_board "$tracer" "$cpu"
	run_phase "$out/$phase" "$tracer" "$aux" "$cpu" "$runs" "$keep" \
		"${workload[@]}"
	if [ "$phase" = after ] && [ -d "$out/before" ]; then
		compare "$out"
	else
		echo "raw perf stat output: $out/$phase/run*.csv"
	fi
}

main "$@"
