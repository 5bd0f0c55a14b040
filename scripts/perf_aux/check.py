# SPDX-License-Identifier: GPL-2.0
"""make check and make check-full (python3 -m perf_aux check, check-full).

The project's tests, in two tiers, one check per line ("ok - ..." or
"not ok - ..."), the last line "N passed, N failed, N skipped":

make check: what CI runs; one kernel build of the default base
(mainline) serves the reference, and ccache serves most of it to the
stock control and the mutants.  make check-full (check --full): the whole
matrix.  The default base first: every stage of the tier; then the stages
run once (on it); then each other base what can differ there
(docs/check-full.md).  STAGES below is the registry of the stages, their
tiers, scope and order; check --help prints it.

make check STAGES="STAGE..." and make check-full STAGES="STAGE..."
(check [--full] STAGE...) run only the named stages (a stage the tiers run
differently as its tier does; the full tier's stages run for each base, or
for BASE when set).

Everything a tier prints is kept in out/logs/<tier>.log, from which
out/measurements/<tier>.md is written (perf_aux_results.measurements):
the figures of a check are generated, never copied.  PERF_AUX_MUTANTS:
another mutant catalogue (same layout), e.g. to rerun some;
PERF_AUX_PEERS=0 leaves the peers out of the mutant stages (=1 runs them
on every base, not only the default one).  RESUME=1: a stage that passed
with the same inputs before is not run again, its lines are (perf_aux.resume).
"""

import contextlib
import glob
import os
import re
import shutil
import subprocess
import sys
import time
from typing import (Callable, ContextManager, Dict, Iterator, List,
                    NamedTuple, Optional, Sequence, Tuple)

from . import lib, mutants, resume, shell, stages
from .files import collated, read, records
from .shell import stage

BESIDE = '--beside'
# results summary's closing line, which the tier's own must not be
# mistaken for.
SUITES_LINE = re.compile(r'^[0-9]* passed, ')
STAGE_TIME = 'stage time: '
# What beside_start runs: this module again (a test puts a stand-in here).
BESIDE_COMMAND = [sys.executable, '-m', 'perf_aux', 'check']


class Check:
    """A tier's state: the counts, the failures, the stage table, and the
    results directory of the last run (res)."""

    def __init__(self, full: bool) -> None:
        self.full = full
        self.tier = 'check-full' if full else 'check'
        self.passed = self.failed = self.skipped = 0
        self.failures: List[str] = []
        # Every check line: [pass|fail|skip, what verdict or skip took].
        self.checks: List[List[str]] = []
        # The selectors as the user gave them, before any stage sets one.
        self.environ = dict(os.environ)
        self.stage_times: List[str] = []
        self.res = ''
        self.root = lib.ROOT
        self.catalogue = os.environ.get('PERF_AUX_MUTANTS') or \
            f'{self.root}/scripts/mutants'
        self.out = lib.out()
        self.cache = lib.cache()
        self.bases = list(lib.BASES)
        self.targets = list(lib.TARGETS)
        self.default_base = self.bases[0]
        self.beside: Optional[subprocess.Popen] = None
        self.beside_log = ''
        # Whether the mutant stages run the peers unless PERF_AUX_PEERS
        # says: named stages and the default base do.
        self.peers_default = True

    @property
    def base(self) -> str:
        return os.environ.get('BASE') or self.default_base

    # Check lines.

    def verdict(self, rc: int, what: str) -> None:
        self.checks.append(['fail' if rc else 'pass', what])
        if rc == 0:
            self.passed += 1
            print(f'ok - {what}')
        else:
            self.failed += 1
            self.failures.append(what)
            print(f'not ok - {what}')

    def skip(self, line: str) -> None:
        """A check line that says what was not checked, and why."""
        self.skipped += 1
        self.checks.append(['skip', line])
        print(line)

    def expect(self, run: str, suite: str, *args: str) -> None:
        """A results expectation as one check."""
        rc, line = self.results('expect', run, suite, *args)
        self.verdict(rc, f'{self.name(run)}: {line}')

    def count_line(self, line: str) -> None:
        """An "ok - ..." / "not ok - ..." line counted as a check; any
        other line passes through."""
        if line.startswith('ok - ') and '# SKIP' in line[5:]:
            self.skip(line)
        elif line.startswith('ok - '):
            self.verdict(0, line[len('ok - '):])
        elif line.startswith('not ok - '):
            self.verdict(1, line[len('not ok - '):])
        else:
            print(line)

    def line_checks(self, *argv: str) -> int:
        """A command that prints its own expectations as check lines (the
        LAVA checks, the series), counted here.  A command that fails
        without a failed check line of its own (it died, or checked
        nothing) is a failed check too."""
        rc, out = self.capture(argv, stderr=True)
        # What ran, shown as perf_aux VERB for lib.perf_aux's.
        shown = argv[argv.index('-m') + 1:] if '-m' in argv else argv
        saw_failure = False
        for line in out.split('\n'):
            line = line.strip(' \t')
            self.count_line(line)
            saw_failure |= line.startswith('not ok - ')
        if rc and not saw_failure:
            self.verdict(1, f'{os.path.basename(shown[0])} '
                         f"{shown[1] if len(shown) > 1 else ''} exited {rc} "
                         'with no failed check')
        return 0

    # Programs.

    def call(self, argv: Sequence[str], env: Optional[Dict[str, str]] = None,
             stdout=None, stderr=None, quiet: bool = False) -> int:
        """ARGV with ENV on top of ours; its output where ours goes, or
        where STDOUT and STDERR say (a file and subprocess.STDOUT for
        "> FILE 2>&1"), or nowhere (QUIET)."""
        sys.stdout.flush()
        if quiet:
            stdout = stderr = subprocess.DEVNULL
        return subprocess.run(
            argv, env=None if env is None else {**os.environ, **env},
            stdout=stdout, stderr=stderr, check=False).returncode

    def capture(self, argv: Sequence[str], stderr: bool = False,
                quiet: bool = False,
                cwd: Optional[str] = None) -> Tuple[int, str]:
        """ARGV's status and what it printed, as $(...) keeps it (the
        trailing newlines dropped); STDERR: its errors too (2>&1); QUIET:
        its errors dropped."""
        sys.stdout.flush()
        err = subprocess.STDOUT if stderr else (
            subprocess.DEVNULL if quiet else None)
        proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=err,
                              cwd=cwd, check=False)
        return (proc.returncode,
                proc.stdout.decode('utf-8', 'surrogateescape').rstrip('\n'))

    def results(self, *args: str, stderr: bool = False,
                quiet: bool = False) -> Tuple[int, str]:
        """results ARGS: its status and its output."""
        return self.capture(lib.perf_aux('results', *args), stderr=stderr,
                            quiet=quiet)

    def results_shown(self, *args: str) -> int:
        """results ARGS, its output shown."""
        return self.call(lib.perf_aux('results', *args))

    def say_tail(self, text: str, n: int) -> None:
        """tail -N of TEXT (a command's output as $(...) kept it)."""
        lines = text.split('\n')
        print('\n'.join(lines[-n:]))

    def say_file(self, path: str) -> None:
        sys.stdout.flush()
        with open(path, 'rb') as f:
            sys.stdout.buffer.write(f.read())
        sys.stdout.buffer.flush()

    def glob(self, pattern: str) -> List[str]:
        """PATTERN's matches in the shell's order; the pattern itself
        where nothing matches, as an unmatched shell glob stays."""
        return collated(glob.glob(pattern)) or [pattern]

    @staticmethod
    def name(path: str) -> str:
        """basename PATH."""
        return os.path.basename(path.rstrip('/')) or path

    def result_name(self, kernel: str, target: str, variant: str) -> str:
        return lib.result_name(kernel, self.base, target, variant)

    def run_job(self, kernel: str, target: str, variant: str,
                *args: str) -> None:
        """The main job on BASE; sets res to its results.  Its consoles,
        from the first line, hold no kernel report: one outside every
        test's window (an initcall's, one between programs) fails too."""
        self.call(lib.perf_aux('run'),
                  env={'KERNEL': kernel, 'TARGET': target, 'VARIANT': variant,
                       'KERNEL_SRC': '', 'KERNEL_ARGS': ' '.join(args)})
        run = self.result_name(kernel, target, variant)
        self.res = f'{self.out}/results/{run}'
        reports = lib.run_reports(run)
        self.verdict(1 if reports else 0,
                     f'{run}: {len(reports)} kernel reports on its consoles')

    # Stages.

    def timed(self, name: str, func: Callable[..., Optional[int]],
              *args) -> int:
        """A stage, its time kept for the table at the end."""
        start = int(time.time())
        rc = stage(name, lambda: func(*args) or 0)
        self.stage_times.append(f'{int(time.time()) - start:6d} s  {name}')
        return rc

    def host_tests(self) -> None:
        """The host tests of the glue, a check line per test."""
        # A ResourceWarning printed when the collector meets another
        # test's object would split a verdict line: not a verdict itself.
        _, out = self.capture(['python3', '-W', 'ignore::ResourceWarning',
                               '-m', 'unittest', 'discover', '-s',
                               'tests', '-p', 'test_*.py', '-v'],
                              stderr=True, cwd=f'{self.root}/scripts')
        self.say_tail(out, 3)
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
        # A test that prints between its name and its verdict leaves no
        # line here: it must not go uncounted.
        ran = re.search(r'(?m)^Ran ([0-9]+) tests? in ', out)
        if not ran or int(ran.group(1)) != seen:
            self.verdict(1, f"host: {ran.group(1) if ran else 'no'} tests "
                         f'ran, {seen} gave a verdict line')

    def run_stage(self, name: str) -> None:
        """Stage NAME on BASE, as its row says, its record kept; with
        RESUME=1 the lines of its record instead, where it passed with
        the same inputs (perf_aux.resume)."""
        row = stage_row(name, self.full)
        base = self.base
        record = resume.path(self.out, self.tier, name, base)
        inputs = resume.inputs(self.root, self.cache, row.deps, self.environ,
                               f'{self.tier} {name} {base} '
                               f'{self.peers_default}')
        old = resume.load(record) if resume.wanted() else {}
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
        """make lab-selftest.  The reference run through the lab, unless
        PERF_AUX_LAB_RUNS says: the stock and 16K runs take the same path
        through the server and worker, and the lava stage runs the 16K
        job through the dispatcher."""
        os.environ.setdefault(
            'PERF_AUX_LAB_RUNS',
            self.result_name('reference', 'arm64-4k', 'default'))
        return self.line_checks(f'{self.root}/scripts/lava/lab.sh',
                                'selftest', 'qemu')

    # The stages beside the mutants.

    def beside_start(self, names: Sequence[str]) -> None:
        """Runs the stages NAMES in the background (this module again),
        their lines and stage times kept in the beside log."""
        self.beside_log = f'{self.out}/logs/beside.log'
        sys.stdout.flush()
        with open(self.beside_log, 'wb') as log:
            self.beside = subprocess.Popen(
                [*BESIDE_COMMAND, BESIDE, *(['--full'] if self.full else []),
                 *names],
                cwd=f'{self.root}/scripts', stdout=log,
                stderr=subprocess.STDOUT,
                env={**os.environ, 'PYTHONPATH': f'{self.root}/scripts'})

    def beside_end(self) -> None:
        """Waits for them, then counts their lines as if they had run
        here, in stage order.  Run here, a stage that dies ends the check;
        beside, it ends the background run, which is then a failed check."""
        rc = self.beside.wait()
        for line in records(read(self.beside_log)):
            line = line.strip(' \t')
            if line.startswith(STAGE_TIME):
                self.stage_times.append(
                    f'{line[len(STAGE_TIME):]} (beside the mutants)')
            else:
                self.count_line(line)
        if rc:
            self.verdict(1, f'the stages beside the mutants ended, exit {rc}')


@contextlib.contextmanager
def environ(name: str, value: Optional[str]) -> Iterator[None]:
    """NAME=VALUE (None: as it is) for the length of a stage."""
    saved = dict(os.environ)
    os.environ.update({} if value is None else {name: value})
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def with_peers(c: Check) -> ContextManager[None]:
    """PERF_AUX_PEERS=${PERF_AUX_PEERS:-1} where the peers run by default."""
    return environ('PERF_AUX_PEERS', '1' if c.peers_default and
                   not os.environ.get('PERF_AUX_PEERS') else None)


@contextlib.contextmanager
def other_base(c: Check) -> Iterator[None]:
    """custom: a mainline tree other than the default base's where there
    is one, its source unpacked."""
    with environ('BASE', '7.2' if '7.2' in c.bases else None):
        c.call(lib.perf_aux('deps', f'base-{c.base}'),
               stdout=subprocess.DEVNULL)
        yield


@contextlib.contextmanager
def lava_deps(c: Check) -> Iterator[None]:
    """integrations: Debian's python for lava_common, which deps lava
    installs with PyYAML and Jinja2."""
    if c.call(lib.perf_aux('deps', 'lava'), stdout=subprocess.DEVNULL):
        c.verdict(1, 'perf_aux deps lava')
    yield


class Stage(NamedTuple):
    """A row of the registry: TITLE, its line in the stage table ({base}:
    the base it runs on), says what it checks; RUN does it, in AROUND."""
    name: str
    tiers: str
    scope: str
    title: str
    run: Callable[[Check], Optional[int]]
    beside: bool = False
    deps: Tuple[str, ...] = (':!*.md',)
    around: Optional[Callable[[Check], ContextManager[None]]] = None


# EACH runs on every base; ONCE on the default base, once.  DEFAULT: the
# full tier runs it on the default base only: the other page sizes and the
# perf core's mutants (code no base's own patches change) prove the same on
# every base, and the peers (other projects' tests beside the mutants)
# decide no check, their kill line is the default base's.  Named with BASE,
# they run there.
EACH, DEFAULT, ONCE = 'every base', 'default base', 'once'
# The registry: the stages in the order a tier runs them, a row each (one
# a tier where the tiers differ).  beside: make check runs the stage beside
# the mutant stage, whose boots leave a core idle (112 s of a cold run's
# 30 minutes): it builds no kernel and boots nothing; the series stage
# reads the staged stock tree, so it cannot start before the stock stage
# ends.  deps: the clone's files (git pathspecs) whose content RESUME=1
# compares (perf_aux.resume); all but the user documentation by default.
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
          lambda c: mutants.quick_mutants(c, c.catalogue)),
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
    # The perf core's side of the consumer contract (aux_head, aux_tail,
    # the watermark's wakeups, the AUX mmap() bounds), each booted with the
    # programs of its Killed-by lines.
    Stage('perf_core_mutants', 'full', DEFAULT, '{base} perf core mutants',
          lambda c: mutants.run_module_mutants(
              c, f'{c.catalogue}/perf_core', []), around=with_peers),
    Stage('targets', 'full', DEFAULT, '{base} reference kernel, other '
          'targets', stages.reference_targets),
    Stage('series', 'quick', ONCE, '{base} patch series (make series)',
          lambda c: c.line_checks(*lib.perf_aux('series', '--check')),
          beside=True),
    Stage('series', 'full', ONCE, '{base} patch series (make series), a '
          'kernel per prefix', lambda c: c.line_checks(
              *lib.perf_aux('series', '--check', '--kernel-prefixes'))),
    # kunit.py in the tree series --check leaves, as its users run it.
    Stage('kunitpy', 'full', ONCE, '{base} kunit.py in the series tree',
          stages.kunitpy_runs),
    Stage('series_mbox', 'full', ONCE, '{base} SERIES= the reference '
          'patches as an mbox', stages.series_mbox_run),
    Stage('privilege', 'full', ONCE, '{base} reference kernel, unprivileged '
          'and failed setups', stages.privilege_runs),
    Stage('custom', 'full', ONCE, 'KERNEL_SRC=src/{base} (hook-ups from its '
          'version)', stages.custom_tree, around=other_base),
    Stage('lava', 'full', ONCE, 'LAVA jobs, lava-run', stages.lava_runs),
    # The local LAVA lab (scripts/lava/lab.sh): jobs submitted and collected
    # through lava-server and lava-worker on 127.0.0.1, the fault cases; its
    # own check lines.
    Stage('lava_lab', 'full', ONCE, 'LAVA lab, server and worker',
          Check.lab_selftest),
    Stage('lava_schema', 'quick', ONCE, 'LAVA jobs, schemas',
          lambda c: c.line_checks(f'{c.root}/scripts/lava/check.sh',
                                  '--schema'),
          beside=True, deps=('lava-jobs', 'scripts', ':!*.md')),
    # integrations/ against the fetched upstream repositories (a missing
    # mirror is a skipped check).
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
        shell.die(f"unknown stage '{name}' (one of: "
                  f"{' '.join(dict.fromkeys(r.name for r in STAGES))})")
    return rows[0]


def usage() -> str:
    """check --help: the registry."""
    rows = (f"  {r.name:18}{r.tiers:11} {r.scope + ', beside' * r.beside:14}"
            f"{r.title.format(base='BASE')}\n" for r in STAGES)
    return ('usage: python3 -m perf_aux check|check-full [STAGE...]\n\n'
            'stage, tiers, where (beside: the mutants, in make check), '
            'what:\n' + ''.join(rows))


def beside(full: bool, names: Sequence[str]) -> int:
    """The background half of beside_start: the stages, then their times
    as "stage time:" lines for the foreground's table."""
    c = Check(full)
    for s in names:
        c.run_stage(s)
    for line in c.stage_times:
        print(f'{STAGE_TIME}{line}')
    return 0


def tier(c: Check, named: List[str]) -> int:
    start = int(time.time())
    # One build serves every boot of it in this check (perf_aux.kunit).
    os.environ['PERF_AUX_CHECK_ID'] = f'{os.getpid()}.{start}'
    os.makedirs(f'{c.out}/logs', exist_ok=True)
    # A whole tier starts from nothing, the records of what was there
    # too; named stages, and a resumed tier, keep earlier results.
    if not named and not resume.wanted():
        for kept in ('results', 'mutants', 'state'):
            shutil.rmtree(f'{c.out}/{kept}', ignore_errors=True)
    rows = [stage_row(s, c.full) for s in named] or tier_rows(c.full)
    bases = [c.default_base]
    if c.full:
        bases = (os.environ.get('BASE') or ' '.join(c.bases)).split()
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
    if 'host' in once:
        os.environ['BASE'] = c.default_base
        c.run_stage('host')
    # The default base first, then the stages run once (on it), then the
    # other bases: what fails on mainline shows early.
    bases.sort(key=lambda b: b != c.default_base)
    for i, b in enumerate(bases):
        os.environ['BASE'] = b
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
            os.environ['BASE'] = c.default_base
            if besides:
                c.beside_end()
            for s in once:
                if s != 'host' and s not in besides:
                    c.run_stage(s)
    os.environ['BASE'] = c.default_base
    # Which test caught which mutant, the peers' kills beside.
    if c.full and os.path.isdir(f'{c.out}/mutants'):
        c.results_shown('matrix')
    for b in bases:
        stock = f'{c.out}/results/stock-{b}-arm64-4k'
        ref = f'{c.out}/results/reference-{b}-arm64-4k'
        if os.path.isdir(stock) and os.path.isdir(ref):
            c.results_shown('bench', stock, ref)
    runs = collated(glob.glob(f'{c.out}/results/*/')) or \
        [f'{c.out}/results/*/']
    _, out = c.results('summary', *runs, '--report', f'{c.out}/report.md')
    for line in records(out + '\n') if out else []:
        print(f'suites: {line}' if SUITES_LINE.match(line) else line)
    print(f'measurements: {c.out}/measurements/{c.tier}.md')
    print('stage times:')
    for line in c.stage_times:
        print(line)
    print(f'{int(time.time()) - start:6d} s  in all')
    if c.failed:
        for what in c.failures:
            print(f'failed: {what}')
    print(f'{c.passed} passed, {c.failed} failed, {c.skipped} skipped')
    return 1 if c.failed else 0


def teed(log: str, func: Callable[[], int]) -> int:
    """FUNC with everything it and its programs print (2>&1) also in LOG,
    as "| tee LOG" keeps it."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    tee = subprocess.Popen(['tee', log], stdin=subprocess.PIPE)
    os.dup2(tee.stdin.fileno(), 1)
    os.dup2(tee.stdin.fileno(), 2)
    try:
        rc = func()
    except SystemExit as e:
        rc = e.code if isinstance(e.code, int) else 1
    except shell.ShellError as e:
        rc = e.status
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        tee.stdin.close()
        tee.wait()
    return rc


def main(argv: Optional[List[str]] = None) -> int:
    shell.begin()
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == [BESIDE]:
        full = args[1:2] == ['--full']
        return beside(full, args[2 if full else 1:])
    full = args[:1] == ['--full']
    named = args[1:] if full else args
    if {'-h', '--help'} & set(named):
        print(usage(), end='')
        return 0
    c = Check(full)
    os.makedirs(f'{c.out}/logs', exist_ok=True)
    log = f'{c.out}/logs/{c.tier}.log'
    rc = teed(log, lambda: tier(c, named))
    # main's closing lines name the page too.
    page = f'{c.out}/measurements/{c.tier}.md'
    if c.call(lib.perf_aux('results', 'measurements', log, '--tier', c.tier,
                           '--stages', ' '.join(args)[len('--full') if full
                                                      else 0:],
                           '--out', page)):
        print(f'perf_aux: warning: no {page}', file=sys.stderr)
    return rc
