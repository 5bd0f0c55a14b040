# SPDX-License-Identifier: GPL-2.0
"""make submit: the jobs of runs or job files submitted through Debian's
lavacli, waited for with a bound, each run's console split into
out/results/<run>/ (docs/lava.md)."""

import ast
import glob
import json
import os
import re
import shutil
import sys
import tempfile
import time
import urllib.parse
import weakref
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Dict, Iterable, Iterator, List, Tuple

from perf_aux_results.ktap import KERNEL, parts

from . import Error, generate, kernel_missing, plib, read, stage_build
from . import testdefs, write_private

CANCEL_WAIT = 60
POLL = 5
# The dispatcher's "start: 3 lava-test-retry (timeout 00:20:00) [common]".
TEST_ACTION = re.compile(r'start: [0-9]+ lava-test')
TIMEOUT = 120

class LavaError(Exception):
    """A lavacli call that failed: the one line the user reads."""

def say(msg: str) -> None:
    print(f'submit: {msg}', flush=True)

def local_url() -> str:
    return f'http://127.0.0.1:{os.environ.get("PERF_AUX_LAB_PORT", "8000")}'

def read_token(url: str, default_file: str) -> str:
    """LAVA_TOKEN, else the file LAVA_TOKEN_FILE or default_file, unspaced."""
    path = os.environ.get('LAVA_TOKEN_FILE', '') or default_file
    token = os.environ.get('LAVA_TOKEN', '') or path and read(path)
    if not token and not path:
        raise LavaError(f'no token for {url}/: set LAVA_TOKEN or '
                        'LAVA_TOKEN_FILE')
    if not token and not os.access(path, os.R_OK):
        raise LavaError(f'cannot read the token file {path}')
    token = ''.join(token.split())
    if not token:
        raise LavaError(f'the token for {url}/ is empty')
    return token

class Server:
    """lavacli, its identity private, the token redacted, no loopback proxy."""

    def __init__(self, url: str, user: str = '', token: str = '') -> None:
        self.url, self.token = url.rstrip('/'), token
        self.config = tempfile.mkdtemp(prefix='perf_aux-lavacli-')
        weakref.finalize(self, shutil.rmtree, self.config, True)
        identity = {'uri': f'{self.url}/RPC2', 'timeout': TIMEOUT}
        if user and token:
            identity.update(username=user, token=token)
        write_private(os.path.join(self.config, 'lavacli.yaml'),
                      json.dumps({'perf_aux': identity}) + '\n')

    def redact(self, text: str) -> str:
        return text.replace(self.token, '<token>') if self.token else text

    def __call__(self, *args: str, what: str = '') -> str:
        """lavacli's output; LavaError (what: the job file a refusal names)."""
        env = {'XDG_CONFIG_HOME': self.config}
        host = urllib.parse.urlsplit(self.url).hostname or ''
        if host in ('localhost', '::1') or host.startswith('127.'):
            env.update((k, '') for k in os.environ
                       if k.lower().endswith('_proxy'))
        try:
            p = plib.run(['lavacli', '-i', 'perf_aux', *args], env=env,
                         stdout=plib.PIPE, stderr=plib.PIPE,
                         timeout=TIMEOUT * 2)
        except FileNotFoundError:
            raise LavaError('no lavacli: python3 -m perf_aux deps') from None
        if p.returncode == 124 and p.stderr is None:
            raise LavaError(f'{self.url}/ unreachable: lavacli '
                            f'{" ".join(args[:2])} timed out')
        out = self.redact(p.stdout + p.stderr.decode(errors='replace')).strip()
        if p.returncode or out.startswith('Unable to'):
            raise LavaError(self.reason(out, what))
        return p.stdout

    def reason(self, out: str, what: str) -> str:
        fault = re.search(r'<Fault (\d+): (.*)>', out, re.S)
        http = re.search(r'\b(\d{3}) (?:Client|Server) Error: (.*?) for url',
                         out)
        errno = re.search(r'\[Errno -?\d+\] [^\'")]*', out)
        if fault:
            try:
                why = str(ast.literal_eval(fault[2]))
            except (ValueError, SyntaxError):
                why = fault[2]
            if what and fault[1] == '400':
                return f'{self.url}/ refused {what} (HTTP 400): ' + ' '.join(
                    why.split())
            return f'{self.url}/: {fault[1]}: {" ".join(why.split())}'
        if http and http[1] in ('401', '403'):
            return f'{self.url}/ refused the token (HTTP {http[1]}: {http[2]})'
        if http:
            return f'{self.url}/: HTTP {http[1]}: {http[2]}'
        if out.startswith('Unable to connect: '):
            return f'{self.url}/ unreachable: ' + (errno[0] if errno else
                                                   out[19:])
        return ' '.join(out.split()[:40]) or f'lavacli failed for {self.url}/'

    def json(self, *args: str) -> Any:
        try:
            return json.loads(self(*args, '--json'))
        except ValueError:
            raise LavaError(f'{self.url}/: lavacli {" ".join(args[:2])}: '
                            'not JSON') from None

    def state(self, kind: str, name: str) -> Any:
        """The state of worker or device name, None when unknown."""
        try:
            return self.json(f'{kind}s', 'show', name)['state']
        except (LavaError, KeyError, TypeError):
            return None

@dataclass
class Job:
    """A run's job (kind the run's name) or a job file's (kind "jobs")."""
    file: str
    name: str
    kind: str
    id: int = 0
    health: str = ''
    state: str = ''
    fault: str = ''
    times: str = ''

def run_parts(run: str) -> Tuple[str, str, str, str]:
    """(kernel, base, target, variant) of a run a LAVA job can run."""
    kernel, base, target, variant = parts(run)
    if kernel not in ('reference', 'stock') or not base:
        raise Error(f'submit: {run}: not a run name '
                    '<reference|stock>-<base>-<target>[-<variant>]')
    problem = (plib.unknown('BASE', base, plib.BASES) or
               plib.unknown('TARGET', target, plib.TARGETS) or
               plib.unknown('VARIANT', variant, plib.VARIANTS))
    if problem:
        raise Error(problem)
    cpus = plib.variant_cpus(variant)
    if target not in ('arm64-4k', 'arm64-16k'):
        raise Error(f'submit: {run}: lava-jobs has no job for {target} '
                    '(qemu-arm64-4k, qemu-arm64-16k)')
    if plib.variant_args(variant):
        raise Error(f'submit: {run}: VARIANT={variant} adds boot parameters, '
                    'which the LAVA jobs do not pass')
    if cpus != 2:
        raise Error(f'submit: {run}: VARIANT={variant} boots {cpus} CPUs, '
                    'the LAVA jobs 2')
    return kernel, base, target, variant

def job_times(d: Dict[str, Any]) -> str:
    """Where and how long a job ran (its XML-RPC times)."""
    t = [datetime.strptime(d[k][:17], '%Y%m%dT%H:%M:%S').timestamp()
         if d.get(k) else 0 for k in ('submit_time', 'start_time', 'end_time')]
    queued, ran = (t[1] - t[0]) * bool(t[1]), (t[2] - t[1]) * all(t)
    return f'on {d.get("device")}, queued {queued:.0f} s, ran {ran:.0f} s'

def results_py(*args: str) -> int:
    """python3 -m perf_aux results ARGS in-process."""
    from perf_aux_results import cli
    try:
        return cli.results_main(list(args))
    except Exception as e:  # a split that raises is a split that failed
        print(f'# results {args[0]}: {e!r}', file=sys.stderr)
        return 1

def log_entries(lines: Iterable[str]) -> Iterator[Dict[str, Any]]:
    """A job log's entries: "- {...}" (log.yaml), "{...}" (lava-run); JSON
    reads nearly all, far faster than YAML ("! "1332"" tags)."""
    import yaml
    loader = getattr(yaml, 'CSafeLoader', yaml.SafeLoader)
    for line in lines:
        body = (line[2:] if line.startswith('- {') else line).rstrip('\r\n')
        if not body.startswith('{'):
            continue
        try:
            entry = json.loads(body)
        except ValueError:
            try:
                entry = yaml.load(body, Loader=loader)
            except yaml.YAMLError:
                continue
        if isinstance(entry, dict):
            yield entry

def console(entries: Iterable[Dict[str, Any]]) -> Tuple[List[str],
                                                         List[str]]:
    """A job's console as the direct run's two boots: the kernel's (KUnit)
    up to the ramdisk's "PERF_AUX: kernel" line or the first test action,
    the kselftests' from there."""
    boot: List[str] = []
    tests: List[str] = []
    part = boot
    for e in entries:
        msg = e.get('msg')
        if not isinstance(msg, str):
            continue
        if e.get('lvl') != 'target':
            part = tests if TEST_ACTION.match(msg) else part
            continue
        for line in msg.splitlines() or ['']:
            if part is boot and KERNEL.search(line):
                part = tests
            part.append(line.rstrip('\r'))
    return boot, tests

def job_errors(entries: Iterable[Dict[str, Any]]) -> List[str]:
    """Each "<error_type> error: <error_msg>" of the "lava" suite, once."""
    found = [(msg.get('error_type'), ' '.join(str(msg['error_msg']).split()))
             for msg in (e.get('msg') for e in entries
                         if e.get('lvl') == 'results')
             if isinstance(msg, dict) and msg.get('definition') == 'lava'
             and msg.get('result') == 'fail' and msg.get('error_msg')]
    return list(dict.fromkeys(f'{kind} error: {text}' if kind else text
                              for kind, text in found))

def write_lines(path: str, lines: List[str]) -> None:
    with open(path, 'w') as f:
        f.write(''.join(line + '\n' for line in lines))

class Submission:
    """One make submit: its lab, its staging directory, its jobs."""

    def __init__(self, url: str, args: List[str]) -> None:
        """The arguments checked, then the lab, then the runs staged."""
        self.url, self.out, self.collected = url, plib.out(), []
        self.wait = int(os.environ.get('LAVA_WAIT', '3600'))
        self.lab_file = os.environ.get('LAVA_LAB_FILE', '')
        local = url in (local_url(), local_url().replace('127.0.0.1',
                                                         'localhost'))
        runs = [a for a in args if not a.endswith('.yaml')]
        for arg in args:
            if arg not in runs:
                if not os.path.isfile(arg):
                    raise Error(f'submit: no job file {arg}')
                continue
            run_parts(arg)
            if runs.count(arg) > 1:
                raise Error(f'submit: {arg} named twice')
            if not local and not os.environ.get('LAVA_ARTIFACTS_URL'):
                raise Error(f'submit: {url}/ is not this machine\'s lab: set '
                            'LAVA_ARTIFACTS_URL to where its workers read '
                            f'{self.out}/lava/submit/')
        user = os.environ.get('LAVA_USER') or ('perf_aux' if local else '')
        if not user:
            raise Error(f'submit: {url}/ is not this machine\'s lab: set '
                        'LAVA_USER, the token\'s user')
        try:
            self.lava = Server(url, user, read_token(url, os.path.join(
                plib.cache(), 'lab', 'token') if local else ''))
            user = self.lava('system', 'whoami').strip()
            say(f'{url}/ as {user}, lava-server '
                f'{self.lava("system", "version").strip()}')
        except LavaError as e:
            raise Error(f'submit: {e}') from None
        parent = os.path.join(self.out, 'lava', 'submit')
        os.makedirs(parent, exist_ok=True)
        self.stage = tempfile.mkdtemp(
            prefix=time.strftime('%Y%m%d-%H%M%S-'), dir=parent)
        os.chmod(self.stage, 0o755)
        self.jobs = [Job(os.path.join(self.stage, a, 'job.yaml'), a, a)
                     if a in runs else Job(a, a, 'jobs') for a in args]
        if not self.lab_file and runs:
            try:
                testdefs(self.stage)
            except (OSError, Error):
                raise Error('submit: cannot make the test definition '
                            'repository') from None
        for run in runs:
            self.stage_run(run)

    def stage_run(self, run: str) -> None:
        """The job of run in STAGE/run/job.yaml, on copies of its build."""
        kernel, base, target, variant = run_parts(run)
        tree = os.path.join(plib.cache(), 'trees', f'{base}-{kernel}')
        build = os.path.join(tree, plib.build_dir(target, variant))
        d = os.path.join(self.stage, run)
        os.makedirs(d)
        missing = kernel_missing(build)
        try:
            stage_build(build, d)
        except OSError:
            raise Error(f'submit: {run}: no kernel and ramdisk in {build} '
                        f'(make run KERNEL={kernel} BASE={base} '
                        f'TARGET={target} VARIANT={variant})') from None
        if missing:
            raise Error(f'submit: {run}: the kernel of {build} has no '
                        f'{missing}, which LAVA\'s overlay disk needs '
                        '(scripts/config/boot.config)')
        source = read(os.path.join(tree, '.perf_aux-source')).strip()
        write_lines(os.path.join(d, 'source.txt'),
                    [f'source: {source or "unknown"}'])
        url = os.environ.get('LAVA_ARTIFACTS_URL', '').rstrip('/') or \
            'file://' + os.path.dirname(self.stage)
        staged = f'{url}/{os.path.basename(self.stage)}'
        job = f'qemu-{target}'
        sets = [f'jobs.{job}.kernel={staged}/{run}/Image.gz',
                f'jobs.{job}.ramdisk={staged}/{run}/initramfs.cpio.gz']
        if kernel == 'stock':  # no large vmap: not strict
            sets.append(f'jobs.{job}.strict=no')
        if not self.lab_file:
            sets += [f'testdefs.repository={staged}/testdefs',
                     'testdefs.revision=main']
        if generate(d, job, sets, self.lab_file):
            raise Error(f'submit: {run}: lava-jobs/generate.py failed')
        with open(os.path.join(d, 'job.yaml'), 'w') as f:
            f.write(re.sub(r'(?m)^job_name: .*$', f'job_name: perf_aux {run}',
                           read(os.path.join(d, f'{job}.yaml'))))
        os.remove(os.path.join(d, f'{job}.yaml'))

    def submit_all(self) -> None:
        """All submitted before any is waited for; a refusal cancels all."""
        self.start = time.time()
        for job in self.jobs:
            try:
                out = self.lava('jobs', 'submit', job.file,
                                what=job.file).split()
                if not out[:1] or not out[0].isdigit():
                    raise LavaError(f'{self.url}/ gave no job id for '
                                    f'{job.file}')
            except LavaError as e:
                self.cancel([j for j in self.jobs if j.id], 'canceled')
                raise Error(f'submit: {e}') from None
            job.id = int(out[0])
            say(f'job {job.id} submitted: {job.name} '
                f'({self.url}/scheduler/job/{job.id})')

    def cancel(self, jobs: List[Job], say_it: str = '') -> None:
        for job in jobs:
            try:
                self.lava('jobs', 'cancel', str(job.id))
            except LavaError:
                pass
            if say_it:
                say(f'job {job.id} ({job.name}): {say_it}')

    def poll(self, job: Job) -> str:
        """"Running on qemu-01"; a finished job's health and times taken."""
        try:
            d = self.lava.json('jobs', 'show', str(job.id))
        except LavaError as e:
            return f'state unknown: {e}'
        if d['state'] == 'Finished':
            job.health = d['health']
            job.times = job_times(d)
        return d['state'] + (f' on {d["device"]}' if d['device'] else '')

    def wait_all(self) -> None:
        """Until all have finished or LAVA_WAIT passed: the rest canceled."""
        say(f'waiting for job(s) {" ".join(str(j.id) for j in self.jobs)}, '
            f'at most {self.wait} s from submission (LAVA_WAIT)')
        while True:
            for job in [j for j in self.jobs if not j.health]:
                state = self.poll(job)
                took = int(time.time() - self.start)
                if job.health:
                    say(f'job {job.id} ({job.name}): {job.health}, {took} s '
                        f'from submission, {job.times}')
                elif state != job.state:
                    say(f'job {job.id} ({job.name}): {state}')
                    job.state = state
            if all(j.health for j in self.jobs):
                return
            if time.time() >= self.start + self.wait:
                break
            time.sleep(POLL)
        left = [j for j in self.jobs if not j.health]
        self.cancel(left)
        deadline = time.time() + CANCEL_WAIT
        for job in left:
            state = self.poll(job)
            while not job.health and time.time() < deadline:
                time.sleep(POLL)
                state = self.poll(job)
            job.fault = (f'not finished within {self.wait} s ({job.state}): '
                         'canceled, ' + (f'ended {job.health}' if job.health
                                         else f'still {state} after '
                                         f'{CANCEL_WAIT} s more (a job ends '
                                         'when its worker takes the cancel)'))
            job.health = job.health or 'Unfinished'

    def collect(self, job: Job) -> str:
        """A run's results into out/results/RUN, a job file's printed: why
        not."""
        d = os.path.join(self.stage, job.kind)
        log = os.path.join(d, str(job.id), 'log.yaml')
        os.makedirs(os.path.dirname(log), exist_ok=True)
        try:
            with open(log, 'w') as f:
                f.write(self.lava('jobs', 'logs', '--raw', '--no-follow',
                                  str(job.id)))
            results = self.lava.json('results', str(job.id)) \
                if job.kind == 'jobs' else []
        except LavaError as e:
            return f'Complete, but its log or results: {e}'
        if job.kind == 'jobs':
            lines = [f'{r["suite"]}.{r["name"]} {r["result"]}' + (
                f' {r["measurement"]} {r["unit"]}' if r.get('measurement')
                not in (None, '', 'None') else '') for r in results]
            write_lines(os.path.join(os.path.dirname(log), 'results.txt'),
                        lines)
            say(f'job {job.id}: {len(lines)} results in '
                f'{os.path.dirname(log)}/results.txt:')
            print(''.join(f'  {line}\n' for line in lines), end='')
            return ''
        tmp = os.path.join(d, 'results')
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(tmp)
        with open(log, errors='replace') as f:
            parts = dict(zip(('kunit', 'kselftest'),
                             console(log_entries(f))))
        for part, lines in parts.items():
            write_lines(os.path.join(d, f'{part}.log'), lines)
        if not any(parts.values()):
            return 'Complete, but its log has no console'
        if any(results_py(part, os.path.join(d, f'{part}.log'), tmp)
               for part in parts):
            return 'Complete, but its console could not be split'
        if not glob.glob(os.path.join(tmp, '*.ktap')):
            return 'Complete, but its console holds no KTAP'
        write_lines(os.path.join(tmp, 'source.txt'), [
            read(os.path.join(d, 'source.txt')).rstrip('\n'),
            f'lava: job {job.id} at {self.url}/scheduler/job/{job.id}, '
            f'{job.times}'])
        # The logs, then the results by rename: never half a run.
        res = os.path.join(self.out, 'results', job.name)
        try:
            for sub in ('logs', 'results'):
                os.makedirs(os.path.join(self.out, sub), exist_ok=True)
            for src, suffix in ((f'{d}/kunit.log', 'kunit.log'),
                                (f'{d}/kselftest.log', 'kselftest.log'),
                                (log, 'lava.yaml')):
                shutil.copyfile(src, os.path.join(
                    self.out, 'logs', f'{job.name}-{suffix}'))
            shutil.rmtree(res, ignore_errors=True)
            os.rename(tmp, res)
        except OSError:
            return f'Complete, but its results could not be moved to {res}'
        self.collected.append(res)
        say(f'job {job.id}: results in {res}')
        return ''

    def finish(self) -> int:
        """Each job collected or LAVA's reasons why not (3); the report."""
        rc = 0
        for job in self.jobs:
            if job.health == 'Complete' and not job.fault:
                job.fault = self.collect(job)
                if not job.fault:
                    continue
            why, rc = job.fault or job.health, 3
            try:
                errors = job_errors(log_entries(self.lava(
                    'jobs', 'logs', '--raw', '--no-follow',
                    str(job.id)).splitlines()))
                why += ': ' + '; '.join(errors) if errors else ''
                comment = ' '.join((self.lava.json('jobs', 'show', str(
                    job.id)).get('failure_comment') or '').split())
                why += f'; {comment}' if comment else ''
            except LavaError:
                pass
            print(self.lava.redact(
                f'submit: infrastructure error: job {job.id} ({job.name}) '
                f'at {self.url}/scheduler/job/{job.id}: {why}'),
                file=sys.stderr, flush=True)
        for f in glob.glob(os.path.join(self.stage, '*', 'Image.gz')) + \
                glob.glob(os.path.join(self.stage, '*', 'initramfs.cpio.gz')):
            os.remove(f)
        if self.collected and results_py(
                'summary', *self.collected, '--report',
                os.path.join(self.out, 'report.md')) and rc == 0:
            rc = 1
        return rc

def main(args: List[str]) -> int:
    env = os.environ.get
    if not args and (env('KERNEL_SRC') or env('SERIES')):
        raise Error('submit: KERNEL_SRC and SERIES runs have no LAVA job '
                    'here; name a run')
    s = Submission((env('LAB') or local_url()).rstrip('/'), args or [
        plib.result_name(env('KERNEL') or 'reference',
                         env('BASE') or plib.default_base(),
                         env('TARGET') or 'arm64-4k',
                         env('VARIANT') or 'default')])
    s.submit_all()
    s.wait_all()
    return s.finish()
