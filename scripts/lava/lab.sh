#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A local LAVA lab (issue 16): Debian's lava-server 2023.01, PostgreSQL and
# one lava-worker on this machine, on the loopback address only, with a
# "qemu" device type and two devices, qemu-01 and qemu-02.  The jobs of
# lava-jobs/ go through the whole server path here (submission, scheduler,
# worker, lava-run, logs and results through the API), which lava-run alone
# (scripts/lava/check.sh) does not exercise.
#
# Usage: scripts/lava/lab.sh start|status|stop|selftest [qemu]|submit RUN|JOB.yaml...
#   start     installs what is missing (lava-server, lavacli, postgresql,
#             curl; scripts/deps.sh lava for the dispatcher side), starts
#             PostgreSQL, lava-server (gunicorn, lava-scheduler) and
#             lava-worker, and sets up the user, token, device type,
#             devices and worker
#   status    server reachable, worker online, devices idle; exit 1 if not
#   stop      stops what start started, and only that
#   selftest  start; a job that needs no kernel (a user command of a qemu
#             device, run on the worker) and its results through the API;
#             the fault cases, each a one-line reason and a non-zero exit of
#             scripts/lava/submit.sh with nothing written: a job the
#             server's schema rejects, a wrong and a revoked token, no
#             server on the port, a run whose job ends Incomplete,
#             lava-worker killed under a running job (then started again:
#             the job ends Canceled); stop.  "selftest qemu" also runs
#             PERF_AUX_LAB_RUNS through the lab, submitted together
#             (default reference-<BASE>-arm64-4k, and stock-<BASE>-arm64-4k
#             and reference-<BASE>-arm64-16k where built: two at a time on
#             the two devices), prints their wall time against the sum of
#             their run times, and compares their results with the direct
#             runs' (PERF_AUX_LAB_DIRECT, default out/results) case by case.
#             One "ok - lava: lab: ..." / "not ok - ..." line a check (the
#             lava_lab stage of scripts/check.sh counts them); exit 1 if
#             any is not ok.  Its files: out/lab/.
#   submit    scripts/lava/submit.sh against this lab: the runs' or job
#             files' jobs submitted, waited for, collected
#
# The lab lives in $PERF_AUX_CACHE/lab: run/ (pid files), log/, worker/
# (the worker's token and job directories), token (the perf_aux user's API
# token, 0600, never printed), config/lavacli.yaml (identity "perf_aux").
# Configuration it writes outside: /etc/lava-server/settings.d/00-*.yaml
# (lava-server's own postinst.py), dispatcher-config/devices/qemu-0?.jinja2
# and dispatcher.d/perf-aux-lab/env.yaml.  These stay after stop, so that
# the next start is quick; the database too.
#
# PERF_AUX_LAB_PORT: gunicorn's port on 127.0.0.1 (default 8000).
# Runs as root.  Every wait has a bound; a failure says what and exits 2.

set -euo pipefail
. "$(dirname "$0")/../lib.sh"

LAB_DIR=$PERF_AUX_CACHE/lab
RUN=$LAB_DIR/run
LOGS=$LAB_DIR/log
PORT=${PERF_AUX_LAB_PORT:-8000}
URL=http://127.0.0.1:$PORT
WORKER=perf-aux-lab
DEVICES="qemu-01 qemu-02"
LAB_USER=perf_aux
LAVA_ETC=/etc/lava-server
PY=/usr/bin/python3
# lava-worker is in lava-dispatcher in 2023.01; apache2 and lava-coordinator
# are only recommended by lava-server: gunicorn serves the API itself.
PACKAGES="lava-server lava-dispatcher lavacli postgresql curl"
# Seconds (submit.sh's LAVA_WAIT): a job that needs no kernel, lava-jobs'
# QEMU jobs (their own timeout is 40 minutes; scripts/lava/check.sh allows
# lava-run 1500 s), the job under which the worker is killed, and how
# long its command sleeps (longer than that bound).
HELLO_WAIT=300
QEMU_WAIT=1800
KILL_WAIT=60
SLEEP_SECONDS=150

say()
{
	echo "lab: $*"
}

# local_env CMD...: CMD with no proxy: every address the lab uses is on the
# loopback, and a proxy from the environment would be another address.
local_env()
{
	env -u http_proxy -u https_proxy -u HTTP_PROXY -u HTTPS_PROXY \
		-u all_proxy -u ALL_PROXY NO_PROXY=127.0.0.1,localhost \
		no_proxy=127.0.0.1,localhost "$@"
}

# manage ARGS...: lava-server manage as lavaserver, as postinst.py runs it,
# so that nothing it creates (logs) becomes root's.
manage()
{
	timeout 300 runuser -u lavaserver -- lava-server manage "$@"
}

# api PATH [CURL_ARGS...]: the REST API as perf_aux; the token goes in a
# header file, never on a command line.
api()
{
	local path=$1

	shift
	local_env curl -sS --fail --max-time 60 -H @"$LAB_DIR/auth-header" \
		"$@" "$URL/api/v0.2/$path"
}

# json EXPR: EXPR evaluated on the JSON document on stdin (as d).
json()
{
	$PY -c 'import json, sys; d = json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"
}

# wait_for SECONDS WHAT CMD...: CMD until it succeeds, at most SECONDS.
wait_for()
{
	local secs=$1 what=$2 deadline=$(($(date +%s) + $1))

	shift 2
	until "$@" > /dev/null 2>&1; do
		[ "$(date +%s)" -lt "$deadline" ] ||
			die "lab: $what: not within $secs s (logs in $LOGS)"
		sleep 2
	done
}

require_root()
{
	[ "$(id -u)" -eq 0 ] || die "lab: run as root (apt-get, PostgreSQL, lava-server)"
}

missing_packages()
{
	local pkg

	for pkg in $PACKAGES; do
		dpkg-query -W -f='${Status}\n' "$pkg" 2>/dev/null |
			grep -q '^install ok installed$' || echo "$pkg"
	done
}

lab_packages()
{
	local need

	need=$(missing_packages)
	if [ -n "$need" ]; then
		say "installing:" $need
		timeout 600 apt-get update -qq ||
			die "lab: apt-get update failed"
		# shellcheck disable=SC2086
		DEBIAN_FRONTEND=noninteractive timeout 1800 apt-get install -y -qq \
			--no-install-recommends $need > "$LOGS/apt.log" 2>&1 ||
			die "lab: apt-get install $need failed (see $LOGS/apt.log)"
	fi
	# The dispatcher's side, as scripts/lava/check.sh has it: QEMU, git,
	# the device-type templates and libguestfs' kernel in the cache.
	timeout 1800 "$PERF_AUX_ROOT/scripts/deps.sh" lava > "$LOGS/deps.log" 2>&1 ||
		die "lab: scripts/deps.sh lava failed (see $LOGS/deps.log)"
}

# pg_cluster: "VERSION NAME STATUS" of the newest cluster.
pg_cluster()
{
	pg_lsclusters -h | sort -V | awk 'END { print $1, $2, $4 }'
}

# PostgreSQL, started on 127.0.0.1 alone when it is not running.  One that
# was running is left as it is, and stop leaves it running.
start_postgresql()
{
	local version name state

	read -r version name state <<< "$(pg_cluster)"
	[ -n "$version" ] || die "lab: no PostgreSQL cluster (pg_lsclusters)"
	if [ "$state" = online ]; then
		ours_postgresql ||
			say "PostgreSQL $version/$name already running: left as it is"
		return
	fi
	# pg_ctlcluster works without systemd; -w -t bounds the wait.
	pg_ctlcluster "$version" "$name" start -- -w -t 60 \
		-o "-c listen_addresses=127.0.0.1" ||
		die "lab: PostgreSQL $version/$name did not start (/var/log/postgresql/)"
	echo "$version $name $(postmaster_pid "$version" "$name")" > "$RUN/postgresql"
	say "PostgreSQL $version/$name started on 127.0.0.1"
}

postmaster_pid()
{
	head -1 "$(pg_conftool -s "$1" "$2" show data_directory)/postmaster.pid" 2>/dev/null
}

# ours_postgresql: the running postmaster is the one start started.
ours_postgresql()
{
	local version name pid

	[ -s "$RUN/postgresql" ] || return 1
	read -r version name pid < "$RUN/postgresql"
	[ -n "$pid" ] && [ "$(postmaster_pid "$version" "$name")" = "$pid" ]
}

# The database and lava-server's configuration, by lava-server's own
# postinst.py: it skipped them when the package was installed with
# PostgreSQL down, as it is on a machine without systemd.
setup_database()
{
	if [ -f "$LAVA_ETC/settings.d/00-database.yaml" ] &&
	   manage migrate --check > /dev/null 2>&1; then
		return
	fi
	say "creating the database and applying migrations"
	timeout 1200 $PY /usr/share/lava-server/postinst.py --config --db --fixup \
		> "$LOGS/postinst.log" 2>&1 ||
		die "lab: lava-server postinst.py failed (see $LOGS/postinst.log)"
}

# The perf_aux superuser and its API token ($LAB_DIR/token, 0600), and the
# identity files that use it (curl header, lavacli).
setup_user()
{
	manage users details "$LAB_USER" > /dev/null 2>&1 ||
		manage users add "$LAB_USER" --staff --superuser > /dev/null ||
		die "lab: cannot create user $LAB_USER"
	if ! [ -s "$LAB_DIR/token" ] ||
	   ! manage tokens list --user "$LAB_USER" --csv | grep -qF -f "$LAB_DIR/token"; then
		(umask 077 && manage tokens add --user "$LAB_USER" \
			--description "perf_aux lab" > "$LAB_DIR/token.new") &&
			[ -s "$LAB_DIR/token.new" ] && mv "$LAB_DIR/token.new" "$LAB_DIR/token" ||
			die "lab: cannot create a token for $LAB_USER"
	fi
	(
		umask 077
		mkdir -p "$LAB_DIR/config"
		echo "Authorization: Token $(cat "$LAB_DIR/token")" > "$LAB_DIR/auth-header"
		cat > "$LAB_DIR/config/lavacli.yaml" <<-EOF
		$LAB_USER:
		  uri: $URL/RPC2
		  username: $LAB_USER
		  token: $(cat "$LAB_DIR/token")
		EOF
	)
}

# The worker, with its token in $LAB_DIR/worker/token (0600), and the
# environment its jobs get: lava-server's env.yaml purges the worker's own,
# and libguestfs needs a kernel and TCG here (as in scripts/lava/check.sh).
setup_worker()
{
	local dir=$LAVA_ETC/dispatcher.d/$WORKER cache=$PERF_AUX_CACHE/lava

	manage workers details "$WORKER" > /dev/null 2>&1 ||
		manage workers add "$WORKER" --description "perf_aux lab" > /dev/null ||
		die "lab: cannot add worker $WORKER"
	mkdir -p "$LAB_DIR/worker" "$LAB_DIR/tmp"
	(umask 077 && manage workers details "$WORKER" |
		sed -n 's/^token *: *//p' > "$LAB_DIR/worker/token")
	[ -s "$LAB_DIR/worker/token" ] || die "lab: no token for worker $WORKER"
	mkdir -p "$dir"
	cat > "$dir/env.yaml" <<-EOF
	# Written by perf_aux scripts/lava/lab.sh: the environment of the jobs of
	# worker $WORKER (lava-server's env.yaml, plus libguestfs' settings).
	purge: true
	overrides:
	  LC_ALL: C.UTF-8
	  LANG: C
	  PATH: /usr/local/bin:/usr/local/sbin:/bin:/usr/bin:/usr/sbin:/sbin
	  HOME: /root
	  TMPDIR: $LAB_DIR/tmp
	  SUPERMIN_KERNEL: $(ls "$cache"/supermin/boot/vmlinuz-* | head -1)
	  SUPERMIN_MODULES: $(ls -d "$cache"/supermin/lib/modules/* | head -1)
	  LIBGUESTFS_BACKEND: direct
	  LIBGUESTFS_BACKEND_SETTINGS: force_tcg
	  LIBGUESTFS_CACHEDIR: $cache/guestfs
	EOF
	mkdir -p "$cache/guestfs"
}

# device_dict N: the dictionary of qemu-0N, scripts/lava/devices' QEMU
# device with its own MAC address, QEMU's user network restricted (the
# guest reaches nothing outside), and user commands for the selftest's
# jobs that need no kernel: one that says hello, one that takes long
# enough to stop the worker under it.
device_dict()
{
	sed "s/52:54:00:12:34:59/52:54:00:12:34:6$1/" \
		"$PERF_AUX_ROOT/scripts/lava/devices/perf-aux-qemu01.jinja2"
	cat <<-EOF
	{# lab.sh: no traffic leaves the guest; commands for no-kernel jobs #}
	{% set netdevice = 'user,restrict=on' %}
	{% set user_commands = {'perf_aux_lab_hello': {'do': 'uname -sm'},
	                        'perf_aux_lab_sleep': {'do': 'sleep $SLEEP_SECONDS'}} %}
	EOF
}

setup_devices()
{
	local dev n

	manage device-types details qemu > /dev/null 2>&1 ||
		manage device-types add qemu > /dev/null ||
		die "lab: cannot add device type qemu"
	for dev in $DEVICES; do
		n=${dev#qemu-0}
		device_dict "$n" > "$LAVA_ETC/dispatcher-config/devices/$dev.jinja2"
		chown lavaserver:lavaserver "$LAVA_ETC/dispatcher-config/devices/$dev.jinja2"
		manage devices details "$dev" > /dev/null 2>&1 ||
			manage devices add "$dev" --device-type qemu --worker "$WORKER" \
				--description "perf_aux lab QEMU" > /dev/null ||
			die "lab: cannot add device $dev"
		manage devices update "$dev" --worker "$WORKER" --health GOOD > /dev/null ||
			die "lab: cannot set device $dev healthy"
	done
}

# running NAME: the daemon of $RUN/NAME.pid is alive, and is that daemon
# (not another process that got the pid of a stale file).
running()
{
	local pid pattern=$LAB_DIR

	[ -s "$RUN/$1.pid" ] || return 1
	pid=$(cat "$RUN/$1.pid")
	# gunicorn rewrites its command line.
	[ "$1" = gunicorn ] && pattern=lava_server.wsgi
	tr '\0' ' ' 2>/dev/null < "/proc/$pid/cmdline" | grep -qF -- "$pattern"
}

# daemon NAME CMD...: CMD in the background (no systemd here: PID 1 is not
# systemd in a container), its pid in $RUN/NAME.pid, its output in
# $LOGS/NAME.out.
daemon()
{
	local name=$1

	shift
	if running "$name"; then
		say "$name already running"
		return
	fi
	local_env LC_ALL=C.UTF-8 start-stop-daemon --start --quiet --background \
		--make-pidfile --pidfile "$RUN/$name.pid" --chdir / \
		--output "$LOGS/$name.out" --startas "$1" -- "${@:2}" ||
		die "lab: cannot start $name"
	sleep 1
	running "$name" || die "lab: $name exited at once (see $LOGS/$name.out)"
	say "$name started, pid $(cat "$RUN/$name.pid")"
}

server_up()
{
	local_env curl -sS --fail --max-time 10 "$URL/api/v0.2/system/version/"
}

worker_online()
{
	[ "$(api "workers/$WORKER/" | json 'd["state"]')" = Online ]
}

devices_idle()
{
	local dev

	for dev in $DEVICES; do
		[ "$(api "devices/$dev/" | json 'd["state"]')" = Idle ] || return 1
	done
}

start_daemons()
{
	if ! running gunicorn && ss -Hltn "sport = :$PORT" | grep -q .; then
		die "lab: port $PORT is taken (PERF_AUX_LAB_PORT)"
	fi
	# Two eventlet workers, as lava-server-gunicorn.service runs four: the
	# machine has two cores.  Bound to 127.0.0.1 only.
	daemon gunicorn /usr/bin/gunicorn3 lava_server.wsgi \
		--bind "127.0.0.1:$PORT" -u lavaserver -g lavaserver \
		--worker-class eventlet --workers 2 --log-level info \
		--log-file "$LOGS/gunicorn.log"
	wait_for 180 "lava-server on $URL" server_up
	daemon lava-scheduler /usr/bin/lava-server manage lava-scheduler \
		--level INFO --log-file "$LOGS/lava-scheduler.log"
	# No lava-publisher (nothing needs its events here): the worker's
	# websocket then fails and it polls; every 5 s, not 20, so that a job
	# starts quickly.
	start_worker
	wait_for 120 "devices $DEVICES idle" devices_idle
}

start_worker()
{
	daemon lava-worker /usr/bin/lava-worker --name "$WORKER" --url "$URL/" \
		--token-file "$LAB_DIR/worker/token" --worker-dir "$LAB_DIR/worker" \
		--log-file "$LOGS/lava-worker.log" --level INFO --ping-interval 5
	wait_for 120 "worker $WORKER online" worker_online
}

setup_lab()
{
	setup_user
	setup_worker
	setup_devices
}

cmd_start()
{
	local start

	start=$(date +%s)
	require_root
	mkdir -p "$RUN" "$LOGS"
	stage "lab: packages" lab_packages
	chown lavaserver:lavaserver "$LOGS"
	stage "lab: PostgreSQL" start_postgresql
	stage "lab: database" setup_database
	stage "lab: user, worker, devices" setup_lab
	stage "lab: daemons" start_daemons
	say "started in $(($(date +%s) - start)) s: $URL/ (lavacli: XDG_CONFIG_HOME=$LAB_DIR/config lavacli -i $LAB_USER ...)"
}

cmd_status()
{
	local bad=0 dev

	if server_up > /dev/null 2>&1; then
		say "server $URL/: reachable, lava-server $(server_up | json 'd["version"]')"
	else
		say "server $URL/: not reachable"
		return 1
	fi
	if api "workers/$WORKER/" > "$RUN/status.json" 2>/dev/null; then
		say "worker $WORKER: $(json 'd["state"] + ", " + d["health"]' < "$RUN/status.json")"
		worker_online || bad=1
	else
		say "worker $WORKER: unknown to the server"
		bad=1
	fi
	for dev in $DEVICES; do
		if api "devices/$dev/" > "$RUN/status.json" 2>/dev/null; then
			say "device $dev: $(json 'd["state"] + ", " + d["health"]' < "$RUN/status.json")"
			[ "$(json 'd["state"]' < "$RUN/status.json")" = Idle ] || bad=1
		else
			say "device $dev: unknown to the server"
			bad=1
		fi
	done
	rm -f "$RUN/status.json"
	return $bad
}

# stop_daemon NAME: TERM (INT for gunicorn: its quick shutdown), then KILL,
# bounded; only the pid of our pid file.
stop_daemon()
{
	local name=$1 sig=${2:-TERM}

	if ! running "$name"; then
		rm -f "$RUN/$name.pid"
		return 0
	fi
	start-stop-daemon --stop --quiet --pidfile "$RUN/$name.pid" \
		--retry "$sig/20/KILL/5" --remove-pidfile ||
		die "lab: $name (pid $(cat "$RUN/$name.pid")) did not stop"
	say "$name stopped"
}

# descendants PID: PID's processes below it, deepest first.
descendants()
{
	local child

	for child in $(pgrep -P "$1" || true); do
		descendants "$child"
		echo "$child"
	done
}

# The jobs of our worker: its lava-run children (each in its own process
# group, its QEMU in another).  TERM is lava-run's cancel: it stops QEMU and
# cleans up; whatever is left after 60 s is killed.
stop_jobs()
{
	local pid tree

	running lava-worker || return 0
	for pid in $(pgrep -P "$(cat "$RUN/lava-worker.pid")" || true); do
		tree=$(descendants "$pid")
		say "cancelling lava-run $pid (job $(ps -o args= -p "$pid" | sed -n 's/.*job: \([0-9]*\).*/\1/p'))"
		kill -TERM "$pid" 2>/dev/null || continue
		timeout 60 tail --pid="$pid" -f /dev/null ||
			kill -KILL "$pid" 2>/dev/null || true
		# shellcheck disable=SC2086
		kill -KILL $tree 2>/dev/null || true
	done
}

cmd_stop()
{
	local start version name

	start=$(date +%s)
	require_root
	stop_jobs
	stop_daemon lava-worker
	stop_daemon lava-scheduler
	stop_daemon gunicorn INT
	if ours_postgresql; then
		read -r version name _ < "$RUN/postgresql"
		timeout 90 pg_ctlcluster "$version" "$name" stop -m fast ||
			die "lab: PostgreSQL $version/$name did not stop"
		say "PostgreSQL $version/$name stopped"
	fi
	rm -f "$RUN/postgresql"
	say "stopped in $(($(date +%s) - start)) s"
}

# submit ARGS...: scripts/lava/submit.sh on this lab (SUBMIT_URL, another
# one for a fault case), the one way jobs are submitted and collected.
submit()
{
	LAB=${SUBMIT_URL:-$URL} "$PERF_AUX_ROOT/scripts/lava/submit.sh" "$@"
}

# command_job NAME COMMAND [EXTRA]: a job of one user command of the device
# (perf_aux_lab_hello, perf_aux_lab_sleep), nothing booted: LAVA runs jobs
# on a device, and a qemu device's only boot methods boot an image; a
# "command" action runs on the worker instead.  EXTRA: a line more.
command_job()
{
	cat <<-EOF
	# SPDX-License-Identifier: GPL-2.0
	# perf_aux lab selftest: a user command of the device, nothing booted.
	device_type: qemu
	job_name: perf_aux lab $1
	timeouts:
	  job:
	    minutes: 5
	  action:
	    minutes: 4
	priority: medium
	visibility: public
	actions:
	- command:
	    name: $2
	${3:-}
	EOF
}

# check RC WHAT: one check line, "ok - lava: lab: WHAT" or "not ok - ...",
# which scripts/check.sh counts (line_checks).
check()
{
	if [ "$1" -eq 0 ]; then
		echo "ok - lava: lab: $2"
	else
		echo "not ok - lava: lab: $2"
		SELFTEST_BAD=1
	fi
}

# try OUT ARGS...: submit ARGS, its output in OUT and shown as comments;
# its exit status.  Results go to the selftest's own out directory.
try()
{
	local out=$1 rc=0

	shift
	PERF_AUX_OUT=$SELFTEST submit "$@" > "$out" 2>&1 || rc=$?
	sed 's/^/# /' "$out"
	return $rc
}

# message OUT: submit.sh's one-line reason for failing, in OUT.
message()
{
	grep -E '^(perf_aux: error: submit: |submit: infrastructure error: )' "$1" |
		tail -1 | sed 's/^perf_aux: error: //'
}

# no_results: nothing in the selftest's out/results (a fault wrote none).
no_results()
{
	[ -z "$(ls -A "$SELFTEST/results" 2>/dev/null)" ]
}

# fault WHAT STATUS PATTERN ARGS...: a fault case: submit ARGS exits
# STATUS, says why in one line matching PATTERN, writes no results.
fault()
{
	local what=$1 want=$2 pattern=$3 out rc=0 ok=0 line

	shift 3
	out=$SELFTEST/fault-$want-$(date +%s%N).out
	try "$out" "$@" || rc=$?
	line=$(message "$out")
	[ "$rc" = "$want" ] && grep -qE -- "$pattern" <<< "$line" && no_results || ok=1
	if [ $ok = 0 ]; then
		check 0 "$what: exit $rc, \"$line\""
	else
		check 1 "$what: exit $rc, \"$line\" (wanted exit $want, /$pattern/, no results)"
	fi
}

# revoked_token FILE: a token of the lab's user, created and deleted again,
# in FILE (0600).  LAVA 2023.01's tokens have no expiry date: a revoked one
# is the nearest to an expired one.  (Deleted by its description: the
# secret never goes on a command line.)
revoked_token()
{
	local desc="perf_aux lab selftest: revoked"

	(umask 077 && manage tokens add --user "$LAB_USER" --description "$desc" > "$1") &&
		[ -s "$1" ] &&
		manage shell -c "from linaro_django_xmlrpc.models import AuthToken; AuthToken.objects.filter(description='$desc').delete()" > /dev/null
}

# free_port: a port above PORT where nothing listens on 127.0.0.1.
free_port()
{
	local p

	for p in $(seq $((PORT + 1)) $((PORT + 100))); do
		if ! ss -Hltn "sport = :$p" | grep -q .; then
			echo "$p"
			return
		fi
	done
	return 1
}

# job_state ID: "state health" of job ID.
job_state()
{
	api "jobs/$1/" | json 'd["state"] + " " + d["health"]'
}

# worker_killed: lava-worker is killed (our daemon, by its pid file) while
# a job runs: submit.sh's bound (LAVA_WAIT) passes, it cancels the job and
# says so, exit 3.  Then the worker is started again: it ends the job
# Canceled (it still knows the job's lava-run) and the devices are Idle.
worker_killed()
{
	local out=$SELFTEST/worker.out pid id='' rc=0 ok=0 line state deadline start

	command_job sleep perf_aux_lab_sleep > "$SELFTEST/sleep.yaml"
	LAVA_WAIT=$KILL_WAIT PERF_AUX_OUT=$SELFTEST submit "$SELFTEST/sleep.yaml" \
		> "$out" 2>&1 &
	pid=$!
	deadline=$(($(date +%s) + 120))
	while kill -0 "$pid" 2>/dev/null && [ "$(date +%s)" -lt "$deadline" ]; do
		[ -n "$id" ] || id=$(sed -n 's/^submit: job \([0-9]*\) submitted.*/\1/p' "$out")
		if [ -n "$id" ] && [ "$(job_state "$id" 2>/dev/null)" = "Running Unknown" ]; then
			say "job $id running: killing lava-worker, pid $(cat "$RUN/lava-worker.pid")"
			kill -KILL "$(cat "$RUN/lava-worker.pid")"
			break
		fi
		sleep 2
	done
	wait "$pid" || rc=$?
	sed 's/^/# /' "$out"
	line=$(message "$out")
	[ "$rc" = 3 ] && grep -qE "not finished within $KILL_WAIT s.*canceled" <<< "$line" &&
		no_results || ok=1
	check $ok "lava-worker killed mid-job: exit $rc, \"$line\""
	[ -n "$id" ] || return 0
	# The worker back: the job ends, the devices take jobs again.
	ok=0
	start=$(date +%s)
	(start_worker) > /dev/null || ok=1
	deadline=$(($(date +%s) + 120))
	until state=$(job_state "$id" || true); [ "${state%% *}" = Finished ] ||
		[ "$(date +%s)" -ge "$deadline" ]; do
		sleep 2
	done
	(wait_for 120 "devices $DEVICES idle" devices_idle) || ok=1
	[ "$state" = "Finished Canceled" ] || ok=1
	check $ok "lava-worker started again: job $id $state after $(($(date +%s) - start)) s, devices Idle"
}

# compare RUN: the lab's results of RUN against the direct run's
# (PERF_AUX_LAB_DIRECT/RUN, default $PERF_AUX_OUT/results/RUN), case by
# case (results.py flakes: two rounds, every case the same result).  A
# job runs every program; a direct run may have run some (make check's
# stock boot runs four): the programs it did not run are left out, and
# counted, but every program it ran must be in the lab's results.
compare()
{
	local run=$1 direct=${PERF_AUX_LAB_DIRECT:-$PERF_AUX_OUT/results}/$1 ok=0 line f
	local -a unrun=()

	if ! ls "$direct"/*.ktap > /dev/null 2>&1; then
		echo "ok - lava: lab: $run through the lab equals the direct run # SKIP no direct run in $direct"
		return
	fi
	for f in "$SELFTEST/results/$run"/*.ktap; do
		f=${f##*/}
		[ -f "$direct/$f" ] || unrun+=(--except "${f%.ktap}")
	done
	python3 "$PERF_AUX_ROOT/scripts/results.py" flakes "${unrun[@]}" \
		"$SELFTEST/results/$run" "$direct" > "$SELFTEST/$run.flakes" || ok=1
	grep -q '^lava: job ' "$SELFTEST/results/$run/source.txt" || ok=1
	line=$(tail -1 "$SELFTEST/$run.flakes")
	[ ${#unrun[@]} -eq 0 ] ||
		line="$line; $((${#unrun[@]} / 2)) programs the direct run did not run left out"
	check $ok "$run through the lab equals the direct run case by case ($line)"
	[ $ok = 0 ] || grep '^flaky' "$SELFTEST/$run.flakes" | head -20 | sed 's/^/# /'
}

# default_runs BASE: the reference arm64-4k run of BASE, and beside it the
# stock control and the 16K reference run where they were built (the full
# tier's stock and targets stages build them before its lava_lab stage):
# submitted together, they run side by side on the lab's two devices.
default_runs()
{
	local runs=reference-$1-arm64-4k tree=$PERF_AUX_CACHE/trees/$1

	if [ -f "$tree-stock/.build-arm64-4k/initramfs.cpio.gz" ]; then
		runs="$runs stock-$1-arm64-4k"
	fi
	if [ -f "$tree-reference/.build-arm64-16k/initramfs.cpio.gz" ]; then
		runs="$runs reference-$1-arm64-16k"
	fi
	echo "$runs"
}

# selftest_end STATUS: a selftest stopped before its end is a failed check;
# what start started is stopped in every case.
selftest_end()
{
	[ -n "$SELFTEST_DONE" ] || check 1 "selftest ended early (exit $1)"
	cmd_stop
}

# The selftest, one check line each (scripts/check.sh's lava_lab stage):
# the lab starts; a job needing no kernel is Complete; the fault cases
# (a job the schema rejects, a wrong and a revoked token, no server, a
# run whose job ends Incomplete, the worker killed mid-job) each exit
# non-zero with one line saying why and write nothing; with "qemu" the
# runs of PERF_AUX_LAB_RUNS (default the reference arm64-4k run of BASE)
# through the lab, their results equal to the direct runs' case by case.
cmd_selftest()
{
	local base=${BASE:-$(default_base)} start rc=0 port runs run build

	SELFTEST_BAD=0
	SELFTEST_DONE=
	SELFTEST=$PERF_AUX_OUT/lab
	trap 'selftest_end $?' EXIT
	rm -rf "$SELFTEST"
	mkdir -p "$SELFTEST"
	start=$(date +%s)
	(cmd_start) || rc=$?
	check $rc "started in $(($(date +%s) - start)) s: lava-server, lava-worker, PostgreSQL on $URL/"
	if [ $rc -ne 0 ]; then
		SELFTEST_DONE=1
		return 1
	fi

	command_job hello perf_aux_lab_hello > "$SELFTEST/hello.yaml"
	start=$(date +%s)
	rc=0
	LAVA_WAIT=$HELLO_WAIT try "$SELFTEST/hello.yaml.out" "$SELFTEST/hello.yaml" || rc=$?
	check $rc "a job needing no kernel Complete, its results through the API ($(($(date +%s) - start)) s)"

	command_job rejected perf_aux_lab_hello "perf_aux_not_a_key: 1" > "$SELFTEST/rejected.yaml"
	fault "a job the server's schema rejects" 2 'refused .*HTTP 400.*extra keys not allowed' \
		"$SELFTEST/rejected.yaml"
	LAVA_TOKEN=perf-aux-not-a-token fault "a wrong token" 2 \
		'refused the token \(HTTP 403: Invalid token' "$SELFTEST/hello.yaml"
	if revoked_token "$SELFTEST/revoked-token"; then
		LAVA_TOKEN_FILE=$SELFTEST/revoked-token fault \
			"a revoked token (2023.01 tokens do not expire)" 2 \
			'refused the token \(HTTP 403: Invalid token' "$SELFTEST/hello.yaml"
	else
		check 1 "a revoked token: cannot make one"
	fi
	rm -f "$SELFTEST/revoked-token"
	if port=$(free_port); then
		SUBMIT_URL=http://127.0.0.1:$port LAVA_TOKEN_FILE=$LAB_DIR/token fault \
			"no server on 127.0.0.1:$port" 2 'unreachable: .*(Failed to connect|Connection refused)' \
			"$SELFTEST/hello.yaml"
	else
		check 1 "no server: no free port above $PORT"
	fi
	build=$PERF_AUX_CACHE/trees/$base-reference/.build-arm64-4k
	if [ -f "$build/arch/arm64/boot/Image.gz" ]; then
		LAVA_WAIT=$HELLO_WAIT LAVA_ARTIFACTS_URL=file:///nonexistent/perf_aux fault \
			"a run whose job ends Incomplete (its kernel's URL leads nowhere)" 3 \
			'infrastructure error: job [0-9]+ \(reference-.*Incomplete' \
			"reference-$base-arm64-4k"
	else
		echo "ok - lava: lab: a run whose job ends Incomplete # SKIP no reference arm64-4k build in $build"
	fi
	worker_killed

	if [ "${1:-}" = qemu ]; then
		runs=${PERF_AUX_LAB_RUNS:-$(default_runs "$base")}
		start=$(date +%s)
		rc=0
		# shellcheck disable=SC2086
		LAVA_WAIT=$QEMU_WAIT try "$SELFTEST/runs.out" $runs || rc=$?
		check $rc "$runs through the lab: Complete, results collected ($(($(date +%s) - start)) s$(
			sed -n 's/^submit: [0-9]* jobs in \([0-9]*\) s from submission; one after another they would run \([0-9]*\) s$/: jobs \1 s, serially \2 s/p' \
				"$SELFTEST/runs.out"))"
		for run in $runs; do
			if [ -d "$SELFTEST/results/$run" ]; then
				compare "$run"
			else
				check 1 "$run through the lab: no results in $SELFTEST/results/$run"
			fi
		done
	fi
	SELFTEST_DONE=1
	return $SELFTEST_BAD
}

main()
{
	case "${1:-}" in
	start) cmd_start ;;
	status) cmd_status ;;
	stop) cmd_stop ;;
	selftest) cmd_selftest "${2:-}" ;;
	submit)
		[ $# -ge 2 ] || die "lab: usage: scripts/lava/lab.sh submit RUN|JOB.yaml..."
		shift
		submit "$@" ;;
	*) die "lab: usage: scripts/lava/lab.sh start|status|stop|selftest [qemu]|submit RUN|JOB.yaml..." ;;
	esac
}

main "$@"
