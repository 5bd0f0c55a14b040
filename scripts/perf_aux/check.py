# SPDX-License-Identifier: GPL-2.0
"""make check and make check-full (python3 -m perf_aux check, check-full).

The project's tests, in two tiers, one check per line ("ok - ..." or
"not ok - ..."), the last line "N passed, N failed, N skipped":

make check: what CI runs; one kernel build of the default base
(mainline) serves the reference, and ccache serves most of it to the
stock control and the mutants:
 host        host unit tests of the glue (scripts/tests);
 reference   the reference kernel, arm64-4k (its granule KUnit suite built
             strict): every suite passes, on the default boot and with
             the kselftests strict (perf_aux.strict);
 stock       the stock kernel (the negative control): the AUX allocator,
             map, integrity and wrap suites pass, the granule cases skip
             with "vmap() maps base pages only", and fail when built
             strict;
 mutants     one kernel mutant of each family (AUX allocator, vmap/arm64,
             synthetic PMU, perf core), each killed by the suite written
             for it;
 lava_schema the LAVA jobs and test definition against lava_common's
             schemas, broken variants rejected, lava-run --validate.

make check-full (check --full): the whole matrix.  The default base
first: the reference on every variant, stock, the sanitizers, every
mutant with the peers beside, the other targets; then the stages run once
(the series, kunit.py, the LAVA jobs through lava-run and the local lab,
test-definitions, integrations/ against the pinned upstream commits); then
each other base what can differ there (docs/check-full.md).

make check STAGES="STAGE..." and make check-full STAGES="STAGE..."
(check [--full] STAGE...) run only the named stages (of that tier; the
full tier's stages run for each base, or for BASE when set).

Everything a tier prints is kept in out/logs/<tier>.log, from which
out/measurements/<tier>.md is written (perf_aux_results.measurements):
the figures of a check are generated, never copied.  PERF_AUX_MUTANTS:
another mutant catalogue (same layout), e.g. to rerun some;
PERF_AUX_PEERS=0 leaves the peers out of the mutant stages (=1 runs them
on every base, not only the default one).
"""

import contextlib
import glob
import os
import re
import shutil
import subprocess
import sys
import time
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from . import lib, mutants, shell, stages
from .files import collated, read, records
from .shell import stage

# Stages in order; "check [--full] NAME..." runs only the named ones.
QUICK_STAGES = ('host', 'reference', 'stock', 'mutants', 'series',
                'lava_schema')
FULL_STAGES = ('host', 'reference', 'stock', 'sanitize', 'peers',
               'aux_mutants', 'vmap_mutants', 'module_mutants',
               'perf_core_mutants', 'targets', 'series', 'kunitpy',
               'series_mbox', 'privilege', 'custom', 'lava', 'lava_lab',
               'integrations', 'testdefs')
# Stages of the full tier that run on the default base only: the other
# page sizes, and the perf core's mutants (code no base's own patches
# change), prove the same on every base; the peers (other projects'
# tests beside the mutants) decide no check, and their kill line is the
# default base's.  Named with BASE, they run there.
DEFAULT_BASE_STAGES = ('targets', 'perf_core_mutants', 'peers')
# Stages of the full tier that run once, not once per base.
ONCE_STAGES = ('host', 'series', 'series_mbox', 'privilege', 'custom', 'lava',
               'lava_lab', 'lava_schema', 'integrations', 'testdefs',
               'kunitpy')
# make check's stages that build no kernel and boot nothing run beside the
# mutant stage, whose boots leave a core idle: 112 s of a cold run's
# 30 minutes.  The series stage reads the staged stock tree, so it cannot
# start before the stock stage ends.
BESIDE_STAGES = ('series', 'lava_schema')
BESIDE = '--beside'
# results summary's closing line, which the tier's own must not be
# mistaken for.
SUITES_LINE = re.compile(r'^[0-9]* passed, ')
STAGE_TIME = 'stage time: '
# What beside_start runs: this module again (a test puts a stand-in here).
BESIDE_COMMAND = [sys.executable, '-m', 'perf_aux.check']


class Check:
    """A tier's state: the counts, the failures, the stage table, and the
    results directory of the last run (res)."""

    def __init__(self, full: bool) -> None:
        self.full = full
        self.passed = self.failed = self.skipped = 0
        self.failures: List[str] = []
        self.stage_times: List[str] = []
        self.res = ''
        self.root = lib.ROOT
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

    def run_stage(self, s: str) -> None:
        catalogue = os.environ.get('PERF_AUX_MUTANTS') or \
            f'{self.root}/scripts/mutants'
        base = self.base
        with_peers = PeersDefault() if self.peers_default else \
            contextlib.nullcontext()
        if s == 'host':
            self.timed('host tests', self.host_tests)
        elif s == 'reference':
            if self.full:
                self.timed(f'{base} reference kernel, arm64-4k variants',
                           stages.reference_variants, self)
            else:
                self.timed(f'{base} reference kernel, default and strict',
                           stages.reference_quick, self)
        elif s == 'stock':
            if self.full:
                self.timed(f'{base} stock kernel', stages.stock_runs, self)
            else:
                self.timed(f'{base} stock kernel', stages.stock_runs, self,
                           [stages.STOCK_QUICK_TESTS], [stages.STRICT_TESTS])
        elif s == 'sanitize':
            self.timed(f'{base} sanitizers', stages.sanitize_run, self)
        elif s == 'peers':
            with with_peers:
                self.timed(f'{base} peers on the unmutated kernel',
                           mutants.peer_baseline, self)
        elif s == 'mutants':
            self.timed(f'{base} one mutant of each family',
                       mutants.quick_mutants, self, catalogue)
        elif s == 'aux_mutants':
            with with_peers:
                self.timed(f'{base} AUX allocator mutants', mutants.run_mutants,
                           self, f'{catalogue}/aux_alloc', 'perf_aux_alloc',
                           'default', [])
        elif s == 'vmap_mutants':
            with with_peers:
                self.timed(f'{base} vmap granule mutants', mutants.run_mutants,
                           self, f'{catalogue}/vmap_granule', 'vmap_granule',
                           'strict', [])
        elif s == 'module_mutants':
            with with_peers:
                self.timed(f'{base} synthetic AUX PMU mutants',
                           mutants.run_module_mutants, self,
                           f'{catalogue}/test_aux_pmu', [])
        elif s == 'perf_core_mutants':
            # The perf core's side of the consumer contract (aux_head,
            # aux_tail, the watermark's wakeups, the AUX mmap() bounds),
            # each booted with the programs of its Killed-by lines.
            with with_peers:
                self.timed(f'{base} perf core mutants',
                           mutants.run_module_mutants, self,
                           f'{catalogue}/perf_core', [])
        elif s == 'lava':
            self.timed('LAVA jobs, lava-run', stages.lava_runs, self)
        elif s == 'series':
            if self.full:
                self.timed(f'{base} patch series (make series), a kernel per '
                           'prefix', self.line_checks,
                           *lib.perf_aux('series', '--check',
                                         '--kernel-prefixes'))
            else:
                self.timed(f'{base} patch series (make series)',
                           self.line_checks,
                           *lib.perf_aux('series', '--check'))
        # kunit.py in the tree series --check leaves, as its users run it.
        elif s == 'kunitpy':
            self.timed(f'{base} kunit.py in the series tree',
                       stages.kunitpy_runs, self)
        elif s == 'series_mbox':
            self.timed(f'{base} SERIES= the reference patches as an mbox',
                       stages.series_mbox_run, self)
        elif s == 'privilege':
            self.timed(f'{base} reference kernel, unprivileged and failed '
                       'setups', stages.privilege_runs, self)
        elif s == 'custom':
            self.custom()
        # The local LAVA lab (scripts/lava/lab.sh): jobs submitted and
        # collected through lava-server and lava-worker on 127.0.0.1, the
        # fault cases; its own check lines.
        elif s == 'lava_lab':
            self.timed('LAVA lab, server and worker', self.lab_selftest)
        elif s == 'lava_schema':
            self.timed('LAVA jobs, schemas', self.line_checks,
                       f'{self.root}/scripts/lava/check.sh', '--schema')
        elif s == 'targets':
            self.timed(f'{base} reference kernel, other targets',
                       stages.reference_targets, self)
        elif s == 'testdefs':
            self.timed(f'{base} kselftests through test-definitions on Debian',
                       stages.testdefs_run, self)
        # integrations/ against the fetched upstream repositories (a
        # missing mirror is a skipped check); Debian's python for
        # lava_common, which deps lava installs with PyYAML and Jinja2.
        elif s == 'integrations':
            if self.call(lib.perf_aux('deps', 'lava'),
                         stdout=subprocess.DEVNULL):
                self.verdict(1, 'perf_aux deps lava')
            self.timed('integrations/, KernelCI and tuxlava patches',
                       self.line_checks, '/usr/bin/python3',
                       f'{self.root}/integrations/check.py')
        else:
            shell.die(f"unknown stage '{s}' (one of: "
                      f"{' '.join(QUICK_STAGES + FULL_STAGES)})")

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

    def custom(self) -> None:
        """A mainline tree other than the default base's, where there is
        one, as KERNEL_SRC=."""
        saved = os.environ.get('BASE')
        if '7.2' in self.bases:
            os.environ['BASE'] = '7.2'
        try:
            self.call(lib.perf_aux('deps', f'base-{self.base}'),
                      stdout=subprocess.DEVNULL)
            self.timed(f'KERNEL_SRC=src/{self.base} (hook-ups from its '
                       'version)', stages.custom_tree, self)
        finally:
            if saved is None:
                os.environ.pop('BASE', None)
            else:
                os.environ['BASE'] = saved

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


class PeersDefault:
    """PERF_AUX_PEERS=${PERF_AUX_PEERS:-1} for the length of a stage."""

    def __enter__(self) -> None:
        self.saved = os.environ.get('PERF_AUX_PEERS')
        if not self.saved:
            os.environ['PERF_AUX_PEERS'] = '1'

    def __exit__(self, *exc) -> None:
        if self.saved is None:
            os.environ.pop('PERF_AUX_PEERS', None)
        else:
            os.environ['PERF_AUX_PEERS'] = self.saved


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
    # A whole tier starts from nothing; named stages keep earlier results.
    if not named:
        shutil.rmtree(f'{c.out}/results', ignore_errors=True)
        shutil.rmtree(f'{c.out}/mutants', ignore_errors=True)
    if c.full:
        chosen = named or list(FULL_STAGES)
        bases = (os.environ.get('BASE') or ' '.join(c.bases)).split()
        for b in bases:
            lib.check_base(b)
    else:
        chosen = named or list(QUICK_STAGES)
        bases = [c.default_base]
    once = [s for s in chosen if s in ONCE_STAGES]
    per_base = [s for s in chosen if s not in ONCE_STAGES]
    besides = []
    if not c.full and 'mutants' in per_base:
        besides = [s for s in once if s in BESIDE_STAGES]

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
        for s in per_base:
            if c.full and not named and b != c.default_base and \
                    s in DEFAULT_BASE_STAGES:
                print(f'{s}: on {c.default_base} only (the same on every base)')
                continue
            if s == 'mutants' and besides:
                c.beside_start(besides)
            c.run_stage(s)
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
    name = 'check-full' if c.full else 'check'
    print(f'measurements: {c.out}/measurements/{name}.md')
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
    c = Check(full)
    name = 'check-full' if full else 'check'
    os.makedirs(f'{c.out}/logs', exist_ok=True)
    log = f'{c.out}/logs/{name}.log'
    rc = teed(log, lambda: tier(c, named))
    # main's closing lines name the page too.
    stages_arg = ' '.join(args)
    if stages_arg.startswith('--full'):
        stages_arg = stages_arg[len('--full'):]
    if c.call(lib.perf_aux('results', 'measurements', log, '--tier', name,
                           '--stages', stages_arg, '--out',
                           f'{c.out}/measurements/{name}.md')):
        print(f'perf_aux: warning: no {c.out}/measurements/{name}.md',
              file=sys.stderr)
    return rc


if __name__ == '__main__':
    sys.exit(main())
