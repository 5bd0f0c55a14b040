#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Reports perf_aux KTAP results to LAVA, one lava-test-case a test case.
# It runs on the device under test, in a busybox ramdisk: POSIX sh and awk
# only, no python.
#
# Usage:
#   perf-aux-ktap-to-lava.sh kunit DIR SUITE...
#	DIR/SUITE/results of each KUnit suite (debugfs, KUnit ran at boot)
#   perf-aux-ktap-to-lava.sh kselftest DIR [BINARY...]
#	runs each perf_aux kselftest that DIR/kselftest-list.txt lists, and
#	each BINARY (required: missing is a failure), with DIR/run_kselftest.sh
#   perf-aux-ktap-to-lava.sh ktap GROUP FILE [VERDICT]
#	one KTAP document (FILE, - for stdin); VERDICT pass|fail|skip is the
#	kselftest runner's verdict on the binary, if there is one
#
# Names (lava-jobs/README.md): perf_aux.<group>.<case>, where <group> is the
# KUnit suite or the kselftest binary and <case> the test's path below it,
# joined with dots (KUnit parameters under their case); characters outside
# [-_A-Za-z0-9.] become _.  No test numbers, no skip reasons.  Every group
# also gets perf_aux.<group>.suite: its overall verdict, and the explicit
# failure when the suite, the binary or its results are missing or cut short.
# perf_aux.kselftest.suite fails when no perf_aux kselftest is installed.
# Each group is one lava-test-set.
#
# Outside LAVA (no lava-test-case on PATH) it prints "name result
# [measurement]" lines instead.
#
# POSIX sh has no "local": the functions share their variables, and none
# recurses or relies on a caller's value surviving a call.

# A diagnostic line giving the translation entries of a case's vmap, e.g.
# "# pagesize_test.c:140:large_chunks_mapped_large:entries 8 for 1024 pages (...)":
# its number is the next result's measurement, in "entries".
UNITS=entries

usage()
{
	sed -n '/^# Usage:/,/^#$/s/^# \{0,1\}//p' "$0" >&2
	exit 2
}

if command -v lava-test-case > /dev/null 2>&1; then
	in_lava=1
else
	in_lava=
fi

set_start()
{
	if [ -n "$in_lava" ]; then
		lava-test-set start "$1"
	fi
}

set_stop()
{
	if [ -n "$in_lava" ]; then
		lava-test-set stop
	fi
}

# case NAME RESULT [MEASUREMENT]
report_case()
{
	if [ -z "$in_lava" ]; then
		echo "$1 $2${3:+ $3}"
	elif [ -n "$3" ]; then
		lava-test-case "$1" --result "$2" --measurement "$3" --units "$UNITS"
	else
		lava-test-case "$1" --result "$2"
	fi
}

# The group name as used in case and set names.
clean()
{
	echo "$1" | sed 's/[^-_A-Za-z0-9.]/_/g'
}

# ktap_cases GROUP VERDICT < KTAP: "result name [measurement]" lines, the
# group's own verdict (perf_aux.GROUP.suite) last.
#
# A result line at indentation L closes the test at L: every test already
# closed at a deeper indentation and not yet claimed is its subtest.  A
# subtest whose parent never printed a result (the kernel or the binary
# died inside it) gets a failed parent named by its "# Subtest:" line.  A
# parent with fewer subtests than its plan announced fails.  A document
# whose only top-level test is the group itself (KUnit's debugfs results,
# a KUnit suite in a console log) is that group: its subtests are the cases.
ktap_cases()
{
	awk -v group="$1" -v verdict="$2" '
	function close_test(ind, name, res,    n, c, l) {
		n = ++nt
		nm[n] = name; rs[n] = res; lv[n] = ind; ms[n] = meas; meas = ""
		for (l in got)
			delete got[l]
		while (sp > 0 && lv[stk[sp]] > ind) {
			c = stk[sp--]
			par[c] = n
			got[lv[c]]++
		}
		# Plans of deeper levels belong to this test (or are stale).
		for (l in plan) {
			if (l + 0 <= ind)
				continue
			if (got[l] + 0 < plan[l] + 0)
				rs[n] = "fail"
			delete plan[l]
		}
		for (l in hopen)
			if (l + 0 > ind)
				delete hopen[l]
		stk[++sp] = n
	}
	function unfinished(deep,    name) {
		name = (deep in hopen) ? hdr[deep] : "unfinished"
		delete hopen[deep]
		meas = ""
		close_test(deep - 4 < top ? top : deep - 4, name, "fail")
	}
	function path(n) {
		if (par[n] && par[n] != wrap)
			return path(par[n]) "." nm[n]
		return nm[n]
	}
	{
		sub(/\r$/, "")
		match($0, /^ */)
		ind = RLENGTH
		s = substr($0, ind + 1)
	}
	s ~ /^K?TAP version [0-9]+$/ {
		if (top < 0)
			top = ind
		next
	}
	s ~ /^# Subtest: / {
		hdr[ind] = substr(s, 12)
		hopen[ind] = 1
		next
	}
	s ~ /^1\.\.[0-9]+/ {
		plan[ind] = substr(s, 4) + 0
		if (top < 0)
			top = ind
		next
	}
	s ~ /^(not ok|ok) [0-9]+( |$)/ {
		if (top < 0)
			top = ind
		res = (s ~ /^not ok/) ? "fail" : "pass"
		sub(/^(not ok|ok) [0-9]+ */, "", s)
		sub(/^- /, "", s)
		dir = ""
		k = index(s, "#")
		if (k) {
			dir = substr(s, k + 1)
			s = substr(s, 1, k - 1)
		}
		sub(/[ \t]+$/, "", s)
		sub(/^[ \t]+/, "", dir)
		if (toupper(substr(dir, 1, 4)) == "SKIP")
			res = "skip"
		# A deeper "# Subtest:" of another name never got its result.
		for (;;) {
			deep = -1
			for (l in hopen)
				if (l + 0 > ind && l + 0 > deep && hdr[l] != s)
					deep = l + 0
			if (deep < 0)
				break
			unfinished(deep)
		}
		close_test(ind, s, res)
		next
	}
	s ~ /^#/ && match(s, /entries [0-9]+ for [0-9]+ pages/) {
		meas = substr(s, RSTART + 8)
		sub(/ .*/, "", meas)
	}
	BEGIN { top = -1; sp = 0; nt = 0 }
	END {
		if (top < 0)
			top = 0
		# Close what the end of the output left open, deepest first.
		for (;;) {
			deep = -1
			for (i = 1; i <= sp; i++)
				if (lv[stk[i]] > top && lv[stk[i]] > deep)
					deep = lv[stk[i]]
			for (l in hopen)
				if (l + 0 > top && l + 0 > deep)
					deep = l + 0
			if (deep < 0)
				break
			unfinished(deep)
		}
		ntop = 0
		for (i = 1; i <= sp; i++)
			ntop++
		wrap = 0
		if (ntop == 1 && nm[stk[1]] == group)
			wrap = stk[1]
		for (n = 1; n <= nt; n++) {
			if (n == wrap)
				continue
			name = path(n)
			gsub(/[^-_A-Za-z0-9.]/, "_", name)
			name = "perf_aux." group "." name
			if (seen[name]++)
				name = name "_dup" seen[name]
			print rs[n], name, ms[n]
		}
		# The group verdict.
		if (wrap) {
			suite = rs[wrap]
		} else {
			fails = 0; skips = 0
			for (i = 1; i <= sp; i++) {
				if (rs[stk[i]] == "fail")
					fails++
				if (rs[stk[i]] == "skip")
					skips++
			}
			if (ntop == 0)
				suite = (verdict != "") ? verdict : "fail"
			else if (fails || ((top in plan) && ntop < plan[top]))
				suite = "fail"
			else if (skips == ntop)
				suite = "skip"
			else
				suite = "pass"
		}
		if (verdict == "fail")
			suite = "fail"
		print suite, "perf_aux." group ".suite"
	}'
}

# report GROUP VERDICT < KTAP
report()
{
	group=$(clean "$1")
	set_start "$group"
	ktap_cases "$group" "$2" | while read -r res name meas; do
		report_case "$name" "$res" "$meas"
	done
	set_stop
}

# missing GROUP WHY: the group's explicit failure.
missing()
{
	group=$(clean "$1")
	echo "perf_aux: $group: $2" >&2
	set_start "$group"
	report_case "perf_aux.$group.suite" fail
	set_stop
}

cmd_ktap()
{
	[ $# -ge 2 ] || usage
	if [ "$2" = - ]; then
		report "$1" "${3:-}"
	elif [ -r "$2" ]; then
		report "$1" "${3:-}" < "$2"
	else
		missing "$1" "no results in $2"
	fi
}

cmd_kunit()
{
	[ $# -ge 2 ] || usage
	dir=$1
	shift
	# On a full root file system debugfs may not be mounted yet.
	if [ ! -d "$dir" ] && [ -d /sys/kernel/debug ] &&
	   ! grep -q ' /sys/kernel/debug debugfs ' /proc/mounts 2>/dev/null; then
		mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
	fi
	tmp=$(mktemp -d)
	for suite in "$@"; do
		# debugfs files have no size: read, then look.
		cat "$dir/$suite/results" > "$tmp/ktap" 2>/dev/null
		if [ -s "$tmp/ktap" ]; then
			report "$suite" "" < "$tmp/ktap"
		else
			missing "$suite" "no KUnit results in $dir/$suite (suite not built in, or kunit.enable=0?)"
		fi
	done
	rm -rf "$tmp"
}

# run_one DIR BINARY TMP: runs one perf_aux kselftest with the kselftest
# runner (its timeout and settings, as the direct run has them) and reports
# the binary's own KTAP, which the runner prefixes with "# ".
run_one()
{
	dir=$1 bin=$2 tmp=$3
	# Through a pipe: the runner reopens /dev/stdout for appending, which
	# on a plain file would write over what went through the first open.
	# The opt-in programs outlast settings' timeout under sanitizers.
	(cd "$dir" && ./run_kselftest.sh -t "perf_aux:$bin" \
		${PERF_AUX_DESTRUCTIVE:+-o 1200}) 2>&1 | cat > "$tmp/out"
	# (busybox awk binds == looser than concatenation: whole strings only)
	verdict=$(awk -v hdr="selftests: perf_aux: $bin" '
		/^(not ok|ok) [0-9]+ / {
			line = $0
			sub(/^(not ok|ok) [0-9]+ /, "", line)
			sub(/ *#.*/, "", line)
			if (line != hdr)
				next
			if ($0 ~ /^not ok/)
				print "fail"
			else if ($0 ~ /# *[Ss][Kk][Ii][Pp]/)
				print "skip"
			else
				print "pass"
			exit
		}' "$tmp/out")
	awk -v hdr="# selftests: perf_aux: $bin" '
		$0 == hdr { on = 1; next }
		on && /^(not ok|ok) [0-9]+ selftests: / { exit }
		on && /^# / { print substr($0, 3) }
		on && $0 == "#" { print "" }' "$tmp/out" > "$tmp/ktap"
	# The binary's own output stays in the job log, for the failures.
	cat "$tmp/out" >&2
	if [ -z "$verdict" ]; then
		echo "perf_aux: $bin: the kselftest runner gave no verdict" >&2
		verdict=fail
	fi
	report "$bin" "$verdict" < "$tmp/ktap"
}

cmd_kselftest()
{
	[ $# -ge 1 ] || usage
	dir=$1
	shift
	bins=$(sed -n 's/^perf_aux://p' "$dir/kselftest-list.txt" 2>/dev/null)
	set_start kselftest
	if [ -n "$bins" ]; then
		report_case perf_aux.kselftest.suite pass
	else
		echo "perf_aux: no perf_aux kselftest in $dir/kselftest-list.txt" >&2
		report_case perf_aux.kselftest.suite fail
	fi
	set_stop
	# Required binaries the list lacks are failures of their own.
	for bin in "$@"; do
		echo "$bins" | grep -qx "$bin" ||
			missing "$bin" "not in $dir/kselftest-list.txt"
	done
	tmp=$(mktemp -d)
	for bin in $bins; do
		if [ -x "$dir/perf_aux/$bin" ]; then
			run_one "$dir" "$bin" "$tmp"
		else
			missing "$bin" "$dir/perf_aux/$bin is missing"
		fi
	done
	rm -rf "$tmp"
}

cmd=${1:-}
[ $# -gt 0 ] && shift
case "$cmd" in
ktap) cmd_ktap "$@" ;;
kunit) cmd_kunit "$@" ;;
kselftest) cmd_kselftest "$@" ;;
*) usage ;;
esac
