# SPDX-License-Identifier: GPL-2.0
"""make check and make check-full: the stage registry and the tiers that
run it; RESUME=1 replays a stage that passed with the same inputs."""

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

from . import lib, mutants, stages
from .verdict import Verdicts, say_tail

BESIDE = '--beside'
# results summary's closing line, not to be taken for the tier's own.
SUITES_LINE = re.compile(r'^[0-9]* passed, ')
STAGE_TIME = 'stage time: '
# What beside_start runs: this module again (a test puts a stand-in here).
BESIDE_COMMAND = [sys.executable, '-m', 'perf_aux', 'check']
# The environment that changes what a stage runs (BASE is the key's).
SELECTORS = ('KERNEL_ARGS', 'KERNEL_SRC', 'SERIES', 'PERF_AUX_PEERS',
             'PERF_AUX_MUTANTS', 'PERF_AUX_LAB_RUNS', 'PERF_AUX_MIRRORS',
             'BOOT_EXTRA_SECONDS', 'KUNITPY_ARCHS', 'KUNITPY_KERNELCI',
             'MODULE_MUTANT_TESTS', 'KSELFTEST_TARGETS')

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
        for line in (line.strip(' \t') for line in out.split('\n')):
            if line.endswith(' ... ok'):
                self.verdict(0, f"host: {line[:-len(' ... ok')]}")
            elif ' ... skipped' in line:
                self.skip(f'ok - host: {line} # SKIP')
            elif line.endswith((' ... FAIL', ' ... ERROR')):
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
        """Stage NAME on this base, its record kept in out/state; with
        RESUME=1 the record's lines where it passed with the same inputs."""
        row = stage_row(name, self.full)
        record = Path(f'{self.out}/state/{self.tier}/{name}-{self.base}.json')
        digest = inputs(self, row.deps, f'{self.tier} {name} {self.base} '
                        f'{self.peers_default}')
        try:
            old = json.loads(record.read_text())
        except (OSError, ValueError):
            old = {}
        if resumed(self.environ) and old.get('inputs') == digest and \
                old.get('passed'):
            print(f"# resumed: {name} on {self.base} (inputs unchanged, "
                  f"passed at {old['ended']})")
            for kind, line in old['checks']:
                self.skip(line) if kind == 'skip' else self.verdict(0, line)
            self.stage_times.append(f"{0:6d} s  {old['title']} (resumed)")
            return
        failed, first, saved = self.failed, len(self.checks), (
            self.base, self.peers)
        try:
            if row.setup:
                row.setup(self)
            title = row.title.format(base=self.base)
            rc = self.timed(title, row.run, self)
        finally:
            self.base, self.peers = saved
        record.parent.mkdir(parents=True, exist_ok=True)
        record.write_text(json.dumps({
            'inputs': digest, 'passed': rc == 0 and self.failed == failed,
            'title': title, 'checks': self.checks[first:],
            'ended': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}))

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
        for line in lib.read(self.beside_log).splitlines():
            line = line.strip(' \t')
            if line.startswith(STAGE_TIME):
                self.stage_times.append(
                    f'{line[len(STAGE_TIME):]} (beside the mutants)')
            else:
                self.count_line(line)
        if rc:
            self.verdict(1, f'the stages beside the mutants ended, exit {rc}')

def resumed(environ: Dict[str, str]) -> bool:
    return environ.get('RESUME', '') not in ('', '0')

def below(top: str) -> List[str]:
    """TOP, or the files below it; none where TOP is ''."""
    if not os.path.isdir(top):
        return [top] if top else []
    return sorted(os.path.join(d, f) for d, _, names in
                  os.walk(top, followlinks=True) for f in names)

def content(file: str) -> bytes:
    try:
        return Path(file).read_bytes()
    except OSError:
        return b'missing'

def inputs(c: Check, pathspecs: Sequence[str], key: str) -> str:
    """The hash of KEY, the SELECTORS, the clone's files of PATHSPECS,
    PERF_AUX_MUTANTS' and SERIES' files and the Debian sources'."""
    clone = lib.text(['git', '-C', c.root, 'ls-files', '-z', '--cached',
                      '--others', '--exclude-standard', '--', *pathspecs],
                     check=True).split('\0')
    files = [(f, f'{c.root}/{f}') for f in sorted(set(clone) - {''})] + [
        (f, f) for f in (*below(c.environ.get('PERF_AUX_MUTANTS', '')),
                         *below(c.environ.get('SERIES', '')),
                         *(f'{c.cache}/src/{b}/.perf_aux-debian'
                           for b in lib.BASES))]
    h = hashlib.sha256(key.encode())
    for name in SELECTORS:
        h.update(f'\n{name}={c.environ.get(name, "")}'.encode())
    for label, file in files:
        h.update(f'\n{label} '.encode() +
                 hashlib.sha256(content(file)).hexdigest().encode())
    return h.hexdigest()

def with_peers(c: Check) -> None:
    """The peers run where they do by default (PERF_AUX_PEERS unset)."""
    given = c.environ.get('PERF_AUX_PEERS')
    c.peers = given == '1' if given else c.peers_default

def other_base(c: Check) -> None:
    """custom: a mainline base other than the default one, unpacked."""
    c.base = '7.2' if '7.2' in c.bases else c.base
    c.call(lib.perf_aux('deps', f'base-{c.base}'), stdout=lib.DEVNULL)

def lava_deps(c: Check) -> None:
    """integrations: Debian's python, lava_common, PyYAML, Jinja2."""
    if c.call(lib.perf_aux('deps', 'lava'), stdout=lib.DEVNULL):
        c.verdict(1, 'perf_aux deps lava')

class Stage(NamedTuple):
    """A row of the registry: TITLE is its line in the stage table, RUN
    does it (after SETUP); DEPS: the clone's files RESUME=1 compares."""
    name: str
    tiers: str
    scope: str
    title: str
    run: Callable[[Check], Optional[int]]
    beside: bool = False
    deps: Tuple[str, ...] = (':!*.md',)
    setup: Optional[Callable[[Check], None]] = None

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
    Stage('stock', 'quick', EACH, '{base} stock kernel',
          lambda c: stages.stock_runs(c, quick=True)),
    Stage('stock', 'full', EACH, '{base} stock kernel', stages.stock_runs),
    Stage('sanitize', 'full', EACH, '{base} sanitizers', stages.sanitize_run),
    Stage('peers', 'full', DEFAULT, '{base} peers on the unmutated kernel',
          mutants.peer_baseline, setup=with_peers),
    Stage('mutants', 'quick', EACH, '{base} one mutant of each family',
          mutants.quick_mutants),
    Stage('aux_mutants', 'full', EACH, '{base} AUX allocator mutants',
          lambda c: mutants.run_mutants(c, f'{c.catalogue}/aux_alloc',
                                        'perf_aux_alloc', 'default', []),
          setup=with_peers),
    Stage('vmap_mutants', 'full', EACH, '{base} vmap granule mutants',
          lambda c: mutants.run_mutants(c, f'{c.catalogue}/vmap_granule',
                                        'vmap_granule', 'strict', []),
          setup=with_peers),
    Stage('module_mutants', 'full', EACH, '{base} synthetic AUX PMU mutants',
          lambda c: mutants.run_module_mutants(
              c, f'{c.catalogue}/test_aux_pmu', []), setup=with_peers),
    # The perf core's side of the consumer contract.
    Stage('perf_core_mutants', 'full', DEFAULT, '{base} perf core mutants',
          lambda c: mutants.run_module_mutants(
              c, f'{c.catalogue}/perf_core', []), setup=with_peers),
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
          'version)', stages.custom_tree, setup=other_base),
    Stage('lava', 'full', ONCE, 'LAVA jobs, lava-run', stages.lava_runs),
    Stage('lava_lab', 'full', ONCE, 'LAVA lab, server and worker',
          stages.lab_selftest),
    Stage('lava_schema', 'quick', ONCE, 'LAVA jobs, schemas', lambda c: c.
          line_checks(*stages.perf_aux_lava(c, 'check', '--schema')),
          beside=True, deps=('lava-jobs', 'scripts', ':!*.md')),
    # A missing upstream mirror is a skipped check.
    Stage('integrations', 'full', ONCE, 'integrations/, KernelCI and '
          'tuxlava patches', lambda c: c.line_checks(
              '/usr/bin/python3', f'{c.root}/integrations/check.py'),
          setup=lava_deps),
    Stage('testdefs', 'full', ONCE, '{base} kselftests through '
          'test-definitions on Debian', stages.testdefs_run),
)

def tier_rows(full: bool) -> List[Stage]:
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
    """The tier's stages (or the NAMED ones) base by base, closing lines."""
    start = int(time.time())
    c.check_id = f'{os.getpid()}.{start}'
    os.makedirs(f'{c.out}/logs', exist_ok=True)
    # A whole tier starts from nothing; named stages and RESUME=1 keep.
    if not named and not resumed(c.environ):
        for kept in ('results', 'mutants', 'state'):
            shutil.rmtree(f'{c.out}/{kept}', ignore_errors=True)
    rows = [stage_row(s, c.full) for s in named] or tier_rows(c.full)
    bases = [c.default_base]
    if c.full:
        bases = [lib.check_base(b) for b in
                 (c.environ.get('BASE') or ' '.join(c.bases)).split()]
    once = [r.name for r in rows if r.scope == ONCE]
    per_base = [r for r in rows if r.scope != ONCE]
    besides = [r.name for r in rows if r.scope == ONCE and r.beside] \
        if not c.full and 'mutants' in (r.name for r in per_base) else []
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
        runs = [f'{c.out}/results/{k}-{b}-arm64-4k'
                for k in ('stock', 'reference')]
        if all(map(os.path.isdir, runs)):
            c.results_shown('bench', *runs)
    runs = lib.collated(str(p) + '/' for p in Path(c.out, 'results').glob('*/')
                        if p.is_dir()) or [f'{c.out}/results/*/']
    _, out = c.capture(lib.perf_aux('results', 'summary', *runs, '--report',
                                    f'{c.out}/report.md'))
    for line in out.split('\n') if out else []:
        print(f'suites: {line}' if SUITES_LINE.match(line) else line)
    print('\n'.join([f'measurements: {c.out}/measurements/{c.tier}.md',
                     'stage times:', *c.stage_times,
                     f'{int(time.time()) - start:6d} s  in all',
                     *(f'failed: {what}' for what in c.failures),
                     f'{c.passed} passed, {c.failed} failed, '
                     f'{c.skipped} skipped']))
    return 1 if c.failed else 0

def teed(log: str, func: Callable[[], int]) -> int:
    """FUNC with everything it and its programs print also in LOG."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with subprocess.Popen(['tee', log], stdin=subprocess.PIPE) as tee:
        os.dup2(tee.stdin.fileno(), 1)
        os.dup2(tee.stdin.fileno(), 2)
        try:
            return func()
        except lib.Error as e:
            return e.status
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)

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
    if c.call(lib.perf_aux('results', 'measurements', log, '--tier', c.tier,
                           '--stages', ' '.join(named), '--out', page)):
        print(f'perf_aux: warning: no {page}', file=sys.stderr)
    return rc
