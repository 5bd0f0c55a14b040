# SPDX-License-Identifier: GPL-2.0
"""make check and make check-full: the stages, their registry, the tiers."""

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Callable, List, NamedTuple, Optional, Sequence, Tuple

from perf_aux_results import expected
from perf_aux_results.ktap import name

from . import lib, mutants
from .mutants import killer_tests
from .run import expectation
from .verdict import Verdicts, say_tail

BESIDE = '--beside'
STAGE_TIME = 'stage time: '
# What beside_start runs: this module again (a test puts a stand-in here).
BESIDE_COMMAND = [sys.executable, '-m', 'perf_aux', 'check']
# The environment that changes what a stage runs (BASE is the key's).
SELECTORS = ('KERNEL_ARGS', 'KERNEL_SRC', 'SERIES', 'PERF_AUX_PEERS',
             'PERF_AUX_MUTANTS', 'PERF_AUX_LAB_RUNS', 'PERF_AUX_MIRRORS',
             'MODULE_MUTANT_TESTS', 'KSELFTEST_TARGETS')

# make check's stock boot: the kselftests whose outcome large vmap changes.
STOCK_QUICK_TESTS = ('perf_aux.tests=perf_aux:map_test,perf_aux:pagesize_test,'
                     'perf_aux:integrity_test,perf_aux:wrap_test,'
                     'perf_aux:aux_contract_test,perf_aux:mmap_test,'
                     'perf_events:mmap_accounting')
# The cases that pin a fix of the reference kernels, by the fix's patch
# name: on a stock kernel of a base whose reference has it they fail.
CHARGE_FIX = 'perf-core-charge-a-mapped-buffer-s-pages-once'
PINNED = (('perf_aux_alloc', 'aux_alloc_first_page_fails_test',
           'perf-aux-free-the-AUX-page-array'),
          ('perf_aux_alloc', 'aux_mmap_to_page_bounds_test',
           'perf-core-resolve-no-AUX-page-past-the-AUX-area'),
          ('perf_aux.mmap_test',
           'global.aux_area_mapped_again_charged_once', CHARGE_FIX),
          ('perf_events.mmap_accounting',
           'global.data_area_mapped_again_charged_once', CHARGE_FIX))
# The programs a boot-parameter variant can change (KUnit whole beside).
VARIANT_TESTS = {
    'strict': ('pagesize_test',),
    'nohugevmalloc': ('map_test', 'pagesize_test', 'fragment_test'),
    'smp': ('smp_test', 'teardown_test'),
}
# They skip, for the one reason, without PERF_AUX_DESTRUCTIVE=1.
DESTRUCTIVE_TESTS = ('fault_test', 'fragment_test', 'soak_test')
PRIVILEGE_TESTS = ('map_test', 'mmap_test', 'pagesize_test', 'integrity_test',
                   'wrap_test', 'hw_trace_test', 'aux_contract_test')
# The sysctls the fixtures change, back after the setups failed on purpose.
SYSCTLS = ('kernel/kptr_restrict', 'kernel/perf_event_mlock_kb',
           'vm/compact_unevictable_allowed', 'vm/extfrag_threshold',
           'vm/compaction_proactiveness', 'vm/watermark_boost_factor')

class Check(Verdicts):
    """A tier: its verdicts, its stages and those run beside the mutants."""
    beside: Optional[Future] = None

    def host_tests(self) -> None:
        """The host tests of the glue, a check line per test."""
        # A ResourceWarning would split a verdict line.
        _, out = self.capture(['python3', '-W', 'ignore::ResourceWarning',
                               '-m', 'unittest', 'discover', '-s',
                               'tests', '-p', 'test_*.py', '-v'],
                              stderr=True, cwd=f'{self.root}/scripts')
        say_tail(out, 3)
        first = len(self.checks)
        for line in (line.strip(' \t') for line in out.split('\n')):
            if line.endswith(' ... ok'):
                self.verdict(0, f"host: {line[:-len(' ... ok')]}")
            elif ' ... skipped' in line:
                self.skip(f'ok - host: {line} # SKIP')
            elif line.endswith((' ... FAIL', ' ... ERROR')):
                self.verdict(1, f'host: {line}')
        seen = len(self.checks) - first
        # A test that printed between its name and its verdict is counted.
        ran = re.search(r'(?m)^Ran ([0-9]+) tests? in ', out)
        if not ran or int(ran.group(1)) != seen:
            self.verdict(1, f"host: {ran.group(1) if ran else 'no'} tests "
                         f'ran, {seen} gave a verdict line')

    def run_stage(self, name: str) -> None:
        """Stage NAME on this base, or (RESUME=1) its record's lines."""
        row = stage_row(name, self.full)
        record = Path(f'{self.out}/state/{self.tier}/{name}-{self.base}.json')
        digest = inputs(self, row.deps, f'{self.tier} {name} {self.base} {self.peers_default}')
        try:
            old = json.loads(record.read_text())
        except (OSError, ValueError):
            old = {}
        if lib.resumed(self.environ) and old.get('inputs') == digest and old.get('passed'):
            print(f"# resumed: {name} on {self.base} (inputs unchanged, "
                  f"passed at {old['ended']})")
            for kind, line in old['checks']:
                self.skip(line) if kind == 'skip' else self.verdict(0, line)
            self.stage_times.append(f"{0:6d} s  {old['title']} (resumed)")
            return
        first, saved = len(self.checks), (self.base, self.peers)
        try:
            if row.setup:
                row.setup(self)
            title = row.title.format(base=self.base)
            rc = self.timed(title, row.run, self)
        finally:
            self.base, self.peers = saved
        record.parent.mkdir(parents=True, exist_ok=True)
        record.write_text(json.dumps({
            'inputs': digest, 'passed': rc == 0 and 'fail' not in (
                kind for kind, _ in self.checks[first:]),
            'title': title, 'checks': self.checks[first:],
            'ended': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}))

    def beside_start(self, names: Sequence[str]) -> None:
        """The stages NAMES in a process of their own, in the background."""
        self.beside = ThreadPoolExecutor(1).submit(
            lib.run, [*BESIDE_COMMAND, BESIDE, *['--full'] * self.full,
                      *names], cwd=f'{self.root}/scripts', stdout=lib.PIPE,
            stderr=lib.STDOUT, env={**self.env(),
                                    'PYTHONPATH': f'{self.root}/scripts'})

    def beside_end(self) -> None:
        """Their lines counted as if run here; a death is a failed check."""
        done = self.beside.result()
        for line in done.stdout.splitlines():
            line = line.strip(' \t')
            if line.startswith(STAGE_TIME):
                self.stage_times.append(f'{line[len(STAGE_TIME):]} (beside the mutants)')
            else:
                self.count_line(line)
        if done.returncode:
            self.verdict(1, f'the stages beside the mutants ended, exit {done.returncode}')

def below(top: str) -> List[str]:
    """TOP, or the files below it; none where TOP is ''."""
    if not os.path.isdir(top):
        return [top] if top else []
    return sorted(os.path.join(d, f) for d, _, names in
                  os.walk(top, followlinks=True) for f in names)

def inputs(c: Check, pathspecs: Sequence[str], key: str) -> str:
    """The hash of KEY, the SELECTORS and the files a stage reads."""
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
        h.update(f'\n{label} '.encode() + hashlib.sha256(lib.read(
            file).encode(errors='surrogateescape')).hexdigest().encode())
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

# The stages' functions; docs/check-full.md says what each proves.

def floors(c: Check, suites: Sequence[str] = ()) -> bool:
    """The run against its expected results; True: none, judge by floors."""
    path = expected.path_for(c.res)
    if not os.path.isfile(path):
        c.skip(f'ok - {name(c.res)}: no expected results committed, judged '
               'by floors # SKIP')
        return True
    ok, lines = expected.check_line(c.res, path, set(suites) or None)
    for line in lines[1:]:
        print(line)
    c.verdict(0 if ok else 1, lines[0])
    return False

def at_least(c: Check, *rows: Tuple[str, int]) -> None:
    for suite, least in rows:
        c.expect(c.res, suite, min_passed=least)

def flakes(c: Check, res: str, ref: str, what: str, *args: str) -> None:
    rc, out = c.capture(lib.perf_aux('results', 'flakes', res, ref, *args))
    say_tail(out, 3)
    c.verdict(rc, f'{name(res)}: {what}')

def reference_run(c: Check, target: str, variant: str) -> None:
    c.run_job('reference', target, variant)
    if variant == 'default' and target == 'arm64-4k':
        within_timeout(c, c.res)
    if not floors(c):
        return
    at_least(c, *[('perf_aux_alloc', 30)] * (variant == 'default'),
             ('vmap_granule', 25), ('perf_aux.map_test', 20),
             ('perf_aux.mmap_test', 20),
             # At 64K a PMD is 512 MiB: most pagesize buffers do not fit.
             ('perf_aux.pagesize_test', 2 if target == 'arm64-64k' else 5))
    trace_expectations(c, target, variant)

def trace_expectations(c: Check, target: str, variant: str) -> None:
    """Trace through the AUX mapping intact; no SPE or TRBE to test."""
    big = target == 'arm64-64k'
    at_least(c, ('perf_aux.integrity_test', 6 if big else 8),
             ('perf_aux.wrap_test', 4), ('perf_aux.aux_contract_test', 4))
    c.expect(c.res, 'perf_aux.hw_trace_test', min_skipped=2)
    # Trace on every CPU at once needs four CPUs; fault injection is the
    # sanitize configuration's.
    at_least(c, ('perf_aux.teardown_test', 7),
             ('perf_aux.smp_test', 4 if lib.variant_cpus(variant) >= 4 else 0),
             ('perf_aux.fault_test', 4 if variant == 'sanitize' else 0),
             # At 64K the fill may leave no mix of chunks for two cases.
             ('perf_aux.fragment_test', 3 if big else 4),
             ('perf_aux.soak_test', 1))

def boot_variant(c: Check, variant: str) -> None:
    """A boot parameter of arm64-4k: KUnit and the programs it changes."""
    programs = VARIANT_TESTS[variant]
    c.run_job('reference', 'arm64-4k', variant, killer_tests(programs))
    suites = ('perf_aux_alloc', 'vmap_granule', *(f'perf_aux.{t}' for t in programs))
    if floors(c, suites):
        for suite in suites:
            c.expect(c.res, suite)

def reference_runs(c: Check, variants: Sequence[str],
                   targets: Sequence[str] = ('arm64-4k',)) -> None:
    """The reference's VARIANTS on TARGETS (a boot parameter's, arm64-4k)."""
    for target in targets:
        for variant in variants:
            if variant in VARIANT_TESTS:
                boot_variant(c, variant)
            else:
                reference_run(c, target, variant)

def default_run(c: Check, target: str = 'arm64-4k') -> str:
    """The reference's default run on TARGET, made if missing."""
    default = f"{c.out}/results/{c.result_name('reference', target, 'default')}"
    if not os.path.isdir(default):
        c.run_job('reference', target, 'default')
    return default

def sanitize_run(c: Check) -> None:
    reference_run(c, 'arm64-4k', 'sanitize')
    res, run = c.res, name(c.res)
    log = lib.read(f'{c.out}/logs/{run}-kselftest.log')
    c.verdict(0 if 'PERF_AUX: kmemleak: 0 unreferenced objects' in log else 1,
              f'{run}: kmemleak scanned, 0 unreferenced objects')
    default = default_run(c)
    n = sum('test_aux_pmu: module loaded' in line for line in log.split('\n'))
    c.verdict(0 if n >= 4 else 1, f'{run}: the kselftests loaded '
              f'test_aux_pmu themselves ({n} programs)')
    flakes(c, res, default, f"the results of {name(default)} case by case, "
           "but smp_test's and fault_test's", '--except', 'perf_aux.smp_test',
           '--except', 'perf_aux.fault_test')

def kcsan_run(c: Check) -> None:
    """The suite, KCSAN in the code under test: no report, the default boot's results."""
    reference_run(c, 'arm64-4k', 'kcsan')
    res, default = c.res, default_run(c)
    build = f"{lib.Run(base=c.base).tree}/{lib.build_dir('arm64-4k', 'kcsan')}"
    perf, timers = (lib.text(['nm', f'{build}/{o}.o'], stderr=lib.DEVNULL).count(' __tsan_')
                    for o in ('kernel/events/ring_buffer', 'kernel/time/hrtimer'))
    c.verdict(0 if perf and not timers else 1, f'{name(res)}: KCSAN instruments '
              f'perf ({perf} __tsan_ calls), not the hrtimer core ({timers})')
    flakes(c, res, default, f"the results of {name(default)} case by case, "
           "but smp_test's (4 CPUs here)", '--except', 'perf_aux.smp_test')

def lava_runs(c: Check) -> int:
    for target in ('arm64-4k', 'arm64-16k'):  # lava-run's QEMU jobs
        default_run(c, target)
    return c.line_checks(*lib.perf_aux('check', module='perf_aux_lava'))

def lab_selftest(c: Check) -> int:
    runs = c.environ.get('PERF_AUX_LAB_RUNS') or c.result_name('reference', 'arm64-4k', 'default')
    return c.line_checks(*lib.perf_aux('lab', 'selftest', 'qemu',
                                       module='perf_aux_lava'),
                         env={'PERF_AUX_LAB_RUNS': runs})

def testdefs_run(c: Check) -> None:
    directory = f'{c.cache}/testdefs'
    run = c.result_name('reference', 'arm64-4k', 'default')
    log = f'{c.out}/logs/testdefs-{run}.log'
    shutil.rmtree(directory, ignore_errors=True)
    rc, out = c.capture(['python3', f'{c.root}/integrations/check.py',
                         '--export', 'test-definitions', directory,
                         'automated/linux/kselftest', 'automated/lib'])
    if rc == 3:
        return c.skip('ok - test-definitions kselftest.sh on Debian # SKIP '
                      f'{out}')
    if rc or c.call(lib.perf_aux('deps', 'testdefs')):
        return c.verdict(1, f'test-definitions exported: {out}' if rc else 'perf_aux deps testdefs')
    default_run(c)
    # The direct run's environment, as KernelCI's ENV passes it.
    c.call(lib.perf_aux('kselftest', 'reference', 'arm64-4k', 'default', log,
                        'perf_aux.env=PERF_AUX_DESTRUCTIVE=1'),
           env={'KSELFTEST_ROOTFS': f'{c.cache}/rootfs/trixie-arm64',
                'TESTDEFS_DIR': directory})
    c.line_checks(*lib.perf_aux('results', 'testdefs', log,
                                f'{c.out}/results/{run}',
                                f'{c.out}/logs/{run}-kselftest.log'))

def series_mbox_run(c: Check) -> None:
    mbox = Path(f'{c.out}/series-input/reference-{c.base}.mbox')
    mbox.parent.mkdir(parents=True, exist_ok=True)
    mbox.write_bytes(b''.join(Path(p).read_bytes() for p in lib.collated(
        str(p) for p in Path(lib.base_patches(c.base), 'reference').glob(
            '*.patch'))))
    series = c.job('reference', 'arm64-4k', 'default', series=str(mbox)).results
    ref = default_run(c)
    source = lib.read(f'{series}/source.txt').rstrip('\n')
    c.verdict(0 if '+ series ' in source else 1, f'{name(series)}: built from the series: {source}')
    flakes(c, series, ref, f'the same results as {name(ref)}, case by case')

def case_count(res: str, suite: str, what: str) -> int:
    _, line = expectation(res, suite)
    return sum(int(m.group(1)) for m in re.finditer(rf'([0-9]+) (?:{what})', line))

def privilege_runs(c: Check) -> None:
    default = default_run(c)
    c.run_job('reference', 'arm64-4k', 'nonroot')
    for t in PRIVILEGE_TESTS:
        c.expect(c.res, f'perf_aux.{t}')
        ran = case_count(c.res, f'perf_aux.{t}', 'passed|skipped')
        every = case_count(default, f'perf_aux.{t}', 'passed|failed|skipped')
        c.verdict(0 if ran >= every and every > 1 else 1,
                  f"{name(c.res)}: perf_aux.{t}: {ran} of the default "
                  f"boot's {every} cases passed or skipped")
    c.run_job('reference', 'arm64-4k', 'fail_setup')
    # The forced failures must have happened, or nothing was shown.
    for t in ('pagesize_test', 'mmap_test', 'fragment_test'):
        c.expect(c.res, f'perf_aux.{t}', failure=True)
    log = lib.read(f'{c.out}/logs/{name(c.res)}-kselftest.log')
    for s in SYSCTLS:
        before, after = ('\n'.join(re.findall(
            rf'(?m).*PERF_AUX: sysctl {re.escape(s)} {when}: ([0-9]*)', log))
            for when in ('before', 'after'))
        c.verdict(0 if before and before == after else 1,
                  f'{name(c.res)}: {s} {before or "?"} before the forced '
                  f'setup failures, {after or "?"} after')
    plain_run(c, 'reference')

def kunitpy_runs(c: Check) -> None:
    rc = c.call(lib.perf_aux('deps', 'kunitpy')) or c.call(lib.perf_aux('kunit', '--series'))
    c.verdict(rc, 'kunit.py in the series tree: each kunitconfig on x86_64, '
              'arm64, riscv, powerpc, s390, i386, arm and UML, the granule '
              'suite with the reference large vmap on x86_64, arm64, riscv '
              "and powerpc, UML with every test option, KernelCI's "
              'kunit-x86_64')

def within_timeout(c: Check, res: str) -> None:
    """Each kselftest program within the settings' timeout (a farm's)."""
    limit = '\n'.join(re.findall(r'(?m)^timeout=(.*)', lib.read(
        f'{c.root}/tools/testing/selftests/perf_aux/settings')))
    times = [(int(secs or 0), test) for test, secs in re.findall(
        r'(?m)^PERF_AUX: time (perf_aux:[a-z_]*) ([0-9]*) s',
        lib.read(f'{c.out}/logs/{name(res)}-kselftest.log'))]
    over = [(secs, test) for secs, test in times if secs > int(limit or 45)]
    for secs, test in over:
        print(f'# {test}: {secs} s')
    most, longest = max(times, key=lambda t: t[0], default=(0, ''))
    c.verdict(1 if over or not times else 0, f"{name(res)}: {len(times)} "
              f"kselftest programs each within settings' timeout="
              f"{limit or '?'} s (longest {longest if most else 'none'}, "
              f'{most} s)')

def plain_run(c: Check, kernel: str) -> None:
    """A farm's plain run: destructive cases skip, no program fails."""
    c.run_job(kernel, 'arm64-4k', 'plain')
    reason = '\n'.join(re.findall(r'(?m)^#define NOT_DESTRUCTIVE "(.*)"$',
                                  lib.read(f'{c.root}/tools/testing/'
                                           'selftests/perf_aux/aux_extended.h')))
    for t in DESTRUCTIVE_TESTS:
        c.expect(c.res, f'perf_aux.{t}', min_skipped=1, skip_reason=reason)
        c.verdict(0 if case_count(c.res, f'perf_aux.{t}', 'passed') == 0
                  else 1, f'{name(c.res)}: perf_aux.{t}: no case ran')
    for ktap in lib.collated(str(p) for p in Path(c.res).glob('perf_aux.*.ktap')):
        t = os.path.basename(ktap)[:-len('.ktap')]
        if t[len('perf_aux.'):] in DESTRUCTIVE_TESTS:
            continue
        if kernel == 'stock' and any(s == t for s, _, _ in PINNED):
            pinned_failures(c, t)  # as on its default boot
        else:
            c.expect(c.res, t)
    within_timeout(c, c.res)

def stock_expectations(c: Check) -> None:
    """Without large vmap the granule suites skip, the others pass."""
    pinned_failures(c, 'perf_aux_alloc', min_passed=30)
    c.expect(c.res, 'perf_aux.map_test', min_passed=20)
    for suite in ('vmap_granule', 'perf_aux.pagesize_test'):
        c.expect(c.res, suite, min_skipped=1, skip_reason='vmap() maps base pages only')

def pinned_failures(c: Check, suite: str, min_passed: int = 0) -> None:
    """No case fails but those PINNED by a fix the base's reference has."""
    fixes = ' '.join(os.listdir(f'{lib.base_patches(c.base)}/reference'))
    got = expected.cases(c.res, {suite})
    pinned = [(case, fix) for s, case, fix in PINNED if s == suite]
    if not got and not any(fix in fixes for _, fix in pinned):
        return
    for case, fix in pinned:
        want = 'FAILURE' if fix in fixes else 'SUCCESS'
        status = got.get(f'{suite}.{case}', 'missing')
        c.verdict(0 if status == want else 1,
                  f'{name(c.res)}: {suite}.{case} {status}, '
                  f"{'as without' if want == 'FAILURE' else 'needing no'} "
                  f'{fix}')
    c.expect(c.res, suite, min_passed=min_passed, allowed_failures=[
        case.rsplit('.', 1)[-1] for case, _ in pinned])

def stock_runs(c: Check, quick: bool = False) -> None:
    c.run_job('stock', 'arm64-4k', 'default', *([STOCK_QUICK_TESTS] if quick else []))
    stock_expectations(c)
    if quick:
        at_least(c, ('perf_aux.integrity_test', 8), ('perf_aux.wrap_test', 4))
    else:
        trace_expectations(c, 'arm64-4k', 'default')
    # Its granule cases are not the reference's.
    if os.path.isfile(expected.path_for(c.res)):
        _, lines = expected.check_line(c.res, expected.path_for(c.res), {'vmap_granule'})
        n = ''.join(re.findall(r'.*, ([0-9]*) differ$', lines[0]))
        c.verdict(0 if int(n or 0) > 0 else 1, f'{name(c.res)}: vmap_granule '
                  f"fails the reference's expected results ({n} cases "
                  'differ, as without large vmap they must)')
    pinned_failures(c, 'perf_aux.mmap_test')
    pinned_failures(c, 'perf_events.mmap_accounting')
    c.run_job('stock', 'arm64-4k', 'strict', killer_tests(VARIANT_TESTS['strict']))
    c.expect(c.res, 'vmap_granule', failure=True)
    c.expect(c.res, 'perf_aux.pagesize_test', failure=True)
    # The plain boot skips in the suite's own code, the same on every base.
    if not quick and c.base == c.default_base:
        plain_run(c, 'stock')

def custom_tree(c: Check) -> None:
    # Judged by the suites the hook-ups build.
    c.job('stock', 'arm64-4k', 'default', killer_tests((
        'map_test', 'pagesize_test')), src=f'{c.cache}/src/{c.base}')
    c.res = f"{c.out}/results/{c.result_name('custom', 'arm64-4k', 'default')}"
    stock_expectations(c)

# The clone's files a stage reads (git pathspecs): not the pages, nor the
# host tests (the host stage's alone); a kernel stage not the LAVA and
# integration glue either, nor the mutant families but its own.
CLONE = (':!*.md', ':!scripts/tests')
KERNEL = (*CLONE, ':!lava-jobs', ':!integrations', ':!scripts/perf_aux_lava',
          ':!scripts/lava')
FAMILIES = lib.collated(os.listdir(f'{lib.ROOT}/scripts/mutants'))

def family(name: str = '') -> Tuple[str, ...]:
    return (*KERNEL, *(f':!scripts/mutants/{f}' for f in FAMILIES if f != name))

def kunit_only(name: str = '') -> Tuple[str, ...]:
    """A stage that boots none of our kselftests (KUnit, the peers) reads none."""
    return (*family(name), ':!tools/testing/selftests/perf_aux')

class Stage(NamedTuple):
    """TITLE: its stage table line; DEPS: the clone's files it reads."""
    name: str
    tiers: str
    scope: str
    title: str
    run: Callable[[Check], Optional[int]]
    setup: Optional[Callable[[Check], None]] = None
    beside: bool = False
    deps: Tuple[str, ...] = family()

# EACH runs on every base; ONCE on the default base, once; DEFAULT: the
# full tier runs it on the default base only (it proves the same on every
# base).  beside: make check runs it beside the mutant stage, whose boots
# leave a core idle (no kernel build, no boot).
EACH, DEFAULT, ONCE = 'every base', 'default base', 'once'
STAGES = (
    Stage('host', 'quick full', ONCE, 'host tests', Check.host_tests,
          beside=True, deps=()),
    Stage('reference', 'quick', EACH, '{base} reference kernel, default and '
          'strict', lambda c: reference_runs(c, ('default', 'strict'))),
    Stage('reference', 'full', EACH, '{base} reference kernel, arm64-4k '
          'variants', lambda c: reference_runs(
              c, ('default', 'strict', 'nohugevmalloc', 'hugetlb', 'smp'))),
    Stage('stock', 'quick', EACH, '{base} stock kernel',
          lambda c: stock_runs(c, quick=True)),
    Stage('stock', 'full', EACH, '{base} stock kernel', stock_runs),
    Stage('sanitize', 'full', EACH, '{base} sanitizers', sanitize_run),
    Stage('kcsan', 'full', DEFAULT, '{base} KCSAN', kcsan_run),
    Stage('peers', 'full', DEFAULT, '{base} peers on the unmutated kernel',
          mutants.peer_baseline, with_peers, deps=kunit_only()),
    Stage('mutants', 'quick', EACH, '{base} one mutant of each family',
          mutants.quick_mutants, deps=KERNEL),
    Stage('aux_mutants', 'full', EACH, '{base} AUX allocator mutants',
          lambda c: mutants.run_mutants(c, f'{c.catalogue}/aux_alloc',
                                        'perf_aux_alloc', 'default', []),
          with_peers, deps=kunit_only('aux_alloc')),
    Stage('vmap_mutants', 'full', EACH, '{base} vmap granule mutants',
          lambda c: mutants.run_mutants(c, f'{c.catalogue}/vmap_granule',
                                        'vmap_granule', 'strict', []),
          with_peers, deps=kunit_only('vmap_granule')),
    Stage('module_mutants', 'full', EACH, '{base} synthetic AUX PMU mutants',
          lambda c: mutants.run_module_mutants(
              c, f'{c.catalogue}/test_aux_pmu', []), with_peers,
          deps=family('test_aux_pmu')),
    # The perf core's side of the consumer contract.
    Stage('perf_core_mutants', 'full', DEFAULT, '{base} perf core mutants',
          lambda c: mutants.run_module_mutants(
              c, f'{c.catalogue}/perf_core', []), with_peers,
          deps=family('perf_core')),
    Stage('targets', 'full', DEFAULT, '{base} reference kernel, other '
          'targets', lambda c: reference_runs(c, ('default',), c.targets[1:])),
    # It reads the staged stock tree: it starts after the stock stage.
    Stage('series', 'quick', ONCE, '{base} patch series (make series)',
          lambda c: c.line_checks(*lib.perf_aux('series', '--check')),
          beside=True),
    Stage('series', 'full', ONCE, '{base} patch series (make series), a '
          'kernel per prefix', lambda c: c.line_checks(
              *lib.perf_aux('series', '--check', '--kernel-prefixes'))),
    Stage('kunitpy', 'full', ONCE, '{base} kunit.py in the series tree',
          kunitpy_runs, deps=kunit_only()),
    Stage('series_mbox', 'full', ONCE, '{base} SERIES= the reference '
          'patches as an mbox', series_mbox_run),
    Stage('privilege', 'full', ONCE, '{base} reference kernel, unprivileged '
          'and failed setups', privilege_runs),
    Stage('custom', 'full', ONCE, 'KERNEL_SRC=src/{base} (hook-ups from its '
          'version)', custom_tree, other_base),
    Stage('lava', 'full', ONCE, 'LAVA jobs, lava-run', lava_runs, deps=CLONE),
    Stage('lava_lab', 'full', ONCE, 'LAVA lab, server and worker',
          lab_selftest, deps=CLONE),
    Stage('lava_schema', 'quick', ONCE, 'LAVA jobs, schemas', lambda c: c.
          line_checks(*lib.perf_aux('check', '--schema',
                                    module='perf_aux_lava')),
          beside=True, deps=('lava-jobs', 'scripts', *CLONE)),
    # A missing upstream mirror is a skipped check.
    Stage('integrations', 'full', ONCE, 'integrations/, KernelCI and '
          'tuxlava patches', lambda c: c.line_checks(
              '/usr/bin/python3', f'{c.root}/integrations/check.py'),
          lava_deps, deps=CLONE),
    Stage('testdefs', 'full', ONCE, '{base} kselftests through '
          'test-definitions on Debian', testdefs_run, deps=CLONE),
)

def tier_rows(full: bool) -> List[Stage]:
    return [r for r in STAGES if ('full' if full else 'quick') in r.tiers]

def stage_row(name: str, full: bool) -> Stage:
    """NAME's row in the tier, or the other tier's."""
    rows = sorted((r for r in STAGES if r.name == name), key=lambda r: r not in tier_rows(full))
    if not rows:
        lib.die(f"unknown stage '{name}' (one of: "
                f"{' '.join(dict.fromkeys(r.name for r in STAGES))})")
    return rows[0]

def usage() -> str:
    rows = (f"  {r.name:18}{r.tiers:11} {r.scope + ', beside' * r.beside:14}"
            f"{r.title.format(base='BASE')}\n" for r in STAGES)
    return ('usage: python3 -m perf_aux check|check-full [STAGE...]\n\n'
            'stage, tiers, where (beside: the mutants, in make check), '
            'what:\n' + ''.join(rows))

def tier(c: Check, named: List[str]) -> int:
    """The tier's stages (or the NAMED ones) base by base, closing lines."""
    start = int(time.time())
    c.check_id = f'{os.getpid()}.{start}'
    # A whole tier starts from nothing; named stages and RESUME=1 keep.
    if not named and not lib.resumed(c.environ):
        for kept in ('results', 'mutants', 'state'):
            shutil.rmtree(f'{c.out}/{kept}', ignore_errors=True)
    rows = [stage_row(s, c.full) for s in named] or tier_rows(c.full)
    bases = [lib.check('BASE', b, lib.BASES) for b in (c.environ.get('BASE') or ' '.join(
        c.bases)).split()] if c.full else [c.default_base]
    once = [r.name for r in rows if r.scope == ONCE]
    per_base = [r for r in rows if r.scope != ONCE]
    besides = [r.name for r in rows if r.scope == ONCE and r.beside] \
        if not c.full and 'mutants' in (r.name for r in per_base) else []
    if c.timed('install packages', c.call,
               lib.perf_aux('deps', *(c.targets if c.full else ['arm64-4k']),
                            *(f'base-{b}' for b in bases))):
        return 2
    c.base = c.default_base
    if 'host' in once and 'host' not in besides:
        c.run_stage('host')
    # The default base first, then the stages run once, then the others.
    bases.sort(key=lambda b: b != c.default_base)
    for i, b in enumerate(bases):
        c.base = b
        c.peers_default = bool(named) or b == c.default_base
        for r in per_base:
            if c.full and not named and b != c.default_base and r.scope == DEFAULT:
                print(f'{r.name}: on {c.default_base} only (the same on every base)')
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
        runs = [f'{c.out}/results/{k}-{b}-arm64-4k' for k in ('stock', 'reference')]
        if all(map(os.path.isdir, runs)):
            c.results_shown('bench', *runs)
    runs = lib.collated(str(p) + '/' for p in Path(c.out, 'results').glob('*/')
                        if p.is_dir()) or [f'{c.out}/results/*/']
    _, out = c.capture(lib.perf_aux('results', 'summary', *runs, '--report', f'{c.out}/report.md'))
    if out:  # Its closing line, not to be taken for the tier's own.
        print(re.sub(r'(?m)^(?=[0-9]* passed, )', 'suites: ', out))
    passed, failed, skipped = c.counts
    print('\n'.join([f'measurements: {c.out}/measurements/{c.tier}.md',
                     'stage times:', *c.stage_times,
                     f'{int(time.time()) - start:6d} s  in all',
                     *(f'failed: {w}' for k, w in c.checks if k == 'fail'),
                     f'{passed} passed, {failed} failed, {skipped} skipped']))
    return 1 if failed else 0

def teed(log: str, func: Callable[[], int]) -> int:
    """FUNC with everything it and its programs print also in LOG.  tee(1)
    is a session of its own, so a stop of the caller's group leaves it to
    take the last lines and end with its input."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with subprocess.Popen(['tee', log], stdin=subprocess.PIPE, start_new_session=True) as tee:
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
