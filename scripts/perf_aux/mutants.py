# SPDX-License-Identifier: GPL-2.0
"""The kernel and test-module mutants: each a patch of scripts/mutants/
<family>/ (or <family>/<base>/) applied to the mutant tree, built and
booted with the suite written for it, killed when that suite fails.  The
peers (test_vmalloc, selftests/perf_events) run beside and decide no
check: results matrix counts their kills."""

import os
import re
import shutil
from pathlib import Path
from typing import List, Optional, Sequence

from . import lib
from .lib import STDOUT
from .run import expectation
from .verdict import Verdicts, say_tail

PEER_VMALLOC = ('test_vmalloc.test_loop_count=10000',
                'test_vmalloc.test_repeat_count=1')
PEER_OFF = 'test_vmalloc.run_test_mask=0'
# sigtrap_threads and remove_on_exec need hardware breakpoints QEMU lacks.
PEER_PERF_EVENTS = 'perf_aux.tests=perf_events:watermark_signal,perf_events:mmap'
# A mutant that oopses panics at once, not after the boot's timeout.
MUTANT_OOPS = 'oops=panic'
BUILD_LINE = re.compile(r'^(ccache: |<== build |build .*: built earlier)')
# A module mutant's killers where its patch names none.
KILLED_BY_DEFAULT = ('integrity_test', 'wrap_test')

def mutant_run(c: Verdicts, name: str, target: str = 'arm64-4k') -> str:
    return f'{name}-{c.base}-{target}'

def patch_lines(patch: str, prefix: str) -> List[str]:
    """What follows PREFIX on each line of PATCH that starts with it."""
    return [line[len(prefix):] for line in
            Path(patch).read_text(errors='surrogateescape').split('\n')
            if line.startswith(prefix)]

def killer_tests(programs: Sequence[str]) -> str:
    """The boot parameter that runs only those kselftest programs."""
    return 'perf_aux.tests=' + ','.join(f'perf_aux:{t}' for t in programs)

def peer_selftests(c: Verdicts, name: str, variant: str, res: str) -> None:
    log = f'{c.out}/logs/mutant-{mutant_run(c, name)}-perf_events.log'
    c.call(lib.perf_aux('kselftest', 'mutant', 'arm64-4k', variant, log,
                        PEER_OFF, PEER_PERF_EVENTS),
           env={'KSELFTEST_TARGETS': 'perf_events'}, quiet=True)
    c.results_shown('kselftest', log, res)

def peer_baseline(c: Verdicts) -> int:
    """The peers on the unmutated kernel: what they fail kills nothing."""
    res = f"{c.out}/mutants/{mutant_run(c, 'baseline')}"
    log = f"{c.out}/logs/mutant-{mutant_run(c, 'baseline')}-kunit.log"
    shutil.rmtree(res, ignore_errors=True)
    if not mutant_build(c, '', 'strict', log, PEER_VMALLOC):
        return 1
    c.results_shown('kunit', log, res)
    c.results_shown('peers', log, res)
    peer_selftests(c, 'baseline', 'strict', res)
    # At least the three smoke tests of run_test_mask's default passed.
    c.expect(res, 'peer.test_vmalloc', min_passed=3, failure=None)
    return 0

def mutant_patch(c: Verdicts, directory: str, name: str) -> str:
    """A base's own patch of mutant NAME, else the one every base takes."""
    own = f'{directory}/{c.base}/{name}.patch'
    return own if os.path.isfile(own) else f'{directory}/{name}.patch'

def mutant_build(c: Verdicts, patch: str, variant: str, log: str, args=(),
                 target: str = 'arm64-4k') -> bool:
    """PATCH (none: the baseline) applied to the mutant tree, built for
    TARGET, KUnit booted (console in LOG); a patch that does not apply or
    build is a failed check."""
    name = 'baseline'
    if patch:
        name = os.path.basename(patch)[:-len('.patch')]
        first = Path(patch).read_text(errors='surrogateescape').split('\n')[0]
        print(f'mutant {name}: {first}')
    with open(f'{log}.tree', 'wb') as f:
        rc = c.call(lib.perf_aux('kernel-tree', 'mutant', patch), stdout=f,
                    stderr=STDOUT)
    if rc:
        lib.show(Path(f'{log}.tree').read_bytes())
        c.verdict(1, f'mutant {name} applies to {c.base}')
        return False
    with open(f'{log}.out', 'wb') as f:
        rc = c.call(lib.perf_aux('kunit', 'mutant', target, variant, log,
                                 MUTANT_OOPS, *args), stdout=f, stderr=STDOUT)
    out = Path(f'{log}.out').read_text(errors='surrogateescape')
    for line in out.split('\n'):
        if BUILD_LINE.match(line):
            print(line)
    if rc > 1:
        say_tail(out.rstrip('\n'), 20)
        c.verdict(1, f'mutant {name} builds on {c.base}')
        return False
    return True

def each_mutant(c: Verdicts, directory: str, what: str, func,
                names: List[str]) -> None:
    """FUNC(c, PATCH, NAME) for every mutant of DIRECTORY (or the named)."""
    names = names or [os.path.basename(p)[:-len('.patch')] for p in
                      lib.collated(str(p) for p in
                                   Path(directory).glob('*.patch'))]
    for i, name in enumerate(names, 1):
        print(f'-- {what} {i} of {len(names)}: {name} ({c.base})')
        func(c, mutant_patch(c, directory, name), name)

def mutant_targets(patch: str, default_base: bool = True) -> List[str]:
    """The patch's "Targets:" (else arm64-4k); the other page sizes on
    the default base only."""
    targets = ' '.join(patch_lines(patch, 'Targets: ')).split() or ['arm64-4k']
    return targets if default_base else [t for t in targets
                                         if t == 'arm64-4k']

def mutant_boot(patch: str, default: str) -> str:
    """The variant of the patch's "Boot:" line, else DEFAULT."""
    return '\n'.join(patch_lines(patch, 'Boot: ')) or default

def run_mutants(c: Verdicts, directory: str, suite: str, variant: str,
                names: List[str]) -> None:
    """Every patch in DIRECTORY (or the named ones) makes SUITE fail,
    booted with VARIANT or its own Boot: line's."""
    def kernel_mutant(c: Verdicts, patch: str, name: str) -> None:
        boot = mutant_boot(patch, variant)
        targets = mutant_targets(patch, c.base == c.default_base)
        if not targets:
            print(f'mutant {name}: its page sizes on {c.default_base} only')
        for target in targets:
            run = mutant_run(c, name, target)
            res = f'{c.out}/mutants/{run}'
            log = f'{c.out}/logs/mutant-{run}-kunit.log'
            shutil.rmtree(res, ignore_errors=True)
            peers = c.peers and target == 'arm64-4k'
            if not mutant_build(c, patch, boot, log,
                                PEER_VMALLOC if peers else (), target):
                continue
            c.results_shown('kunit', log, res)
            if peers:
                c.results_shown('peers', log, res)
                peer_selftests(c, name, boot, res)
            # A kernel that oopses before the suite runs (the vmap benchmark
            # may have) is killed too.
            reports = lib.console_reports(log)
            if reports and not os.path.isfile(f'{res}/{suite}.ktap'):
                c.verdict(0, f'{run}: {suite}: not run, the kernel '
                          f'reported {reports[0]}')
            else:
                c.expect(res, suite, failure=True)

    each_mutant(c, directory, 'mutant', kernel_mutant, names)

def module_mutant(c: Verdicts, patch: str, name: str,
                  tests: Optional[str] = None) -> None:
    """A kselftest of the patch's "Killed-by:" lines fails on the mutant
    synthetic PMU, booted as its "Boot:" line says, at each of its
    "Targets:"."""
    suites = ' '.join(patch_lines(patch, 'Killed-by: perf_aux.')).split() \
        or list(KILLED_BY_DEFAULT)
    variant = mutant_boot(patch, 'default')
    # A configuration variant is a build of its own, without the peers.
    peer_off = [PEER_OFF] if c.peers and not lib.variant_config(variant) \
        else []
    for target in mutant_targets(patch, c.base == c.default_base):
        run = mutant_run(c, name, target)
        res = f'{c.out}/mutants/{run}'
        log = f'{c.out}/logs/mutant-{run}'
        shutil.rmtree(res, ignore_errors=True)
        if not mutant_build(c, patch, variant, f'{log}-kunit.log', peer_off,
                            target):
            continue
        # Only the programs that must kill it: each other costs minutes.
        c.call(lib.perf_aux('kselftest', 'mutant', target, variant,
                            f'{log}-kselftest.log', *peer_off,
                            tests or c.environ.get('MODULE_MUTANT_TESTS') or
                            killer_tests(suites)), quiet=True)
        c.results_shown('kselftest', f'{log}-kselftest.log', res)
        ok, line = False, ''
        for suite in suites:
            ok, line = expectation(res, f'perf_aux.{suite}', failure=True)
            if ok:
                break
        c.verdict(0 if ok else 1, f'{run}: {line}')

def run_module_mutants(c: Verdicts, directory: str, names: List[str],
                       tests: Optional[str] = None) -> None:
    """Every mutant of the synthetic AUX PMU in DIRECTORY (or the named
    ones); on a base but the default one, those in the kernel's code only
    (one of the project's own file proves the same on every base)."""
    names = list(names)
    if not names and c.base != c.default_base:
        for m in lib.collated(str(p) for p in Path(directory).glob('*.patch')):
            name = os.path.basename(m)[:-len('.patch')]
            files = ' '.join(line.split('\t')[0] for line in patch_lines(
                mutant_patch(c, directory, name), '+++ b/')).split()
            if not all(os.path.isfile(f'{c.root}/{f}') for f in files):
                names.append(name)
        print(f"module mutants on {c.base}: those in kernel code "
              f"({' '.join(names) or 'none'}); the rest on {c.default_base}")
        if not names:
            return
    each_mutant(c, directory, 'module mutant',
                lambda c, *a: module_mutant(c, *a, tests=tests), names)

def quick_mutants(c: Verdicts) -> None:
    """make check's mutants, one of each family, for what they prove and
    what they cost (docs/selectors.md)."""
    run_mutants(c, f'{c.catalogue}/aux_alloc', 'perf_aux_alloc', 'default',
                ['watermark_ignored'])
    run_mutants(c, f'{c.catalogue}/vmap_granule', 'vmap_granule', 'strict',
                ['cont_needs_hugetlb'])
    run_module_mutants(c, f'{c.catalogue}/test_aux_pmu', ['wrap_drops_byte'],
                       tests='perf_aux.tests=perf_aux:integrity_test')
    run_module_mutants(c, f'{c.catalogue}/perf_core', ['aux_head_lags'])
