# SPDX-License-Identifier: GPL-2.0
"""python3 -m perf_aux_lava submit [RUN|JOB.yaml]... (make submit,
docs/lava.md): the jobs submitted through lavacli all at once, waited for
with a bound, each run's console split into out/results/<run>/."""

import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Dict, List, Tuple

from . import artifacts, common
from .common import Fatal, plib
from .server import LavaError, Server, read_token

# Seconds a canceled job may take to reach Finished; poll interval.
CANCEL_WAIT = 60
POLL = 5
# The exit status of an infrastructure error.
INFRA = 3
RUN_NAME = re.compile(r'^(reference|stock)-([0-9]+\.[0-9]+)-'
                      r'(arm64-[0-9]+k|x86_64)(?:-(.+))?$')
LAB_USER = 'perf_aux'


def say(msg: str) -> None:
    print(f'submit: {msg}', flush=True)


def local_url() -> str:
    return f'http://127.0.0.1:{os.environ.get("PERF_AUX_LAB_PORT", "8000")}'


def local_lab(url: str) -> bool:
    """url is this machine's lab (perf_aux_lava lab)."""
    return url in (local_url(), local_url().replace('127.0.0.1',
                                                    'localhost'))


@dataclass
class Job:
    """One job: a run's (kind the run's name) or a job file's (kind
    "jobs")."""
    file: str
    name: str
    kind: str
    id: int = 0
    health: str = ''      # '' while it runs
    state: str = ''       # the last state seen: "Running Unknown qemu-01"
    fault: str = ''
    ran: int = 0
    times: str = ''


def run_parts(run: str) -> Tuple[str, str, str, str, str]:
    """(kernel, base, target, variant, build dir) of a run name, checked
    by perf_aux.lib's own selectors."""
    m = RUN_NAME.match(run)
    if not m:
        raise Fatal(f'submit: {run}: not a run name '
                    '<reference|stock>-<base>-<target>[-<variant>]')
    kernel, base, target = m.group(1), m.group(2), m.group(3)
    variant = m.group(4) or 'default'
    problem = (plib.unknown('BASE', base, plib.BASES) or
               plib.unknown('TARGET', target, plib.TARGETS) or
               plib.unknown('VARIANT', variant, plib.VARIANTS))
    if problem:
        raise Fatal(problem)
    if target not in ('arm64-4k', 'arm64-16k'):
        raise Fatal(f'submit: {run}: lava-jobs has no job for {target} '
                    '(qemu-arm64-4k, qemu-arm64-16k)')
    if plib.variant_args(variant):
        raise Fatal(f'submit: {run}: VARIANT={variant} adds boot '
                    'parameters, which the LAVA jobs do not pass')
    cpus = plib.variant_cpus(variant)
    if cpus != 2:
        raise Fatal(f'submit: {run}: VARIANT={variant} boots {cpus} CPUs, '
                    'the LAVA jobs 2')
    return kernel, base, target, variant, plib.build_dir(target, variant)


def default_run() -> str:
    """The run KERNEL, BASE, TARGET and VARIANT select."""
    if os.environ.get('KERNEL_SRC') or os.environ.get('SERIES'):
        raise Fatal('submit: KERNEL_SRC and SERIES runs have no LAVA job '
                    'here; name a run')
    env = os.environ.get
    return plib.result_name(env('KERNEL') or 'reference',
                            env('BASE') or plib.default_base(),
                            env('TARGET') or 'arm64-4k',
                            env('VARIANT') or 'default')


def job_times(d: Dict[str, Any]) -> Tuple[str, int]:
    """Where and how long a job ran (lavacli's job, its times as
    XML-RPC's 20261201T00:00:03); the seconds it ran."""
    t = {k: datetime.strptime(d[k][:17], '%Y%m%dT%H:%M:%S')
         for k in ('submit_time', 'start_time', 'end_time') if d.get(k)}
    queued = ((t['start_time'] - t['submit_time']).total_seconds()
              if 'start_time' in t else 0)
    ran = ((t['end_time'] - t['start_time']).total_seconds()
           if len(t) == 3 else 0)
    return (f'on {d.get("device")}, queued {queued:.0f} s, '
            f'ran {ran:.0f} s', int(round(ran)))


def state_text(state: str) -> str:
    """A job's state as a reader wants it: "Running on qemu-01",
    "Submitted", "state unknown: why"."""
    if state.startswith('Unknown - '):
        return 'state unknown: ' + state[len('Unknown - '):]
    words = state.split(' ', 2)
    device = words[2] if len(words) > 2 else ''
    return words[0] + (f' on {device}' if device not in ('', 'None') else '')


def case_lines(results: List[Dict[str, Any]]) -> List[str]:
    """A job's test cases, "suite.case result [measurement units]"."""
    return [f'{r["suite"]}.{r["name"]} {r["result"]}' +
            (f' {r["measurement"]} {r["unit"]}'
             if r.get('measurement') not in (None, '', 'None') else '')
            for r in results]


def case_summary(lines: List[str]) -> List[str]:
    """All of a short job's cases, else the counts per suite and result
    and the cases that neither passed nor skipped."""
    if len(lines) <= 20:
        return ['  ' + line for line in lines]
    n = Counter(f'{w[0].split(".")[0]} {w[1]}'
                for w in (line.split() for line in lines))
    return (sorted(f'  {k}: {v}' for k, v in n.items()) +
            ['  ' + line for line in lines
             if line.split()[1] not in ('pass', 'skip')][:40])


def results_py(*args: str) -> int:
    """python3 -m perf_aux results (perf_aux_results' command line)
    in-process."""
    from perf_aux_results import cli
    try:
        return cli.results_main(list(args))
    except Exception as e:  # a split that raises is a split that failed
        print(f'# results {args[0]}: {e!r}', file=sys.stderr)
        return 1


def write_lines(path: str, lines: List[str]) -> None:
    with open(path, 'w') as f:
        f.write(''.join(line + '\n' for line in lines))


class Submission:
    """One make submit: its lab, its staging directory, its jobs."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.wait = int(os.environ.get('LAVA_WAIT', '3600'))
        self.lab_file = os.environ.get('LAVA_LAB_FILE', '')
        self.out = plib.out()
        self.jobs: List[Job] = []
        self.collected: List[str] = []
        self.stage = ''
        self.start = 0.0
        self.lava = Server(url)

    def connect(self) -> None:
        """The token is good and the server answers: who and what."""
        local = local_lab(self.url)
        user = os.environ.get('LAVA_USER') or (LAB_USER if local else '')
        if not user:
            raise Fatal(f'submit: {self.url}/ is not this machine\'s lab: '
                        'set LAVA_USER, the token\'s user')
        try:
            self.lava = Server(self.url, user, read_token(
                self.url, os.path.join(plib.cache(), 'lab', 'token')
                if local else ''))
            user = self.lava('system', 'whoami').strip()
            version = self.lava('system', 'version').strip()
        except LavaError as e:
            raise Fatal(f'submit: {e}') from None
        say(f'{self.url}/ as {user}, lava-server {version}')

    def artifacts_url(self) -> str:
        """The URL of the staging directories' parent for the workers."""
        url = os.environ.get('LAVA_ARTIFACTS_URL', '')
        return url.rstrip('/') if url else 'file://' + os.path.dirname(
            self.stage)

    def stage_run(self, run: str) -> None:
        """The job of run in STAGE/run/job.yaml, on copies of its kernel
        and ramdisk (a build may change under a running job); its source
        line in STAGE/run/source.txt."""
        kernel, base, target, variant, build_dir = run_parts(run)
        tree = os.path.join(plib.cache(), 'trees', f'{base}-{kernel}')
        build = os.path.join(tree, build_dir)
        image = os.path.join(build, 'arch', 'arm64', 'boot', 'Image.gz')
        if not (os.path.isfile(image) and os.path.isfile(
                os.path.join(build, 'initramfs.cpio.gz'))):
            raise Fatal(f'submit: {run}: no kernel and ramdisk in {build} '
                        f'(make run KERNEL={kernel} BASE={base} '
                        f'TARGET={target} VARIANT={variant})')
        missing = artifacts.kernel_missing(build)
        if missing:
            raise Fatal(f'submit: {run}: the kernel of {build} has no '
                        f'{missing}, which LAVA\'s overlay disk needs '
                        '(scripts/config/boot.config)')
        d = os.path.join(self.stage, run)
        os.makedirs(d, exist_ok=True)
        try:
            shutil.copyfile(image, os.path.join(d, 'Image.gz'))
            artifacts.ramdisk(build, d)
        except (OSError, subprocess.CalledProcessError):
            raise Fatal(f'submit: {run}: cannot copy the kernel and ramdisk '
                        f'of {build}') from None
        try:
            with open(os.path.join(tree, '.perf_aux-source')) as f:
                source = f.read().strip() or 'unknown'
        except OSError:
            source = 'unknown'
        write_lines(os.path.join(d, 'source.txt'), [f'source: {source}'])
        staged = f'{self.artifacts_url()}/{os.path.basename(self.stage)}'
        job = f'qemu-{target}'
        sets = [f'jobs.{job}.kernel={staged}/{run}/Image.gz',
                f'jobs.{job}.ramdisk={staged}/{run}/initramfs.cpio.gz']
        # Strict where the kernel carries large vmap: not the stock
        # control, nor a tree of the user's whose content is not known.
        if kernel in ('stock', 'custom'):
            sets.append(f'jobs.{job}.strict=no')
        if not self.lab_file:
            sets += [f'testdefs.repository={staged}/testdefs',
                     'testdefs.revision=main']
        if artifacts.generate(d, job, sets, self.lab_file):
            raise Fatal(f'submit: {run}: lava-jobs/generate.py failed')
        # The run's name in the job's, so that the lab's lists tell runs
        # apart.
        rendered = os.path.join(d, f'{job}.yaml')
        with open(rendered) as f:
            text = re.sub(r'(?m)^job_name: .*$', f'job_name: perf_aux {run}',
                          f.read())
        with open(os.path.join(d, 'job.yaml'), 'w') as f:
            f.write(text)
        os.remove(rendered)

    def prepare(self, args: List[str]) -> None:
        """Checks the arguments, then the lab, then stages the runs."""
        runs: List[str] = []
        for arg in args:
            if arg.endswith('.yaml'):
                if not os.path.isfile(arg):
                    raise Fatal(f'submit: no job file {arg}')
                continue
            run_parts(arg)
            if arg in runs:
                raise Fatal(f'submit: {arg} named twice')
            runs.append(arg)
            if not local_lab(self.url) and not os.environ.get(
                    'LAVA_ARTIFACTS_URL'):
                raise Fatal(f'submit: {self.url}/ is not this machine\'s lab:'
                            ' set LAVA_ARTIFACTS_URL to where its workers '
                            f'read {self.out}/lava/submit/')
        if not shutil.which('lavacli') and common.run(
                plib.perf_aux('deps'), stdout=subprocess.DEVNULL):
            raise Fatal('submit: no lavacli (python3 -m perf_aux deps)')
        self.connect()
        parent = os.path.join(self.out, 'lava', 'submit')
        os.makedirs(parent, exist_ok=True)
        self.stage = tempfile.mkdtemp(
            prefix=time.strftime('%Y%m%d-%H%M%S-'), dir=parent)
        os.chmod(self.stage, 0o755)
        for arg in args:
            self.jobs.append(Job(arg, arg, 'jobs') if arg.endswith('.yaml')
                             else Job(os.path.join(self.stage, arg,
                                                   'job.yaml'), arg, arg))
        if not self.lab_file and runs:
            try:
                artifacts.testdefs(self.stage)
            except (OSError, subprocess.CalledProcessError):
                raise Fatal('submit: cannot make the test definition '
                            'repository') from None
        for run in runs:
            self.stage_run(run)

    def submit_all(self) -> None:
        """All submitted before any is waited for: the lab runs them
        together.  A refusal cancels those submitted and ends it."""
        self.start = time.time()
        for job in self.jobs:
            try:
                job.id = self.lava.submit(job.file)
            except LavaError as e:
                self.cancel_all()
                raise Fatal(f'submit: {e}') from None
            say(f'job {job.id} submitted: {job.name} '
                f'({self.url}/scheduler/job/{job.id})')

    def cancel_all(self) -> None:
        for job in self.jobs:
            if job.id and not job.health:
                self.lava.cancel(job.id)
                say(f'job {job.id} ({job.name}): canceled')

    def poll(self, job: Job) -> str:
        """"state health device" of job, or "Unknown - why"; a finished
        job's health and times taken."""
        try:
            d = self.lava.job(job.id)
        except LavaError as e:
            return f'Unknown - {e}'
        if d['state'] == 'Finished':
            job.health = d['health']
            job.times, job.ran = job_times(d)
        return f'{d["state"]} {d["health"]} {d["device"]}'

    def elapsed(self) -> int:
        return int(time.time() - self.start)

    def wait_all(self) -> None:
        """Until every job has finished or LAVA_WAIT has passed since the
        submission; then what is left is canceled (timed_out)."""
        say(f'waiting for job(s) {" ".join(str(j.id) for j in self.jobs)}, '
            f'at most {self.wait} s from submission (LAVA_WAIT)')
        deadline = self.start + self.wait
        last: Dict[int, str] = {}
        while True:
            left = 0
            for job in self.jobs:
                if job.health:
                    continue
                state = self.poll(job)
                if job.health:
                    say(f'job {job.id} ({job.name}): {job.health}, '
                        f'{self.elapsed()} s from submission, {job.times}')
                    continue
                left += 1
                if state != last.get(job.id):
                    say(f'job {job.id} ({job.name}): {state_text(state)}')
                    last[job.id] = state
                job.state = state
            if not left:
                if len(self.jobs) > 1:
                    say(f'{len(self.jobs)} jobs in {self.elapsed()} s from '
                        'submission; one after another they would run '
                        f'{sum(j.ran for j in self.jobs)} s')
                return
            if time.time() >= deadline:
                break
            time.sleep(POLL)
        self.timed_out()

    def timed_out(self) -> None:
        """The jobs LAVA_WAIT left unfinished: canceled, and each one's end
        reported (a job on a worker that went away stays Canceling until
        the worker comes back: LAVA's server cannot end it alone)."""
        deadline = time.time() + CANCEL_WAIT
        left = [j for j in self.jobs if not j.health]
        for job in left:
            self.lava.cancel(job.id)
        for job in left:
            was = job.state
            while True:
                state = self.poll(job)
                if job.health or time.time() >= deadline:
                    break
                time.sleep(POLL)
            words = was.split(' ')
            worker = ''
            if len(words) > 2:
                try:
                    host = self.lava.json('devices', 'show', words[2])
                    worker = (f'{host["worker"]} ' +
                              str(self.lava.state('worker', host['worker'])))
                except (LavaError, KeyError, TypeError):
                    pass
            head = (f'not finished within {self.wait} s ({state_text(was)}'
                    f'{", worker " + worker if worker else ""}): canceled')
            if job.health:
                job.fault = f'{head}, ended {job.health}'
            else:
                job.health = 'Unfinished'
                job.fault = (f'{head}, still {state_text(state)} after '
                             f'{CANCEL_WAIT} s more (a job ends when its '
                             'worker takes the cancel)')

    def print_cases(self, job: Job, d: str) -> None:
        try:
            results = self.lava.json('results', str(job.id))
        except LavaError as e:
            raise Fatal(f'submit: {e}') from None
        with open(os.path.join(d, 'results.json'), 'w') as f:
            json.dump(results, f)
        lines = case_lines(results)
        path = os.path.join(d, 'results.txt')
        write_lines(path, lines)
        say(f'job {job.id}: {len(lines)} results in {path}:')
        for line in case_summary(lines):
            print(line)

    def collect(self, job: Job) -> bool:
        """job's results.  A run's: its console through lavacli, split by
        the direct run's splitters in STAGE/RUN/results, then moved into
        out/results/RUN whole.  A job file's: its test cases printed.
        False (job.fault says why) when a run's results cannot be had."""
        from perf_aux_results import lava
        d = os.path.join(self.stage, job.kind)
        os.makedirs(os.path.join(d, str(job.id)), exist_ok=True)
        log = os.path.join(d, str(job.id), 'log.yaml')
        try:
            with open(log, 'w') as f:
                f.write(self.lava.log(job.id))
        except LavaError as e:
            job.fault = f'Complete, but its log: {e}'
            return False
        if job.kind == 'jobs':
            self.print_cases(job, os.path.join(d, str(job.id)))
            return True
        tmp = os.path.join(d, 'results')
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(tmp)
        with open(log, errors='replace') as f:
            parts = dict(zip(('kunit', 'kselftest'),
                             lava.console(lava.log_entries(f))))
        for part, lines in parts.items():
            write_lines(os.path.join(d, f'{part}.log'), lines)
        if not any(parts.values()):
            job.fault = 'Complete, but its log has no console'
            return False
        if any(results_py(part, os.path.join(d, f'{part}.log'), tmp)
               for part in parts):
            job.fault = 'Complete, but its console could not be split'
            return False
        if not glob.glob(os.path.join(tmp, '*.ktap')):
            job.fault = 'Complete, but its console holds no KTAP'
            return False
        with open(os.path.join(d, 'source.txt')) as f:
            source = f.read()
        with open(os.path.join(tmp, 'source.txt'), 'w') as f:
            f.write(source + f'lava: job {job.id} at {self.url}/scheduler/'
                    f'job/{job.id}, {job.times}\n')
        # Into place: the logs, then the results directory by rename (the
        # old one moved aside first), so that out/results never holds
        # half a run.
        res = os.path.join(self.out, 'results', job.name)
        old = os.path.join(d, 'old')
        shutil.rmtree(old, ignore_errors=True)
        try:
            os.makedirs(os.path.join(self.out, 'logs'), exist_ok=True)
            os.makedirs(os.path.join(self.out, 'results'), exist_ok=True)
            for src, suffix in ((f'{d}/kunit.log', 'kunit.log'),
                                (f'{d}/kselftest.log', 'kselftest.log'),
                                (log, 'lava.yaml')):
                shutil.copyfile(src, os.path.join(
                    self.out, 'logs', f'{job.name}-{suffix}'))
            if os.path.exists(res):
                os.rename(res, old)
            os.rename(tmp, res)
        except OSError:
            job.fault = ('Complete, but its results could not be moved to '
                         f'{res}')
            return False
        shutil.rmtree(old, ignore_errors=True)
        self.collected.append(res)
        say(f'job {job.id}: results in {res}')
        return True

    def infra_error(self, job: Job) -> None:
        """job did not complete: LAVA's reasons, on one line."""
        from perf_aux_results import lava
        why = job.fault or job.health
        try:
            errors = lava.job_errors(lava.log_entries(
                self.lava.log(job.id).splitlines()))
            if errors:
                why += ': ' + '; '.join(errors)
            comment = ' '.join((self.lava.job(job.id).get('failure_comment')
                                or '').split())
            if comment:
                why += f'; {comment}'
        except LavaError:
            pass
        print(self.lava.redact(
            f'submit: infrastructure error: job {job.id} ({job.name}) at '
            f'{self.url}/scheduler/job/{job.id}: {why}'), file=sys.stderr,
            flush=True)

    def finish(self) -> int:
        rc = 0
        for job in self.jobs:
            if job.health == 'Complete' and not job.fault and \
                    self.collect(job):
                continue
            self.infra_error(job)
            rc = INFRA
        # The staged kernels and ramdisks are the lab's no more.
        for f in glob.glob(os.path.join(self.stage, '*', 'Image.gz')) + \
                glob.glob(os.path.join(self.stage, '*', 'initramfs.cpio.gz')):
            os.remove(f)
        if self.collected and results_py(
                'summary', *self.collected, '--report',
                os.path.join(self.out, 'report.md')) and rc == 0:
            rc = 1
        return rc


def main(args: List[str]) -> int:
    url = (os.environ.get('LAB') or local_url()).rstrip('/')
    s = Submission(url)
    s.prepare(args or [default_run()])
    s.submit_all()
    s.wait_all()
    return s.finish()
