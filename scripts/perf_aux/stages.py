# SPDX-License-Identifier: GPL-2.0
"""The checks of the reference and stock kernels, one function per stage
(perf_aux.check runs them).

Each runs the main job (perf_aux run) on a kernel, target and variant
and turns what the results say into check lines through the Check it is
given: the reference kernel judged case by case by its committed expected
results (scripts/expected/<base>/), or by floors where none is committed;
the stock kernel, the negative control, by what a kernel without large
vmap must give; the plain, unprivileged and failed-setup boots of a farm;
the sanitizers; the kselftests through test-definitions; a posted series
as an mbox; a tree of the user's; kunit.py in the series tree.
"""

import os
import re
import shutil
from typing import List, Optional, Sequence

from . import lib
from .mutants import killer_tests
from .files import cat, collated, read
from .shell import tool
from perf_aux_results.expected import cases as expected_cases

# make check's stock boot: the kselftests whose outcome large vmap
# changes, and the trace through the mapping; the rest (teardown, soak,
# fragmentation, fault injection, SMP) behave alike on both kernels and run
# on the stock kernel in make check-full.
STOCK_QUICK_TESTS = ('perf_aux.tests=perf_aux:map_test,perf_aux:pagesize_test,'
                     'perf_aux:integrity_test,perf_aux:wrap_test,'
                     'perf_aux:aux_contract_test,perf_aux:mmap_test,'
                     'perf_events:mmap_accounting')
# The cases that pin a fix of the reference kernels, each by the fix's
# patch name in scripts/patches/<base>/reference: on a stock kernel of a
# base whose reference carries the fix the case fails, elsewhere it passes.
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
# The full tier's boots of a variant that only a boot parameter makes
# (the default boot's build): the kselftest programs whose outcome the
# parameter can change, KUnit whole beside them.  What the others test
# runs the same code as on the default boot, which runs every program.
# hugetlb, a build of its own, runs every program.
VARIANT_TESTS = {
    'strict': ('pagesize_test',),
    # vmap() maps base pages: the granules seen, and the trace cases of
    # fragment_test whose chunks it maps.
    'nohugevmalloc': ('map_test', 'pagesize_test', 'fragment_test'),
    # Four CPUs: trace on every CPU at once, and CPUs going offline under
    # it.
    'smp': ('smp_test', 'teardown_test'),
}
# The strict boots of make check run the suites strict mode changes:
# KUnit (all of it, one boot) and pagesize_test.
STRICT_TESTS = killer_tests(VARIANT_TESTS['strict'])
# The kselftests that change the whole machine; they skip, for the one
# reason aux_common.h gives, without PERF_AUX_DESTRUCTIVE=1.
DESTRUCTIVE_TESTS = ('fault_test', 'fragment_test', 'soak_test')
STOCK_SKIP = 'vmap() maps base pages only'
PRIVILEGE_TESTS = ('map_test', 'mmap_test', 'pagesize_test', 'integrity_test',
                   'wrap_test', 'hw_trace_test', 'aux_contract_test')
# The sysctls the fixtures change, back to what they were after the
# setups failed on purpose.
SYSCTLS = ('kernel/kptr_restrict', 'kernel/perf_event_mlock_kb',
           'vm/compact_unevictable_allowed', 'vm/extfrag_threshold',
           'vm/compaction_proactiveness', 'vm/watermark_boost_factor')
TIME_LINE = re.compile(r'^PERF_AUX: time (perf_aux:[a-z_]*) ([0-9]*) s')
CHECK_LINE = re.compile(r'^(not )?ok - ')


def sed_all(pattern: str, path: str) -> str:
    """sed -n 's/PATTERN/\\1/p' PATH: group 1 of each matching line, a
    line each, as $(...) keeps them; empty where PATH cannot be read."""
    try:
        text = read(path)
    except OSError:
        return ''
    found = [m.group(1) for m in (re.match(pattern, line)
                                  for line in text.split('\n')) if m]
    return '\n'.join(found)


def destructive_skip(root: str) -> str:
    return sed_all(r'^#define NOT_DESTRUCTIVE "(.*)"$',
                   f'{root}/tools/testing/selftests/perf_aux/aux_common.h')


def expected_file(c, target: str, variant: str) -> str:
    """The committed expected results of a run of BASE
    (scripts/perf_aux_results/expected.py)."""
    suffix = '' if variant == 'default' else f'-{variant}'
    return f'{c.root}/scripts/expected/{c.base}/{target}{suffix}.txt'


def expected_results(c, run: str, suites: Sequence[str] = ()) -> None:
    """The run, case by case, as its expected results say (in the SUITES
    named, or all), one check; the differences are printed before it."""
    args = [a for s in suites for a in ('--suite', s)]
    rc, out = c.results('expected', run, *args)
    lines = out.split('\n')
    for line in lines[1:]:
        print(line)
    c.verdict(rc, lines[0])


def reference_run(c, target: str, variant: str) -> None:
    """The reference kernel must pass every suite, on every target; its
    variants change what the granule suite expects, never whether it
    passes.  Where its expected results are committed, it is judged by
    them case by case; elsewhere by floors, and a skipped check says so."""
    c.run_job('reference', target, variant)
    # The programs' times on the 2-CPU guest, against settings.
    if variant == 'default' and target == 'arm64-4k':
        within_timeout(c, c.res)
    if os.path.isfile(expected_file(c, target, variant)):
        expected_results(c, c.res)
        return
    c.skip(f'ok - {c.name(c.res)}: no expected results committed, judged '
           'by floors # SKIP')
    if variant == 'default':
        c.expect(c.res, 'perf_aux_alloc', '--min-passed', '30', '--no-failure')
    c.expect(c.res, 'vmap_granule', '--min-passed', '25', '--no-failure')
    c.expect(c.res, 'perf_aux.map_test', '--min-passed', '20', '--no-failure')
    c.expect(c.res, 'perf_aux.mmap_test', '--min-passed', '20', '--no-failure')
    # At 64K pages a PMD is 512 MiB: most pagesize buffers are more than
    # the guest can hold (KUnit covers the 64K granules).
    c.expect(c.res, 'perf_aux.pagesize_test', '--no-failure', '--min-passed',
             '2' if target == 'arm64-64k' else '5')
    trace_expectations(c, target, variant)


def trace_expectations(c, target: str, variant: str) -> None:
    """Trace written through the AUX mapping arrives intact on every
    kernel, large mapping or not; SPE and TRBE are not there to test."""
    big = target == 'arm64-64k'
    # 64K: a PMD buffer is 512 MiB, more than the guest can spare.
    c.expect(c.res, 'perf_aux.integrity_test', '--no-failure', '--min-passed',
             '8' if big else '10')
    c.expect(c.res, 'perf_aux.wrap_test', '--min-passed', '4', '--no-failure')
    # The consumer contract as perf reads it: 6 trace cases (SPE-like and
    # TRBE-like: aux_head, poll() at the watermark, snapshots).
    c.expect(c.res, 'perf_aux.aux_contract_test', '--min-passed', '6',
             '--no-failure')
    c.expect(c.res, 'perf_aux.hw_trace_test', '--no-failure', '--min-skipped',
             '2')
    # Unmapping, closing, exiting, forking, CPU offline, thread churn
    # while trace is written; trace on every CPU at once needs four CPUs
    # (smp and sanitize boots), and skips on two; fault injection is in
    # the sanitize configuration only.
    c.expect(c.res, 'perf_aux.teardown_test', '--min-passed', '7',
             '--no-failure')
    cpus = lib.variant_cpus(variant)
    c.expect(c.res, 'perf_aux.smp_test', '--no-failure', '--min-passed',
             '4' if cpus >= 4 else '0')
    c.expect(c.res, 'perf_aux.fault_test', '--no-failure', '--min-passed',
             '4' if variant == 'sanitize' else '0')
    # Memory fragmented for real: the allowance case skips where vmap()
    # maps base pages only (stock).  At 64K pages the fill leaves two
    # groups free, which the earlier cases' kernel objects may take: the
    # two trace cases then skip (no mix of chunks to trace through).
    c.expect(c.res, 'perf_aux.fragment_test', '--no-failure', '--min-passed',
             '3' if big else '4')
    # The short soak (10 s) of every boot; make soak runs it longer.
    c.expect(c.res, 'perf_aux.soak_test', '--min-passed', '1', '--no-failure')


def variant_run(c, variant: str) -> None:
    """A boot-parameter variant: KUnit and the programs it can change,
    judged case by case in those suites."""
    programs = VARIANT_TESTS[variant]
    c.run_job('reference', 'arm64-4k', variant, killer_tests(programs))
    suites = ('perf_aux_alloc', 'vmap_granule',
              *(f'perf_aux.{t}' for t in programs))
    if os.path.isfile(expected_file(c, 'arm64-4k', variant)):
        expected_results(c, c.res, suites)
        return
    c.skip(f'ok - {c.name(c.res)}: no expected results committed, judged '
           'by floors # SKIP')
    for suite in suites:
        c.expect(c.res, suite, '--no-failure')


def reference_variants(c) -> None:
    for variant in REFERENCE_VARIANTS:
        if variant in VARIANT_TESTS:
            variant_run(c, variant)
        else:
            reference_run(c, 'arm64-4k', variant)


def module_compare(c, mod: str) -> None:
    """The sanitize boot is also a plain tree's way: there test_aux_pmu is
    a module, which the kselftests loaded themselves, and every case has
    the default boot's result, except where its four CPUs (smp_test) and
    fault injection (fault_test) let cases run that skip there."""
    default = f"{c.out}/results/{c.result_name('reference', 'arm64-4k', 'default')}"
    if not os.path.isdir(default):
        c.run_job('reference', 'arm64-4k', 'default')
    try:
        log = read(f'{c.out}/logs/{c.name(mod)}-kselftest.log')
        n = sum('test_aux_pmu: module loaded' in line
                for line in log.split('\n'))
    except OSError:
        n = 0
    c.verdict(0 if n >= 4 else 1, f'{c.name(mod)}: the kselftests loaded '
              f'test_aux_pmu themselves ({n} programs)')
    rc, out = c.results('flakes', mod, default, '--except', 'perf_aux.smp_test',
                        '--except', 'perf_aux.fault_test')
    c.say_tail(out, 3)
    c.verdict(rc, f"{c.name(mod)}: the results of {c.name(default)} case by "
              "case, but smp_test's and fault_test's")


def reference_quick(c) -> None:
    """make check: the reference kernel on the default and the strict
    boot."""
    reference_run(c, 'arm64-4k', 'default')
    c.run_job('reference', 'arm64-4k', 'strict', STRICT_TESTS)
    if os.path.isfile(expected_file(c, 'arm64-4k', 'strict')):
        expected_results(c, c.res, ('perf_aux_alloc', 'vmap_granule',
                                    'perf_aux.pagesize_test'))
        return
    c.expect(c.res, 'perf_aux_alloc', '--min-passed', '30', '--no-failure')
    c.expect(c.res, 'vmap_granule', '--min-passed', '25', '--no-failure')
    c.expect(c.res, 'perf_aux.pagesize_test', '--min-passed', '5',
             '--no-failure')


def sanitize_run(c) -> None:
    """The trust run: the whole suite under KASAN, lockdep, DEBUG_VM and
    kmemleak passes, and none of them reports anything (run_job reads the
    consoles; kmemleak must also have scanned, and found nothing)."""
    run = c.result_name('reference', 'arm64-4k', 'sanitize')
    reference_run(c, 'arm64-4k', 'sanitize')
    try:
        clean = 'PERF_AUX: kmemleak: 0 unreferenced objects' in read(
            f'{c.out}/logs/{run}-kselftest.log')
    except OSError:
        clean = False
    c.verdict(0 if clean else 1, f'{run}: kmemleak scanned, 0 unreferenced '
              'objects')
    module_compare(c, f'{c.out}/results/{run}')


# The QEMU jobs lava-run runs, each compared with the direct run of its
# target (scripts/perf_aux_lava/checks.py).
LAVA_TARGETS = ('arm64-4k', 'arm64-16k')


def lava_runs(c) -> int:
    """The LAVA jobs through lava-run record the direct runs' results.
    The full tier's reference and targets stages made those runs; the
    stage named alone makes them here."""
    for target in LAVA_TARGETS:
        run = c.result_name('reference', target, 'default')
        if not os.path.isdir(f'{c.out}/results/{run}'):
            c.run_job('reference', target, 'default')
    return c.line_checks(f'{c.root}/scripts/lava/check.sh')


def testdefs_run(c) -> None:
    """The kselftests as KernelCI and LKFT run them: test-definitions'
    kselftest.sh (at integrations/'s pin) on a Debian arm64 root
    filesystem from Debian's archive, on the reference kernel; what its
    parser reports equals the direct run case by case."""
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
    if tool(lib.perf_aux('deps', 'testdefs')):
        c.verdict(1, 'perf_aux deps testdefs')
        return
    # The direct run it is compared with (make check-full's reference
    # stage made it; a named stage alone makes it here).
    if not os.path.isdir(res):
        c.run_job('reference', 'arm64-4k', 'default')
    # The direct run's environment (scripts/initramfs/init opts in to the
    # destructive programs), as KernelCI's ENV passes it to kselftest.sh.
    c.call(lib.perf_aux('kselftest', 'reference', 'arm64-4k', 'default', log,
                        'perf_aux.env=PERF_AUX_DESTRUCTIVE=1'),
           env={'KSELFTEST_ROOTFS': f'{c.cache}/rootfs/trixie-arm64',
                'TESTDEFS_DIR': directory})
    # A comparison that crashed printed no check line: that fails too.
    rc, out = c.results('testdefs', log, res,
                        f'{c.out}/logs/{run}-kselftest.log', stderr=True)
    lines = out.split('\n')
    for line in lines:
        if not CHECK_LINE.match(line):
            print(line)
    checks = [line for line in lines if CHECK_LINE.match(line)]
    line = checks[0] if checks else \
        f'not ok - test-definitions results compared: exit {rc}'
    c.verdict(rc, line.split('ok - ', 1)[1])


def series_mbox_run(c) -> None:
    """SERIES= as a series author uses it: the base's reference patches
    given as one mbox are git am'd onto the base, and that kernel gives
    the reference kernel's results case by case."""
    mbox = f'{c.out}/series-input/reference-{c.base}.mbox'
    os.makedirs(os.path.dirname(mbox), exist_ok=True)
    patches = lib.base_patches(c.base)
    with open(mbox, 'wb') as out:
        for patch in collated(f for f in os.listdir(f'{patches}/reference')
                              if f.endswith('.patch')):
            with open(f'{patches}/reference/{patch}', 'rb') as f:
                out.write(f.read())
    c.call(lib.perf_aux('run'),
           env={'SERIES': mbox, 'KERNEL': 'reference', 'TARGET': 'arm64-4k',
                'VARIANT': 'default', 'KERNEL_SRC': '', 'KERNEL_ARGS': ''})
    name = lib.kernel_name('reference', series=mbox)
    series = f"{c.out}/results/{c.result_name(name, 'arm64-4k', 'default')}"
    ref = f"{c.out}/results/{c.result_name('reference', 'arm64-4k', 'default')}"
    if not os.path.isdir(ref):
        c.run_job('reference', 'arm64-4k', 'default')
    source = cat(f'{series}/source.txt')
    c.verdict(0 if '+ series ' in source else 1,
              f'{c.name(series)}: built from the series: {source}')
    rc, out = c.results('flakes', series, ref)
    c.say_tail(out, 3)
    c.verdict(rc, f'{c.name(series)}: the same results as {c.name(ref)}, '
              'case by case')


def case_count(c, run: str, suite: str, what: str) -> int:
    """The suite's cases counted in WHAT ("passed|skipped"), from
    results expect's count line."""
    _, out = c.results('expect', run, suite, '--no-failure', quiet=True)
    return sum(int(m.group(1)) for m in
               re.finditer(rf'([0-9]+) (?:{what})', out))


def privilege_runs(c) -> None:
    """Privilege and sysctls: run by an unprivileged user every case
    passes or skips; with the setups that change a sysctl failed on
    purpose, every such sysctl is back to what it was."""
    default = f"{c.out}/results/{c.result_name('reference', 'arm64-4k', 'default')}"
    if not os.path.isdir(default):
        c.run_job('reference', 'arm64-4k', 'default')
    c.run_job('reference', 'arm64-4k', 'nonroot')
    for t in PRIVILEGE_TESTS:
        c.expect(c.res, f'perf_aux.{t}', '--no-failure')
        # Every case ran (passed or skipped), not only the wrapper.
        ran = case_count(c, c.res, f'perf_aux.{t}', 'passed|skipped')
        everything = case_count(c, default, f'perf_aux.{t}',
                                'passed|failed|skipped')
        c.verdict(0 if ran >= everything and everything > 1 else 1,
                  f"{c.name(c.res)}: perf_aux.{t}: {ran} of the default "
                  f"boot's {everything} cases passed or skipped")
    c.run_job('reference', 'arm64-4k', 'fail_setup')
    # The forced failures must have happened, or nothing was shown.
    for t in ('pagesize_test', 'mmap_test', 'fragment_test'):
        c.expect(c.res, f'perf_aux.{t}', '--failure')
    log = f'{c.out}/logs/{c.name(c.res)}-kselftest.log'
    for s in SYSCTLS:
        before = sed_all(rf'.*PERF_AUX: sysctl {re.escape(s)} before: ([0-9]*)',
                         log)
        after = sed_all(rf'.*PERF_AUX: sysctl {re.escape(s)} after: ([0-9]*)',
                        log)
        c.verdict(0 if before and before == after else 1,
                  f'{c.name(c.res)}: {s} {before or "?"} before the forced '
                  f'setup failures, {after or "?"} after')
    plain_run(c, 'reference')


def kunitpy_runs(c) -> None:
    """kunit --series, its lines and its verdict."""
    rc = c.call(lib.perf_aux('deps', 'kunitpy'))
    if not rc:
        rc = c.call(lib.perf_aux('kunit', '--series'))
    c.verdict(rc, 'kunit.py in the series tree: each kunitconfig on x86_64, '
              'arm64, riscv, powerpc, s390, i386, arm and UML, UML with '
              "every test option, KernelCI's kunit-x86_64")


def within_timeout(c, run: str) -> None:
    """Each kselftest program's time on the guest (the init's "PERF_AUX:
    time" lines) within the timeout of the directory's settings, which a
    farm's runner applies (this guest's busybox has no /usr/bin/timeout
    for the runner to use)."""
    log = f'{c.out}/logs/{c.name(run)}-kselftest.log'
    limit = sed_all(r'^timeout=(.*)',
                    f'{c.root}/tools/testing/selftests/perf_aux/settings')
    n = most = rc = 0
    longest = ''
    try:
        text = read(log)
    except OSError:
        text = ''
    for line in text.split('\n'):
        m = TIME_LINE.match(line)
        if not m:
            continue
        name, secs = m.group(1), int(m.group(2) or 0)
        n += 1
        if secs > most:
            most, longest = secs, name
        if secs > int(limit or 45):
            rc = 1
            print(f'# {name}: {secs} s')
    if n == 0:
        rc = 1
    c.verdict(rc, f"{c.name(run)}: {n} kselftest programs each within "
              f"settings' timeout={limit or '?'} s (longest "
              f'{longest or "none"}, {most} s)')


def plain_run(c, kernel: str) -> None:
    """A farm's plain run (scripts/initramfs/init with perf_aux.plain):
    without PERF_AUX_DESTRUCTIVE=1, every case of the destructive programs
    skips with the one reason, none passes, and no program fails."""
    c.run_job(kernel, 'arm64-4k', 'plain')
    reason = destructive_skip(c.root)
    for t in DESTRUCTIVE_TESTS:
        c.expect(c.res, f'perf_aux.{t}', '--no-failure', '--min-skipped', '1',
                 '--skip-reason', reason)
        c.verdict(0 if case_count(c, c.res, f'perf_aux.{t}', 'passed') == 0
                  else 1, f'{c.name(c.res)}: perf_aux.{t}: no case ran')
    for ktap in c.glob(f'{c.res}/perf_aux.*.ktap'):
        t = os.path.basename(ktap)[:-len('.ktap')] \
            if ktap.endswith('.ktap') else os.path.basename(ktap)
        if t[len('perf_aux.'):] in DESTRUCTIVE_TESTS:
            continue
        c.expect(c.res, t, '--no-failure')
    within_timeout(c, c.res)


def reference_targets(c) -> None:
    """Targets other than arm64-4k come last: each is a kernel build of
    its own."""
    for target in c.targets:
        if target != 'arm64-4k':
            reference_run(c, target, 'default')


def stock_expectations(c) -> None:
    """What a kernel without large vmap (c.res) must give: the AUX
    allocator and map suites pass, the granule suites skip with the one
    reason."""
    # The cases pinning the reference's perf fixes fail there by design.
    pinned_failures(c, 'perf_aux_alloc', '--min-passed', '30')
    c.expect(c.res, 'perf_aux.map_test', '--min-passed', '20', '--no-failure')
    for suite in ('vmap_granule', 'perf_aux.pagesize_test'):
        c.expect(c.res, suite, '--no-failure', '--min-skipped', '1',
                 '--skip-reason', STOCK_SKIP)


def stock_differs(c) -> None:
    """A reference kernel whose vmap() maps base pages only gives what
    the stock kernel (c.res) gives: its granule cases must not be what the
    reference's expected results say."""
    expected = expected_file(c, 'arm64-4k', 'default')
    if not os.path.isfile(expected):
        return
    _, out = c.results('expected', c.res, '--file', expected, '--suite',
                       'vmap_granule')
    m = re.match(r'.*, ([0-9]*) differ$', out.split('\n')[0])
    n = m.group(1) if m else ''
    c.verdict(0 if int(n or 0) > 0 else 1,
              f'{c.name(c.res)}: vmap_granule fails the reference\'s expected '
              f'results ({n} cases differ, as without large vmap they must)')


def pinned_failures(c, suite: str, *args: str) -> None:
    """SUITE on the stock kernel (c.res) as ARGS say of it (results
    expect), none of its cases failing but those of PINNED; each of those
    failed where the base's reference kernel carries the fix it pins and
    passed elsewhere.  A suite the base does not build, needing none of
    its fixes, is left out."""
    fixes = ' '.join(os.listdir(f'{c.root}/scripts/patches/{c.base}/reference'))
    got = expected_cases(c.res, {suite})
    pinned = [(case, fix) for s, case, fix in PINNED if s == suite]
    if not got and not any(fix in fixes for _, fix in pinned):
        return
    allowed = []
    for case, fix in pinned:
        want = 'FAILURE' if fix in fixes else 'SUCCESS'
        status = got.get(f'{suite}.{case}', 'missing')
        c.verdict(0 if status == want else 1,
                  f'{c.name(c.res)}: {suite}.{case} {status}, '
                  f"{'as without' if want == 'FAILURE' else 'needing no'} "
                  f'{fix}')
        allowed += ['--allow-failing', case.rsplit('.', 1)[-1]]
    c.expect(c.res, suite, '--no-failure', *args, *allowed)


def stock_runs(c, default_args: Optional[List[str]] = None,
               strict_args: Optional[List[str]] = None) -> None:
    """Stock kernels have the AUX allocator change (6.16; Debian
    6.12.113) but not large vmap: the granule suites say so by skipping,
    or by failing when strict.  DEFAULT_ARGS, STRICT_ARGS: what the boots
    run (make check: the suites large vmap and strict mode change)."""
    c.run_job('stock', 'arm64-4k', 'default', *(default_args or []))
    stock_expectations(c)
    if not default_args:
        trace_expectations(c, 'arm64-4k', 'default')
    else:
        c.expect(c.res, 'perf_aux.integrity_test', '--min-passed', '10',
                 '--no-failure')
        c.expect(c.res, 'perf_aux.wrap_test', '--min-passed', '4',
                 '--no-failure')
    stock_differs(c)
    pinned_failures(c, 'perf_aux.mmap_test')
    pinned_failures(c, 'perf_events.mmap_accounting')
    c.run_job('stock', 'arm64-4k', 'strict', *(strict_args or [STRICT_TESTS]))
    c.expect(c.res, 'vmap_granule', '--failure')
    c.expect(c.res, 'perf_aux.pagesize_test', '--failure')
    # The plain boot skips in the suite's own code, the same on every
    # base.
    if not default_args and c.base == c.default_base:
        plain_run(c, 'stock')


# What the custom tree is judged by (stock_expectations): the suites the
# hook-ups build.
CUSTOM_TESTS = killer_tests(('map_test', 'pagesize_test'))


def custom_tree(c) -> None:
    """KERNEL_SRC= a tree of the user's (here an unpacked Debian source):
    the hook-ups are chosen from its version and it is the stock control
    of that base, with the same outcome."""
    c.call(lib.perf_aux('run'),
           env={'KERNEL': 'stock', 'TARGET': 'arm64-4k', 'VARIANT': 'default',
                'KERNEL_SRC': f'{c.cache}/src/{c.base}',
                'KERNEL_ARGS': CUSTOM_TESTS})
    c.res = f"{c.out}/results/{c.result_name('custom', 'arm64-4k', 'default')}"
    stock_expectations(c)
