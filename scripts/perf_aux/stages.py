# SPDX-License-Identifier: GPL-2.0
"""The stages that make runs and judge their results (docs/check-full.md)."""

import os
import re
import shutil
from pathlib import Path
from typing import List, Sequence

from perf_aux_results import expected
from perf_aux_results.runs import name

from . import lib
from .mutants import killer_tests
from .run import expectation
from .verdict import Verdicts, say_tail

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
# What the custom tree is judged by: the suites the hook-ups build.
CUSTOM_TESTS = killer_tests(('map_test', 'pagesize_test'))
# The QEMU jobs lava-run runs, each compared with the direct run.
LAVA_TARGETS = ('arm64-4k', 'arm64-16k')

def grep(pattern: str, path: str) -> List[str]:
    return [m.group(1) for m in map(re.compile(pattern).match,
                                    lib.read(path).split('\n')) if m]

def perf_aux_lava(c: Verdicts, *args: str) -> List[str]:
    return ['env', f'PYTHONPATH={c.root}/scripts', 'python3', '-m',
            'perf_aux_lava', *args]

def floors(c: Verdicts, suites: Sequence[str] = ()) -> bool:
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

def flakes(c: Verdicts, res: str, ref: str, what: str, *args: str) -> None:
    rc, out = c.capture(lib.perf_aux('results', 'flakes', res, ref, *args))
    say_tail(out, 3)
    c.verdict(rc, f'{name(res)}: {what}')

def reference_run(c: Verdicts, target: str, variant: str) -> None:
    """The reference kernel passes every suite, on every target."""
    c.run_job('reference', target, variant)
    if variant == 'default' and target == 'arm64-4k':
        within_timeout(c, c.res)
    if not floors(c):
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
    """Trace through the AUX mapping intact; no SPE or TRBE to test."""
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

def boot_variant(c: Verdicts, variant: str) -> None:
    """A boot parameter of arm64-4k: KUnit and the programs it changes."""
    programs = VARIANT_TESTS[variant]
    c.run_job('reference', 'arm64-4k', variant, killer_tests(programs))
    suites = ('perf_aux_alloc', 'vmap_granule',
              *(f'perf_aux.{t}' for t in programs))
    if floors(c, suites):
        for suite in suites:
            c.expect(c.res, suite)

def reference_variants(c: Verdicts) -> None:
    for variant in REFERENCE_VARIANTS:
        if variant in VARIANT_TESTS:
            boot_variant(c, variant)
        else:
            reference_run(c, 'arm64-4k', variant)

def reference_quick(c: Verdicts) -> None:
    reference_run(c, 'arm64-4k', 'default')
    boot_variant(c, 'strict')

def reference_targets(c: Verdicts) -> None:
    for target in c.targets[1:]:
        reference_run(c, target, 'default')

def default_run(c: Verdicts) -> str:
    """The reference's default run on arm64-4k, made if missing."""
    default = f"{c.out}/results/" \
        f"{c.result_name('reference', 'arm64-4k', 'default')}"
    if not os.path.isdir(default):
        c.run_job('reference', 'arm64-4k', 'default')
    return default

def sanitize_run(c: Verdicts) -> None:
    """Sanitizers and kmemleak quiet, test_aux_pmu a module, as default."""
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

def lava_runs(c: Verdicts) -> int:
    for target in LAVA_TARGETS:
        run = c.result_name('reference', target, 'default')
        if not os.path.isdir(f'{c.out}/results/{run}'):
            c.run_job('reference', target, 'default')
    return c.line_checks(*perf_aux_lava(c, 'check'))

def lab_selftest(c: Verdicts) -> int:
    runs = c.environ.get('PERF_AUX_LAB_RUNS') or \
        c.result_name('reference', 'arm64-4k', 'default')
    return c.line_checks(*perf_aux_lava(c, 'lab', 'selftest', 'qemu'),
                         env={'PERF_AUX_LAB_RUNS': runs})

def testdefs_run(c: Verdicts) -> None:
    """test-definitions' kselftest.sh gives the direct run's results."""
    directory = f'{c.cache}/testdefs'
    run = c.result_name('reference', 'arm64-4k', 'default')
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
    c.line_checks(*lib.perf_aux('results', 'testdefs', log,
                                f'{c.out}/results/{run}',
                                f'{c.out}/logs/{run}-kselftest.log'))

def series_mbox_run(c: Verdicts) -> None:
    """The reference patches as one mbox give the reference's results."""
    mbox = Path(f'{c.out}/series-input/reference-{c.base}.mbox')
    mbox.parent.mkdir(parents=True, exist_ok=True)
    mbox.write_bytes(b''.join(Path(p).read_bytes() for p in lib.collated(
        str(p) for p in Path(lib.base_patches(c.base), 'reference').glob(
            '*.patch'))))
    series = c.job('reference', 'arm64-4k', 'default',
                   series=str(mbox)).results
    ref = default_run(c)
    source = lib.read(f'{series}/source.txt').rstrip('\n')
    c.verdict(0 if '+ series ' in source else 1,
              f'{name(series)}: built from the series: {source}')
    flakes(c, series, ref, f'the same results as {name(ref)}, case by case')

def case_count(res: str, suite: str, what: str) -> int:
    _, line = expectation(res, suite)
    return sum(int(m.group(1)) for m in
               re.finditer(rf'([0-9]+) (?:{what})', line))

def privilege_runs(c: Verdicts) -> None:
    """Unprivileged, failed setups (their sysctls back), a farm's plain run."""
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
    rc = c.call(lib.perf_aux('deps', 'kunitpy')) or \
        c.call(lib.perf_aux('kunit', '--series'))
    c.verdict(rc, 'kunit.py in the series tree: each kunitconfig on x86_64, '
              'arm64, riscv, powerpc, s390, i386, arm and UML, the granule '
              'suite with the reference large vmap on x86_64, arm64, riscv '
              "and powerpc, UML with every test option, KernelCI's "
              'kunit-x86_64')

def within_timeout(c: Verdicts, res: str) -> None:
    """Each kselftest program within the settings' timeout (a farm's)."""
    limit = '\n'.join(grep(r'^timeout=(.*)', f'{c.root}/tools/testing/'
                           'selftests/perf_aux/settings'))
    times = [(int(m.group(2) or 0), m.group(1)) for m in map(
        TIME_LINE.match, lib.read(f'{c.out}/logs/{name(res)}-kselftest.log')
        .split('\n')) if m]
    over = [(secs, test) for secs, test in times if secs > int(limit or 45)]
    for secs, test in over:
        print(f'# {test}: {secs} s')
    most, longest = max(times, key=lambda t: t[0], default=(0, ''))
    c.verdict(1 if over or not times else 0, f"{name(res)}: {len(times)} "
              f"kselftest programs each within settings' timeout="
              f"{limit or '?'} s (longest {longest if most else 'none'}, "
              f'{most} s)')

def plain_run(c: Verdicts, kernel: str) -> None:
    """A farm's plain run: destructive cases skip, no program fails."""
    c.run_job(kernel, 'arm64-4k', 'plain')
    reason = '\n'.join(grep(r'^#define NOT_DESTRUCTIVE "(.*)"$', f'{c.root}/'
                            'tools/testing/selftests/perf_aux/aux_common.h'))
    for t in DESTRUCTIVE_TESTS:
        c.expect(c.res, f'perf_aux.{t}', min_skipped=1, skip_reason=reason)
        c.verdict(0 if case_count(c.res, f'perf_aux.{t}', 'passed') == 0
                  else 1, f'{name(c.res)}: perf_aux.{t}: no case ran')
    for ktap in lib.collated(str(p) for p in
                             Path(c.res).glob('perf_aux.*.ktap')):
        t = os.path.basename(ktap)[:-len('.ktap')]
        if t[len('perf_aux.'):] not in DESTRUCTIVE_TESTS:
            c.expect(c.res, t)
    within_timeout(c, c.res)

def stock_expectations(c: Verdicts) -> None:
    """Without large vmap the granule suites skip, the others pass."""
    pinned_failures(c, 'perf_aux_alloc', min_passed=30)
    c.expect(c.res, 'perf_aux.map_test', min_passed=20)
    for suite in ('vmap_granule', 'perf_aux.pagesize_test'):
        c.expect(c.res, suite, min_skipped=1, skip_reason=STOCK_SKIP)

def pinned_failures(c: Verdicts, suite: str, min_passed: int = 0) -> None:
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

def stock_runs(c: Verdicts, quick: bool = False) -> None:
    """The stock kernel: the granule suites skip, or fail when strict."""
    c.run_job('stock', 'arm64-4k', 'default',
              *([STOCK_QUICK_TESTS] if quick else []))
    stock_expectations(c)
    if quick:
        c.expect(c.res, 'perf_aux.integrity_test', min_passed=8)
        c.expect(c.res, 'perf_aux.wrap_test', min_passed=4)
    else:
        trace_expectations(c, 'arm64-4k', 'default')
    # Its granule cases are not the reference's.
    if os.path.isfile(expected.path_for(c.res)):
        _, lines = expected.check_line(c.res, expected.path_for(c.res),
                                       {'vmap_granule'})
        n = re.match(r'.*, ([0-9]*) differ$', lines[0])
        n = n.group(1) if n else ''
        c.verdict(0 if int(n or 0) > 0 else 1, f'{name(c.res)}: vmap_granule '
                  f"fails the reference's expected results ({n} cases "
                  'differ, as without large vmap they must)')
    pinned_failures(c, 'perf_aux.mmap_test')
    pinned_failures(c, 'perf_events.mmap_accounting')
    c.run_job('stock', 'arm64-4k', 'strict', STRICT_TESTS)
    c.expect(c.res, 'vmap_granule', failure=True)
    c.expect(c.res, 'perf_aux.pagesize_test', failure=True)
    # The plain boot skips in the suite's own code, the same on every base.
    if not quick and c.base == c.default_base:
        plain_run(c, 'stock')

def custom_tree(c: Verdicts) -> None:
    """KERNEL_SRC= a Debian source: hook-ups from its version, as stock."""
    c.job('stock', 'arm64-4k', 'default', CUSTOM_TESTS,
          src=f'{c.cache}/src/{c.base}')
    c.res = f"{c.out}/results/{c.result_name('custom', 'arm64-4k', 'default')}"
    stock_expectations(c)
