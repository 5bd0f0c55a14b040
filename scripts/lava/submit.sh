#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Submission and collection as a LAVA lab's user does them (issue 16): the
# jobs of the chosen runs, rendered from lava-jobs/ for the builds the
# pipeline made, submitted through the server's REST API all at once (the
# lab runs them side by side, a device each), waited for with a bound, and
# each job's console fetched back through the API and split by the direct
# run's own splitters (scripts/results.py kunit, kselftest) into
# out/results/<run>/: the same KTAP files, the same report as make run's.
#
# Usage: scripts/lava/submit.sh [RUN|JOB.yaml]...
#   RUN       a run as make run names its results (scripts/lib.sh
#             result_name): <kernel>-<base>-<target>[-<variant>], e.g.
#             reference-7.3-arm64-4k; kernel reference or stock, target
#             arm64-4k or arm64-16k (lava-jobs' QEMU jobs), a variant
#             without boot parameters (the jobs pass none).  Its build:
#             $PERF_AUX_CACHE/trees/<base>-<kernel>/.build-<target>[-<variant>].
#             Default: the run KERNEL, BASE, TARGET, VARIANT select.
#   JOB.yaml  a job file as it is: submitted, waited for, its test cases
#             printed; nothing goes to out/results.
#
# Environment:
#   LAB              the server (default http://127.0.0.1:8000/, the local
#                    lab of scripts/lava/lab.sh, PERF_AUX_LAB_PORT)
#   LAVA_TOKEN       the API token to submit with, or LAVA_TOKEN_FILE, a
#                    file holding it; for the local lab the default is its
#                    token file.  The token is never printed and never on a
#                    command line (curl reads its header from a 0600 file).
#   LAVA_WAIT        seconds from submission the jobs may take, all of them
#                    (default 3600: a QEMU job's own timeout is 40 minutes);
#                    jobs not finished then are canceled
#   LAVA_LAB_FILE    the lab file lava-jobs/generate.py renders with (device
#                    type, test definition repository); default
#                    lava-jobs/lab.example.yaml, its test definitions taken
#                    from this checkout (a file:// git repository)
#   LAVA_ARTIFACTS_URL  the URL at which the lab's workers read
#                    $PERF_AUX_OUT/lava/submit/ (kernels and ramdisks are
#                    staged there); default file://, for a worker on this
#                    machine, and needed for any other lab
#
# A run's results: out/results/<run>/ (<suite>.ktap, source.txt with a
# "lava:" line naming the job), written whole beside and then moved into
# place, replacing a directory of the same name as a new make run does (it
# is the same run, run by LAVA); its console logs out/logs/<run>-kunit.log
# (the boot, KUnit) and <run>-kselftest.log (from the ramdisk's init on),
# the job's log out/logs/<run>-lava.yaml; out/report.md.
#
# Exit: 0 every job Complete and no test failed; 1 a test failed (its
# results written, as make run); 2 nothing ran: bad input, no or a refused
# token, the server unreachable or refusing a job (the reason, one line);
# 3 infrastructure error: a job ended Incomplete or Canceled, or was not
# finished within LAVA_WAIT and was canceled: LAVA's reason is printed,
# nothing is written to out/results for it, and it counts as neither pass
# nor fail.

set -euo pipefail
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/artifacts.sh"

LOCAL_URL=http://127.0.0.1:${PERF_AUX_LAB_PORT:-8000}
LAB_URL=${LAB:-$LOCAL_URL}
LAB_URL=${LAB_URL%/}
API=$LAB_URL/api/v0.2
WAIT=${LAVA_WAIT:-3600}
LAB_FILE=${LAVA_LAB_FILE:-$PERF_AUX_ROOT/lava-jobs/lab.example.yaml}
# Debian's python (python3-yaml, python3-jinja2), as the other LAVA tools.
PY=/usr/bin/python3
HELPER="$PY $PERF_AUX_ROOT/scripts/lava/lava_results.py"
# Seconds a canceled job may take to reach Finished; poll interval.
CANCEL_WAIT=60
POLL=5
# The exit status of an infrastructure error.
INFRA=3

say()
{
	echo "submit: $*"
}

# local_env CMD...: CMD without a proxy for the loopback (lab.sh's lab).
local_env()
{
	env NO_PROXY=127.0.0.1,localhost no_proxy=127.0.0.1,localhost "$@"
}

# local_lab: LAB is the lab scripts/lava/lab.sh runs on this machine.
local_lab()
{
	case "$LAB_URL" in
	"$LOCAL_URL" | "http://localhost:${PERF_AUX_LAB_PORT:-8000}") return 0 ;;
	esac
	return 1
}

# auth_header: the token, from LAVA_TOKEN or a file, as a curl header in
# a file of our own (0600): never an argument of a command, never printed.
auth_header()
{
	local token=${LAVA_TOKEN:-} file=${LAVA_TOKEN_FILE:-}

	if [ -z "$token" ]; then
		if [ -z "$file" ] && local_lab; then
			file=$PERF_AUX_CACHE/lab/token
		fi
		[ -n "$file" ] ||
			die "submit: no token for $LAB_URL/: set LAVA_TOKEN or LAVA_TOKEN_FILE"
		[ -r "$file" ] || die "submit: cannot read the token file $file"
		token=$(tr -d ' \t\r\n' < "$file")
	fi
	[ -n "$token" ] || die "submit: the token for $LAB_URL/ is empty"
	(umask 077 && printf 'Authorization: Token %s\n' "$token" > "$PRIVATE/auth")
}

# request METHOD PATH [JSON_FILE]: one API call; its body goes to $BODY,
# curl's complaint to $BODY.err, the HTTP status (000: no answer) to stdout.
request()
{
	local method=$1 path=$2
	local -a data=()

	[ $# -lt 3 ] || data=(-H 'Content-Type: application/json' --data-binary @"$3")
	local_env curl -sS --max-time 60 -X "$method" -H @"$PRIVATE/auth" \
		"${data[@]}" -o "$BODY" -w '%{http_code}' "$API/$path" \
		2> "$BODY.err" || true
}

# reason: what the server said in $BODY (DRF's "detail", LAVA's "message"),
# on one line.
reason()
{
	$PY - "$BODY" <<-'EOF' 2>/dev/null || head -c 300 "$BODY" | tr '\n' ' '
	import json, sys
	d = json.load(open(sys.argv[1]))
	print(' '.join(str(d.get('message') or d.get('detail') or d).split()))
	EOF
}

# http_error STATUS PATH: the one line that says why a call failed.
http_error()
{
	case "$1" in
	000) echo "$LAB_URL/ unreachable: $(sed -n '1s/^curl: ([0-9]*) //p' "$BODY.err")" ;;
	401 | 403) echo "$LAB_URL/ refused the token (HTTP $1: $(reason))" ;;
	*) echo "$LAB_URL/api/v0.2/$2: HTTP $1: $(reason)" ;;
	esac
}

# fetch PATH FILE: GET PATH into FILE; 1 when that fails, the reason in
# $PRIVATE/why.
fetch()
{
	local status

	status=$(request GET "$1")
	if [ "$status" = 200 ]; then
		cp "$BODY" "$2"
		return
	fi
	http_error "$status" "$1" > "$PRIVATE/why"
	return 1
}

# api PATH: GET PATH, the body on stdout; a failure is fatal (exit 2), so
# never in a pipeline: its caller takes the body from a file.
api()
{
	fetch "$1" "$PRIVATE/api.json" || die "submit: $(cat "$PRIVATE/why")"
	cat "$PRIVATE/api.json"
}

# json EXPR: EXPR evaluated on the JSON document on stdin (as d).
json()
{
	$PY -c 'import json, sys; d = json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"
}

# lab_user: the token is good and the server answers: the user it names.
lab_user()
{
	local user

	api system/whoami/ > "$PRIVATE/whoami.json"
	user=$(json 'd["user"]' < "$PRIVATE/whoami.json")
	[ -n "$user" ] || die "submit: $LAB_URL/ took the token for no user"
	echo "$user"
}

# default_run: the run KERNEL, BASE, TARGET and VARIANT select.
default_run()
{
	[ -z "${KERNEL_SRC:-}" ] && [ -z "${SERIES:-}" ] ||
		die "submit: KERNEL_SRC and SERIES runs have no LAVA job here; name a run"
	result_name "${KERNEL:-reference}" "${BASE:-$(default_base)}" \
		"${TARGET:-arm64-4k}" "${VARIANT:-default}"
}

# run_parts RUN: "kernel base target variant" of a run name, checked.
run_parts()
{
	local run=$1 re='^(reference|stock)-([0-9]+\.[0-9]+)-(arm64-[0-9]+k|x86_64)(-(.+))?$'

	[[ $run =~ $re ]] ||
		die "submit: $run: not a run name <reference|stock>-<base>-<target>[-<variant>]"
	local kernel=${BASH_REMATCH[1]} base=${BASH_REMATCH[2]}
	local target=${BASH_REMATCH[3]} variant=${BASH_REMATCH[5]:-default}

	check_base "$base"
	check_target "$target"
	check_variant "$variant"
	case "$target" in
	arm64-4k | arm64-16k) ;;
	*) die "submit: $run: lava-jobs has no job for $target (qemu-arm64-4k, qemu-arm64-16k)" ;;
	esac
	[ -z "$(variant_args "$variant")" ] ||
		die "submit: $run: VARIANT=$variant adds boot parameters, which the LAVA jobs do not pass"
	[ "$(variant_cpus "$variant")" = 2 ] ||
		die "submit: $run: VARIANT=$variant boots $(variant_cpus "$variant") CPUs, the LAVA jobs 2"
	echo "$kernel $base $target $variant"
}

# artifacts_url: the URL of $STAGE/.. for the lab's workers.
artifacts_url()
{
	if [ -n "${LAVA_ARTIFACTS_URL:-}" ]; then
		echo "${LAVA_ARTIFACTS_URL%/}"
	else
		echo "file://$(dirname "$STAGE")"
	fi
}

# stage_run RUN: the job of RUN in $STAGE/RUN/job.yaml, on copies of its
# kernel and ramdisk (a build may change under a running job); its
# source line in $STAGE/RUN/source.txt.
stage_run()
{
	local run=$1 parts kernel base target variant tree build dir missing url
	local -a sets

	parts=$(run_parts "$run")
	read -r kernel base target variant <<< "$parts"
	tree=$PERF_AUX_CACHE/trees/$base-$kernel
	build=$tree/$(build_dir "$target" "$variant")
	[ -f "$build/arch/arm64/boot/Image.gz" ] && [ -f "$build/initramfs.cpio.gz" ] ||
		die "submit: $run: no kernel and ramdisk in $build (make run KERNEL=$kernel BASE=$base TARGET=$target VARIANT=$variant)"
	missing=$(kernel_ready "$build") ||
		die "submit: $run: the kernel of $build has no $missing, which LAVA's overlay disk needs (scripts/config/lava.config)"
	dir=$STAGE/$run
	mkdir -p "$dir"
	cp "$build/arch/arm64/boot/Image.gz" "$dir/Image.gz" &&
		ramdisk "$build" "$dir" > /dev/null ||
		die "submit: $run: cannot copy the kernel and ramdisk of $build"
	echo "source: $(cat "$tree/.perf_aux-source" 2>/dev/null || echo unknown)" \
		> "$dir/source.txt"
	url=$(artifacts_url)/$(basename "$STAGE")/$run
	sets=(--set "jobs.qemu-$target.kernel=$url/Image.gz"
	      --set "jobs.qemu-$target.ramdisk=$url/initramfs.cpio.gz")
	# Strict where the kernel carries large vmap: not the stock control,
	# nor a tree of the user's whose content is not known.
	case $kernel in
	stock | custom) sets+=(--set "jobs.qemu-$target.strict=no") ;;
	esac
	if [ -z "${LAVA_LAB_FILE:-}" ]; then
		sets+=(--set "testdefs.repository=$(artifacts_url)/$(basename "$STAGE")/testdefs"
		       --set testdefs.revision=main)
	fi
	$PY "$PERF_AUX_ROOT/lava-jobs/generate.py" --lab "$LAB_FILE" \
		--out "$dir" "${sets[@]}" "qemu-$target" > /dev/null ||
		die "submit: $run: lava-jobs/generate.py failed"
	# The run's name in the job's, so that the lab's lists tell runs apart.
	sed "s/^job_name: .*/job_name: perf_aux $run/" "$dir/qemu-$target.yaml" \
		> "$dir/job.yaml"
	rm "$dir/qemu-$target.yaml"
}

# submit_job FILE: POSTs FILE's job; prints its id.  A refusal prints the
# server's reason.
submit_job()
{
	local status

	$PY -c 'import json, sys; print(json.dumps({"definition": open(sys.argv[1]).read()}))' \
		"$1" > "$PRIVATE/job.json" || die "submit: cannot read $1"
	status=$(request POST jobs/ "$PRIVATE/job.json")
	case "$status" in
	201) json 'd["job_ids"][0]' < "$BODY" ;;
	400) echo "$LAB_URL/ refused $1 (HTTP 400): $(reason)" >&2; return 1 ;;
	*) http_error "$status" jobs/ >&2; return 1 ;;
	esac
}

# cancel_all: cancels every job submitted so far that has not finished.
cancel_all()
{
	local i

	for i in "${!IDS[@]}"; do
		[ -z "${HEALTH[$i]:-}" ] || continue
		request GET "jobs/${IDS[$i]}/cancel/" > /dev/null
		say "job ${IDS[$i]} (${NAMES[$i]}): canceled"
	done
}

# job_state ID: "state health device" of job ID, or "Unknown" when the
# server does not say.
job_state()
{
	local status

	status=$(request GET "jobs/$1/")
	if [ "$status" = 200 ]; then
		json 'd["state"] + " " + d["health"] + " " + str(d["actual_device"])' < "$BODY"
	else
		echo "Unknown - $(http_error "$status" "jobs/$1/")"
	fi
}

# state_text STATE: job_state's words as a reader wants them: "Running
# on qemu-01", "Submitted".
state_text()
{
	local state device

	read -r state _ device <<< "$1"
	case "$state" in
	Unknown) echo "state unknown: ${1#Unknown - }" ;;
	*) echo "$state${device:+ on $device}" | sed 's/ on None$//' ;;
	esac
}

# job_times ID: where and how long job ID ran, from the server's times.
job_times()
{
	fetch "jobs/$1/" "$PRIVATE/times.json" || {
		echo "times unknown ($(cat "$PRIVATE/why"))"
		return
	}
	$PY - "$PRIVATE/times.json" <<-'EOF'
	import json, sys
	from datetime import datetime
	d = json.load(open(sys.argv[1]))
	t = {k: datetime.fromisoformat(d[k].rstrip("Z"))
	     for k in ("submit_time", "start_time", "end_time") if d.get(k)}
	queued = (t["start_time"] - t["submit_time"]).total_seconds() if "start_time" in t else 0
	ran = (t["end_time"] - t["start_time"]).total_seconds() if len(t) == 3 else 0
	print("on %s, queued %.0f s, ran %.0f s" % (d["actual_device"], queued, ran))
	EOF
}

# worker_of DEVICE: "<worker> <state>" of the worker DEVICE belongs to.
worker_of()
{
	local worker

	fetch "devices/$1/" "$PRIVATE/device.json" &&
	worker=$(json 'd["worker_host"]' < "$PRIVATE/device.json") &&
	fetch "workers/$worker/" "$PRIVATE/worker.json" &&
		echo "$worker $(json 'd["state"]' < "$PRIVATE/worker.json")"
}

# wait_all: until every job has finished or LAVA_WAIT has passed since the
# submission; then what is left is canceled and given CANCEL_WAIT seconds.
# HEALTH[i] is each job's health, "" while it runs.
wait_all()
{
	local deadline=$((START + WAIT)) i state left last=() times

	say "waiting for job(s) ${IDS[*]}, at most $WAIT s from submission (LAVA_WAIT)"
	while :; do
		left=0
		for i in "${!IDS[@]}"; do
			[ -z "${HEALTH[$i]:-}" ] || continue
			state=$(job_state "${IDS[$i]}")
			if [ "${state%% *}" = Finished ]; then
				read -r _ "HEALTH[$i]" _ <<< "$state"
				times=$(job_times "${IDS[$i]}")
				RAN[i]=$(sed -n 's/.*, ran \([0-9]*\) s$/\1/p' <<< "$times")
				say "job ${IDS[$i]} (${NAMES[$i]}): ${HEALTH[$i]}, $(($(date +%s) - START)) s from submission, $times"
				continue
			fi
			left=$((left + 1))
			if [ "$state" != "${last[$i]:-}" ]; then
				say "job ${IDS[$i]} (${NAMES[$i]}): $(state_text "$state")"
				last[i]=$state
			fi
			STATE[i]=$state
		done
		if [ "$left" -eq 0 ]; then
			lab_time
			return 0
		fi
		[ "$(date +%s)" -lt "$deadline" ] || break
		sleep "$POLL"
	done
	timed_out
}

# lab_time: the jobs' wall time from submission against the sum of their
# run times, what one device would have taken running them one after
# another (issue 16: the lab's parallel runs against serial ones).
lab_time()
{
	local i sum=0

	[ "${#IDS[@]}" -gt 1 ] || return 0
	for i in "${!IDS[@]}"; do
		sum=$((sum + ${RAN[$i]:-0}))
	done
	say "${#IDS[@]} jobs in $(($(date +%s) - START)) s from submission; one after another they would run $sum s"
}

# timed_out: the jobs LAVA_WAIT left unfinished: canceled, and each one's
# end reported (a job on a worker that went away stays Canceling until
# the worker comes back: LAVA's server cannot end it alone).
timed_out()
{
	local i state deadline=$(($(date +%s) + CANCEL_WAIT)) worker was

	for i in "${!IDS[@]}"; do
		[ -z "${HEALTH[$i]:-}" ] || continue
		request GET "jobs/${IDS[$i]}/cancel/" > /dev/null
	done
	for i in "${!IDS[@]}"; do
		[ -z "${HEALTH[$i]:-}" ] || continue
		until state=$(job_state "${IDS[$i]}"); [ "${state%% *}" = Finished ] ||
			[ "$(date +%s)" -ge "$deadline" ]; do
			sleep "$POLL"
		done
		worker=$(worker_of "$(echo "${STATE[$i]}" | cut -d' ' -f3)" || true)
		was="$(state_text "${STATE[$i]}")${worker:+, worker ${worker% *} ${worker##* }}"
		if [ "${state%% *}" = Finished ]; then
			read -r _ "HEALTH[$i]" _ <<< "$state"
			FAULT[i]="not finished within $WAIT s ($was): canceled, ended ${HEALTH[$i]}"
		else
			HEALTH[i]=Unfinished
			FAULT[i]="not finished within $WAIT s ($was): canceled, still $(state_text "$state") after $CANCEL_WAIT s more (a job ends when its worker takes the cancel)"
		fi
	done
}

# collect I: job I's results.  A run's: its console through the API, split
# by the direct run's splitters in $STAGE/RUN/results, then moved into
# $PERF_AUX_OUT/results/RUN whole.  A job file's: its test cases printed.
# 1 (FAULT[I] says why) when a run's results cannot be had.
collect()
{
	local i=$1 id=${IDS[$1]} run=${NAMES[$1]} dir tmp res

	dir=$STAGE/${KINDS[$i]}
	mkdir -p "$dir/$id"
	fetch "jobs/$id/logs/" "$dir/$id/log.yaml" || {
		FAULT[i]="Complete, but its log: $(cat "$PRIVATE/why")"
		return 1
	}
	if [ "${KINDS[$i]}" = jobs ]; then
		print_cases "$id" "$dir/$id"
		return
	fi
	tmp=$dir/results
	rm -rf "$tmp"
	mkdir -p "$tmp"
	$HELPER console "$dir/$id/log.yaml" "$dir/kunit.log" "$dir/kselftest.log" || {
		FAULT[i]="Complete, but its log has no console"
		return 1
	}
	python3 "$PERF_AUX_ROOT/scripts/results.py" kunit "$dir/kunit.log" "$tmp" &&
	python3 "$PERF_AUX_ROOT/scripts/results.py" kselftest "$dir/kselftest.log" "$tmp" || {
		FAULT[i]="Complete, but its console could not be split"
		return 1
	}
	ls "$tmp"/*.ktap > /dev/null 2>&1 || {
		FAULT[i]="Complete, but its console holds no KTAP"
		return 1
	}
	{
		cat "$dir/source.txt"
		echo "lava: job $id at $LAB_URL/scheduler/job/$id, $(job_times "$id")"
	} > "$tmp/source.txt"
	# Into place: the logs, then the results directory by rename (the old
	# one moved aside first), so that out/results never holds half a run.
	res=$PERF_AUX_OUT/results/$run
	rm -rf "$dir/old"
	mkdir -p "$PERF_AUX_OUT/logs" "$PERF_AUX_OUT/results" &&
	cp "$dir/kunit.log" "$PERF_AUX_OUT/logs/$run-kunit.log" &&
	cp "$dir/kselftest.log" "$PERF_AUX_OUT/logs/$run-kselftest.log" &&
	cp "$dir/$id/log.yaml" "$PERF_AUX_OUT/logs/$run-lava.yaml" &&
	{ [ ! -e "$res" ] || mv "$res" "$dir/old"; } &&
	mv "$tmp" "$res" || {
		FAULT[i]="Complete, but its results could not be moved to $res"
		return 1
	}
	rm -rf "$dir/old"
	COLLECTED+=("$res")
	say "job $id: results in $res"
}

# print_cases ID DIR: a job file's test cases, through the API ("suite.case
# result [measurement units]"): all of a short job, else the counts per
# suite and result and the cases that neither passed nor skipped.
print_cases()
{
	local id=$1 dir=$2

	api "jobs/$id/suites/?limit=1000" > "$dir/suites.json"
	api "jobs/$id/tests/?limit=10000" > "$dir/tests.json"
	$PY - "$dir" > "$dir/results.txt" <<-'EOF'
	import json, sys
	d = sys.argv[1]
	suites = {s['id']: s['name'] for s in json.load(open(d + '/suites.json'))['results']}
	for t in json.load(open(d + '/tests.json'))['results']:
	    m = f" {t['measurement']} {t['unit']}" if t.get('measurement') is not None else ''
	    print(f"{suites.get(t['suite'], t['suite'])}.{t['name']} {t['result']}{m}")
	EOF
	say "job $id: $(wc -l < "$dir/results.txt") results in $dir/results.txt:"
	if [ "$(wc -l < "$dir/results.txt")" -le 20 ]; then
		sed 's/^/  /' "$dir/results.txt"
		return
	fi
	awk '{ split($1, n, "."); c[n[1] " " $2]++ }
	     END { for (k in c) print "  " k ":", c[k] }' "$dir/results.txt" | sort
	awk '$2 != "pass" && $2 != "skip" { print "  " $0 }' "$dir/results.txt" | head -40
}

# infra_error I: job I did not complete: LAVA's reasons, on one line.
infra_error()
{
	local i=$1 id=${IDS[$1]} why errors comment log=$PRIVATE/log.yaml

	why=${FAULT[$i]:-${HEALTH[$i]}}
	if fetch "jobs/$id/logs/" "$log"; then
		errors=$($HELPER errors "$log" | paste -sd ';' | sed 's/;/; /g')
		why="$why${errors:+: $errors}"
	fi
	if fetch "jobs/$id/" "$PRIVATE/job.json"; then
		comment=$(json '" ".join((d["failure_comment"] or "").split())' < "$PRIVATE/job.json")
		why="$why${comment:+; $comment}"
	fi
	echo "submit: infrastructure error: job $id (${NAMES[$i]}) at $LAB_URL/scheduler/job/$id: $why" >&2
}

main()
{
	local arg i id rc=0 user runs=" " version run
	local -a args

	PRIVATE=$(mktemp -d)
	trap 'rm -rf "$PRIVATE"' EXIT
	BODY=$PRIVATE/body
	args=("$@")
	if [ ${#args[@]} -eq 0 ]; then
		run=$(default_run)
		args=("$run")
	fi
	for arg in "${args[@]}"; do
		case "$arg" in
		*.yaml) [ -f "$arg" ] || die "submit: no job file $arg" ;;
		*) run_parts "$arg" > /dev/null
		   [[ $runs != *" $arg "* ]] || die "submit: $arg named twice"
		   runs="$runs$arg "
		   local_lab || [ -n "${LAVA_ARTIFACTS_URL:-}" ] ||
			die "submit: $LAB_URL/ is not this machine's lab: set LAVA_ARTIFACTS_URL to where its workers read $PERF_AUX_OUT/lava/submit/" ;;
		esac
	done
	auth_header
	user=$(lab_user)
	api system/version/ > "$PRIVATE/version.json"
	version=$(json 'd["version"]' < "$PRIVATE/version.json")
	say "$LAB_URL/ as $user, lava-server $version"

	mkdir -p "$PERF_AUX_OUT/lava/submit"
	PERF_AUX_OUT=$(cd "$PERF_AUX_OUT" && pwd)
	STAGE=$(mktemp -d "$PERF_AUX_OUT/lava/submit/$(date +%Y%m%d-%H%M%S)-XXXX")
	chmod 755 "$STAGE"
	FILES=() NAMES=() KINDS=() IDS=() HEALTH=() STATE=() FAULT=() COLLECTED=() RAN=()
	for arg in "${args[@]}"; do
		case "$arg" in
		*.yaml) FILES+=("$arg") NAMES+=("$arg") KINDS+=(jobs) ;;
		*) FILES+=("$STAGE/$arg/job.yaml") NAMES+=("$arg") KINDS+=("$arg") ;;
		esac
	done
	if [ -z "${LAVA_LAB_FILE:-}" ] && [ "$runs" != " " ]; then
		testdefs "$STAGE" > /dev/null || die "submit: cannot make the test definition repository"
	fi
	for i in "${!FILES[@]}"; do
		[ "${KINDS[$i]}" = jobs ] || stage_run "${NAMES[$i]}"
	done

	# All submitted before any is waited for: the lab runs them together.
	START=$(date +%s)
	for i in "${!FILES[@]}"; do
		if ! id=$(submit_job "${FILES[$i]}" 2> "$PRIVATE/refused"); then
			cancel_all
			die "submit: $(cat "$PRIVATE/refused")"
		fi
		IDS[i]=$id
		say "job $id submitted: ${NAMES[$i]} ($LAB_URL/scheduler/job/$id)"
	done
	wait_all

	for i in "${!IDS[@]}"; do
		if [ "${HEALTH[$i]}" = Complete ] && [ -z "${FAULT[$i]:-}" ] &&
		   collect "$i"; then
			continue
		fi
		infra_error "$i"
		rc=$INFRA
	done
	# The staged kernels and ramdisks are the lab's no more.
	rm -f "$STAGE"/*/Image.gz "$STAGE"/*/initramfs.cpio.gz
	if [ ${#COLLECTED[@]} -gt 0 ]; then
		python3 "$PERF_AUX_ROOT/scripts/results.py" summary \
			"${COLLECTED[@]}" --report "$PERF_AUX_OUT/report.md" ||
			[ "$rc" -ne 0 ] || rc=1
	fi
	return $rc
}

main "$@"
