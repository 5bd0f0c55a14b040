# SPDX-License-Identifier: GPL-2.0
"""make run, make repeat, make soak and make evidence."""

import fcntl
import json
import os
import re
import shutil
from dataclasses import asdict
from pathlib import Path
from typing import List, Optional, Tuple

from perf_aux_results import verdicts

from . import kselftest, kunit, lib, tree
from .lib import DEVNULL, Run, status
from .shell import stage

def expectation(res: str, suite: str, failure: Optional[bool] = False,
                **floors) -> Tuple[bool, str]:
    """Whether SUITE of RES is as Expectation(FAILURE, FLOORS), and why."""
    try:
        return verdicts.expect(res, suite, verdicts.Expectation(failure, **floors))
    except Exception as e:  # noqa: BLE001 (a crash is a verdict too)
        return False, f'{suite}: {e!r}'

def results(*args: str) -> int:
    return status(lib.perf_aux('results', *args))

def shown(reports: List[str]) -> List[str]:
    """REPORTS, the first 20 of them shown."""
    for line in reports[:20]:
        print(line, flush=True)
    return reports

def job(r: Run, check: str = '') -> int:
    """The run R; 0 when nothing failed and no kernel report."""
    shutil.rmtree(r.results, ignore_errors=True)
    os.makedirs(r.results)
    os.makedirs(f'{lib.out()}/logs', exist_ok=True)
    r.save()
    rc = stage('install packages', status, lib.perf_aux(
        'deps', r.target, *([] if r.src else [f'base-{r.base}']))) or \
        stage(f'kernel tree {lib.tree_name(r.kernel, r.base)}',
              tree.kernel_tree, r)
    if rc:
        return rc
    # What the run took the kernel to be, for the report.
    source = 'source: ' + Path(r.tree, '.perf_aux-source').read_text(
        errors='surrogateescape').rstrip('\n')
    print(source, flush=True)
    Path(r.results, 'source.txt').write_text(source + '\n')
    if kunit.kunit(r, r.log('kunit'), check) > 1:
        lib.die(f"kernel build failed, see {r.log('kunit')}.build")
    rc = results('kunit', r.log('kunit'), r.results) or \
        kselftest.kselftest(r, r.log('kselftest')) or \
        results('kselftest', r.log('kselftest'), r.results)
    if rc:
        return rc
    # A report outside every test's window fails the run too.
    reports = shown(lib.run_reports(r.name))
    if reports:
        print(f'{r.name}: {len(reports)} kernel reports on its consoles', flush=True)
    return results('summary', r.results, '--report', f'{lib.out()}/report.md') or int(bool(reports))

def main(argv: List[str]) -> int:
    return job(lib.env_run())

def split_rounds(log: str, directory: str) -> None:
    """The one-boot log cut at its "PERF_AUX: round N" lines."""
    rounds, n = {}, None
    for line in Path(log).read_bytes().removesuffix(b'\n').split(b'\n'):
        line = line.removesuffix(b'\r')
        m = re.match(rb'PERF_AUX: round ([0-9]+)', line)
        if m:
            n = m.group(1).decode()
            rounds[n] = []
        if n:
            rounds[n].append(line + b'\n')
    for n, lines in rounds.items():
        Path(f'{directory}/round{n}.log').write_bytes(b''.join(lines))

# A boot's statuses that are its round's outcome: a KUnit case failed, a
# kselftest boot timed out (a hang).  Any other stops the repeat unkept.
ROUND_STATUSES = {'kunit': (0, 1), 'kselftest': (0, 124)}

def repeat(r: Run, rounds: int, resume: bool = False) -> int:
    """ROUNDS fresh boots and ROUNDS rounds in one boot, their flakes;
    RESUME keeps what a stopped repeat of the same run and tree finished."""
    os.makedirs(f'{lib.out()}/repeat', exist_ok=True)
    with open(f'{lib.out()}/repeat/.{r.name}.lock', 'w') as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lib.die(f'a make repeat of {r.name} is running')
        return repeated(r, rounds, resume)

def repeated(r: Run, rounds: int, resume: bool) -> int:
    d = f'{lib.out()}/repeat/{r.name}'
    key = json.dumps({'rounds': rounds, 'run': asdict(r),
                      'recipe': lib.read(f'{r.tree}/.perf_aux-recipe')}) + '\n'
    if not resume or lib.read(f'{d}/repeat.json') != key:
        shutil.rmtree(d, ignore_errors=True)
    os.makedirs(f'{d}/logs', exist_ok=True)
    Path(d, 'repeat.json').write_text(key)

    def boot(verb: str, log: str, *args: str) -> None:
        rc = status(lib.perf_aux(verb, r.kernel, r.target, r.variant,
                                 f'{d}/logs/{log}.log', *r.kargs, *args),
                    stdout=DEVNULL, env={'BASE': r.base, 'TARGET': r.target,
                                         'KERNEL_SRC': r.src, 'SERIES': r.series})
        if rc not in ROUND_STATUSES[verb]:
            lib.die(f'{verb} {log}: status {rc}, its round not kept', max(rc, 2))

    # The fresh boots first: a stop keeps those that finished.
    for i in range(1, rounds + 1):
        if not os.path.isdir(f'{d}/fresh/{i}'):
            with lib.whole(f'{d}/fresh/{i}') as part:
                for verb in ('kunit', 'kselftest'):
                    boot(verb, f'{verb}{i}')
                    results(verb, f'{d}/logs/{verb}{i}.log', part)
    if not os.path.isdir(f'{d}/one-boot'):
        with lib.whole(f'{d}/one-boot') as part:
            boot('kselftest', 'one-boot', f'perf_aux.repeat={rounds}')
            split_rounds(f'{d}/logs/one-boot.log', f'{d}/logs')
            for i in range(1, rounds + 1):
                results('kselftest', f'{d}/logs/round{i}.log', f'{part}/{i}')
    # Every console whole: an oops that ends a boot early leaves fewer rounds.
    reports = shown(lib.console_reports(*lib.collated(
        str(p) for p in Path(d, 'logs').glob('*.log'))))
    print(f'kernel reports on the consoles: {len(reports)}', flush=True)
    rc = int(bool(reports))
    for what, sub in (('one boot:', 'one-boot'), ('fresh boots:', 'fresh')):
        print(what, flush=True)
        rc |= results('flakes', *(lib.collated(
            str(p) for p in Path(d, sub).glob('*')) or [f'{d}/{sub}/*'])) != 0
    return rc

def repeat_main(argv: List[str]) -> int:
    return repeat(lib.env_run(), int(argv[0]) if argv and argv[0] else 5,
                  lib.resumed(os.environ))

def evidence_main(argv: List[str]) -> int:
    """The run beside the stock run: out/evidence-<run>.txt, shown."""
    r = lib.env_run()
    stock = lib.result_name('stock', r.base, r.target, r.variant)
    out = f'{lib.out()}/evidence-{r.name}.txt'
    rc = results('evidence', '--out', out, r.results, f'{lib.out()}/results/{stock}')
    if rc == 0:
        lib.show(Path(out).read_bytes())
    return rc

def soak_main(argv: List[str]) -> int:
    """soak_test alone for DURATION s; SOAK_SUMMARY_ONLY=1: its lines."""
    env = os.environ
    duration = env.get('DURATION') or '600'
    source = f'{lib.ROOT}/tools/testing/selftests/perf_aux/soak_test.c'
    most = ''.join(re.findall(r'(?m)^#define SOAK_MAX_SECONDS ([0-9]*)$',
                              lib.read(source)))
    if not duration.isdigit() or int(duration) > int(most or 0):
        lib.die(f"DURATION={duration}: one soak is at most "
                f"{most or '?'} s (soak_test's harness timeout)")
    r = lib.env_run(env, target='arm64-4k', variant='soak')
    if env.get('SOAK_SUMMARY_ONLY', '0') != '1':
        rc = job(r)
        # A run failed by its kernel reports still gets its soak lines.
        if rc and not lib.run_reports(r.name):
            return rc
    log = r.log('kselftest')
    if not os.path.isfile(log):
        lib.die(f'no soak log {log}')
    for m in re.finditer(r'(?m)^#.*:(soak: .*)$', lib.read(log)):
        print(m.group(1))
    print(f'soak: {len(lib.run_reports(r.name))} kernel reports', flush=True)
    if shown(lib.run_reports(r.name)):
        return 1
    ok, line = expectation(r.results, 'perf_aux.soak_test', min_passed=1)
    print(line)
    return 0 if ok else 1
