# SPDX-License-Identifier: GPL-2.0
"""The kernel and test-module mutants (perf_aux.check runs them).

Each mutant is a patch of scripts/mutants/<family>/ (or a base's own,
scripts/mutants/<family>/<base>/, where the code it breaks moved) applied
to the mutant tree, built, and booted with the suite written for it; it
is killed when that suite fails.  The peers (lib/test_vmalloc.c beside
KUnit, selftests/perf_events in a boot of their own) run on the same
mutant kernels and never decide a check: results matrix counts their
kills beside the suite's.
"""

import os
import re
import shutil
import subprocess
from typing import List, Optional, Sequence

from . import lib
from .files import read

PEER_VMALLOC = ('test_vmalloc.test_loop_count=10000',
                'test_vmalloc.test_repeat_count=1')
PEER_OFF = 'test_vmalloc.run_test_mask=0'
# sigtrap_threads and remove_on_exec need hardware breakpoints, which this
# QEMU kernel cannot open: they fail (by timeout, 2 minutes) on every kernel.
PEER_PERF_EVENTS = 'perf_aux.tests=perf_events:watermark_signal,perf_events:mmap'
# A mutant's KUnit boot: one that oopses panics, and panic=-1 reboots it at
# once.  Otherwise KUnit waits out the dead test's thread and the boot its
# 10-minute timeout (cont_for_short_run's BUG in vmap on 7.3): the oops is
# the failure that kills the mutant either way.  (Every kselftest boot has
# oops=panic.)
MUTANT_OOPS = 'oops=panic'
BUILD_LINE = re.compile(r'^(ccache: |<== build |build .*: built earlier)')
# A module mutant's killers where its patch names none.
KILLED_BY_DEFAULT = ('integrity_test', 'wrap_test')


def peers(c) -> bool:
    """PERF_AUX_PEERS=1: the peers run beside the mutants' suites."""
    return os.environ.get('PERF_AUX_PEERS', '0') == '1'


def mutant_run(c, name: str, target: str = 'arm64-4k') -> str:
    """The name of mutant NAME's results on this base and TARGET."""
    return f'{name}-{c.base}-{target}'


def patch_lines(patch: str, pattern: str) -> List[str]:
    """sed -n 's/PATTERN//p' PATCH: what follows PATTERN on each line that
    starts with it."""
    return [line[len(pattern):] for line in read(patch).split('\n')
            if line.startswith(pattern)]


def peer_selftests(c, name: str, variant: str, res: str) -> None:
    """selftests/perf_events on mutant NAME."""
    log = f'{c.out}/logs/mutant-{mutant_run(c, name)}-perf_events.log'
    c.call(lib.perf_aux('kselftest', 'mutant', 'arm64-4k', variant, log,
                        PEER_OFF, PEER_PERF_EVENTS),
           env={'KSELFTEST_TARGETS': 'perf_events'}, quiet=True)
    c.results_shown('kselftest', log, res)


def peer_baseline(c) -> int:
    """The peers on the unmutated kernel: what they fail here kills
    nothing."""
    res = f"{c.out}/mutants/{mutant_run(c, 'baseline')}"
    log = f"{c.out}/logs/mutant-{mutant_run(c, 'baseline')}-kunit.log"
    shutil.rmtree(res, ignore_errors=True)
    if not mutant_build(c, '', 'strict', log, PEER_VMALLOC):
        return 1
    c.results_shown('kunit', log, res)
    c.results_shown('peers', log, res)
    peer_selftests(c, 'baseline', 'strict', res)
    # The peer ran: at least the three smoke tests its default
    # run_test_mask selects from 7.x passed.  What fails by design is the
    # base's (align_shift_alloc_test on 6.12, an expected failure later).
    c.expect(res, 'peer.test_vmalloc', '--min-passed', '3',
             '--failure-allowed')
    return 0


def mutant_patch(c, directory: str, name: str) -> str:
    """The patch of mutant NAME for this base: a base's own
    (DIR/<base>/NAME.patch, where the code it breaks moved) or the one
    every base takes."""
    own = f'{directory}/{c.base}/{name}.patch'
    return own if os.path.isfile(own) else f'{directory}/{name}.patch'


def mutant_names(c, directory: str, names: List[str]) -> List[str]:
    """The mutants of a family, or the named ones."""
    if names:
        return list(names)
    return [os.path.basename(p)[:-len('.patch')]
            for p in c.glob(f'{directory}/*.patch')]


def mutant_build(c, patch: str, variant: str, log: str, args=(),
                 target: str = 'arm64-4k') -> bool:
    """Applies PATCH to the mutant tree (none: the unmutated baseline),
    builds it for TARGET and runs KUnit at boot (console in LOG).  True
    when the kernel built; a patch that does not apply or build is a check
    that failed."""
    name = 'baseline'
    if patch:
        name = os.path.basename(patch)[:-len('.patch')]
        first = read(patch).split('\n')[0] if read(patch) else ''
        print(f'mutant {name}: {first}')
    with open(f'{log}.tree', 'wb') as f:
        rc = c.call(lib.perf_aux('kernel-tree', 'mutant', patch),
                    stdout=f, stderr=subprocess.STDOUT)
    if rc:
        c.say_file(f'{log}.tree')
        c.verdict(1, f'mutant {name} applies to {c.base}')
        return False
    with open(f'{log}.out', 'wb') as f:
        rc = c.call(lib.perf_aux('kunit', 'mutant', target, variant, log,
                                 MUTANT_OOPS, *args), stdout=f,
                    stderr=subprocess.STDOUT)
    out = read(f'{log}.out')
    for line in out.split('\n'):
        if BUILD_LINE.match(line):
            print(line)
    if rc > 1:
        c.say_tail(out.rstrip('\n'), 20)
        c.verdict(1, f'mutant {name} builds on {c.base}')
        return False
    return True


def each_mutant(c, directory: str, what: str, func, names: List[str]) -> None:
    """FUNC(c, PATCH, NAME, RES, LOG) for every mutant of DIRECTORY (or
    the named ones), saying which it is and how far along."""
    names = mutant_names(c, directory, names)
    for i, name in enumerate(names, 1):
        print(f'-- {what} {i} of {len(names)}: {name} ({c.base})')
        run = mutant_run(c, name)
        shutil.rmtree(f'{c.out}/mutants/{run}', ignore_errors=True)
        func(c, mutant_patch(c, directory, name), name,
             f'{c.out}/mutants/{run}', f'{c.out}/logs/mutant-{run}')


def mutant_targets(patch: str, default_base: bool = True) -> List[str]:
    """The targets a mutant must be killed on: its patch's "Targets:" line
    (code whose answer depends on the page size: a constant right at one
    page size only), else arm64-4k.  The other page sizes are the default
    base's only, as the reference kernel's are: on another base they would
    be cold builds proving what the default base proves."""
    targets = ' '.join(patch_lines(patch, 'Targets: ')).split() or ['arm64-4k']
    return targets if default_base else [t for t in targets
                                         if t == 'arm64-4k']


def mutant_boot(patch: str, default: str) -> str:
    """The variant a mutant is booted (and built) for: its patch's "Boot:
    <variant>" line, else DEFAULT."""
    return '\n'.join(patch_lines(patch, 'Boot: ')) or default


def run_mutants(c, directory: str, suite: str, variant: str,
                names: List[str]) -> None:
    """Every patch in DIRECTORY (or the named ones) makes SUITE fail,
    booted with VARIANT or its own Boot: line's variant (a rule only one
    boot can break, such as nohugevmalloc honoured); with PERF_AUX_PEERS=1
    the peers run beside."""
    def kernel_mutant(c, patch: str, name: str, res: str, log: str) -> None:
        boot = mutant_boot(patch, variant)
        targets = mutant_targets(patch, c.base == c.default_base)
        if not targets:
            print(f'mutant {name}: its page sizes on {c.default_base} only')
        for target in targets:
            run = mutant_run(c, name, target)
            res = f'{c.out}/mutants/{run}'
            log = f'{c.out}/logs/mutant-{run}'
            shutil.rmtree(res, ignore_errors=True)
            if not mutant_build(c, patch, boot, f'{log}-kunit.log',
                                PEER_VMALLOC if peers(c) and
                                target == 'arm64-4k' else (), target):
                continue
            c.results_shown('kunit', f'{log}-kunit.log', res)
            if peers(c) and target == 'arm64-4k':
                c.results_shown('peers', f'{log}-kunit.log', res)
                peer_selftests(c, name, boot, res)
            # A kernel that oopses before the suite runs is killed too.
            reports = lib.console_reports(f'{log}-kunit.log')
            if reports and not (os.path.isdir(res) and os.listdir(res)):
                c.verdict(0, f'{run}: {suite}: not run, the kernel '
                          f'reported {reports[0]}')
            else:
                c.expect(res, suite, '--failure')

    each_mutant(c, directory, 'mutant', kernel_mutant, names)


def killer_tests(programs: Sequence[str]) -> str:
    """The boot parameter that runs only those kselftest programs
    (scripts/initramfs/init)."""
    return 'perf_aux.tests=' + ','.join(f'perf_aux:{t}' for t in programs)


def module_mutant(c, patch: str, name: str, res: str, log: str,
                  tests: Optional[str] = None) -> None:
    """A kselftest fails on the mutant synthetic PMU: the patch's
    "Killed-by: perf_aux.<test>" lines (by default the trace integrity or
    wrap test), on its "Boot: <variant>" (by default the default boot)."""
    suites = ' '.join(patch_lines(patch, 'Killed-by: perf_aux.')).split() \
        or list(KILLED_BY_DEFAULT)
    variant = mutant_boot(patch, 'default')
    peer_off = [PEER_OFF] if peers(c) else []
    # Built for its boot: a configuration variant (sanitize) is a build of
    # its own, without the peers, which no module mutant runs: the peers'
    # configuration beside it would be one more cold build.
    if lib.variant_config(variant):
        peer_off = []
    if not mutant_build(c, patch, variant, f'{log}-kunit.log', peer_off):
        return
    # The boot runs the programs that must kill it, not the whole suite:
    # what the others find proves nothing about this mutant, and each of
    # them costs minutes.
    c.call(lib.perf_aux('kselftest', 'mutant', 'arm64-4k', variant,
                        f'{log}-kselftest.log', *peer_off,
                        tests or os.environ.get('MODULE_MUTANT_TESTS') or
                        killer_tests(suites)), quiet=True)
    c.results_shown('kselftest', f'{log}-kselftest.log', res)
    rc, line = 1, ''
    for suite in suites:
        rc, line = c.results('expect', res, f'perf_aux.{suite}', '--failure')
        if rc == 0:
            break
    c.verdict(rc, f'{c.name(res)}: {line}')


def project_only(c, patch: str) -> bool:
    """Whether PATCH changes only files the project ships
    (lib/test_aux_pmu.c), the same file on every base."""
    files = ' '.join(line.split('\t')[0]
                     for line in patch_lines(patch, '+++ b/')).split()
    return all(os.path.isfile(f'{c.root}/{f}') for f in files)


def run_module_mutants(c, directory: str, names: List[str],
                       tests: Optional[str] = None) -> None:
    """Every patch of the synthetic AUX PMU in DIRECTORY (or the named
    ones).  A mutant of the project's own file proves the same on every
    base, and costs a boot of some 4 minutes each: it runs on the default
    base; one in the kernel's code runs on every base."""
    names = list(names)
    if not names and c.base != c.default_base:
        for m in c.glob(f'{directory}/*.patch'):
            name = os.path.basename(m)[:-len('.patch')]
            if not project_only(c, mutant_patch(c, directory, name)):
                names.append(name)
        print(f"module mutants on {c.base}: those in kernel code "
              f"({' '.join(names) or 'none'}); the rest on {c.default_base}")
        if not names:
            return
    each_mutant(c, directory, 'module mutant',
                lambda c, *a: module_mutant(c, *a, tests=tests), names)


def quick_mutants(c, mutants: str) -> None:
    """make check's mutants: one of each family, chosen for what they
    prove and what they cost (each rebuilds one object and links):
     watermark_ignored   perf/aux: PREFER_LARGE chunks ignore the watermark
     cont_needs_hugetlb  vmap: cont-PTE blocks lost with
                         CONFIG_HUGETLB_PAGE=n, the bug of v4..v7 of the
                         posted series
     wrap_drops_byte     synthetic PMU: a byte lost at the buffer wrap,
                         caught by integrity_test alone (the only
                         kselftest booted)
     aux_head_lags       perf core: the user page's aux_head behind the
                         records, caught by aux_contract_test alone"""
    run_mutants(c, f'{mutants}/aux_alloc', 'perf_aux_alloc', 'default',
                ['watermark_ignored'])
    run_mutants(c, f'{mutants}/vmap_granule', 'vmap_granule', 'strict',
                ['cont_needs_hugetlb'])
    run_module_mutants(c, f'{mutants}/test_aux_pmu', ['wrap_drops_byte'],
                       tests='perf_aux.tests=perf_aux:integrity_test')
    run_module_mutants(c, f'{mutants}/perf_core', ['aux_head_lags'])
