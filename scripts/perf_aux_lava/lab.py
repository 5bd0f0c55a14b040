# SPDX-License-Identifier: GPL-2.0
"""python3 -m perf_aux_lava lab start|stop|selftest [qemu]: a local
LAVA lab on 127.0.0.1 without systemd (lava-jobs/README.md), and its
selftest (make lab-selftest, stage lava_lab)."""

import contextlib
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Dict, List, NamedTuple

from . import DIRECT_ONLY, PYTHON, SCRIPTS, Error, ROOT, guestfs_env, kernelci
from . import plib, read, write_private
from perf_aux import shell
from .submit import LavaError, Server

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
# submit's LAVA_WAIT for a job of no kernel, and for the runs.
HELLO_WAIT = 300
QEMU_WAIT = 1800
MESSAGE = re.compile(r'^(?:perf_aux: error: (submit: .*)|'
                     r'(submit: infrastructure error: .*))$')

def say(msg: str) -> None:
    print(f'lab: {msg}', flush=True)

class Daemon(NamedTuple):
    """A unit's daemon, ours by pid file and marker; group: KillMode."""
    name: str
    argv: List[str]
    marker: str
    group: bool = True

    @property
    def pidfile(self) -> str:
        return os.path.join(RUN, f'{self.name}.pid')

    def pid(self) -> int:
        return int(read(self.pidfile).strip() or 0)

    def running(self) -> bool:
        return bool(self.pid()) and self.marker in read(
            f'/proc/{self.pid()}/cmdline').replace('\0', ' ')

    def start(self) -> None:
        if self.running():
            return say(f'{self.name} already running')
        with open(os.path.join(LOGS, f'{self.name}.out'), 'ab') as log:
            p = subprocess.Popen(self.argv, cwd='/', env=BASE_ENV,
                                 stdin=subprocess.DEVNULL, stdout=log,
                                 stderr=subprocess.STDOUT,
                                 start_new_session=True)
        Path(self.pidfile).write_text(f'{p.pid}\n')
        time.sleep(1)
        if p.poll() is not None or not self.running():
            raise Error(f'lab: {self.name} exited at once (see '
                        f'{LOGS}/{self.name}.out)')
        say(f'{self.name} started, pid {p.pid}')

    def stop(self, timeout: int = 20) -> None:
        """TERM (systemd's KillSignal), then KILL after timeout."""
        pid, was = self.pid(), self.running()
        for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 5)):
            if self.running():
                with contextlib.suppress(OSError):
                    (os.killpg if self.group else os.kill)(pid, sig)
            deadline = time.time() + wait
            while self.running() and time.time() < deadline:
                time.sleep(0.5)
        if self.running():
            raise Error(f'lab: {self.name} (pid {pid}) did not stop')
        if was:
            with contextlib.suppress(OSError):
                os.waitpid(pid, os.WNOHANG)  # ours: reaped, not a zombie
            say(f'{self.name} stopped')
        with contextlib.suppress(OSError):
            os.remove(self.pidfile)

# The units' ExecStart= with this lab's values: no lava-publisher, so the
# worker polls, every 5 s.
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

def manage(*args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    """lava-server manage as lavaserver, its output (secrets too) captured."""
    return plib.run(['timeout', str(timeout), 'runuser', '-u', 'lavaserver',
                     '--', 'lava-server', 'manage', *args],
                    stdout=plib.PIPE, stderr=plib.DEVNULL)

def managed(what: str, check: List[str], *add: str) -> None:
    """manage ADD... unless manage CHECK... says it is there already."""
    if manage(*check).returncode and manage(*add).returncode:
        raise Error(f'lab: cannot {what}')

def quiet(ok: Callable[[], object]) -> object:
    try:
        return ok()
    except (LavaError, OSError, KeyError, ValueError, TypeError):
        return False

def wait_for(secs: int, what: str, ok: Callable[[], object]) -> None:
    deadline = time.time() + secs
    while not quiet(ok):
        if time.time() >= deadline:
            raise Error(f'lab: {what}: not within {secs} s (logs in {LOGS})')
        time.sleep(2)

def lava() -> Server:
    """The lab's server as its perf_aux user (OSError without a token)."""
    return Server(URL, LAB_USER, ''.join(Path(TOKEN).read_text().split()))

def start() -> None:
    begin = time.time()
    if os.geteuid():
        raise Error('lab: run as root (apt-get, PostgreSQL, lava-server)')
    os.makedirs(RUN, exist_ok=True)
    os.makedirs(LOGS, exist_ok=True)
    with shell.stage_block('lab: packages'):
        log = os.path.join(LOGS, 'deps.log')
        if plib.status(plib.perf_aux('deps', 'lab'), log=log, timeout=1800):
            raise Error(f'lab: perf_aux deps lab failed (see {log})')
        for line in read(log).splitlines():
            if line.startswith('installing:'):
                say(line.strip())
    plib.run(['chown', 'lavaserver:lavaserver', LOGS], check=True)
    with shell.stage_block('lab: PostgreSQL'):
        if ' online ' not in plib.text(['pg_lsclusters', '-h']):
            if plib.status(['service', 'postgresql', 'start'], timeout=120) \
                    or ' online ' not in plib.text(['pg_lsclusters', '-h']):
                raise Error('lab: PostgreSQL did not start '
                            '(pg_lsclusters, /var/log/postgresql/)')
            Path(RUN, 'postgresql').touch()
            say('PostgreSQL started (service postgresql start)')
        elif not os.path.exists(os.path.join(RUN, 'postgresql')):
            say('PostgreSQL already running: left as it is')
    with shell.stage_block('lab: database, user, worker, devices'):
        setup()
    with shell.stage_block('lab: daemons'):
        GUNICORN.start()
        wait_for(180, f'lava-server on {URL}',
                 lambda: Server(URL)('system', 'version'))
        SCHEDULER.start()
        WORKER_DAEMON.start()
        wait_for(120, f'worker {WORKER} online',
                 lambda: lava().state('worker', WORKER) == 'Online')
        wait_for(120, f'devices {" ".join(DEVICES)} idle', lambda: all(
            lava().state('device', d) == 'Idle' for d in DEVICES))
    say(f'started in {time.time() - begin:.0f} s: {URL}/ (lavacli: '
        f'XDG_CONFIG_HOME={LAB_DIR}/config lavacli -i {LAB_USER} ...)')

def setup() -> None:
    """The database and configuration (postinst.py skipped them with
    PostgreSQL down), the perf_aux user, its token, the worker, the devices."""
    if not os.path.isfile(f'{LAVA_ETC}/settings.d/00-database.yaml') or \
            manage('migrate', '--check').returncode:
        say('creating the database and applying migrations')
        log = os.path.join(LOGS, 'postinst.log')
        if plib.status([PYTHON, '/usr/share/lava-server/postinst.py',
                        '--config', '--db', '--fixup'], log=log,
                       timeout=1200):
            raise Error(f'lab: lava-server postinst.py failed (see {log})')
    managed(f'create user {LAB_USER}', ['users', 'details', LAB_USER],
            'users', 'add', LAB_USER, '--staff', '--superuser')
    token = read(TOKEN).strip()
    if not token or token not in manage('tokens', 'list', '--user', LAB_USER,
                                        '--csv').stdout:
        p = manage('tokens', 'add', '--user', LAB_USER, '--description',
                   'perf_aux lab')
        token = p.stdout.strip()
        if p.returncode or not token:
            raise Error(f'lab: cannot create a token for {LAB_USER}')
        write_private(TOKEN, token + '\n')
    os.makedirs(os.path.join(LAB_DIR, 'config'), mode=0o700, exist_ok=True)
    write_private(os.path.join(LAB_DIR, 'config', 'lavacli.yaml'),
                  f'{LAB_USER}:\n  uri: {URL}/RPC2\n  username: {LAB_USER}\n'
                  f'  token: {token}\n')
    managed(f'add worker {WORKER}', ['workers', 'details', WORKER],
            'workers', 'add', WORKER, '--description', 'perf_aux lab')
    m = re.search(r'(?m)^token *: *(\S+)', manage('workers', 'details',
                                                   WORKER).stdout)
    if not m:
        raise Error(f'lab: no token for worker {WORKER}')
    for d in ('worker', 'tmp', f'{LAVA_ETC}/dispatcher.d/{WORKER}'):
        os.makedirs(os.path.join(LAB_DIR, d), exist_ok=True)
    write_private(os.path.join(LAB_DIR, 'worker', 'token'), m[1] + '\n')
    # The jobs' environment: lava-server's env.yaml (which purges the
    # worker's own) and libguestfs' (JSON is YAML).
    Path(LAVA_ETC, 'dispatcher.d', WORKER, 'env.yaml').write_text(json.dumps(
        {'purge': True, 'overrides': dict(
            LC_ALL='C.UTF-8', LANG='C', HOME='/root', PATH='/usr/local/bin:'
            '/usr/local/sbin:/bin:/usr/bin:/usr/sbin:/sbin',
            **guestfs_env(f'{LAB_DIR}/tmp'))}, indent=1) + '\n')
    managed('add device type qemu', ['device-types', 'details', 'qemu'],
            'device-types', 'add', 'qemu')
    for dev in DEVICES:
        path = f'{LAVA_ETC}/dispatcher-config/devices/{dev}.jinja2'
        Path(path).write_text(device_dict(int(dev[-1])))
        plib.run(['chown', 'lavaserver:lavaserver', path], check=True)
        managed(f'add device {dev}', ['devices', 'details', dev],
                'devices', 'add', dev, '--device-type', 'qemu', '--worker',
                WORKER, '--description', 'perf_aux lab QEMU')
        if manage('devices', 'update', dev, '--worker', WORKER, '--health',
                  'GOOD').returncode:
            raise Error(f'lab: cannot set device {dev} healthy')

def device_dict(n: int) -> str:
    """qemu-0N: scripts/lava/devices' QEMU, its own MAC, no traffic out."""
    return read(os.path.join(ROOT, 'scripts', 'lava', 'devices',
                             'perf-aux-qemu01.jinja2')).replace(
        '52:54:00:12:34:59', f'52:54:00:12:34:6{n}') + """\
{# lab.py: no traffic leaves the guest; a command for no-kernel jobs #}
{% set netdevice = 'user,restrict=on' %}
{% set user_commands = {'perf_aux_lab_hello': {'do': 'uname -sm'}} %}
"""

def children(pid: int) -> List[int]:
    return [int(p) for p in plib.text(['pgrep', '-P', str(pid)]).split()]

def descendants(pid: int) -> List[int]:
    """pid's processes below it, deepest first."""
    return [p for child in children(pid) for p in descendants(child) + [child]]

def alive(pid: int) -> bool:
    return read(f'/proc/{pid}/stat').rsplit(')', 1)[-1].split()[:1] not in (
        [], ['Z'])

def stop() -> None:
    """What start started, the lava-run jobs first (TERM: their cancel)."""
    begin = time.time()
    if os.geteuid():
        raise Error('lab: run as root (apt-get, PostgreSQL, lava-server)')
    worker = WORKER_DAEMON.pid() if WORKER_DAEMON.running() else 0
    runs = children(worker) if worker else []
    tree = descendants(worker) if worker else []
    for pid in runs:
        m = re.search(r'job: ([0-9]+)', read(f'/proc/{pid}/cmdline'))
        say(f'cancelling lava-run {pid} (job {m[1] if m else ""})')
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.time() + 60
    while any(map(alive, runs)) and time.time() < deadline:
        time.sleep(1)
    for pid in tree:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    for daemon in (WORKER_DAEMON, SCHEDULER, GUNICORN):
        daemon.stop()
    if os.path.exists(os.path.join(RUN, 'postgresql')):
        if plib.status(['service', 'postgresql', 'stop'], timeout=90):
            raise Error('lab: PostgreSQL did not stop')
        os.remove(os.path.join(RUN, 'postgresql'))
        say('PostgreSQL stopped (service postgresql stop)')
    say(f'stopped in {time.time() - begin:.0f} s')

def command_job(name: str, command: str, **extra: int) -> str:
    """A job of one user command of the device, nothing booted (JSON: YAML)."""
    return json.dumps({
        'device_type': 'qemu', 'job_name': f'perf_aux lab {name}',
        'timeouts': {'job': {'minutes': 5}, 'action': {'minutes': 4}},
        'priority': 'medium', 'visibility': 'public',
        'actions': [{'command': {'name': command}}], **extra}, indent=1)

def message(out: str) -> str:
    """submit's last one-line reason for failing, in the file out."""
    return ([m[1] or m[2] for m in map(MESSAGE.match, read(out).splitlines())
             if m] or [''])[-1]

class Selftest:
    """Its check lines ("ok - lava: lab: ..."), its files in out/lab/."""

    def __init__(self) -> None:
        self.dir = os.path.join(plib.out(), 'lab')
        self.bad = False

    def check(self, ok: bool, what: str) -> None:
        print(f'{"ok" if ok else "not ok"} - lava: lab: {what}', flush=True)
        self.bad |= not ok

    def skip(self, what: str, why: str) -> None:
        print(f'ok - lava: lab: {what} # SKIP {why}', flush=True)

    def path(self, name: str) -> str:
        return os.path.join(self.dir, name)

    def job(self, name: str, command: str, **extra: int) -> str:
        Path(self.path(f'{name}.yaml')).write_text(
            command_job(name, command, **extra))
        return self.path(f'{name}.yaml')

    def submit(self, out: str, args: List[str], env: Dict[str, str]) -> int:
        """make submit's exit status."""
        with open(out, 'w') as f:
            rc = plib.status(
                [sys.executable, '-m', 'perf_aux_lava', 'submit', *args],
                env={'LAB': URL, 'PYTHONPATH': SCRIPTS,
                     'PERF_AUX_OUT': self.dir, **env},
                stdout=f, stderr=subprocess.STDOUT)
        print(''.join(f'# {line}\n' for line in read(out).splitlines()),
              end='')
        return rc

    def fault(self, what: str, want: int, pattern: str, args: List[str],
              env: Dict[str, str]) -> None:
        """submit exits want, saying why, with no results."""
        out = self.path(f'fault-{want}-{time.time_ns()}.out')
        rc = self.submit(out, args, env)
        line = message(out)
        ok = rc == want and re.search(pattern, line) and not glob.glob(
            self.path('results/*'))
        self.check(bool(ok), f'{what}: exit {rc}, "{line}"' + (
            '' if ok else f' (wanted exit {want}, /{pattern}/, no results)'))

    def compare(self, run: str) -> None:
        """The lab's results of run equal the direct run's case by case."""
        direct = os.path.join(os.environ.get('PERF_AUX_LAB_DIRECT') or
                              os.path.join(plib.out(), 'results'), run)
        what = f'{run} through the lab equals the direct run'
        mine = self.path(os.path.join('results', run))
        if not os.path.isdir(mine):
            return self.check(False, f'{run} through the lab: no results in '
                              f'{mine}')
        if not glob.glob(os.path.join(direct, '*.ktap')):
            return self.skip(what, f'no direct run in {direct}')
        argv = plib.perf_aux('results', 'flakes', python=PYTHON)
        for suite in DIRECT_ONLY:
            argv += ['--except', suite]
        p = plib.run(argv + [mine, direct], stdout=plib.PIPE)
        Path(self.path(f'{run}.flakes')).write_text(p.stdout)
        ok = not p.returncode and '\nlava: job ' in read(
            os.path.join(mine, 'source.txt'))
        lines = p.stdout.splitlines()
        self.check(ok, f'{what} case by case ({(lines or [""])[-1]}; '
                   f"{', '.join(DIRECT_ONLY)} (the direct run's only) left "
                   'out)')
        if not ok:
            for f in [x for x in lines if x.startswith('flaky')][:20]:
                print('# ' + f)

    def run(self, qemu: bool) -> None:
        base = os.environ.get('BASE') or plib.default_base()
        shutil.rmtree(self.dir, ignore_errors=True)
        os.makedirs(self.dir)
        begin = time.time()
        start()
        self.check(True, f'started in {time.time() - begin:.0f} s: '
                   f'lava-server, lava-worker, PostgreSQL on {URL}/')
        hello = self.job('hello', 'perf_aux_lab_hello')
        begin = time.time()
        rc = self.submit(f'{hello}.out', [hello],
                         {'LAVA_WAIT': str(HELLO_WAIT)})
        self.check(rc == 0, 'a job needing no kernel Complete, its results '
                   f'through the API ({time.time() - begin:.0f} s)')
        self.fault("a job the server's schema rejects", 2,
                   'refused .*HTTP 400.*extra keys not allowed',
                   [self.job('rejected', 'perf_aux_lab_hello',
                             perf_aux_not_a_key=1)], {})
        self.fault('a wrong token', 2, r'refused the token \(HTTP 401',
                   [hello], {'LAVA_TOKEN': 'perf-aux-not-a-token'})
        build = os.path.join(plib.cache(), 'trees', f'{base}-reference',
                             '.build-arm64-4k')
        if os.path.isfile(os.path.join(build, 'arch/arm64/boot/Image.gz')):
            self.fault('a run whose job ends Incomplete (its kernel\'s URL '
                       'leads nowhere)', 3,
                       r'infrastructure error: job [0-9]+ \(reference-.*'
                       'Incomplete', [f'reference-{base}-arm64-4k'],
                       {'LAVA_WAIT': str(HELLO_WAIT),
                        'LAVA_ARTIFACTS_URL': 'file:///nonexistent/perf_aux'})
        else:
            self.skip('a run whose job ends Incomplete',
                      f'no reference arm64-4k build in {build}')
        if not qemu:
            return
        runs = (os.environ.get('PERF_AUX_LAB_RUNS') or
                f'reference-{base}-arm64-4k').split()
        begin = time.time()
        out = self.path('runs.out')
        rc = self.submit(out, runs, {'LAVA_WAIT': str(QEMU_WAIT)})
        self.check(rc == 0, f'{" ".join(runs)} through the lab: Complete, '
                   f'results collected ({time.time() - begin:.0f} s)')
        for run in runs:
            self.compare(run)
        kernelci.run(self, base)

def main(args: List[str]) -> int:
    if args[:1] == ['selftest']:
        t = Selftest()
        try:
            t.run(args[1:] == ['qemu'])
        except Error as e:
            t.check(False, f'selftest ended early: {e}')
        finally:
            try:
                stop()
            except Error as e:
                plib.error(str(e))
                t.bad = True
        return 1 if t.bad else 0
    command = {'start': start, 'stop': stop}.get(
        args[0] if len(args) == 1 else '')
    if not command:
        raise Error('lab: usage: python3 -m perf_aux_lava lab '
                    'start|stop|selftest [qemu]')
    return command() or 0
