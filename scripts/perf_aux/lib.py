# SPDX-License-Identifier: GPL-2.0
"""What the perf_aux scripts share: the paths, the bases, targets,
kernels and variants, and the facts that follow from them (build
directories, boot parameters, result names, trees, series).

Every module calls these, so each is defined once.  The functions read
the environment when called (BASE, KERNEL_SRC, SERIES, DURATION,
PERF_AUX_CACHE, PERF_AUX_OUT).
"""

import os
import re
import shutil
import subprocess
import sys
from typing import Dict, List, NamedTuple, NoReturn, Optional, Sequence

from .files import collated

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
# Kernel bases: the Debian linux-source-<base> package each run starts from.
# The first is the default, mainline while it is the newest Debian ships.
BASES = ('7.3', '7.2', '6.12')
TARGETS = ('arm64-4k', 'arm64-16k', 'arm64-64k', 'x86_64')
KERNELS = ('reference', 'stock')
# A variant is a configuration (its own build directory) or a boot
# parameter on top of a target's default kernel.  nonroot runs the
# kselftests as an unprivileged user; fail_setup makes the fixtures that
# change a sysctl fail on purpose (scripts/initramfs/init); plain runs
# them as a farm's plain run does, without PERF_AUX_DESTRUCTIVE=1 (every
# other run sets it, so the destructive programs run there).  Two
# configurations carry what would otherwise be builds of their own: hugetlb
# has the page-table dump too, and sanitize builds lib/test_aux_pmu.c as a
# module, which the kselftests load themselves.
VARIANTS = ('default', 'strict', 'nohugevmalloc', 'hugetlb', 'sanitize',
            'nonroot', 'fail_setup', 'smp', 'soak', 'plain')
# perf/aux "Allocate non-contiguous AUX pages by default" reached Debian 6.12
# in 6.12.113; older sources lack PERF_PMU_CAP_AUX_PREFER_LARGE.
MIN_DEBIAN = '6.12.113'
# The CPU QEMU emulates for arm64 targets.  "max" alone has pointer
# authentication with the architected QARMA5, which TCG emulates slowly;
# kunit.py of 7.x dropped pauth-impdef=on from its arm64 configuration,
# making a KUnit boot 4x slower (21 s instead of 5 s on 7.3).
ARM64_QEMU_CPU = 'max,pauth-impdef=on'
# The guests' memory: the kselftest boot, the KUnit boot (over kunit.py's
# own -m 1024) and the LAVA QEMU jobs (their template's memory; a host
# test keeps the two equal).  Which cases have the memory to run depends
# on it, so runs compared case by case must have the same.  2 GiB: at 16K
# pages a NO_SG PMD buffer needs a free 32 MiB MAX_PAGE_ORDER block, which
# 1 GiB did not always keep.  (The KUnit boot at 64K: kunit_memory_mib().)
GUEST_MEMORY_MIB = 2048
KUNIT_PY = 'tools/testing/kunit/kunit.py'


def kunit_memory_mib(target: str) -> int:
    """The KUnit boot's memory.  At 64K a PMD block is 512 MiB and a
    granule shape runs only where it takes at most an eighth of memory: 8
    GiB runs the PMD shapes, the only ones that tell a cont-PTE block
    written for a short or misaligned run apart at 64K (mutants
    cont_for_short_run, pfn_alignment_unchecked)."""
    return 8192 if target == 'arm64-64k' else GUEST_MEMORY_MIB


class Died(Exception):
    """die: the message was printed; the program ends with status 2."""

    status = 2


def error(message: str) -> None:
    """perf_aux: error: MESSAGE, on stderr."""
    print(f'perf_aux: error: {message}', file=sys.stderr, flush=True)


def die(message: str) -> NoReturn:
    error(message)
    raise Died(message)


# Paths.

def cache() -> str:
    """Kernel trees, build directories and ccache live here, outside the
    clone, at a fixed path: ccache only hits when paths stay the same from
    run to run."""
    return os.environ.get('PERF_AUX_CACHE') or '/var/cache/perf_aux'


def out() -> str:
    """The results, logs and pages of the runs (read when asked: the lab's
    selftest gives each submission its own)."""
    return os.path.abspath(os.environ.get('PERF_AUX_OUT') or f'{ROOT}/out')


def exports() -> Dict[str, str]:
    """ccache's settings for every build: its directory in the cache, the
    build directory left out of the hash (trees at different paths share
    objects), room for every target's objects."""
    return {'CCACHE_DIR': f'{cache()}/ccache', 'CCACHE_NOHASHDIR': '1',
            'CCACHE_MAXSIZE': '8G'}


def export() -> None:
    os.environ.update(exports())


# The selectors.

def default_base() -> str:
    return BASES[0]


def unknown(what: str, value: str, allowed: Sequence[str]) -> str:
    """The complaint about a selector VALUE not among ALLOWED, or ''."""
    if value in allowed:
        return ''
    return f"unknown {what}='{value}' (one of: {' '.join(allowed)})"


def _check(what: str, value: str, allowed: Sequence[str]) -> None:
    message = unknown(what, value, allowed)
    if message:
        die(message)


def check_target(target: str) -> None:
    _check('TARGET', target, TARGETS)


def check_base(base: str) -> None:
    _check('BASE', base, BASES)


def check_kernel(kernel: str) -> None:
    _check('KERNEL', kernel, KERNELS)


def check_variant(variant: str) -> None:
    _check('VARIANT', variant, VARIANTS)


def base_suite(base: str) -> str:
    """The Debian suite that serves linux-source-BASE: 6.12 comes from the
    machine's own sources (bookworm-security), mainline from sid and
    experimental through a private sources list (perf_aux.deps)."""
    return {'6.12': '', '7.2': 'sid'}.get(base, 'experimental')


def version_base(version: str) -> str:
    """The base a kernel version belongs to: its major.minor."""
    m = re.match(r'^([0-9]+\.[0-9]+)', version)
    return m.group(1) if m else version


def base_patches(base: str) -> str:
    """The project's patches for BASE (hook-ups, reference) live here."""
    return f'{ROOT}/scripts/patches/{base}'


class Selection(NamedTuple):
    """What make run and its kin run: TARGET, KERNEL, VARIANT and the extra
    boot parameters of KERNEL_ARGS, from the environment, checked."""
    target: str
    kernel: str
    variant: str
    kargs: List[str]


def selection() -> Selection:
    env = os.environ
    chosen = Selection(env.get('TARGET') or 'arm64-4k',
                       env.get('KERNEL') or 'reference',
                       env.get('VARIANT') or 'default',
                       (env.get('KERNEL_ARGS') or '').split())
    check_target(chosen.target)
    check_variant(chosen.variant)
    return chosen


def perf_aux(verb: str, *args: str, python: str = 'python3') -> List[str]:
    """python3 -m perf_aux VERB ARGS (perf_aux/__main__.py): a step run as
    a process of its own, whose changes to its environment and working
    directory, and whose exit, stay its own."""
    return ['env', f'PYTHONPATH={ROOT}/scripts', python, '-m', 'perf_aux',
            verb, *args]


# Variants.

def variant_build(variant: str) -> str:
    """The configuration a variant builds: soak boots the sanitize
    kernel."""
    return 'sanitize' if variant == 'soak' else variant


def variant_config(variant: str) -> str:
    """The configuration fragment a variant adds, if any."""
    build = variant_build(variant)
    if build in ('hugetlb', 'sanitize'):
        return f'{ROOT}/scripts/config/variant-{build}.config'
    return ''


def variant_args(variant: str) -> List[str]:
    """The boot parameters a variant adds, if any."""
    return {
        # The kselftests' strict mode (PERF_AUX_STRICT, set by the init);
        # the granule KUnit suite's is the kernel's configuration
        # (granule_strict).
        'strict': ['perf_aux.strict'],
        # Strict too: honouring nohugevmalloc in vmap() is a rule only
        # strict mode asserts (an AUX caller loses nothing by a larger
        # mapping), and this boot is the one that can show it kept.
        'nohugevmalloc': ['nohugevmalloc', 'perf_aux.strict'],
        'nonroot': ['perf_aux.user=65534'],
        'plain': ['perf_aux.plain'],
        'fail_setup': ['perf_aux.fail_setup', 'perf_aux.tests=perf_aux:'
                       'pagesize_test,perf_aux:mmap_test,perf_aux:fragment_test'],
        # Every KASAN report, not only the boot's first: a bad read in
        # vmap() is also reported, and fails the case, when a test makes it.
        'sanitize': ['kasan_multi_shot'],
        # make soak: soak_test alone, for DURATION seconds.
        'soak': ['kasan_multi_shot', 'perf_aux.tests=perf_aux:soak_test',
                 f"perf_aux.soak={os.environ.get('DURATION') or 600}"],
    }.get(variant, [])


def variant_cpus(variant: str) -> int:
    """The CPUs of a variant's kselftest boot: smp traces on four at once
    (smp_test), and sanitize runs the same under KASAN and lockdep."""
    return 4 if variant in ('smp', 'sanitize', 'soak') else 2


def granule_strict(kernel: str, variant: str) -> bool:
    """Whether the kernel builds the granule KUnit suite strict
    (CONFIG_VMAP_GRANULE_KUNIT_TEST_STRICT: a page vmap() maps smaller
    than its run allows fails instead of skipping).  The reference kernels
    carry large vmap (the project's patches, a posted series, the mutants
    of them) and so set it, as a tree carrying large vmap would; stock and
    custom trees only in the strict variants."""
    return (kernel in ('reference', 'mutant') or kernel.startswith('series-')
            or variant in ('strict', 'nohugevmalloc'))


def build_dir(target: str, variant: str) -> str:
    """The build directory (inside the tree) of TARGET and VARIANT.  The
    strict variants of a kernel that is not strict otherwise share it:
    kbuild rebuilds only the objects that read the option
    (granule_strict), where a build directory of their own would miss
    ccache for every object."""
    if variant_config(variant):
        return f'.build-{target}-{variant_build(variant)}'
    return f'.build-{target}'


TEST_CASE = re.compile(r'^[ \t\n\r\f\v]*\{ "[a-z0-9_]+",')


def vmalloc_args(tree: str, mode: str) -> List[str]:
    """The boot parameters of lib/test_vmalloc.c, built into every kernel
    (scripts/config/boot.config).  "bench": the vmap benchmark alone
    (vmap_contig_chunks_test, whose run_test_mask bit is its index in the
    tree's test_case_array), five loops on one thread; "off": nothing,
    the parameter every other boot passes."""
    index = 0
    try:
        with open(f'{tree}/lib/test_vmalloc.c', encoding='utf-8',
                  errors='surrogateescape') as f:
            cases = [m.group(0) for m in map(TEST_CASE.match, f) if m]
        index = next((i for i, c in enumerate(cases, 1)
                      if '"vmap_contig_chunks_test"' in c), 0)
    except OSError:
        pass
    if mode == 'bench' and index:
        return [f'test_vmalloc.run_test_mask={1 << (index - 1)}',
                'test_vmalloc.nr_threads=1', 'test_vmalloc.test_loop_count=5',
                'test_vmalloc.test_repeat_count=1']
    return ['test_vmalloc.run_test_mask=0']


REPORT = re.compile(r'BUG:|WARNING:|UBSAN:|Internal error: Oops|'
                    r'kmemleak: [1-9][0-9]* unreferenced')


def console_reports(*logs: str) -> List[str]:
    """The kernel's reports in console logs (KASAN, KFENCE, lockdep,
    DEBUG_VM and WARN as BUG:/WARNING:, UBSAN, an oops, kmemleak's count),
    once each."""
    found = set()
    for log in logs:
        try:
            with open(log, encoding='utf-8', errors='surrogateescape') as f:
                found.update(line.rstrip('\n') for line in f
                             if REPORT.search(line))
        except OSError:
            pass
    return collated(found)


def run_reports(run: str) -> List[str]:
    """The kernel's reports on the consoles of the run named RUN (its
    KUnit boot and its kselftest boot), from their first lines."""
    logs = f'{out()}/logs/{run}'
    return console_reports(f'{logs}-kunit.log', f'{logs}-kselftest.log')


def result_name(kernel: str, base: str, target: str, variant: str) -> str:
    """The name of a run's results: <kernel>-<base>-<target>[-<variant>]."""
    name = f'{kernel}-{base}-{target}'
    return name if variant == 'default' else f'{name}-{variant}'


def patched_files(*patches: str) -> List[str]:
    """The files the patches change.  The name is the "+++" line's less
    its first component, as git am -p1 reads it: b/ from git, a/ in Andrew
    Morton's mm queue (quilt's "--- a/f~name", "+++ a/f"); a deleted
    file's from its "---" line."""
    found = set()
    for patch in patches:
        old = ''
        try:
            with open(patch, encoding='utf-8', errors='surrogateescape') as f:
                lines = f.read().split('\n')
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            name = fields[1] if len(fields) > 1 else ''
            if line.startswith('--- '):
                old = name
            elif line.startswith('+++ '):
                path = old if name == '/dev/null' else name
                found.add(re.sub(r'^[^/]*/', '', path, count=1))
    return collated(found)


def base_repo(src: str, repo: str, message: str, *files: str) -> None:
    """A git repository REPO holding SRC's FILES (those it has), committed
    as MESSAGE and tagged "base".  git am and git apply read nothing but
    the files a patch touches, so this is the base for them, without the
    cost of a whole tree in git."""
    shutil.rmtree(repo, ignore_errors=True)
    os.makedirs(repo)
    git = ['git', '-C', repo]
    subprocess.run([*git, 'init', '-q', '-b', 'perf_aux'], check=True)
    for f in files:
        if not os.path.isfile(f'{src}/{f}'):
            continue
        os.makedirs(os.path.dirname(f'{repo}/{f}'), exist_ok=True)
        shutil.copy(f'{src}/{f}', f'{repo}/{f}')
    subprocess.run([*git, 'add', '-A'], check=True)
    subprocess.run([*git, '-c', 'user.name=perf_aux',
                    '-c', 'user.email=perf_aux@localhost',
                    '-c', 'commit.gpgsign=false', 'commit', '-q',
                    '--allow-empty', '-m', message], check=True)
    subprocess.run([*git, 'tag', 'base'], check=True)


def tree_version(src: str) -> str:
    """The kernel version of a source tree."""
    proc = subprocess.run(['make', '-s', '-C', src, 'kernelversion'],
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          check=False)
    return proc.stdout.decode('utf-8', 'surrogateescape').rstrip('\n')


def run_base() -> str:
    """The base of this run: BASE, or the version of a KERNEL_SRC tree."""
    src = os.environ.get('KERNEL_SRC')
    if src:
        return version_base(tree_version(src))
    return os.environ.get('BASE') or default_base()


def tree_name(kernel: str, base: str) -> str:
    """The tree a kernel is built in: <base>-<kernel>, "custom", or
    <base>-series for any series (a new series rebuilds what it
    changes)."""
    if kernel == 'custom':
        return 'custom'
    if kernel.startswith('series-'):
        return f'{base}-series'
    return f'{base}-{kernel}'


def tree_dir(kernel: str) -> str:
    """The tree of kernel KERNEL of this run's base."""
    return f'{cache()}/trees/{tree_name(kernel, run_base())}'


def target_arch(target: str) -> str:
    return 'arm64' if target.startswith('arm64-') else 'x86_64'


def target_cross(target: str) -> str:
    return 'aarch64-linux-gnu-' if target.startswith('arm64-') else ''


# A posted series (SERIES=).

MAIL = re.compile(r'.*\.(patch|mbx|eml)$')


def series_mails(series: Optional[str] = None) -> List[str]:
    """The mails of SERIES (an mbox, or a directory of patches as git
    format-patch writes them), in order, cover letters left out."""
    series = os.environ.get('SERIES', '') if series is None else series
    if not os.path.isdir(series):
        return [series]
    names = [n for n in os.listdir(series)
             if MAIL.match(n) and 'cover-letter' not in n
             and os.path.isfile(f'{series}/{n}')
             and not os.path.islink(f'{series}/{n}')]
    return sorted((f'{series}/{n}' for n in names), key=os.fsencode)


def series_subject(series: Optional[str] = None) -> str:
    """The subject of SERIES, unfolded: its cover letter's where it has
    one (a directory's 0000-*, or a "0/N" mail), else its first mail's."""
    series = os.environ.get('SERIES', '') if series is None else series
    first = ''
    if os.path.isdir(series):
        covers = [n for n in os.listdir(series) if 'cover-letter' in n
                  and os.path.isfile(f'{series}/{n}')]
        first = f'{series}/{covers[0]}' if covers else ''
    elif 'cover-letter' in os.path.basename(series) and \
            os.path.isfile(series):
        first = series
    if not first:
        mails = series_mails(series)
        first = mails[0] if mails else ''
    try:
        with open(first, encoding='utf-8', errors='surrogateescape') as f:
            lines = f.read().split('\n')
    except OSError:
        return ''
    subject = None
    for line in lines:
        if line.startswith('Subject:'):
            subject = line
        elif subject is not None and line[:1] in (' ', '\t') and line:
            subject += line
        elif subject is not None:
            return re.sub(r'[ \t]+', ' ', re.sub(r'^Subject: *', '', subject))
    return ''


def series_version(series: Optional[str] = None) -> str:
    """v<N> of "[PATCH vN ...]", v1 without one."""
    m = re.match(r'^\[[^\]]*\bv([0-9]+)\b[^\]]*\]', series_subject(series))
    return f"v{m.group(1) if m else 1}"


def kernel_name(kernel: str, series: Optional[str] = None) -> str:
    """The kernel name used in result paths: the KERNEL selector, "custom"
    for a tree given with KERNEL_SRC, "series-vN" for the reference of a
    SERIES run (SERIES, or the one given)."""
    series = os.environ.get('SERIES', '') if series is None else series
    if os.environ.get('KERNEL_SRC'):
        return 'custom'
    if series and kernel == 'reference':
        return f'series-{series_version(series)}'
    return kernel


# Running kunit.py.

def without_kvm(argv: Sequence[str]) -> List[str]:
    """ARGV with /dev/kvm hidden.  kunit.py asks QEMU for KVM first.
    Where a machine offers it nested, the x86_64 guest died of an
    "emulation failure" (cmpxchg16b); the kselftest boot runs under TCG,
    and so do kunit.py's."""
    if os.path.exists('/dev/kvm'):
        return ['unshare', '--mount', '--', 'sh', '-c',
                'mount --bind /dev/null /dev/kvm && exec "$@"', 'sh', *argv]
    return list(argv)


def jobs() -> int:
    """nproc: the CPUs this process may run on."""
    return len(os.sched_getaffinity(0))


def kunit_py(build: str, log: str, args: Sequence[str], cwd: str,
             cross: str = '') -> int:
    """The kunit.py of the tree CWD with build directory BUILD and ccache
    (CROSS: the cross-compiler prefix), under TCG, its output in LOG.  The
    status is kunit.py's."""
    opts = {'run': [f'--jobs={jobs()}', '--timeout=900'],
            'build': [f'--jobs={jobs()}'],
            'exec': ['--timeout=900']}.get(args[0] if args else '', [])
    sys.stdout.flush()
    with open(log, 'wb') as f:
        return subprocess.run(
            without_kvm(['timeout', '1800', 'python3', KUNIT_PY, *args,
                         f'--build_dir={build}', *opts,
                         f'--make_options=CC=ccache {cross}gcc']),
            cwd=cwd, stdout=f, stderr=subprocess.STDOUT,
            env={**os.environ, **exports()}, check=False).returncode
