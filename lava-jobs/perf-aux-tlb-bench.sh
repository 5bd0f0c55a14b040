#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The TLB benchmark, on boards with SPE or TRBE (docs/tlb-benchmark.md):
# what the trace unit's writes through the vmap() of the perf AUX buffer
# cost the traced workload in TLB walks and refills, on a "before" and an
# "after" kernel.  POSIX sh and awk; compare works on a host too.
#
# Usage:
#   perf-aux-tlb-bench.sh -p before|after|compare [-o DIR] [-m SIZE]
#	[-t arm_spe_0|cs_etm] [-r RUNS] [-C CPU] [-k] [-- WORKLOAD...]
#   -o DIR     output directory (default: out/tlb-bench of the checkout);
#	      DIR/PHASE/runN.csv is run N's perf stat -x, output, DIR/tables.txt
#	      the tables that after and compare print
#   -m SIZE    AUX buffer size, as perf record -m ,SIZE (default 4M)
#   -t TRACER  arm_spe_0 (default) or cs_etm with a TRBE sink
#   -r RUNS    runs per phase (default 5)
#   -C CPU     CPU to pin to (default: the first isolated CPU, else the last
#	      online one)
#   -k         keep each run's perf.data
#   WORKLOAD   default: perf bench mem memset over 64 MB, 50 times
# Exit status: 0 done, 1 a run failed or an event is missing, 2 usage,
# 4 "SKIP: <reason>" (not root, no perf, no TLB events as under QEMU, no
# tracer).  TLB_BENCH_PMU_DIR replaces /sys/bus/event_source/devices.
#

EVENTS=dtlb_walk,l1d_tlb,l1d_tlb_refill,l2d_tlb_refill
EVENTS=$EVENTS,dtlb_walk:u,l1d_tlb:u,l1d_tlb_refill:u,l2d_tlb_refill:u
PMU_DIR=${TLB_BENCH_PMU_DIR:-/sys/bus/event_source/devices}
CPU_DIR=/sys/devices/system/cpu

usage()
{
	sed -n '/^# Usage:/,/^#$/s/^# \{0,1\}//p' "$0" >&2
	exit 2
}

die()
{
	echo "tlb-bench: error: $1" >&2
	exit "${2:-1}"
}

skip()
{
	echo "SKIP: $1"
	exit 4
}

# cpu_in_list CPU LIST: whether CPU is in a sysfs list such as 0-3,6.
cpu_in_list()
{
	echo "$2" | awk -v cpu="$1" -F, '{
		for (i = 1; i <= NF; i++) {
			n = split($i, r, "-")
			if (n && cpu >= r[1] + 0 && cpu <= r[n] + 0)
				found = 1
		}
	} END { exit !found }'
}

default_cpu()
{
	cpu=$(cat "$CPU_DIR/isolated" 2> /dev/null)
	cpu=${cpu%%[,-]*}
	if [ -z "$cpu" ]; then
		cpu=$(cat "$CPU_DIR/online")
		cpu=${cpu##*[,-]}
		echo "note: no isolated CPU (isolcpus=), the workload shares CPU $cpu" >&2
	fi
}

# Each failing check skips with a constant reason that logs can be searched for.
check_board()
{
	[ "$(id -u)" = 0 ] || skip "needs root"
	for tool in perf taskset; do
		command -v $tool > /dev/null 2>&1 || skip "$tool not installed"
	done
	# perf stat prints the counts, or why not, on stderr.
	if ! said=$(perf stat -x, -e "$EVENTS" -- true 2>&1); then
		case $said in
		*"event syntax error"*) skip "TLB PMU events missing" ;;
		esac
		die "perf stat failed: $said"
	fi
	case $said in
	*"<not supported>"*) skip "TLB PMU events not supported" ;;
	esac
	[ -d "$PMU_DIR/$tracer" ] || skip "no $tracer PMU"
	# cs_etm with only an ETR or ETF sink traces, but not through TRBE.
	if [ "$tracer" = cs_etm ] && ! ls -d "$PMU_DIR"/cs_etm/sinks/trbe* > /dev/null 2>&1; then
		skip "no TRBE sink"
	fi
	if [ -r "$PMU_DIR/$tracer/cpumask" ]; then
		cpus=$(cat "$PMU_DIR/$tracer/cpumask")
		cpu_in_list "$cpu" "$cpus" || die "CPU $cpu has no $tracer (cpumask $cpus)" 2
	fi
}

# run_phase DIR WORKLOAD...: perf stat counts the workload while perf record
# traces perf stat, and so the workload, all on one CPU.
run_phase()
{
	dir=$1
	shift
	# Stale runN.csv of an earlier, longer phase would enter the averages.
	rm -rf "$dir"
	mkdir -p "$dir" || exit 1
	printf 'tracer=%s\naux=%s\ncpu=%s\nruns=%s\nworkload=%s\n' \
		"$tracer" "$aux" "$cpu" "$runs" "$*" > "$dir/settings"
	printf 'kernel=%s\nperf=%s\n%s\n' "$(uname -r)" "$(perf --version)" \
		"$(date -u +%Y-%m-%dT%H:%M:%SZ)" > "$dir/info"
	i=1
	while [ "$i" -le "$runs" ]; do
		echo "== ${dir##*/} run $i/$runs on CPU $cpu, $tracer, AUX $aux"
		log=$dir/record$i.log
		taskset -c "$cpu" perf record -e "$tracer//" -m ",$aux" \
			-o "$dir/record$i.data" -- perf stat -x, \
			-o "$dir/run$i.csv" -e "$EVENTS" -- "$@" 2> "$log"
		status=$?
		cat "$log" >&2
		[ "$status" = 0 ] || die "run $i failed (see $log)"
		if grep -qi lost "$log"; then
			echo "warning: run $i lost trace data (see $log)" >&2
		fi
		# The trace is only the load, and would fill a board's disk.
		[ -n "$keep" ] || rm -f "$dir/record$i.data"
		i=$((i + 1))
	done
}

# run_files DIR: DIR's runN.csv in run order.
run_files()
{
	for f in "$1"/run*.csv; do
		n=${f##*/run}
		n=${n%.csv}
		case $n in
		'' | *[!0-9]*) ;;
		*) echo "$n $f" ;;
		esac
	done | sort -n | cut -d' ' -f2-
}

# tables N FILE...: the first N files are the before runs, the rest the after
# runs; per event the runs of each kernel, their average and Diff. = (after -
# before) / before.  An event perf could not count in every run is missing
# (n/a), never 0, and the status is 1.
tables()
{
	nbefore=$1
	shift
	awk -F, -v events="$EVENTS" -v nbefore="$nbefore" '
	BEGIN {
		for (i = 1; i < ARGC; i++)
			file[ARGV[i]] = i
		nruns["before"] = nbefore
		nruns["after"] = ARGC - 1 - nbefore
		nmax = nbefore > ARGC - 1 - nbefore ? nbefore : ARGC - 1 - nbefore
	}
	/^#/ || NF < 3 { next }
	{
		run = file[FILENAME]
		side = run <= nbefore ? "before" : "after"
		k = side SUBSEP (side == "before" ? run : run - nbefore)
		value = $1; event = $3
		gsub(/^[ \t]+|[ \t]+$/, "", value)
		gsub(/^[ \t]+|[ \t]+$/, "", event)
		# "pmu/event/modifiers", as perf names events on big.LITTLE
		if (split(event, p, "/") == 3 && p[1] != "" && p[2] != "")
			event = p[3] == "" ? p[2] : p[2] ":" p[3]
		counted = value ~ /^[0-9]+(\.[0-9]+)?$/
		if (!counted && value != "<not counted>" && value != "<not supported>")
			next
		if (!(event in known)) {
			known[event] = 1
			order[++nseen] = event
		}
		k = k SUBSEP event
		# Several PMUs (hybrid CPUs): the counts add up.
		if (!(k in val) || (!(k in num) && counted)) {
			val[k] = value
			if (counted)
				num[k] = value + 0
		} else if ((k in num) && counted) {
			num[k] += value
		}
	}
	function reading(k) {
		if (!(k in val))
			return "missing"
		if (!(k in num))
			return val[k]
		return sprintf(num[k] == int(num[k]) ? "%.0f" : "%.1f", num[k])
	}
	function average(side, e,    i, sum) {
		for (i = 1; i <= nruns[side]; i++) {
			if (!((side SUBSEP i SUBSEP e) in num))
				return ""
			sum += num[side, i, e]
		}
		return sum / nruns[side]
	}
	function cells(r, side, e,    i) {
		cell[r, 0] = side
		for (i = 1; i <= nmax; i++)
			cell[r, i] = i > nruns[side] ? "-" : reading(side SUBSEP i SUBSEP e)
		avg[side] = average(side, e)
		cell[r, nmax + 1] = avg[side] == "" ? "n/a" : sprintf("%.1f", avg[side])
	}
	# The published layout: Run1..RunN, Avg. per kernel, then Diff.
	function table(e,    i, c, r, w, b, line) {
		cell[0, 0] = ""
		cell[3, 0] = "Diff."
		for (i = 1; i <= nmax; i++) {
			cell[0, i] = "Run" i
			cell[3, i] = ""
		}
		cell[0, nmax + 1] = "Avg."
		cells(1, "before", e)
		cells(2, "after", e)
		b = avg["before"]
		if (b == "" || avg["after"] == "" || b == 0) {
			cell[3, nmax + 1] = "n/a"
			missing = missing (missing == "" ? "" : ", ") e
		} else {
			cell[3, nmax + 1] = sprintf("%+.2f%%", (avg["after"] - b) / b * 100)
		}
		for (c = 0; c <= nmax + 1; c++)
			for (r = 0; r <= 3; r++)
				if (length(cell[r, c]) > w[c])
					w[c] = length(cell[r, c])
		report = report (report == "" ? "" : "\n\n") e
		for (r = 0; r <= 3; r++) {
			line = "|"
			for (c = 0; c <= nmax + 1; c++)
				line = line " " sprintf(c ? "%" w[c] "s" : "%-" w[c] "s", cell[r, c]) " |"
			report = report "\n" line
			if (r > 0)
				continue
			line = "|"
			for (c = 0; c <= nmax + 1; c++)
				line = line sprintf("%" (w[c] + 2) "s", "") "|"
			gsub(/ /, "-", line)
			report = report "\n" line
		}
	}
	END {
		# The published events first, then any other, in the order seen.
		ne = split(events, first, ",")
		for (i = 1; i <= ne; i++)
			if (first[i] in known)
				table(first[i])
		for (i = 1; i <= nseen; i++)
			if (index("," events ",", "," order[i] ",") == 0)
				table(order[i])
		if (missing != "")
			report = report "\n\nmissing (not counted in every run): " missing
		print report
		exit (missing != "")
	}' "$@"
}

compare()
{
	before=$(run_files "$out/before")
	[ -n "$before" ] || die "no before runs in $out/before"
	after=$(run_files "$out/after")
	[ -n "$after" ] || die "no after runs in $out/after"
	# Other settings make the Diff. meaningless, yet the tables may help.
	changed=$(diff -U0 "$out/before/settings" "$out/after/settings" 2>&1)
	if [ -n "$changed" ]; then
		echo "warning: before and after ran with different settings:" >&2
		echo "$changed" >&2
	fi
	# One file a line: a directory name may hold spaces.
	IFS='
'
	set -f
	# shellcheck disable=SC2086
	set -- $before
	nbefore=$#
	# shellcheck disable=SC2086
	set -- "$@" $after
	set +f
	unset IFS
	tables "$nbefore" "$@" > "$out/tables.txt"
	status=$?
	cat "$out/tables.txt"
	return $status
}

phase='' out='' aux=4M tracer=arm_spe_0 runs=5 cpu='' keep=''
while getopts p:o:m:t:r:C:kh opt; do
	case $opt in
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
[ $# -gt 0 ] || set -- perf bench mem memset -f default -s 64MB -l 50
[ -n "$out" ] || out=$(cd "$(dirname "$0")/.." && pwd)/out/tlb-bench

case $phase in
before | after | compare) ;;
*) usage ;;
esac
case $tracer in
arm_spe_* | cs_etm) ;;
*) die "unknown tracer $tracer" 2 ;;
esac
case $runs in
'' | 0* | *[!0-9]*) die "bad run count $runs" 2 ;;
esac
case $aux in
'' | [!0-9]* | *[!0-9BKMGbkmg]* | *[BKMGbkmg]?*) die "bad AUX size $aux" 2 ;;
esac

if [ "$phase" = compare ]; then
	compare
	exit
fi
[ -n "$cpu" ] || default_cpu
case $cpu in
'' | *[!0-9]*) die "bad CPU $cpu" 2 ;;
esac
check_board
run_phase "$out/$phase" "$@"
if [ "$phase" = after ] && [ -d "$out/before" ]; then
	compare
	exit
fi
echo "raw perf stat output: $out/$phase/run*.csv"
