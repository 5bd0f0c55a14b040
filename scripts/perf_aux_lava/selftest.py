# SPDX-License-Identifier: GPL-2.0
"""python3 -m perf_aux_lava lab selftest [qemu] (make lab-selftest, stage
lava_lab): an "ok - lava: lab: ..." line a check (lava-jobs/README.md),
exit 1 if any is not ok; its files in out/lab/."""

import glob
import os
import re
import shutil
import subprocess
import sys
import time
from typing import Dict, List, Optional

from . import artifacts, common, kernelci, lab
from .common import Fatal, plib, write_private

# Seconds (submit's LAVA_WAIT): a job that needs no kernel, lava-jobs'
# QEMU jobs (their own timeout is 40 minutes; checks.py allows lava-run
# 1500 s), the job under which the worker is killed (its command sleeps
# lab.SLEEP_SECONDS, longer).
HELLO_WAIT = 300
QEMU_WAIT = 1800
KILL_WAIT = 60
MESSAGE = re.compile(r'^(?:perf_aux: error: (submit: .*)|'
                     r'(submit: infrastructure error: .*))$')


def command_job(name: str, command: str, extra: str = '') -> str:
    """A job of one user command of the device (perf_aux_lab_hello,
    perf_aux_lab_sleep), nothing booted: a qemu device's boot methods boot
    an image; a "command" action runs on the worker.  extra: a line more."""
    return f"""\
# SPDX-License-Identifier: GPL-2.0
# perf_aux lab selftest: a user command of the device, nothing booted.
device_type: qemu
job_name: perf_aux lab {name}
timeouts:
  job:
    minutes: 5
  action:
    minutes: 4
priority: medium
visibility: public
actions:
- command:
    name: {command}
{extra}
"""


def submit(args: List[str], env: Dict[str, str], out: str) -> subprocess.Popen:
    """make submit of ARGS on the lab (LAB in env, another one for a fault
    case), its output in the file out."""
    full = dict(os.environ, LAB=lab.URL, PYTHONPATH=common.SCRIPTS)
    full.update(env)
    with open(out, 'w') as f:
        return subprocess.Popen(
            [sys.executable, '-m', 'perf_aux_lava', 'submit', *args],
            env=full, stdout=f, stderr=subprocess.STDOUT)


def message(out: str) -> str:
    """submit's one-line reason for failing, in out."""
    with open(out, errors='replace') as f:
        found = [m.group(1) or m.group(2) for m in map(
            MESSAGE.match, f.read().splitlines()) if m]
    return found[-1] if found else ''


def show(out: str) -> None:
    with open(out, errors='replace') as f:
        for line in f:
            print('# ' + line.rstrip('\n'))


def default_runs(base: str) -> List[str]:
    """The reference arm64-4k run of base, and beside it the stock control
    and the 16K reference run where they were built (the full tier's
    stock and targets stages build them before its lava_lab stage):
    submitted together, they run side by side on the lab's two devices."""
    tree = os.path.join(plib.cache(), 'trees', base)
    runs = [f'reference-{base}-arm64-4k']
    if os.path.isfile(f'{tree}-stock/.build-arm64-4k/initramfs.cpio.gz'):
        runs.append(f'stock-{base}-arm64-4k')
    if os.path.isfile(f'{tree}-reference/.build-arm64-16k/initramfs.cpio.gz'):
        runs.append(f'reference-{base}-arm64-16k')
    return runs


class Selftest:
    def __init__(self) -> None:
        self.dir = os.path.join(plib.out(), 'lab')
        self.bad = False

    def check(self, ok: bool, what: str) -> None:
        print(f'{"ok" if ok else "not ok"} - lava: lab: {what}', flush=True)
        self.bad |= not ok

    def path(self, name: str) -> str:
        return os.path.join(self.dir, name)

    def write(self, name: str, text: str) -> str:
        with open(self.path(name), 'w') as f:
            f.write(text)
        return self.path(name)

    def submit(self, out: str, args: List[str],
               env: Optional[Dict[str, str]] = None) -> int:
        """submit ARGS, its output in out and shown as comments; its exit
        status.  Results go to the selftest's own out directory."""
        rc = submit(args, dict(env or {}, PERF_AUX_OUT=self.dir), out).wait()
        show(out)
        return rc

    def no_results(self) -> bool:
        return not os.path.isdir(self.path('results')) or \
            not os.listdir(self.path('results'))

    def fault(self, what: str, want: int, pattern: str, args: List[str],
              env: Optional[Dict[str, str]] = None) -> None:
        """submit ARGS exits want, says why in one line matching pattern,
        writes no results."""
        out = self.path(f'fault-{want}-{time.time_ns()}.out')
        rc = self.submit(out, args, env)
        line = message(out)
        ok = rc == want and re.search(pattern, line) and self.no_results()
        self.check(bool(ok), f'{what}: exit {rc}, "{line}"' + (
            '' if ok else f' (wanted exit {want}, /{pattern}/, no results)'))

    def revoked_token(self, path: str) -> bool:
        """A token of the lab's user, created and deleted again, in path
        (0600).  LAVA 2023.01's tokens have no expiry date: a revoked one
        is the nearest to an expired one.  (Deleted by its description:
        the secret never goes on a command line.)"""
        desc = 'perf_aux lab selftest: revoked'
        p = lab.manage('tokens', 'add', '--user', lab.LAB_USER,
                       '--description', desc)
        if p.returncode or not p.stdout.strip():
            return False
        write_private(path, p.stdout)
        return not lab.manage(
            'shell', '-c', 'from linaro_django_xmlrpc.models import '
            f"AuthToken; AuthToken.objects.filter(description='{desc}')"
            '.delete()').returncode

    def job_state(self, job: str) -> str:
        d = lab.lava().json('jobs', 'show', job)
        return f'{d["state"]} {d["health"]}'

    def worker_killed(self) -> None:
        """lava-worker is killed (our daemon, by its pid file) while a job
        runs: submit's bound (LAVA_WAIT) passes, it cancels the job and
        says so, exit 3.  Then the worker is started again: it ends the
        job Canceled (it still knows the job's lava-run) and the devices
        are Idle."""
        out = self.path('worker.out')
        job = self.write('sleep.yaml', command_job('sleep',
                                                   'perf_aux_lab_sleep'))
        job_id = ''
        p = submit([job], {'LAVA_WAIT': str(KILL_WAIT),
                           'PERF_AUX_OUT': self.dir}, out)
        deadline = time.time() + 120
        while p.poll() is None and time.time() < deadline:
            if not job_id:
                with open(out) as r:
                    m = re.search(r'(?m)^submit: job ([0-9]+) submitted',
                                  r.read())
                job_id = m.group(1) if m else ''
            if job_id and lab.quiet(lambda: self.job_state(job_id) ==
                                    'Running Unknown'):
                pid = lab.WORKER_DAEMON.pid()
                lab.say(f'job {job_id} running: killing lava-worker, '
                        f'pid {pid}')
                os.kill(pid, 9)
                break
            time.sleep(2)
        rc = p.wait()
        show(out)
        line = message(out)
        self.check(rc == 3 and bool(re.search(
            f'not finished within {KILL_WAIT} s.*canceled', line)) and
            self.no_results(), f'lava-worker killed mid-job: exit {rc}, '
            f'"{line}"')
        if not job_id:
            return
        # The worker back: the job ends, the devices take jobs again.
        ok = True
        start = time.time()
        try:
            lab.start_worker()
        except Fatal as e:
            plib.error(str(e))
            ok = False
        deadline = time.time() + 120
        while True:
            state = lab.quiet(lambda: self.job_state(job_id)) or ''
            if state.startswith('Finished') or time.time() >= deadline:
                break
            time.sleep(2)
        try:
            lab.wait_for(120, f'devices {" ".join(lab.DEVICES)} idle',
                         lab.devices_idle)
        except Fatal as e:
            plib.error(str(e))
            ok = False
        self.check(ok and state == 'Finished Canceled',
                   f'lava-worker started again: job {job_id} {state} after '
                   f'{time.time() - start:.0f} s, devices Idle')

    def compare(self, run: str) -> None:
        """The lab's results of run against the direct run's, case by case
        (results flakes: two rounds, every case the same result).  A job
        runs every program; the programs a direct run did not run (make
        check's stock boot runs four) are left out, and counted."""
        direct = os.path.join(os.environ.get('PERF_AUX_LAB_DIRECT') or
                              os.path.join(plib.out(), 'results'), run)
        if not glob.glob(os.path.join(direct, '*.ktap')):
            print(f'ok - lava: lab: {run} through the lab equals the direct '
                  f'run # SKIP no direct run in {direct}', flush=True)
            return
        mine = self.path(os.path.join('results', run))
        unrun = [os.path.basename(f)[:-len('.ktap')]
                 for f in sorted(glob.glob(os.path.join(mine, '*.ktap')))
                 if not os.path.isfile(os.path.join(
                     direct, os.path.basename(f)))]
        argv = plib.perf_aux('results', 'flakes', python=common.PYTHON)
        for suite in unrun + list(artifacts.DIRECT_ONLY):
            argv += ['--except', suite]
        p = subprocess.run(argv + [mine, direct], capture_output=True,
                           text=True)
        self.write(f'{run}.flakes', p.stdout)
        with open(os.path.join(mine, 'source.txt')) as f:
            ok = not p.returncode and bool(re.search(r'(?m)^lava: job ',
                                                     f.read()))
        lines = p.stdout.splitlines()
        line = lines[-1] if lines else ''
        if unrun:
            line += (f'; {len(unrun)} programs the direct run did not run '
                     'left out')
        line += (f"; {', '.join(artifacts.DIRECT_ONLY)} (the direct run's "
                 'only) left out')
        self.check(ok, f'{run} through the lab equals the direct run case by '
                   f'case ({line})')
        if not ok:
            for f in [x for x in lines if x.startswith('flaky')][:20]:
                print('# ' + f)

    def faults(self, base: str) -> None:
        hello = self.path('hello.yaml')
        self.write('rejected.yaml', command_job(
            'rejected', 'perf_aux_lab_hello', 'perf_aux_not_a_key: 1'))
        self.fault("a job the server's schema rejects", 2,
                   'refused .*HTTP 400.*extra keys not allowed',
                   [self.path('rejected.yaml')])
        self.fault('a wrong token', 2, r'refused the token \(HTTP 401',
                   [hello], {'LAVA_TOKEN': 'perf-aux-not-a-token'})
        revoked = self.path('revoked-token')
        if self.revoked_token(revoked):
            self.fault('a revoked token (2023.01 tokens do not expire)', 2,
                       r'refused the token \(HTTP 401', [hello],
                       {'LAVA_TOKEN_FILE': revoked})
        else:
            self.check(False, 'a revoked token: cannot make one')
        if os.path.exists(revoked):
            os.remove(revoked)
        port = next((p for p in range(lab.PORT + 1, lab.PORT + 101)
                     if not lab.listening(p)), 0)
        if port:
            self.fault(f'no server on 127.0.0.1:{port}', 2,
                       'unreachable: .*(Failed to connect|Connection '
                       'refused)', [hello],
                       {'LAB': f'http://127.0.0.1:{port}',
                        'LAVA_TOKEN_FILE': lab.TOKEN, 'LAVA_USER':
                        lab.LAB_USER})
        else:
            self.check(False, f'no server: no free port above {lab.PORT}')
        build = os.path.join(plib.cache(), 'trees', f'{base}-reference',
                             '.build-arm64-4k')
        if os.path.isfile(os.path.join(build, 'arch', 'arm64', 'boot',
                                       'Image.gz')):
            self.fault('a run whose job ends Incomplete (its kernel\'s URL '
                       'leads nowhere)', 3,
                       r'infrastructure error: job [0-9]+ \(reference-.*'
                       'Incomplete', [f'reference-{base}-arm64-4k'],
                       {'LAVA_WAIT': str(HELLO_WAIT),
                        'LAVA_ARTIFACTS_URL': 'file:///nonexistent/perf_aux'})
        else:
            print('ok - lava: lab: a run whose job ends Incomplete # SKIP no '
                  f'reference arm64-4k build in {build}', flush=True)
        self.worker_killed()

    def qemu_runs(self, base: str) -> None:
        runs = (os.environ.get('PERF_AUX_LAB_RUNS') or
                ' '.join(default_runs(base))).split()
        start = time.time()
        out = self.path('runs.out')
        rc = self.submit(out, runs, {'LAVA_WAIT': str(QEMU_WAIT)})
        with open(out) as f:
            m = re.search(r'(?m)^submit: [0-9]+ jobs in ([0-9]+) s from '
                          'submission; one after another they would run '
                          '([0-9]+) s$', f.read())
        times = f': jobs {m.group(1)} s, serially {m.group(2)} s' if m else ''
        self.check(rc == 0, f'{" ".join(runs)} through the lab: Complete, '
                   f'results collected ({time.time() - start:.0f} s{times})')
        for run in runs:
            if os.path.isdir(self.path(os.path.join('results', run))):
                self.compare(run)
            else:
                self.check(False, f'{run} through the lab: no results in '
                           f'{self.path(os.path.join("results", run))}')
        kernelci.run(self, base)

    def run(self, qemu: bool) -> None:
        base = os.environ.get('BASE') or plib.default_base()
        shutil.rmtree(self.dir, ignore_errors=True)
        os.makedirs(self.dir)
        start = time.time()
        started = True
        try:
            lab.start()
        except Fatal as e:
            plib.error(str(e))
            started = False
        self.check(started, f'started in {time.time() - start:.0f} s: '
                   f'lava-server, lava-worker, PostgreSQL on {lab.URL}/')
        if not started:
            return
        hello = self.write('hello.yaml', command_job('hello',
                                                     'perf_aux_lab_hello'))
        start = time.time()
        rc = self.submit(self.path('hello.yaml.out'), [hello],
                         {'LAVA_WAIT': str(HELLO_WAIT)})
        self.check(rc == 0, 'a job needing no kernel Complete, its results '
                   f'through the API ({time.time() - start:.0f} s)')
        self.faults(base)
        if qemu:
            self.qemu_runs(base)


def main(args: List[str]) -> int:
    """The selftest; what start started is stopped in every case, and a
    selftest stopped before its end is a failed check."""
    t = Selftest()
    done = False
    try:
        t.run(args == ['qemu'])
        done = True
    finally:
        if not done:
            t.check(False, 'selftest ended early')
        try:
            lab.stop()
        except Fatal as e:
            plib.error(str(e))
            t.bad = True
    return 1 if t.bad else 0
