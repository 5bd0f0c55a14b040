# SPDX-License-Identifier: GPL-2.0
"""A local LAVA lab: Debian's lava-server 2023.01, PostgreSQL and
one lava-worker on this machine, on the loopback address only, with a
"qemu" device type and two devices, qemu-01 and qemu-02.  The jobs of
lava-jobs/ go through the whole server path here (submission, scheduler,
worker, lava-run, logs and results through the API), which lava-run alone
(checks.py) does not exercise.

Usage: scripts/lava/lab.sh start|status|stop|selftest [qemu]|submit RUN|JOB.yaml...
  start     installs what is missing (perf_aux deps lab: lava-server,
            lavacli, postgresql and the dispatcher's side), starts
            PostgreSQL, lava-server (gunicorn, lava-scheduler) and
            lava-worker, and sets up the user, token, device type,
            devices and worker
  status    server reachable, worker online, devices idle; exit 1 if not
  stop      stops what start started, and only that
  selftest  the lab's checks (selftest.py), one "ok - lava: lab: ..." line
            each; "selftest qemu" runs jobs of the pipeline's kernels too
  submit    scripts/lava/submit.sh against this lab

How the daemons run.  This is a container whose PID 1 is not systemd, and
the lava packages ship systemd units only (no init scripts), so:
PostgreSQL through its package's init script (service postgresql
start|stop); lava-server-gunicorn, lava-scheduler and lava-worker as their
packages' own units (/lib/systemd/system/*.service) say: each unit's
Environment=, EnvironmentFile= and ExecStart=, expanded as systemd does,
run as a Type=simple service, stopped as its KillMode= says; configured
through the files those units read (/etc/default/<unit>, written here:
bind address, workers, log files, the worker's name, URL and token file).
The database and configuration by the package's own postinst.py and
"lava-server manage" commands.

The lab lives in $PERF_AUX_CACHE/lab: run/ (pid files), log/, worker/
(the worker's token and job directories), token (the perf_aux user's API
token, 0600, never printed), config/lavacli.yaml (identity "perf_aux").
Configuration it writes outside: /etc/lava-server/settings.d/00-*.yaml
(postinst.py), /etc/default/{lava-server-gunicorn,lava-scheduler,
lava-worker}, dispatcher-config/devices/qemu-0?.jinja2 and
dispatcher.d/perf-aux-lab/env.yaml.  These stay after stop, so that the
next start is quick; the database too.

PERF_AUX_LAB_PORT: gunicorn's port on 127.0.0.1 (default 8000).
Runs as root.  Every wait has a bound; a failure says what and exits 2.
"""

import glob
import os
import re
import shlex
import signal
import socket
import subprocess
import time
from typing import Callable, Dict, List, Optional

from . import common
from .client import ApiError, Client
from .common import Fatal, ROOT, plib, shell

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
UNITS = '/lib/systemd/system'
# What the daemons get besides their units' variables, as systemd gives a
# system service a clean environment.
BASE_ENV = {'PATH': '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:'
                    '/sbin:/bin', 'LANG': 'C.UTF-8', 'LC_ALL': 'C.UTF-8'}


def say(msg: str) -> None:
    print(f'lab: {msg}', flush=True)


def manage(*args: str, capture: bool = True,
           timeout: int = 300) -> subprocess.CompletedProcess:
    """lava-server manage as lavaserver, as postinst.py runs it, so that
    nothing it creates (logs) becomes root's.  Its output captured: some
    commands print secrets, which go to 0600 files only."""
    return subprocess.run(['timeout', str(timeout), 'runuser', '-u',
                           'lavaserver', '--', 'lava-server', 'manage',
                           *args], capture_output=capture, text=True)


def managed(what: str, check: List[str], *add: str) -> None:
    """manage ADD... unless manage CHECK... says it is there already."""
    if manage(*check).returncode and manage(*add).returncode:
        raise Fatal(f'lab: cannot {what}')


def write_private(path: str, text: str) -> None:
    """text in path, mode 0600 from the start."""
    fd = os.open(path + '.new', os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, 'w') as f:
        f.write(text)
    os.replace(path + '.new', path)


def wait_for(secs: int, what: str, ok: Callable[[], bool]) -> None:
    deadline = time.time() + secs
    while not _quiet(ok):
        if time.time() >= deadline:
            raise Fatal(f'lab: {what}: not within {secs} s (logs in {LOGS})')
        time.sleep(2)


def _quiet(ok: Callable[[], bool]) -> bool:
    try:
        return ok()
    except (ApiError, OSError, KeyError, ValueError):
        return False


def listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(2)
        return s.connect_ex(('127.0.0.1', port)) == 0


def api() -> Client:
    with open(TOKEN) as f:
        return Client(URL, ''.join(f.read().split()))


# ---- services, as their systemd units describe them -----------------------

def _expand(word: str, env: Dict[str, str]) -> List[str]:
    """One ExecStart word as systemd expands it: a lone $VAR is split on
    whitespace (none if empty), ${VAR} stays one word."""
    m = re.fullmatch(r'\$([A-Za-z_][A-Za-z0-9_]*)', word)
    if m:
        return env.get(m.group(1), '').split()
    return [re.sub(r'\$\{([A-Za-z_][A-Za-z0-9_]*)\}',
                   lambda v: env.get(v.group(1), ''), word)]


def _assignments(text: str, env: Dict[str, str]) -> None:
    for word in shlex.split(text, comments=True):
        key, eq, value = word.partition('=')
        if eq:
            env[key] = value


class Service:
    """A daemon of a package's systemd unit: [Service] Type=simple, its
    Environment=, EnvironmentFile= and ExecStart=.  Ours by a pid file in
    RUN; marker: what its /proc cmdline holds (gunicorn rewrites its
    own)."""

    def __init__(self, unit: str, name: str, marker: str) -> None:
        self.unit, self.name, self.marker = unit, name, marker
        self.pidfile = os.path.join(RUN, f'{name}.pid')

    def _fields(self) -> Dict[str, List[str]]:
        fields: Dict[str, List[str]] = {}
        path = os.path.join(UNITS, f'{self.unit}.service')
        try:
            with open(path) as f:
                lines = f.read().splitlines()
        except OSError:
            raise Fatal(f'lab: no unit {path}') from None
        section = ''
        for line in lines:
            line = line.strip()
            if line.startswith('['):
                section = line
            elif section == '[Service]' and '=' in line:
                key, _, value = line.partition('=')
                fields.setdefault(key.strip(), []).append(value.strip())
        return fields

    def command(self) -> List[str]:
        """ExecStart= expanded in the unit's environment."""
        fields = self._fields()
        env: Dict[str, str] = {}
        for text in fields.get('Environment', []):
            _assignments(text, env)
        for path in fields.get('EnvironmentFile', []):
            optional = path.startswith('-')
            try:
                with open(path.lstrip('-')) as f:
                    _assignments(f.read(), env)
            except OSError:
                if not optional:
                    raise Fatal(f'lab: {self.unit}: no {path}') from None
        argv = []
        for word in shlex.split(fields['ExecStart'][0].lstrip('-@')):
            argv += _expand(word, env)
        return argv

    def kill_group(self) -> bool:
        """KillMode=process signals the main process only; the default
        (control-group) all of the service's processes: here, its
        session."""
        return self._fields().get('KillMode', ['control-group'])[-1] != \
            'process'

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
        try:
            with open(f'/proc/{pid}/cmdline', 'rb') as f:
                cmdline = f.read().replace(b'\0', b' ').decode(
                    errors='replace')
        except OSError:
            return False
        return bool(pid) and self.marker in cmdline

    def start(self) -> None:
        if self.running():
            say(f'{self.name} already running')
            return
        argv = self.command()
        env = dict(BASE_ENV)
        with open(os.path.join(LOGS, f'{self.name}.out'), 'ab') as log:
            try:
                p = subprocess.Popen(argv, cwd='/', env=env,
                                     stdin=subprocess.DEVNULL, stdout=log,
                                     stderr=subprocess.STDOUT,
                                     start_new_session=True)
            except OSError as e:
                raise Fatal(f'lab: cannot start {self.name}: {e}') from None
        self.process = p  # not waited for: it outlives this command
        with open(self.pidfile, 'w') as f:
            f.write(f'{p.pid}\n')
        time.sleep(1)
        if p.poll() is not None or not self.running():
            raise Fatal(f'lab: {self.name} exited at once (see '
                        f'{LOGS}/{self.name}.out)')
        say(f'{self.name} started, pid {p.pid} ({self.unit}.service)')

    def stop(self, timeout: int = 20) -> None:
        """TERM (systemd's default KillSignal), then KILL after timeout
        (the units' TimeoutStopSec, bounded); only our pid file's."""
        if not self.running():
            _remove(self.pidfile)
            return
        pid = self.pid()
        group = self.kill_group()
        for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 5)):
            try:
                (os.killpg if group else os.kill)(pid, sig)
            except OSError:
                pass
            deadline = time.time() + wait
            while self.running() and time.time() < deadline:
                time.sleep(0.5)
            if not self.running():
                break
        if self.running():
            raise Fatal(f'lab: {self.name} (pid {pid}) did not stop')
        # Started by this command: reaped, not left a zombie.
        if getattr(self, 'process', None) is not None:
            self.process.poll()
        _remove(self.pidfile)
        say(f'{self.name} stopped')


def _remove(path: str) -> None:
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


GUNICORN = Service('lava-server-gunicorn', 'gunicorn', 'lava_server.wsgi')
SCHEDULER = Service('lava-scheduler', 'lava-scheduler', LAB_DIR)
WORKER_SERVICE = Service('lava-worker', 'lava-worker', LAB_DIR)


def unit_config() -> None:
    """What the units read from /etc/default: gunicorn on 127.0.0.1 with
    two eventlet workers (the unit's default is four; the machine has
    two cores), the logs in LOGS; the worker's name, server, token file
    and work directory.  No lava-publisher (nothing needs its events
    here): the worker's websocket then fails and it polls; every 5 s, not
    20, so that a job starts quickly."""
    head = ('# Written by perf_aux (scripts/perf_aux_lava/lab.py) for its '
            'local lab;\n# read by /lib/systemd/system/{}.service.\n')
    files = {
        'lava-server-gunicorn': {
            'LOGLEVEL': 'INFO', 'LOGFILE': f'{LOGS}/gunicorn.log',
            'WORKERS': '2', 'BIND': f'--bind 127.0.0.1:{PORT}'},
        'lava-scheduler': {
            'LOGLEVEL': 'INFO', 'LOGFILE': f'{LOGS}/lava-scheduler.log'},
        'lava-worker': {
            'LOGLEVEL': 'INFO', 'URL': f'{URL}/',
            'TOKEN': f'--token-file {LAB_DIR}/worker/token',
            'WORKER_NAME': f'--name {WORKER} --worker-dir {LAB_DIR}/worker '
                           f'--log-file {LOGS}/lava-worker.log '
                           '--ping-interval 5'},
    }
    for unit, env in files.items():
        with open(f'/etc/default/{unit}', 'w') as f:
            f.write(head.format(unit) + ''.join(
                f'{k}={shlex.quote(v)}\n' for k, v in env.items()))


# ---- start ------------------------------------------------------------

def require_root() -> None:
    if os.geteuid():
        raise Fatal('lab: run as root (apt-get, PostgreSQL, lava-server)')


def lab_packages() -> None:
    """perf_aux deps lab: what is missing of lava-server, lavacli,
    PostgreSQL and the dispatcher's side (QEMU, git, the device-type
    templates and libguestfs' kernel in the cache)."""
    log = os.path.join(LOGS, 'deps.log')
    if common.run(plib.perf_aux('deps', 'lab'), log=log, timeout=1800):
        raise Fatal(f'lab: perf_aux deps lab failed (see {log})')
    with open(log) as f:
        for line in f:
            if line.startswith('installing:'):
                say(line.strip())


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


def ours_postgresql() -> bool:
    """The running postmaster is the one start started."""
    try:
        with open(os.path.join(RUN, 'postgresql')) as f:
            version, name, pid = f.read().split()
    except (OSError, ValueError):
        return False
    return postmaster_pid(version, name) == pid


def start_postgresql() -> None:
    """PostgreSQL, by its package's init script, when it is not running
    (it listens on localhost, Debian's default).  One that was running is
    left as it is, and stop leaves it running."""
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
    """The database and lava-server's configuration, by lava-server's own
    postinst.py: it skipped them when the package was installed with
    PostgreSQL down, as it is on a machine without systemd."""
    if os.path.isfile(f'{LAVA_ETC}/settings.d/00-database.yaml') and \
            not manage('migrate', '--check').returncode:
        return
    say('creating the database and applying migrations')
    log = os.path.join(LOGS, 'postinst.log')
    if common.run([common.PYTHON, '/usr/share/lava-server/postinst.py',
                   '--config', '--db', '--fixup'], log=log, timeout=1200):
        raise Fatal(f'lab: lava-server postinst.py failed (see {log})')


def setup_user() -> None:
    """The perf_aux superuser and its API token (TOKEN, 0600), and the
    lavacli identity that uses it."""
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
    """The worker, with its token in LAB_DIR/worker/token (0600), and the
    environment its jobs get: lava-server's env.yaml purges the worker's
    own, and libguestfs needs a kernel and TCG here (as in checks.py)."""
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


# The selftest's jobs that need no kernel run user commands of the
# device: one that says hello, one that takes long enough to stop the
# worker under it (longer than the selftest's bound for it).
SLEEP_SECONDS = 150


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


def server_up() -> str:
    """lava-server's version; ApiError when it does not answer."""
    return Client(URL, timeout=10).json('system/version/')['version']


def worker_online() -> bool:
    return api().json(f'workers/{WORKER}/')['state'] == 'Online'


def devices_idle() -> bool:
    c = api()
    return all(c.json(f'devices/{d}/')['state'] == 'Idle' for d in DEVICES)


def start_worker() -> None:
    WORKER_SERVICE.start()
    wait_for(120, f'worker {WORKER} online', worker_online)


def start_daemons() -> None:
    if not GUNICORN.running() and listening(PORT):
        raise Fatal(f'lab: port {PORT} is taken (PERF_AUX_LAB_PORT)')
    unit_config()
    GUNICORN.start()
    wait_for(180, f'lava-server on {URL}', lambda: bool(server_up()))
    SCHEDULER.start()
    start_worker()
    wait_for(120, f'devices {" ".join(DEVICES)} idle', devices_idle)


def cmd_start() -> None:
    start = time.time()
    require_root()
    os.makedirs(RUN, exist_ok=True)
    os.makedirs(LOGS, exist_ok=True)
    with shell.stage_block('lab: packages'):
        lab_packages()
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
        start_daemons()
    say(f'started in {time.time() - start:.0f} s: {URL}/ (lavacli: '
        f'XDG_CONFIG_HOME={LAB_DIR}/config lavacli -i {LAB_USER} ...)')


# ---- status and stop ----------------------------------------------------

def cmd_status() -> int:
    try:
        say(f'server {URL}/: reachable, lava-server {server_up()}')
    except (ApiError, KeyError, ValueError):
        say(f'server {URL}/: not reachable')
        return 1
    bad = 0
    for what, path, good in ([('worker', WORKER, 'Online')] +
                             [('device', d, 'Idle') for d in DEVICES]):
        try:
            d = api().json(f'{what}s/{path}/')
        except (ApiError, OSError):
            say(f'{what} {path}: unknown to the server')
            bad = 1
            continue
        say(f'{what} {path}: {d["state"]}, {d["health"]}')
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


def _alive(pid: int) -> bool:
    try:
        with open(f'/proc/{pid}/stat') as f:
            return f.read().rsplit(')', 1)[1].split()[0] != 'Z'
    except (OSError, IndexError):
        return False


def stop_jobs() -> None:
    """The jobs of our worker: its lava-run children (each in its own
    process group, its QEMU in another).  TERM is lava-run's cancel: it
    stops QEMU and cleans up; whatever is left after 60 s is killed."""
    if not WORKER_SERVICE.running():
        return
    for pid in children(WORKER_SERVICE.pid()):
        tree = descendants(pid)
        try:
            with open(f'/proc/{pid}/cmdline', 'rb') as f:
                args = f.read().replace(b'\0', b' ').decode(errors='replace')
        except OSError:
            continue
        m = re.search(r'job: ([0-9]+)', args)
        say(f'cancelling lava-run {pid} (job {m.group(1) if m else ""})')
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:
            continue
        deadline = time.time() + 60
        while _alive(pid) and time.time() < deadline:
            time.sleep(1)
        for p in [pid] * _alive(pid) + tree:
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass


def cmd_stop() -> None:
    start = time.time()
    require_root()
    stop_jobs()
    for service in (WORKER_SERVICE, SCHEDULER, GUNICORN):
        service.stop()
    if ours_postgresql():
        with open(os.path.join(RUN, 'postgresql')) as f:
            version, name, _ = f.read().split()
        if common.run(['service', 'postgresql', 'stop'], timeout=90):
            raise Fatal(f'lab: PostgreSQL {version}/{name} did not stop')
        say(f'PostgreSQL {version}/{name} stopped (service postgresql stop)')
    _remove(os.path.join(RUN, 'postgresql'))
    say(f'stopped in {time.time() - start:.0f} s')


def submit(args: List[str], env: Optional[Dict[str, str]] = None,
           **kw) -> subprocess.Popen:
    """scripts/lava/submit.sh on this lab (LAB in env, another one for a
    fault case), the one way jobs are submitted and collected."""
    full = dict(os.environ, LAB=URL)
    full.update(env or {})
    return subprocess.Popen([os.path.join(ROOT, 'scripts', 'lava',
                                          'submit.sh'), *args],
                            env=full, **kw)


USAGE = ('lab: usage: scripts/lava/lab.sh start|status|stop|selftest '
         '[qemu]|submit RUN|JOB.yaml...')


def main(args: List[str]) -> int:
    command = args[0] if args else ''
    if command == 'start':
        cmd_start()
    elif command == 'status':
        return cmd_status()
    elif command == 'stop':
        cmd_stop()
    elif command == 'selftest':
        from . import selftest
        return selftest.run(args[1:2] == ['qemu'])
    elif command == 'submit':
        if len(args) < 2:
            raise Fatal(USAGE.replace('start|status|stop|selftest [qemu]|',
                                      ''))
        return submit(args[1:]).wait()
    else:
        raise Fatal(USAGE)
    return 0
