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
# Usage: scripts/lava/lab.sh start|status|stop|selftest [qemu]|submit JOB.yaml
#   start     installs what is missing (lava-server, lavacli, postgresql,
#             curl; scripts/deps.sh lava for the dispatcher side), starts
#             PostgreSQL, lava-server (gunicorn, lava-scheduler) and
#             lava-worker, and sets up the user, token, device type,
#             devices and worker
#   status    server reachable, worker online, devices idle; exit 1 if not
#   stop      stops what start started, and only that
#   selftest  start, one job that needs no kernel (a user command of a
#             qemu device, run on the worker), its results through the API,
#             stop; "selftest qemu" also runs lava-jobs' QEMU arm64-4k job
#             on copies of the reference build (BASE, default the newest)
#   submit    submits JOB.yaml to the running lab, waits for it and prints
#             its results
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

LAB=$PERF_AUX_CACHE/lab
RUN=$LAB/run
LOGS=$LAB/log
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
# Seconds: a job that needs no kernel, and lava-jobs' QEMU job (its own
# timeout is 40 minutes; scripts/lava/check.sh allows lava-run 1500 s).
HELLO_TIMEOUT=300
QEMU_TIMEOUT=1800

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
	local_env curl -sS --fail --max-time 60 -H @"$LAB/auth-header" \
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

# The perf_aux superuser and its API token ($LAB/token, 0600), and the
# identity files that use it (curl header, lavacli).
setup_user()
{
	manage users details "$LAB_USER" > /dev/null 2>&1 ||
		manage users add "$LAB_USER" --staff --superuser > /dev/null ||
		die "lab: cannot create user $LAB_USER"
	if ! [ -s "$LAB/token" ] ||
	   ! manage tokens list --user "$LAB_USER" --csv | grep -qF -f "$LAB/token"; then
		(umask 077 && manage tokens add --user "$LAB_USER" \
			--description "perf_aux lab" > "$LAB/token.new") &&
			[ -s "$LAB/token.new" ] && mv "$LAB/token.new" "$LAB/token" ||
			die "lab: cannot create a token for $LAB_USER"
	fi
	(
		umask 077
		mkdir -p "$LAB/config"
		echo "Authorization: Token $(cat "$LAB/token")" > "$LAB/auth-header"
		cat > "$LAB/config/lavacli.yaml" <<-EOF
		$LAB_USER:
		  uri: $URL/RPC2
		  username: $LAB_USER
		  token: $(cat "$LAB/token")
		EOF
	)
}

# The worker, with its token in $LAB/worker/token (0600), and the
# environment its jobs get: lava-server's env.yaml purges the worker's own,
# and libguestfs needs a kernel and TCG here (as in scripts/lava/check.sh).
setup_worker()
{
	local dir=$LAVA_ETC/dispatcher.d/$WORKER cache=$PERF_AUX_CACHE/lava

	manage workers details "$WORKER" > /dev/null 2>&1 ||
		manage workers add "$WORKER" --description "perf_aux lab" > /dev/null ||
		die "lab: cannot add worker $WORKER"
	mkdir -p "$LAB/worker" "$LAB/tmp"
	(umask 077 && manage workers details "$WORKER" |
		sed -n 's/^token *: *//p' > "$LAB/worker/token")
	[ -s "$LAB/worker/token" ] || die "lab: no token for worker $WORKER"
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
	  TMPDIR: $LAB/tmp
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
# guest reaches nothing outside), and one user command for jobs that need
# no kernel.
device_dict()
{
	sed "s/52:54:00:12:34:59/52:54:00:12:34:6$1/" \
		"$PERF_AUX_ROOT/scripts/lava/devices/perf-aux-qemu01.jinja2"
	cat <<-EOF
	{# lab.sh: no traffic leaves the guest; a command for the no-kernel job #}
	{% set netdevice = 'user,restrict=on' %}
	{% set user_commands = {'perf_aux_lab_hello': {'do': 'uname -sm'}} %}
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
	local pid pattern=$LAB

	[ -s "$RUN/$1.pid" ] || return 1
	pid=$(cat "$RUN/$1.pid")
	# gunicorn rewrites its command line.
	[ "$1" = gunicorn ] && pattern=lava_server.wsgi
	tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$pattern"
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
	daemon lava-worker /usr/bin/lava-worker --name "$WORKER" --url "$URL/" \
		--token-file "$LAB/worker/token" --worker-dir "$LAB/worker" \
		--log-file "$LOGS/lava-worker.log" --level INFO --ping-interval 5
	wait_for 120 "worker $WORKER online" worker_online
	wait_for 120 "devices $DEVICES idle" devices_idle
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
	say "started in $(($(date +%s) - start)) s: $URL/ (lavacli: XDG_CONFIG_HOME=$LAB/config lavacli -i $LAB_USER ...)"
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

# wait_job ID SECONDS: until job ID has finished; prints its health.
wait_job()
{
	local id=$1 deadline=$(($(date +%s) + $2)) state

	while :; do
		state=$(api "jobs/$id/" | json 'd["state"] + " " + d["health"]') ||
			die "lab: job $id: cannot read its state"
		[ "${state%% *}" = Finished ] && break
		[ "$(date +%s)" -lt "$deadline" ] ||
			die "lab: job $id: not finished after $2 s (state $state)"
		sleep 3
	done
	echo "${state#* }"
}

# results ID: the job's test cases, "suite.case result [measurement units]",
# through the API (suite names from suites/), and its log, in $LAB/jobs/ID/.
results()
{
	local id=$1 dir=$LAB/jobs/$1

	mkdir -p "$dir"
	api "jobs/$id/suites/?limit=1000" > "$dir/suites.json" &&
	api "jobs/$id/tests/?limit=10000" > "$dir/tests.json" &&
	api "jobs/$id/logs/" > "$dir/log.yaml" || return 1
	$PY - "$dir" > "$dir/results.txt" <<-'EOF'
	import json, sys
	d = sys.argv[1]
	suites = {s['id']: s['name'] for s in json.load(open(d + '/suites.json'))['results']}
	for t in json.load(open(d + '/tests.json'))['results']:
	    m = f" {t['measurement']} {t['unit']}" if t.get('measurement') is not None else ''
	    print(f"{suites.get(t['suite'], t['suite'])}.{t['name']} {t['result']}{m}")
	EOF
}

# summary RESULTS: a short job's results; for a long one, the counts per
# suite and result, then the cases that neither passed nor skipped.
summary()
{
	if [ "$(wc -l < "$1")" -le 20 ]; then
		cat "$1"
		return
	fi
	awk '{ split($1, n, "."); c[n[1] " " $2]++ }
	     END { for (k in c) print k ":", c[k] }' "$1" | sort
	awk '$2 != "pass" && $2 != "skip"' "$1" | head -40
}

# job_times ID: the device, and the server's times: queued, running.
job_times()
{
	api "jobs/$1/" | $PY -c '
import json, sys
from datetime import datetime
d = json.load(sys.stdin)
t = {k: datetime.fromisoformat(d[k].rstrip("Z")) for k in ("submit_time", "start_time", "end_time")}
print("%s, queued %.0f s, ran %.0f s%s" % (d["actual_device"],
      (t["start_time"] - t["submit_time"]).total_seconds(),
      (t["end_time"] - t["start_time"]).total_seconds(),
      ": " + d["failure_comment"] if d.get("failure_comment") else ""))'
}

# submit_job FILE SECONDS: submits, waits, prints the results; 1 unless
# the job is Complete.
submit_job()
{
	local file=$1 id start health resp

	[ -f "$file" ] || die "lab: no job file $file"
	start=$(date +%s)
	# Not api(): a refusal's reason is in the body of the 400.
	resp=$($PY -c 'import json, sys; print(json.dumps({"definition": open(sys.argv[1]).read()}))' "$file" |
		local_env curl -sS --max-time 60 -H @"$LAB/auth-header" \
			-H 'Content-Type: application/json' --data-binary @- \
			"$URL/api/v0.2/jobs/") ||
		die "lab: $file: cannot submit (server $URL/ down?)"
	id=$(echo "$resp" | json 'd["job_ids"][0]' 2>/dev/null) ||
		die "lab: $file: refused: $(echo "$resp" | head -c 1000)"
	say "job $id submitted: $file"
	health=$(wait_job "$id" "$2") || exit 2
	say "job $id: Finished, $health, $(($(date +%s) - start)) s from submission ($(job_times "$id"))"
	results "$id" || die "lab: job $id: cannot fetch its results"
	say "job $id: $(wc -l < "$LAB/jobs/$id/results.txt") results in $LAB/jobs/$id/results.txt:"
	summary "$LAB/jobs/$id/results.txt" | sed 's/^/  /'
	[ "$health" = Complete ]
}

# The job that needs no kernel: LAVA runs jobs on a device, and a qemu
# device's only boot methods boot an image; a "command" action runs one of
# the device's user commands on the worker instead, with nothing booted.
hello_job()
{
	cat <<-EOF
	# SPDX-License-Identifier: GPL-2.0
	# perf_aux lab selftest: a user command of the device, nothing booted.
	device_type: qemu
	job_name: perf_aux lab hello
	timeouts:
	  job:
	    minutes: 4
	  action:
	    minutes: 2
	priority: medium
	visibility: public
	actions:
	- command:
	    name: perf_aux_lab_hello
	EOF
}

# qemu_job DIR: lava-jobs' QEMU arm64-4k job on copies of the reference
# build (file:// URLs) and this checkout's lava-jobs/ as a git repository,
# as scripts/lava/check.sh fills them in.
qemu_job()
{
	local dir=$1 build=$PERF_AUX_CACHE/trees/${BASE:-$(default_base)}-reference/.build-arm64-4k

	[ -f "$build/arch/arm64/boot/Image.gz" ] && [ -f "$build/initramfs.cpio.gz" ] ||
		die "lab: no arm64-4k reference build in $build (make run)"
	rm -rf "$dir"
	mkdir -p "$dir/testdefs"
	cp "$build/arch/arm64/boot/Image.gz" "$build/initramfs.cpio.gz" "$dir/"
	cp -r "$PERF_AUX_ROOT/lava-jobs" "$dir/testdefs/"
	git -C "$dir/testdefs" init -q -b main &&
	git -C "$dir/testdefs" add -A &&
	git -C "$dir/testdefs" -c user.name=perf_aux -c user.email=perf_aux@localhost \
		commit -q -m "lava-jobs for the lab" &&
	$PY "$PERF_AUX_ROOT/lava-jobs/generate.py" --out "$dir" \
		--set "jobs.qemu-arm64-4k.kernel=file://$dir/Image.gz" \
		--set "jobs.qemu-arm64-4k.ramdisk=file://$dir/initramfs.cpio.gz" \
		--set "testdefs.repository=file://$dir/testdefs" \
		--set testdefs.revision=main qemu-arm64-4k > /dev/null ||
		die "lab: cannot render the QEMU job"
	echo "$dir/qemu-arm64-4k.yaml"
}

cmd_selftest()
{
	local rc=0 job

	# Whatever happens, what start started is stopped again.
	trap cmd_stop EXIT
	cmd_start
	mkdir -p "$LAB/jobs"
	hello_job > "$LAB/jobs/hello.yaml"
	submit_job "$LAB/jobs/hello.yaml" "$HELLO_TIMEOUT" || rc=1
	if [ "${1:-}" = qemu ]; then
		job=$(qemu_job "$LAB/jobs/qemu-arm64-4k")
		submit_job "$job" "$QEMU_TIMEOUT" || rc=1
	fi
	return $rc
}

main()
{
	case "${1:-}" in
	start) cmd_start ;;
	status) cmd_status ;;
	stop) cmd_stop ;;
	selftest) cmd_selftest "${2:-}" ;;
	submit)
		[ $# -eq 2 ] || die "lab: usage: scripts/lava/lab.sh submit JOB.yaml"
		submit_job "$2" "$QEMU_TIMEOUT" ;;
	*) die "lab: usage: scripts/lava/lab.sh start|status|stop|selftest [qemu]|submit JOB.yaml" ;;
	esac
}

main "$@"
