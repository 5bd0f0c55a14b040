# SPDX-License-Identifier: GPL-2.0
"""make check and make check-full: the stage registry (STAGES) and the
tiers that run it, one check line per verdict, the last line "N passed, N
failed, N skipped".  Everything a tier prints is kept in
out/logs/<tier>.log, from which out/measurements/<tier>.md is written.
RESUME=1 replays a stage that passed with the same inputs
(perf_aux.resume)."""

import contextlib
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import (Callable, ContextManager, Iterator, List, NamedTuple,
                    Optional, Sequence, Tuple)

from . import lib, mutants, resume, stages
from .verdict import Verdicts, say_tail

BESIDE = '--beside'
# results summary's closing line, not to be taken for the tier's own.
SUITES_LINE = re.compile(r'^[0-9]* passed, ')
STAGE_TIME = 'stage time: '
# What beside_start runs: this module again (a test puts a stand-in here).
BESIDE_COMMAND = [sys.executable, '-m', 'perf_aux', 'check']


class Check(Verdicts):
    """A tier: its verdicts, its stages and those run beside the mutants."""

    beside: Optional[subprocess.Popen] = None
    beside_log = ''

    def host_tests(self) -> None:
        """The host tests of the glue, a check line per test."""
        # A ResourceWarning would split a verdict line.
        _, out = self.capture(['python3', '-W', 'ignore::ResourceWarning',
                               '-m', 'unittest', 'discover', '-s',
                               'tests', '-p', 'test_*.py', '-v'],
                              stderr=True, cwd=f'{self.root}/scripts')
        say_tail(out, 3)
        seen = 0
        for line in out.split('\n'):
            line = line.strip(' \t')
            if line.endswith(' ... ok'):
                self.verdict(0, f"host: {line[:-len(' ... ok')]}")
            elif ' ... skipped' in line:
                self.skip(f'ok - host: {line} # SKIP')
            elif line.endswith(' ... FAIL') or line.endswith(' ... ERROR'):
                self.verdict(1, f'host: {line}')
            else:
                continue
            seen += 1
        # A test that printed between its name and its verdict is counted.
        ran = re.search(r'(?m)^Ran ([0-9]+) tests? in ', out)
        if not ran or int(ran.group(1)) != seen:
            self.verdict(1, f"host: {ran.group(1) if ran else 'no'} tests "
                         f'ran, {seen} gave a verdict line')

    def run_stage(self, name: str) -> None:
        """Stage NAME on this base, its record kept; with RESUME=1 its
        record's lines instead where it passed with the same inputs."""
        row = stage_row(name, self.full)
        base = self.base
        record = resume.path(self.out, self.tier, name, base)
        inputs = resume.inputs(self.root, self.cache, row.deps, self.environ,
                               f'{self.tier} {name} {base} '
                               f'{self.peers_default}')
        old = resume.load(record) if resume.wanted(self.environ) else {}
        if old.get('inputs') == inputs and old.get('passed'):
            print(f"# resumed: {name} on {base} (inputs unchanged, passed "
                  f"at {old['ended']})")
            for kind, line in old['checks']:
                if kind == 'skip':
                    self.skip(line)
                else:
                    self.verdict(0, line)
            self.stage_times.append(f"{0:6d} s  {old['title']} (resumed)")
            return
        failed, first = self.failed, len(self.checks)
        with row.around(self) if row.around else contextlib.nullcontext():
            title = row.title.format(base=self.base)
            rc = self.timed(title, row.run, self)
        resume.save(record, inputs, title, rc == 0 and self.failed == failed,
                    self.checks[first:])

    def lab_selftest(self) -> int:
        """The reference run through the local lab (PERF_AUX_LAB_RUNS)."""
        runs = self.environ.get('PERF_AUX_LAB_RUNS') or \
            self.result_name('reference', 'arm64-4k', 'default')
        return self.line_checks('env', f'PYTHONPATH={self.root}/scripts',
                                'python3', '-m', 'perf_aux_lava', 'lab',
                                'selftest', 'qemu',
                                env={'PERF_AUX_LAB_RUNS': runs})

    def beside_start(self, names: Sequence[str]) -> None:
        """The stages NAMES in the background, their lines in a log."""
        self.beside_log = f'{self.out}/logs/beside.log'
        sys.stdout.flush()
        with open(self.beside_log, 'wb') as log:
            self.beside = subprocess.Popen(
                [*BESIDE_COMMAND, BESIDE, *(['--full'] if self.full else []),
                 *names], cwd=f'{self.root}/scripts', stdout=log,
                stderr=subprocess.STDOUT,
                env={**os.environ, **self.env(),
                     'PYTHONPATH': f'{self.root}/scripts'})

    def beside_end(self) -> None:
        """Their lines counted as if run here; a background run that died
        is a failed check."""
        rc = self.beside.wait()
        for line in Path(self.beside_log).read_text(
                errors='surrogateescape').splitlines():
            line = line.strip(' \t')
            if line.startswith(STAGE_TIME):
                self.stage_times.append(
                    f'{line[len(STAGE_TIME):]} (beside the mutants)')
            else:
                self.count_line(line)
        if rc:
            self.verdict(1, f'the stages beside the mutants ended, exit {rc}')


@contextlib.contextmanager
def with_peers(c: Check) -> Iterator[None]:
    """The peers run where they do by default (PERF_AUX_PEERS unset)."""
    saved = c.peers
    given = c.environ.get('PERF_AUX_PEERS')
    c.peers = given == '1' if given else c.peers_default
    try:
        yield
    finally:
        c.peers = saved


@contextlib.contextmanager
def other_base(c: Check) -> Iterator[None]:
    """custom: a mainline base other than the default one, unpacked."""
    saved = c.base
    c.base = '7.2' if '7.2' in c.bases else c.base
    try:
        c.call(lib.perf_aux('deps', f'base-{c.base}'),
               stdout=subprocess.DEVNULL)
        yield
    finally:
        c.base = saved


@contextlib.contextmanager
def lava_deps(c: Check) -> Iterator[None]:
    """integrations: Debian's python, lava_common, PyYAML, Jinja2."""
    if c.call(lib.perf_aux('deps', 'lava'), stdout=subprocess.DEVNULL):
        c.verdict(1, 'perf_aux deps lava')
    yield


class Stage(NamedTuple):
    """A row of the registry: TITLE is its line in the stage table, RUN
    does it (in AROUND); DEPS: the clone's files RESUME=1 compares."""
    name: str
    tiers: str
    scope: str
    title: str
    run: Callable[[Check], Optional[int]]
    beside: bool = False
    deps: Tuple[str, ...] = (':!*.md',)
    around: Optional[Callable[[Check], ContextManager[None]]] = None


# EACH runs on every base; ONCE on the default base, once; DEFAULT: the
# full tier runs it on the default base only (it proves the same on every
# base).  beside: make check runs it beside the mutant stage, whose boots
# leave a core idle (no kernel build, no boot).
EACH, DEFAULT, ONCE = 'every base', 'default base', 'once'
STAGES = (
    Stage('host', 'quick full', ONCE, 'host tests', Check.host_tests,
          deps=()),
    Stage('reference', 'quick', EACH, '{base} reference kernel, default and '
          'strict', stages.reference_quick),
    Stage('reference', 'full', EACH, '{base} reference kernel, arm64-4k '
          'variants', stages.reference_variants),
    Stage('stock', 'quick', EACH, '{base} stock kernel', lambda c: stages.
          stock_runs(c, [stages.STOCK_QUICK_TESTS], [stages.STRICT_TESTS])),
    Stage('stock', 'full', EACH, '{base} stock kernel', stages.stock_runs),
    Stage('sanitize', 'full', EACH, '{base} sanitizers', stages.sanitize_run),
    Stage('peers', 'full', DEFAULT, '{base} peers on the unmutated kernel',
          mutants.peer_baseline, around=with_peers),
    Stage('mutants', 'quick', EACH, '{base} one mutant of each family',
          mutants.quick_mutants),
    Stage('aux_mutants', 'full', EACH, '{base} AUX allocator mutants',
          lambda c: mutants.run_mutants(c, f'{c.catalogue}/aux_alloc',
                                        'perf_aux_alloc', 'default', []),
          around=with_peers),
    Stage('vmap_mutants', 'full', EACH, '{base} vmap granule mutants',
          lambda c: mutants.run_mutants(c, f'{c.catalogue}/vmap_granule',
                                        'vmap_granule', 'strict', []),
          around=with_peers),
    Stage('module_mutants', 'full', EACH, '{base} synthetic AUX PMU mutants',
          lambda c: mutants.run_module_mutants(
              c, f'{c.catalogue}/test_aux_pmu', []), around=with_peers),
    # The perf core's side of the consumer contract.
    Stage('perf_core_mutants', 'full', DEFAULT, '{base} perf core mutants',
          lambda c: mutants.run_module_mutants(
              c, f'{c.catalogue}/perf_core', []), around=with_peers),
    Stage('targets', 'full', DEFAULT, '{base} reference kernel, other '
          'targets', stages.reference_targets),
    # It reads the staged stock tree: it starts after the stock stage.
    Stage('series', 'quick', ONCE, '{base} patch series (make series)',
          lambda c: c.line_checks(*lib.perf_aux('series', '--check')),
          beside=True),
    Stage('series', 'full', ONCE, '{base} patch series (make series), a '
          'kernel per prefix', lambda c: c.line_checks(
              *lib.perf_aux('series', '--check', '--kernel-prefixes'))),
    Stage('kunitpy', 'full', ONCE, '{base} kunit.py in the series tree',
          stages.kunitpy_runs),
    Stage('series_mbox', 'full', ONCE, '{base} SERIES= the reference '
          'patches as an mbox', stages.series_mbox_run),
    Stage('privilege', 'full', ONCE, '{base} reference kernel, unprivileged '
          'and failed setups', stages.privilege_runs),
    Stage('custom', 'full', ONCE, 'KERNEL_SRC=src/{base} (hook-ups from its '
          'version)', stages.custom_tree, around=other_base),
    Stage('lava', 'full', ONCE, 'LAVA jobs, lava-run', stages.lava_runs),
    Stage('lava_lab', 'full', ONCE, 'LAVA lab, server and worker',
          Check.lab_selftest),
    Stage('lava_schema', 'quick', ONCE, 'LAVA jobs, schemas',
          lambda c: c.line_checks('env', f'PYTHONPATH={c.root}/scripts',
                                  'python3', '-m', 'perf_aux_lava', 'check',
                                  '--schema'),
          beside=True, deps=('lava-jobs', 'scripts', ':!*.md')),
    # A missing upstream mirror is a skipped check.
    Stage('integrations', 'full', ONCE, 'integrations/, KernelCI and '
          'tuxlava patches', lambda c: c.line_checks(
              '/usr/bin/python3', f'{c.root}/integrations/check.py'),
          around=lava_deps),
    Stage('testdefs', 'full', ONCE, '{base} kselftests through '
          'test-definitions on Debian', stages.testdefs_run),
)


def tier_rows(full: bool) -> List[Stage]:
    """The stages a tier runs, in order."""
    return [r for r in STAGES if ('full' if full else 'quick') in r.tiers]


def stage_row(name: str, full: bool) -> Stage:
    """NAME's row in the tier, or the other tier's."""
    rows = sorted((r for r in STAGES if r.name == name),
                  key=lambda r: r not in tier_rows(full))
    if not rows:
        lib.die(f"unknown stage '{name}' (one of: "
                f"{' '.join(dict.fromkeys(r.name for r in STAGES))})")
    return rows[0]


def usage() -> str:
    """check --help: the registry."""
    rows = (f"  {r.name:18}{r.tiers:11} {r.scope + ', beside' * r.beside:14}"
            f"{r.title.format(base='BASE')}\n" for r in STAGES)
    return ('usage: python3 -m perf_aux check|check-full [STAGE...]\n\n'
            'stage, tiers, where (beside: the mutants, in make check), '
            'what:\n' + ''.join(rows))


def tier(c: Check, named: List[str]) -> int:
    """The tier's stages (or the NAMED ones), base by base, and its
    closing lines."""
    start = int(time.time())
    c.check_id = f'{os.getpid()}.{start}'
    os.makedirs(f'{c.out}/logs', exist_ok=True)
    # A whole tier starts from nothing; named stages and RESUME=1 keep.
    if not named and not resume.wanted(c.environ):
        for kept in ('results', 'mutants', 'state'):
            shutil.rmtree(f'{c.out}/{kept}', ignore_errors=True)
    rows = [stage_row(s, c.full) for s in named] or tier_rows(c.full)
    bases = [c.default_base]
    if c.full:
        bases = (c.environ.get('BASE') or ' '.join(c.bases)).split()
        for b in bases:
            lib.check_base(b)
    once = [r.name for r in rows if r.scope == ONCE]
    per_base = [r for r in rows if r.scope != ONCE]
    besides = []
    if not c.full and 'mutants' in (r.name for r in per_base):
        besides = [r.name for r in rows if r.scope == ONCE and r.beside]
    if c.timed('install packages', c.call,
               lib.perf_aux('deps', *(c.targets if c.full else ['arm64-4k']),
                            *(f'base-{b}' for b in bases))):
        return 2
    c.base = c.default_base
    if 'host' in once:
        c.run_stage('host')
    # The default base first, then the stages run once, then the others.
    bases.sort(key=lambda b: b != c.default_base)
    for i, b in enumerate(bases):
        c.base = b
        c.peers_default = bool(named) or b == c.default_base
        for r in per_base:
            if c.full and not named and b != c.default_base and \
                    r.scope == DEFAULT:
                print(f'{r.name}: on {c.default_base} only (the same on '
                      'every base)')
                continue
            if r.name == 'mutants' and besides:
                c.beside_start(besides)
            c.run_stage(r.name)
        if i == 0:
            c.base = c.default_base
            if besides:
                c.beside_end()
            for s in once:
                if s != 'host' and s not in besides:
                    c.run_stage(s)
    c.base = c.default_base
    # Which test caught which mutant, the peers' kills beside.
    if c.full and os.path.isdir(f'{c.out}/mutants'):
        c.results_shown('matrix')
    for b in bases:
        stock = f'{c.out}/results/stock-{b}-arm64-4k'
        ref = f'{c.out}/results/reference-{b}-arm64-4k'
        if os.path.isdir(stock) and os.path.isdir(ref):
            c.results_shown('bench', stock, ref)
    runs = lib.collated(str(p) + '/' for p in Path(c.out, 'results').glob('*/')
                        if p.is_dir()) or [f'{c.out}/results/*/']
    _, out = c.results('summary', *runs, '--report', f'{c.out}/report.md')
    for line in out.split('\n') if out else []:
        print(f'suites: {line}' if SUITES_LINE.match(line) else line)
    print(f'measurements: {c.out}/measurements/{c.tier}.md')
    print('stage times:')
    for line in c.stage_times:
        print(line)
    print(f'{int(time.time()) - start:6d} s  in all')
    for what in c.failures:
        print(f'failed: {what}')
    print(f'{c.passed} passed, {c.failed} failed, {c.skipped} skipped')
    return 1 if c.failed else 0


def teed(log: str, func: Callable[[], int]) -> int:
    """FUNC with everything it and its programs print also in LOG."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    tee = subprocess.Popen(['tee', log], stdin=subprocess.PIPE)
    os.dup2(tee.stdin.fileno(), 1)
    os.dup2(tee.stdin.fileno(), 2)
    try:
        rc = func()
    except lib.Error as e:
        rc = e.status
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        tee.stdin.close()
        tee.wait()
    return rc


def main(argv: List[str]) -> int:
    """check [--full] [STAGE...], or the stages beside (--beside)."""
    if argv[:1] == [BESIDE]:
        c = Check(argv[1:2] == ['--full'])
        for s in argv[2 if c.full else 1:]:
            c.run_stage(s)
        for line in c.stage_times:
            print(f'{STAGE_TIME}{line}')
        return 0
    full = argv[:1] == ['--full']
    named = argv[1:] if full else argv
    if {'-h', '--help'} & set(named):
        print(usage(), end='')
        return 0
    c = Check(full)
    os.makedirs(f'{c.out}/logs', exist_ok=True)
    log = f'{c.out}/logs/{c.tier}.log'
    rc = teed(log, lambda: tier(c, named))
    page = f'{c.out}/measurements/{c.tier}.md'
    stages_given = ' '.join(argv)[len('--full') if full else 0:]
    if c.call(lib.perf_aux('results', 'measurements', log, '--tier', c.tier,
                           '--stages', stages_given, '--out', page)):
        print(f'perf_aux: warning: no {page}', file=sys.stderr)
    return rc
