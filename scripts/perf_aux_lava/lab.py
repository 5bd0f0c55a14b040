# SPDX-License-Identifier: GPL-2.0
"""python3 -m perf_aux_lava lab start|status|stop: a local LAVA lab on
127.0.0.1 (lava-server 2023.01, PostgreSQL, one lava-worker, devices
qemu-01 and qemu-02; lava-jobs/README.md).  No systemd here: PostgreSQL
runs by its init script, the three daemons by their units' commands
(Daemon).  Runs as root; every wait has a bound."""

import glob
import os
import re
import signal
import socket
import subprocess
import time
from typing import Callable, List, NamedTuple

from . import common
from .common import Fatal, ROOT, plib, shell, write_private
from .server import LavaError, Server

LAB_DIR = os.path.join(plib.cache(), 'lab')
RUN = os.path.join(LAB_DIR, 'run')
LOGS = os.path.join(LAB_DIR, 'log')
PORT = int(os.environ.get('PERF_AUX_LAB_PORT', '8000'))
URL = f'http://127.0.0.1:{PORT}'
WORKER = 'perf-aux-lab'
DEVICES = ('qemu-01', 'qemu-02')
LAB_USER = 'perf_aux'
LAVA_ETC = '/etc/lava-server'
TOKEN = os.path.join(LAB_DIR, 'token')
# What a system service gets from systemd: a clean environment.
BASE_ENV = {'PATH': '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:'
                    '/sbin:/bin', 'LANG': 'C.UTF-8', 'LC_ALL': 'C.UTF-8'}
# The selftest's jobs that need no kernel run user commands of the
# device: one says hello, one takes longer than the selftest's bound for
# stopping the worker under it.
SLEEP_SECONDS = 150


def say(msg: str) -> None:
    print(f'lab: {msg}', flush=True)


class Daemon(NamedTuple):
    """A daemon as its unit starts it, ours by a pid file in RUN and marker
    in its cmdline; group: stopped with its session (KillMode=
    control-group) or alone (KillMode=process)."""
    name: str
    argv: List[str]
    marker: str
    group: bool = True

    @property
    def pidfile(self) -> str:
        return os.path.join(RUN, f'{self.name}.pid')

    def pid(self) -> int:
        try:
            with open(self.pidfile) as f:
                return int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            return 0

    def running(self) -> bool:
        """Its pid file's process is alive and is that daemon (not another
        process that got the pid of a stale file)."""
        pid = self.pid()
        return bool(pid) and self.marker in cmdline(pid)

    def start(self) -> None:
        if self.running():
            say(f'{self.name} already running')
            return
        with open(os.path.join(LOGS, f'{self.name}.out'), 'ab') as log:
            try:
                p = subprocess.Popen(self.argv, cwd='/', env=BASE_ENV,
                                     stdin=subprocess.DEVNULL, stdout=log,
                                     stderr=subprocess.STDOUT,
                                     start_new_session=True)
            except OSError as e:
                raise Fatal(f'lab: cannot start {self.name}: {e}') from None
        with open(self.pidfile, 'w') as f:
            f.write(f'{p.pid}\n')
        time.sleep(1)
        if p.poll() is not None or not self.running():
            raise Fatal(f'lab: {self.name} exited at once (see '
                        f'{LOGS}/{self.name}.out)')
        say(f'{self.name} started, pid {p.pid}')

    def stop(self, timeout: int = 20) -> None:
        """TERM (systemd's KillSignal), then KILL after timeout; only our
        pid file's."""
        pid, was = self.pid(), self.running()
        for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 5)):
            if not self.running():
                break
            try:
                (os.killpg if self.group else os.kill)(pid, sig)
            except OSError:
                pass
            deadline = time.time() + wait
            while self.running() and time.time() < deadline:
                time.sleep(0.5)
        if self.running():
            raise Fatal(f'lab: {self.name} (pid {pid}) did not stop')
        if os.path.exists(self.pidfile):
            os.remove(self.pidfile)
        if was:
            try:
                os.waitpid(pid, os.WNOHANG)  # ours: reaped, not a zombie
            except OSError:
                pass
            say(f'{self.name} stopped')


# The units' ExecStart= with this lab's values: gunicorn on 127.0.0.1, two
# workers (two cores); no lava-publisher, so the worker polls, every 5 s.
GUNICORN = Daemon('gunicorn', [
    '/usr/bin/gunicorn3', 'lava_server.wsgi', '--log-level', 'INFO',
    '--log-file', f'{LOGS}/gunicorn.log', '-u', 'lavaserver', '-g',
    'lavaserver', '--worker-class', 'eventlet', '--workers', '2', '--bind',
    f'127.0.0.1:{PORT}'], 'lava_server.wsgi')
SCHEDULER = Daemon('lava-scheduler', [
    '/usr/bin/lava-server', 'manage', 'lava-scheduler', '--level', 'INFO',
    '--log-file', f'{LOGS}/lava-scheduler.log'], LAB_DIR)
WORKER_DAEMON = Daemon('lava-worker', [
    '/usr/bin/lava-worker', '--level', 'INFO', '--url', f'{URL}/',
    '--token-file', f'{LAB_DIR}/worker/token', '--name', WORKER,
    '--worker-dir', f'{LAB_DIR}/worker', '--log-file',
    f'{LOGS}/lava-worker.log', '--ping-interval', '5'], LAB_DIR, False)


def cmdline(pid: int) -> str:
    try:
        with open(f'/proc/{pid}/cmdline', 'rb') as f:
            return f.read().replace(b'\0', b' ').decode(errors='replace')
    except OSError:
        return ''


def manage(*args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    """lava-server manage as lavaserver, as postinst.py runs it (nothing
    it creates becomes root's); its output captured: some commands print
    secrets, which go to 0600 files only."""
    return subprocess.run(['timeout', str(timeout), 'runuser', '-u',
                           'lavaserver', '--', 'lava-server', 'manage',
                           *args], capture_output=True, text=True)


def managed(what: str, check: List[str], *add: str) -> None:
    """manage ADD... unless manage CHECK... says it is there already."""
    if manage(*check).returncode and manage(*add).returncode:
        raise Fatal(f'lab: cannot {what}')


def quiet(ok: Callable[[], bool]) -> bool:
    try:
        return ok()
    except (LavaError, OSError, KeyError, ValueError, TypeError):
        return False


def wait_for(secs: int, what: str, ok: Callable[[], bool]) -> None:
    deadline = time.time() + secs
    while not quiet(ok):
        if time.time() >= deadline:
            raise Fatal(f'lab: {what}: not within {secs} s (logs in {LOGS})')
        time.sleep(2)


def listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(2)
        return s.connect_ex(('127.0.0.1', port)) == 0


def lava() -> Server:
    """The lab's server as its perf_aux user (OSError without a token)."""
    with open(TOKEN) as f:
        return Server(URL, LAB_USER, ''.join(f.read().split()))


def devices_idle() -> bool:
    server = lava()
    return all(server.state('device', d) == 'Idle' for d in DEVICES)


# ---- start --------------------------------------------------------------

def require_root() -> None:
    if os.geteuid():
        raise Fatal('lab: run as root (apt-get, PostgreSQL, lava-server)')


def pg_cluster() -> List[str]:
    """[version, name, status] of the newest cluster, or []."""
    out = subprocess.run(['pg_lsclusters', '-h'], capture_output=True,
                         text=True).stdout.splitlines()
    rows = sorted((line.split() for line in out if line.strip()),
                  key=lambda r: [int(x) for x in re.findall(r'\d+', r[0])])
    return [rows[-1][0], rows[-1][1], rows[-1][3]] if rows else []


def postmaster_pid(version: str, name: str) -> str:
    data = subprocess.run(['pg_conftool', '-s', version, name, 'show',
                           'data_directory'], capture_output=True,
                          text=True).stdout.strip()
    try:
        with open(os.path.join(data, 'postmaster.pid')) as f:
            return f.readline().strip()
    except OSError:
        return ''


def ours_postgresql() -> List[str]:
    """[version, name] of the postmaster start started, if it runs."""
    try:
        with open(os.path.join(RUN, 'postgresql')) as f:
            version, name, pid = f.read().split()
    except (OSError, ValueError):
        return []
    return [version, name] if postmaster_pid(version, name) == pid else []


def start_postgresql() -> None:
    """PostgreSQL by its init script, unless it runs (then stop leaves
    it running)."""
    cluster = pg_cluster()
    if not cluster:
        raise Fatal('lab: no PostgreSQL cluster (pg_lsclusters)')
    version, name, state = cluster
    if state == 'online':
        if not ours_postgresql():
            say(f'PostgreSQL {version}/{name} already running: left as it is')
        return
    if common.run(['service', 'postgresql', 'start'], timeout=120) or \
            pg_cluster()[2:] != ['online']:
        raise Fatal(f'lab: PostgreSQL {version}/{name} did not start '
                    '(/var/log/postgresql/)')
    with open(os.path.join(RUN, 'postgresql'), 'w') as f:
        f.write(f'{version} {name} {postmaster_pid(version, name)}\n')
    say(f'PostgreSQL {version}/{name} started (service postgresql start)')


def setup_database() -> None:
    """The database and lava-server's configuration by its own
    postinst.py, which skipped them when the package was installed with
    PostgreSQL down (a machine without systemd)."""
    if os.path.isfile(f'{LAVA_ETC}/settings.d/00-database.yaml') and \
            not manage('migrate', '--check').returncode:
        return
    say('creating the database and applying migrations')
    log = os.path.join(LOGS, 'postinst.log')
    if common.run([common.PYTHON, '/usr/share/lava-server/postinst.py',
                   '--config', '--db', '--fixup'], log=log, timeout=1200):
        raise Fatal(f'lab: lava-server postinst.py failed (see {log})')


def setup_user() -> None:
    """The perf_aux superuser, its API token (TOKEN, 0600) and the lavacli
    identity "perf_aux" (LAB_DIR/config/lavacli.yaml) that uses it."""
    managed(f'create user {LAB_USER}', ['users', 'details', LAB_USER],
            'users', 'add', LAB_USER, '--staff', '--superuser')
    token = ''
    if os.path.isfile(TOKEN):
        with open(TOKEN) as f:
            token = f.read().strip()
    listed = manage('tokens', 'list', '--user', LAB_USER, '--csv').stdout
    if not token or token not in listed:
        p = manage('tokens', 'add', '--user', LAB_USER, '--description',
                   'perf_aux lab')
        token = p.stdout.strip()
        if p.returncode or not token:
            raise Fatal(f'lab: cannot create a token for {LAB_USER}')
        write_private(TOKEN, token + '\n')
    os.makedirs(os.path.join(LAB_DIR, 'config'), mode=0o700, exist_ok=True)
    write_private(os.path.join(LAB_DIR, 'config', 'lavacli.yaml'),
                  f'{LAB_USER}:\n  uri: {URL}/RPC2\n  username: {LAB_USER}\n'
                  f'  token: {token}\n')


def setup_worker() -> None:
    """The worker, its token in LAB_DIR/worker/token (0600), and its jobs'
    environment: lava-server's env.yaml purges the worker's own, and
    libguestfs needs a kernel and TCG here (as in checks.py)."""
    cache = os.path.join(plib.cache(), 'lava')
    managed(f'add worker {WORKER}', ['workers', 'details', WORKER],
            'workers', 'add', WORKER, '--description', 'perf_aux lab')
    for d in ('worker', 'tmp'):
        os.makedirs(os.path.join(LAB_DIR, d), exist_ok=True)
    m = re.search(r'(?m)^token *: *(\S+)', manage('workers', 'details',
                                                   WORKER).stdout)
    if not m:
        raise Fatal(f'lab: no token for worker {WORKER}')
    write_private(os.path.join(LAB_DIR, 'worker', 'token'), m.group(1) + '\n')
    d = os.path.join(LAVA_ETC, 'dispatcher.d', WORKER)
    os.makedirs(d, exist_ok=True)
    kernel = sorted(glob.glob(f'{cache}/supermin/boot/vmlinuz-*'))[:1]
    modules = sorted(glob.glob(f'{cache}/supermin/lib/modules/*'))[:1]
    with open(os.path.join(d, 'env.yaml'), 'w') as f:
        f.write(f"""\
# Written by perf_aux scripts/perf_aux_lava/lab.py: the environment of the
# jobs of worker {WORKER} (lava-server's env.yaml, plus libguestfs').
purge: true
overrides:
  LC_ALL: C.UTF-8
  LANG: C
  PATH: /usr/local/bin:/usr/local/sbin:/bin:/usr/bin:/usr/sbin:/sbin
  HOME: /root
  TMPDIR: {LAB_DIR}/tmp
  SUPERMIN_KERNEL: {''.join(kernel)}
  SUPERMIN_MODULES: {''.join(modules)}
  LIBGUESTFS_BACKEND: direct
  LIBGUESTFS_BACKEND_SETTINGS: force_tcg
  LIBGUESTFS_CACHEDIR: {cache}/guestfs
""")
    os.makedirs(os.path.join(cache, 'guestfs'), exist_ok=True)


def device_dict(n: int) -> str:
    """The dictionary of qemu-0N: scripts/lava/devices' QEMU device with
    its own MAC address, QEMU's user network restricted (the guest
    reaches nothing outside), and the user commands."""
    with open(os.path.join(ROOT, 'scripts', 'lava', 'devices',
                           'perf-aux-qemu01.jinja2')) as f:
        text = f.read().replace('52:54:00:12:34:59', f'52:54:00:12:34:6{n}')
    return text + f"""\
{{# lab.py: no traffic leaves the guest; commands for no-kernel jobs #}}
{{% set netdevice = 'user,restrict=on' %}}
{{% set user_commands = {{'perf_aux_lab_hello': {{'do': 'uname -sm'}},
                        'perf_aux_lab_sleep': {{'do': 'sleep {SLEEP_SECONDS}'}}}} %}}
"""


def setup_devices() -> None:
    managed('add device type qemu', ['device-types', 'details', 'qemu'],
            'device-types', 'add', 'qemu')
    for dev in DEVICES:
        path = f'{LAVA_ETC}/dispatcher-config/devices/{dev}.jinja2'
        with open(path, 'w') as f:
            f.write(device_dict(int(dev[-1])))
        subprocess.run(['chown', 'lavaserver:lavaserver', path], check=True)
        managed(f'add device {dev}', ['devices', 'details', dev],
                'devices', 'add', dev, '--device-type', 'qemu', '--worker',
                WORKER, '--description', 'perf_aux lab QEMU')
        if manage('devices', 'update', dev, '--worker', WORKER, '--health',
                  'GOOD').returncode:
            raise Fatal(f'lab: cannot set device {dev} healthy')


def start_worker() -> None:
    WORKER_DAEMON.start()
    wait_for(120, f'worker {WORKER} online',
             lambda: lava().state('worker', WORKER) == 'Online')


def start() -> None:
    begin = time.time()
    require_root()
    os.makedirs(RUN, exist_ok=True)
    os.makedirs(LOGS, exist_ok=True)
    with shell.stage_block('lab: packages'):
        log = os.path.join(LOGS, 'deps.log')
        if common.run(plib.perf_aux('deps', 'lab'), log=log, timeout=1800):
            raise Fatal(f'lab: perf_aux deps lab failed (see {log})')
        with open(log) as f:
            for line in f:
                if line.startswith('installing:'):
                    say(line.strip())
    subprocess.run(['chown', 'lavaserver:lavaserver', LOGS], check=True)
    with shell.stage_block('lab: PostgreSQL'):
        start_postgresql()
    with shell.stage_block('lab: database'):
        setup_database()
    with shell.stage_block('lab: user, worker, devices'):
        setup_user()
        setup_worker()
        setup_devices()
    with shell.stage_block('lab: daemons'):
        if not GUNICORN.running() and listening(PORT):
            raise Fatal(f'lab: port {PORT} is taken (PERF_AUX_LAB_PORT)')
        GUNICORN.start()
        wait_for(180, f'lava-server on {URL}',
                 lambda: bool(Server(URL)('system', 'version')))
        SCHEDULER.start()
        start_worker()
        wait_for(120, f'devices {" ".join(DEVICES)} idle', devices_idle)
    say(f'started in {time.time() - begin:.0f} s: {URL}/ (lavacli: '
        f'XDG_CONFIG_HOME={LAB_DIR}/config lavacli -i {LAB_USER} ...)')


# ---- status and stop ----------------------------------------------------

def status() -> int:
    try:
        say(f'server {URL}/: reachable, lava-server '
            f'{Server(URL)("system", "version").strip()}')
    except LavaError:
        say(f'server {URL}/: not reachable')
        return 1
    bad = 0
    for what, name, good in ([('worker', WORKER, 'Online')] +
                             [('device', d, 'Idle') for d in DEVICES]):
        try:
            d = lava().json(f'{what}s', 'show', name)
        except (LavaError, OSError):
            say(f'{what} {name}: unknown to the server')
            bad = 1
            continue
        say(f'{what} {name}: {d["state"]}, {d["health"]}')
        bad |= d['state'] != good
    return bad


def children(pid: int) -> List[int]:
    kids = []
    for stat in glob.glob('/proc/[0-9]*/stat'):
        try:
            with open(stat) as f:
                fields = f.read().rsplit(')', 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == pid:
            kids.append(int(stat.split('/')[2]))
    return kids


def descendants(pid: int) -> List[int]:
    """pid's processes below it, deepest first."""
    found: List[int] = []
    for child in children(pid):
        found += descendants(child) + [child]
    return found


def alive(pid: int) -> bool:
    try:
        with open(f'/proc/{pid}/stat') as f:
            return f.read().rsplit(')', 1)[1].split()[0] != 'Z'
    except (OSError, IndexError):
        return False


def stop_jobs() -> None:
    """The jobs of our worker: its lava-run children (each in its own
    process group, its QEMU in another).  TERM is lava-run's cancel: it
    stops QEMU and cleans up; whatever is left after 60 s is killed."""
    if not WORKER_DAEMON.running():
        return
    for pid in children(WORKER_DAEMON.pid()):
        tree = descendants(pid)
        m = re.search(r'job: ([0-9]+)', cmdline(pid))
        say(f'cancelling lava-run {pid} (job {m.group(1) if m else ""})')
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:
            continue
        deadline = time.time() + 60
        while alive(pid) and time.time() < deadline:
            time.sleep(1)
        for p in [pid] * alive(pid) + tree:
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass


def stop() -> None:
    begin = time.time()
    require_root()
    stop_jobs()
    for daemon in (WORKER_DAEMON, SCHEDULER, GUNICORN):
        daemon.stop()
    cluster = ours_postgresql()
    if cluster:
        if common.run(['service', 'postgresql', 'stop'], timeout=90):
            raise Fatal(f'lab: PostgreSQL {"/".join(cluster)} did not stop')
        say(f'PostgreSQL {"/".join(cluster)} stopped (service postgresql '
            'stop)')
    if os.path.exists(os.path.join(RUN, 'postgresql')):
        os.remove(os.path.join(RUN, 'postgresql'))
    say(f'stopped in {time.time() - begin:.0f} s')


def main(args: List[str]) -> int:
    command = {'start': start, 'status': status, 'stop': stop}.get(
        args[0] if len(args) == 1 else '')
    if not command:
        raise Fatal('lab: usage: python3 -m perf_aux_lava lab '
                    'start|status|stop|selftest [qemu]|submit RUN|JOB.yaml...')
    return command() or 0
