# SPDX-License-Identifier: GPL-2.0
"""The stages that judge the reference and stock kernels (perf_aux.check
runs them): each makes runs and turns their results into check lines, the
reference judged by its committed expected results or by floors, the stock
kernel by what a kernel without large vmap must give."""

import os
import re
import shutil
from pathlib import Path
from typing import List, Optional, Sequence

from perf_aux_results.expected import cases as expected_cases

from . import lib
from .mutants import killer_tests
from .run import expectation
from .verdict import Verdicts, grep, name, say_tail

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
REFERENCE_VARIANTS = ('default', 'strict', 'nohugevmalloc', 'hugetlb', 'smp')
# The programs a boot-parameter variant can change (KUnit whole beside).
VARIANT_TESTS = {
    'strict': ('pagesize_test',),
    'nohugevmalloc': ('map_test', 'pagesize_test', 'fragment_test'),
    'smp': ('smp_test', 'teardown_test'),
}
STRICT_TESTS = killer_tests(VARIANT_TESTS['strict'])
# They skip, for the one reason, without PERF_AUX_DESTRUCTIVE=1.
DESTRUCTIVE_TESTS = ('fault_test', 'fragment_test', 'soak_test')
STOCK_SKIP = 'vmap() maps base pages only'
PRIVILEGE_TESTS = ('map_test', 'mmap_test', 'pagesize_test', 'integrity_test',
                   'wrap_test', 'hw_trace_test', 'aux_contract_test')
# The sysctls the fixtures change, back after the setups failed on purpose.
SYSCTLS = ('kernel/kptr_restrict', 'kernel/perf_event_mlock_kb',
           'vm/compact_unevictable_allowed', 'vm/extfrag_threshold',
           'vm/compaction_proactiveness', 'vm/watermark_boost_factor')
TIME_LINE = re.compile(r'^PERF_AUX: time (perf_aux:[a-z_]*) ([0-9]*) s')
CHECK_LINE = re.compile(r'^(not )?ok - ')
# What the custom tree is judged by: the suites the hook-ups build.
CUSTOM_TESTS = killer_tests(('map_test', 'pagesize_test'))
# The QEMU jobs lava-run runs, each compared with the direct run.
LAVA_TARGETS = ('arm64-4k', 'arm64-16k')


def expected_file(c: Verdicts, target: str, variant: str) -> str:
    suffix = '' if variant == 'default' else f'-{variant}'
    return f'{c.root}/scripts/expected/{c.base}/{target}{suffix}.txt'


def expected_results(c: Verdicts, res: str,
                     suites: Sequence[str] = ()) -> None:
    """RES case by case as its expected results say, one check."""
    ok, lines = c.expected(res, suites)
    for line in lines[1:]:
        print(line)
    c.verdict(0 if ok else 1, lines[0])


def floors(c: Verdicts, target: str, variant: str,
           suites: Sequence[str] = ()) -> bool:
    """Whether the run has no expected results (a skip says so)."""
    if os.path.isfile(expected_file(c, target, variant)):
        expected_results(c, c.res, suites)
        return False
    c.skip(f'ok - {name(c.res)}: no expected results committed, judged '
           'by floors # SKIP')
    return True


def reference_run(c: Verdicts, target: str, variant: str) -> None:
    """The reference kernel passes every suite, on every target."""
    c.run_job('reference', target, variant)
    if variant == 'default' and target == 'arm64-4k':
        within_timeout(c, c.res)
    if not floors(c, target, variant):
        return
    if variant == 'default':
        c.expect(c.res, 'perf_aux_alloc', min_passed=30)
    c.expect(c.res, 'vmap_granule', min_passed=25)
    c.expect(c.res, 'perf_aux.map_test', min_passed=20)
    c.expect(c.res, 'perf_aux.mmap_test', min_passed=20)
    # At 64K a PMD is 512 MiB: most pagesize buffers do not fit.
    c.expect(c.res, 'perf_aux.pagesize_test',
             min_passed=2 if target == 'arm64-64k' else 5)
    trace_expectations(c, target, variant)


def trace_expectations(c: Verdicts, target: str, variant: str) -> None:
    """Trace written through the AUX mapping arrives intact on every
    kernel; SPE and TRBE are not there to test."""
    big = target == 'arm64-64k'
    c.expect(c.res, 'perf_aux.integrity_test', min_passed=6 if big else 8)
    c.expect(c.res, 'perf_aux.wrap_test', min_passed=4)
    c.expect(c.res, 'perf_aux.aux_contract_test', min_passed=4)
    c.expect(c.res, 'perf_aux.hw_trace_test', min_skipped=2)
    c.expect(c.res, 'perf_aux.teardown_test', min_passed=7)
    # Trace on every CPU at once needs four CPUs; fault injection is the
    # sanitize configuration's.
    c.expect(c.res, 'perf_aux.smp_test',
             min_passed=4 if lib.variant_cpus(variant) >= 4 else 0)
    c.expect(c.res, 'perf_aux.fault_test',
             min_passed=4 if variant == 'sanitize' else 0)
    # At 64K the fill may leave no mix of chunks for two trace cases.
    c.expect(c.res, 'perf_aux.fragment_test', min_passed=3 if big else 4)
    c.expect(c.res, 'perf_aux.soak_test', min_passed=1)


def reference_variants(c: Verdicts) -> None:
    """The arm64-4k variants; a boot-parameter one runs the suites it
    can change."""
    for variant in REFERENCE_VARIANTS:
        if variant not in VARIANT_TESTS:
            reference_run(c, 'arm64-4k', variant)
            continue
        programs = VARIANT_TESTS[variant]
        c.run_job('reference', 'arm64-4k', variant, killer_tests(programs))
        suites = ('perf_aux_alloc', 'vmap_granule',
                  *(f'perf_aux.{t}' for t in programs))
        if floors(c, 'arm64-4k', variant, suites):
            for suite in suites:
                c.expect(c.res, suite)


def default_run(c: Verdicts) -> str:
    """The reference's default run on arm64-4k, made if missing."""
    default = f"{c.out}/results/" \
        f"{c.result_name('reference', 'arm64-4k', 'default')}"
    if not os.path.isdir(default):
        c.run_job('reference', 'arm64-4k', 'default')
    return default


def reference_quick(c: Verdicts) -> None:
    """make check: the reference kernel on the default and strict boots."""
    reference_run(c, 'arm64-4k', 'default')
    c.run_job('reference', 'arm64-4k', 'strict', STRICT_TESTS)
    if os.path.isfile(expected_file(c, 'arm64-4k', 'strict')):
        expected_results(c, c.res, ('perf_aux_alloc', 'vmap_granule',
                                    'perf_aux.pagesize_test'))
        return
    c.expect(c.res, 'perf_aux_alloc', min_passed=30)
    c.expect(c.res, 'vmap_granule', min_passed=25)
    c.expect(c.res, 'perf_aux.pagesize_test', min_passed=5)


def sanitize_run(c: Verdicts) -> None:
    """The whole suite under KASAN, lockdep, DEBUG_VM and kmemleak passes,
    nothing reported; test_aux_pmu a module the kselftests loaded, every
    case as on the default boot but for smp_test's and fault_test's."""
    run = c.result_name('reference', 'arm64-4k', 'sanitize')
    reference_run(c, 'arm64-4k', 'sanitize')
    log = f'{c.out}/logs/{run}-kselftest.log'
    clean = bool(grep(r'.*(PERF_AUX: kmemleak: 0 unreferenced objects)', log))
    c.verdict(0 if clean else 1, f'{run}: kmemleak scanned, 0 unreferenced '
              'objects')
    mod = f'{c.out}/results/{run}'
    default = default_run(c)
    n = len(grep(r'.*(test_aux_pmu: module loaded)', log))
    c.verdict(0 if n >= 4 else 1, f'{name(mod)}: the kselftests loaded '
              f'test_aux_pmu themselves ({n} programs)')
    rc, out = c.results('flakes', mod, default, '--except',
                        'perf_aux.smp_test', '--except', 'perf_aux.fault_test')
    say_tail(out, 3)
    c.verdict(rc, f"{name(mod)}: the results of {name(default)} case by "
              "case, but smp_test's and fault_test's")


def lava_runs(c: Verdicts) -> int:
    """The LAVA jobs through lava-run give the direct runs' results."""
    for target in LAVA_TARGETS:
        run = c.result_name('reference', target, 'default')
        if not os.path.isdir(f'{c.out}/results/{run}'):
            c.run_job('reference', target, 'default')
    return c.line_checks('env', f'PYTHONPATH={c.root}/scripts', 'python3',
                         '-m', 'perf_aux_lava', 'check')


def testdefs_run(c: Verdicts) -> None:
    """The kselftests as KernelCI and LKFT run them (test-definitions'
    kselftest.sh on a Debian root filesystem) give the direct run's
    results case by case."""
    directory = f'{c.cache}/testdefs'
    run = c.result_name('reference', 'arm64-4k', 'default')
    res = f'{c.out}/results/{run}'
    log = f'{c.out}/logs/testdefs-{run}.log'
    shutil.rmtree(directory, ignore_errors=True)
    rc, out = c.capture(['python3', f'{c.root}/integrations/check.py',
                         '--export', 'test-definitions', directory,
                         'automated/linux/kselftest', 'automated/lib'])
    if rc == 3:
        c.skip(f'ok - test-definitions kselftest.sh on Debian # SKIP {out}')
        return
    if rc:
        c.verdict(1, f'test-definitions exported: {out}')
        return
    if c.call(lib.perf_aux('deps', 'testdefs')):
        c.verdict(1, 'perf_aux deps testdefs')
        return
    default_run(c)
    # The direct run's environment, as KernelCI's ENV passes it.
    c.call(lib.perf_aux('kselftest', 'reference', 'arm64-4k', 'default', log,
                        'perf_aux.env=PERF_AUX_DESTRUCTIVE=1'),
           env={'KSELFTEST_ROOTFS': f'{c.cache}/rootfs/trixie-arm64',
                'TESTDEFS_DIR': directory})
    rc, out = c.results('testdefs', log, res,
                        f'{c.out}/logs/{run}-kselftest.log', stderr=True)
    lines = out.split('\n')
    for line in lines:
        if not CHECK_LINE.match(line):
            print(line)
    # A comparison that crashed printed no check line: that fails too.
    checks = [line for line in lines if CHECK_LINE.match(line)]
    line = checks[0] if checks else \
        f'not ok - test-definitions results compared: exit {rc}'
    c.verdict(rc, line.split('ok - ', 1)[1])


def series_mbox_run(c: Verdicts) -> None:
    """SERIES= the base's reference patches as one mbox gives the
    reference kernel's results case by case."""
    mbox = f'{c.out}/series-input/reference-{c.base}.mbox'
    os.makedirs(os.path.dirname(mbox), exist_ok=True)
    reference = Path(lib.base_patches(c.base), 'reference')
    Path(mbox).write_bytes(b''.join(
        Path(p).read_bytes() for p in lib.collated(
            str(p) for p in reference.glob('*.patch'))))
    series = c.job('reference', 'arm64-4k', 'default', series=mbox).results
    ref = default_run(c)
    source = Path(series, 'source.txt').read_text().rstrip('\n') \
        if os.path.isfile(f'{series}/source.txt') else ''
    c.verdict(0 if '+ series ' in source else 1,
              f'{name(series)}: built from the series: {source}')
    rc, out = c.results('flakes', series, ref)
    say_tail(out, 3)
    c.verdict(rc, f'{name(series)}: the same results as {name(ref)}, '
              'case by case')


def case_count(c: Verdicts, res: str, suite: str, what: str) -> int:
    """The suite's cases counted in WHAT ("passed|skipped")."""
    _, line = expectation(res, suite)
    return sum(int(m.group(1)) for m in
               re.finditer(rf'([0-9]+) (?:{what})', line))


def privilege_runs(c: Verdicts) -> None:
    """Run unprivileged every case passes or skips; with the setups that
    change a sysctl failed on purpose, every sysctl is back; a farm's
    plain run."""
    default = default_run(c)
    c.run_job('reference', 'arm64-4k', 'nonroot')
    for t in PRIVILEGE_TESTS:
        c.expect(c.res, f'perf_aux.{t}')
        ran = case_count(c, c.res, f'perf_aux.{t}', 'passed|skipped')
        everything = case_count(c, default, f'perf_aux.{t}',
                                'passed|failed|skipped')
        c.verdict(0 if ran >= everything and everything > 1 else 1,
                  f"{name(c.res)}: perf_aux.{t}: {ran} of the default "
                  f"boot's {everything} cases passed or skipped")
    c.run_job('reference', 'arm64-4k', 'fail_setup')
    # The forced failures must have happened, or nothing was shown.
    for t in ('pagesize_test', 'mmap_test', 'fragment_test'):
        c.expect(c.res, f'perf_aux.{t}', failure=True)
    log = f'{c.out}/logs/{name(c.res)}-kselftest.log'
    for s in SYSCTLS:
        before, after = ('\n'.join(grep(rf'.*PERF_AUX: sysctl {re.escape(s)} '
                                        rf'{when}: ([0-9]*)', log))
                         for when in ('before', 'after'))
        c.verdict(0 if before and before == after else 1,
                  f'{name(c.res)}: {s} {before or "?"} before the forced '
                  f'setup failures, {after or "?"} after')
    plain_run(c, 'reference')


def kunitpy_runs(c: Verdicts) -> None:
    """kunit --series, its lines and its verdict."""
    rc = c.call(lib.perf_aux('deps', 'kunitpy')) or \
        c.call(lib.perf_aux('kunit', '--series'))
    c.verdict(rc, 'kunit.py in the series tree: each kunitconfig on x86_64, '
              'arm64, riscv, powerpc, s390, i386, arm and UML, the granule '
              'suite with the reference large vmap on x86_64, arm64, riscv '
              "and powerpc, UML with every test option, KernelCI's "
              'kunit-x86_64')


def within_timeout(c: Verdicts, res: str) -> None:
    """Each kselftest program's time within the directory's settings'
    timeout, which a farm's runner applies."""
    limit = '\n'.join(grep(r'^timeout=(.*)', f'{c.root}/tools/testing/'
                           'selftests/perf_aux/settings'))
    n = most = rc = 0
    longest = ''
    for line in grep(r'(.*)', f'{c.out}/logs/{name(res)}-kselftest.log'):
        m = TIME_LINE.match(line)
        if not m:
            continue
        test, secs = m.group(1), int(m.group(2) or 0)
        n += 1
        if secs > most:
            most, longest = secs, test
        if secs > int(limit or 45):
            rc = 1
            print(f'# {test}: {secs} s')
    c.verdict(rc if n else 1, f"{name(res)}: {n} kselftest programs each "
              f"within settings' timeout={limit or '?'} s (longest "
              f'{longest or "none"}, {most} s)')


def plain_run(c: Verdicts, kernel: str) -> None:
    """A farm's plain run: every case of the destructive programs skips
    with the one reason, none passes, no program fails."""
    c.run_job(kernel, 'arm64-4k', 'plain')
    reason = '\n'.join(grep(r'^#define NOT_DESTRUCTIVE "(.*)"$', f'{c.root}/'
                            'tools/testing/selftests/perf_aux/aux_common.h'))
    for t in DESTRUCTIVE_TESTS:
        c.expect(c.res, f'perf_aux.{t}', min_skipped=1, skip_reason=reason)
        c.verdict(0 if case_count(c, c.res, f'perf_aux.{t}', 'passed') == 0
                  else 1, f'{name(c.res)}: perf_aux.{t}: no case ran')
    for ktap in lib.collated(str(p) for p in
                             Path(c.res).glob('perf_aux.*.ktap')):
        t = os.path.basename(ktap)[:-len('.ktap')]
        if t[len('perf_aux.'):] not in DESTRUCTIVE_TESTS:
            c.expect(c.res, t)
    within_timeout(c, c.res)


def reference_targets(c: Verdicts) -> None:
    """The targets but arm64-4k: each a kernel build of its own."""
    for target in c.targets:
        if target != 'arm64-4k':
            reference_run(c, target, 'default')


def stock_expectations(c: Verdicts) -> None:
    """A kernel without large vmap: the AUX allocator and map suites pass,
    the granule suites skip with the one reason."""
    pinned_failures(c, 'perf_aux_alloc', min_passed=30)
    c.expect(c.res, 'perf_aux.map_test', min_passed=20)
    for suite in ('vmap_granule', 'perf_aux.pagesize_test'):
        c.expect(c.res, suite, min_skipped=1, skip_reason=STOCK_SKIP)


def stock_differs(c: Verdicts) -> None:
    """The stock kernel's granule cases are not the reference's."""
    file = expected_file(c, 'arm64-4k', 'default')
    if not os.path.isfile(file):
        return
    _, lines = c.expected(c.res, ['vmap_granule'], file)
    m = re.match(r'.*, ([0-9]*) differ$', lines[0] if lines else '')
    n = m.group(1) if m else ''
    c.verdict(0 if int(n or 0) > 0 else 1,
              f'{name(c.res)}: vmap_granule fails the reference\'s expected '
              f'results ({n} cases differ, as without large vmap they must)')


def pinned_failures(c: Verdicts, suite: str, min_passed: int = 0) -> None:
    """SUITE on the stock kernel: no case fails but the PINNED ones, each
    failed where the base's reference carries its fix."""
    fixes = ' '.join(os.listdir(f'{lib.base_patches(c.base)}/reference'))
    got = expected_cases(c.res, {suite})
    pinned = [(case, fix) for s, case, fix in PINNED if s == suite]
    if not got and not any(fix in fixes for _, fix in pinned):
        return
    allowed = []
    for case, fix in pinned:
        want = 'FAILURE' if fix in fixes else 'SUCCESS'
        status = got.get(f'{suite}.{case}', 'missing')
        c.verdict(0 if status == want else 1,
                  f'{name(c.res)}: {suite}.{case} {status}, '
                  f"{'as without' if want == 'FAILURE' else 'needing no'} "
                  f'{fix}')
        allowed.append(case.rsplit('.', 1)[-1])
    c.expect(c.res, suite, min_passed=min_passed, allow=allowed)


def stock_runs(c: Verdicts, default_args: Optional[List[str]] = None,
               strict_args: Optional[List[str]] = None) -> None:
    """The stock kernel (the AUX allocator change, not large vmap): the
    granule suites skip, or fail when strict."""
    c.run_job('stock', 'arm64-4k', 'default', *(default_args or []))
    stock_expectations(c)
    if not default_args:
        trace_expectations(c, 'arm64-4k', 'default')
    else:
        c.expect(c.res, 'perf_aux.integrity_test', min_passed=8)
        c.expect(c.res, 'perf_aux.wrap_test', min_passed=4)
    stock_differs(c)
    pinned_failures(c, 'perf_aux.mmap_test')
    pinned_failures(c, 'perf_events.mmap_accounting')
    c.run_job('stock', 'arm64-4k', 'strict', *(strict_args or [STRICT_TESTS]))
    c.expect(c.res, 'vmap_granule', failure=True)
    c.expect(c.res, 'perf_aux.pagesize_test', failure=True)
    # The plain boot skips in the suite's own code, the same on every base.
    if not default_args and c.base == c.default_base:
        plain_run(c, 'stock')


def custom_tree(c: Verdicts) -> None:
    """KERNEL_SRC= an unpacked Debian source: hook-ups chosen from its
    version, the stock control of that base with the same outcome."""
    c.job('stock', 'arm64-4k', 'default', CUSTOM_TESTS,
          src=f'{c.cache}/src/{c.base}')
    c.res = f"{c.out}/results/{c.result_name('custom', 'arm64-4k', 'default')}"
    stock_expectations(c)
