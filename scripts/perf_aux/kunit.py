# SPDX-License-Identifier: GPL-2.0
"""The kernel build and the KUnit boot (python3 -m perf_aux kunit).

Builds the kernel of tree NAME for TARGET with the tree's own kunit.py and
runs the KUnit suites at boot under QEMU.  The same build serves the
kselftest boot (perf_aux.kselftest): the kunitconfig is the suites'
.kunitconfig files plus scripts/config/boot.config and the target's and
variant's fragments.  The console log, KTAP included, is copied to LOG.

Usage: python3 -m perf_aux kunit NAME TARGET VARIANT LOG [KERNEL_ARG...]
Exit: 0 all passed, 1 some test failed or crashed, 2 build error.

python3 -m perf_aux kunit --series [TREE] runs kunit.py as its users do,
in TREE (default: the plain base with `make series` applied, as series
--check leaves it): each suite's kunitconfig with --arch= x86_64, arm64,
riscv, powerpc (64-bit), s390, i386 and arm (32-bit), and on UML
(kunit.py's default), with kunit.py's defaults otherwise; then KernelCI's
kunit-x86_64 form (config, build, exec --json with kunit.py's default
kunitconfig, CONFIG_KUNIT_ALL_TESTS=y), our
suites' results read from its JSON; and a UML build with every test
option of the series UML can have.  KUNITPY_ARCHS (default: all of
them) chooses the architectures of the kunitconfig runs, KUNITPY_KERNELCI=0
leaves KernelCI's form out.  One line per run; build directories in
$PERF_AUX_CACHE/kunitpy/.  Exit 1 if a run that should pass did not.
"""

import glob
import hashlib
import json
import os
import re
import subprocess
import sys
from collections import Counter
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

from . import lib, shell
from .files import cat, collated, read, remove, write_line
from .shell import stage, tool
from .tree import seed_build

USAGE = ('usage: python3 -m perf_aux kunit NAME TARGET VARIANT LOG '
         '[KERNEL_ARG...]')
# kunit.py's architectures the series runs on, and their Debian cross
# compilers (perf_aux deps kunitpy); '' the host's gcc.
KUNITPY_CROSS = {'x86_64': '', 'arm64': 'aarch64-linux-gnu-',
                 'riscv': 'riscv64-linux-gnu-',
                 'powerpc': 'powerpc64-linux-gnu-', 's390': 's390x-linux-gnu-',
                 'i386': '', 'arm': 'arm-linux-gnueabihf-', 'um': ''}
KUNIT_PY = 'tools/testing/kunit/kunit.py'
BUILT = '.perf_aux-built'
# kunit.py's own lines of a run's verdict and time.
VERDICT = re.compile(r'^\[..:..:..\] (Testing complete|Elapsed)', re.M)
SUMMARY = re.compile(r'^\[..:..:..\] (Testing complete\.|Elapsed time)')
# The suites of the series: kunitconfig and KUnit suite name.
SERIES_SUITES = (('kernel/events/ring_buffer_kunit.kunitconfig',
                  'perf_aux_alloc'),
                 ('mm/tests/vmap_granule_kunit.kunitconfig', 'vmap_granule'))
EXEC_SECONDS = 900


def ccache_line(stats: str) -> str:
    """How many compiler calls of the build ccache answered (from
    ccache --print-stats), so that a change that costs the next build its
    cache shows in every log."""
    hit = miss = 0
    for line in stats.splitlines():
        key, _, value = line.partition('\t')
        if key in ('direct_cache_hit', 'preprocessed_cache_hit'):
            hit += int(value)
        elif key == 'cache_miss':
            miss += int(value)
    n = hit + miss
    return (f'ccache: {hit} of {n} compilations hit '
            f'({100 * hit // n if n else 100} %)')


def tail_of(log: str, n: int) -> None:
    with open(log, 'rb') as f:
        lines = f.read().splitlines(keepends=True)[-n:]
    sys.stdout.flush()
    sys.stdout.buffer.write(b''.join(lines))
    sys.stdout.buffer.flush()


def kunit_build(log: str, args: Sequence[str]) -> int:
    tool(['ccache', '--zero-stats'], stdout=subprocess.DEVNULL)
    if tool(['python3', KUNIT_PY, 'build', *args], log=log):
        tail_of(log, 40)
        return 2
    stats = subprocess.run(['ccache', '--print-stats'], check=False,
                           stdout=subprocess.PIPE, text=True).stdout
    print(ccache_line(stats))
    return 0


def kunit_exec(log: str, args: Sequence[str]) -> int:
    with open(log, 'wb') as f:
        rc = tool(lib.without_kvm(['timeout', str(EXEC_SECONDS), 'python3',
                                   KUNIT_PY, 'exec', *args]),
                  stdout=f, stderr=subprocess.STDOUT)
    for line in read(log).splitlines():
        if VERDICT.match(line):
            print(line)
    return rc


def stack_erase_option(tree: str) -> str:
    """kmemleak takes a stale pointer left deep in a kernel stack for a
    reference: an object leaked by a system call stays unseen while the
    task that made the call lives (a failed AUX mmap()'s page array did,
    in fault_test).  Erasing the stack on return to user space (GCC's
    stackleak plugin) leaves only live pointers there.  The option is
    KSTACK_ERASE since 6.16, GCC_PLUGIN_STACKLEAK before: the tree's
    Kconfig says which."""
    kconfig = cat(os.path.join(tree, 'security/Kconfig.hardening'))
    if re.search(r'^config KSTACK_ERASE$', kconfig, re.M):
        return 'CONFIG_KSTACK_ERASE'
    return 'CONFIG_GCC_PLUGIN_STACKLEAK'


def plugin_sources_hashed(tree: str) -> Dict[str, str]:
    """ccache hashes a -fplugin= file by its size and mtime
    (compiler_check), and each build directory builds its own plugin: no
    build with plugins served another (a mutant's sanitize build found
    10 % of its objects in the reference's).  The plugin's path is left
    out of the hash and the plugins' sources go in instead, by content."""
    sources = collated(glob.glob(glob.escape(tree) +
                                 '/scripts/gcc-plugins/*.[ch]'))
    return {'CCACHE_IGNOREOPTIONS': '-fplugin=*',
            'CCACHE_EXTRAFILES': ':'.join(sources)}


def build_key(tree: str, args: Sequence[str]) -> str:
    """What the kernel in the build directory is made of, for a check that
    boots one build several times (the strict, nohugevmalloc and smp boots
    of the default build): the check (PERF_AUX_CHECK_ID, set by
    perf_aux.check), the tree's recipe (perf_aux.tree: sources, patches,
    overlay) and kunit.py's build arguments with the configuration
    fragments' content.  A later boot in the same check with the same key
    skips kunit.py build, whose Kconfig run and no-op make cost 16 s.
    Empty outside a check: make run always builds, so an edited tree is
    rebuilt."""
    check = os.environ.get('PERF_AUX_CHECK_ID')
    if not check:
        return ''
    digest = hashlib.sha256(f'{check}\n'.encode())
    with open(os.path.join(tree, '.perf_aux-recipe'), 'rb') as f:
        digest.update(f.read())
    for a in args:
        digest.update(os.fsencode(a + '\n'))
        if a.startswith('--kunitconfig='):
            with open(a[len('--kunitconfig='):], 'rb') as f:
                digest.update(f.read())
    return digest.hexdigest()


def config_files(root: str, arch: str, target: str,
                 variant_config: str) -> List[str]:
    """The kunitconfig fragments of a build, those that exist."""
    files = [f'{root}/kernel/events/ring_buffer_kunit.kunitconfig',
             f'{root}/mm/tests/vmap_granule_kunit.kunitconfig',
             f'{root}/scripts/config/boot.config',
             f'{root}/scripts/config/arch-{arch}.config',
             f'{root}/scripts/config/{target}.config',
             *variant_config.split()]
    return [f for f in files if os.path.isfile(f)]


def kernel_args(tree: str, variant: str, args: Sequence[str]) -> List[str]:
    """kunit.py's --kernel_args: panic=-1, the vmap benchmark unless the
    caller gives lib/test_vmalloc.c parameters of its own (perf_aux.check:
    the peer, or none), the caller's, the variant's."""
    if not any(a.startswith('test_vmalloc.') for a in args):
        args = [*lib.vmalloc_args(tree, 'bench'), *args]
    args = [*args, *lib.variant_args(variant)]
    return ['--kernel_args=panic=-1', *(f'--kernel_args={a}' for a in args)]


def kunit(name: str, target: str, variant: str, log: str,
          args: Sequence[str]) -> int:
    lib.check_target(target)
    lib.check_variant(variant)
    tree = lib.tree_dir(name)
    arch = lib.target_arch(target)
    cross = lib.target_cross(target)
    build = lib.build_dir(target, variant)
    common = [f'--arch={arch}', f'--build_dir={build}',
              *([f'--cross_compile={cross}'] if cross else [])]
    configs = [f'--kunitconfig={c}' for c in config_files(
        lib.ROOT, arch, target, lib.variant_config(variant))]
    kargs = kernel_args(tree, variant, args)

    # The sanitize configuration: test_aux_pmu=m over boot.config's =y,
    # and the kernel stack erased on each return to user space.
    if lib.variant_build(variant) == 'sanitize':
        configs += ['--kconfig_add=CONFIG_TEST_AUX_PMU=m',
                    '--kconfig_add=CONFIG_GCC_PLUGINS=y',
                    f'--kconfig_add={stack_erase_option(tree)}=y']
        os.environ.update(plugin_sources_hashed(tree))
    strict = lib.granule_strict(name, variant)
    configs.append('--kconfig_add=CONFIG_VMAP_GRANULE_KUNIT_TEST_STRICT='
                   + ('y' if strict else 'n'))

    if name != 'custom':
        seed_build(tree, build, lib.run_base())
    os.chdir(tree)
    configs.append(f'--make_options=CC=ccache {cross}gcc')
    key = build_key(tree, [*common, *configs])
    what = f'build {lib.tree_name(name, lib.run_base())} {build}'
    if key and cat(os.path.join(build, BUILT)) == key:
        print(f'{what}: built earlier in this check, unchanged')
    else:
        remove(os.path.join(build, BUILT))
        if stage(what, kunit_build, f'{log}.build',
                 [*common, f'--jobs={len(os.sched_getaffinity(0))}', *configs]):
            return 2
        if key:
            write_line(os.path.join(build, BUILT), key)
    # Appended after kunit.py's own -m and -cpu, which they override.
    kargs.append(f'--qemu_args=-m {lib.kunit_memory_mib(target)}')
    if arch == 'arm64':
        kargs.append(f'--qemu_args=-cpu {lib.ARM64_QEMU_CPU}')
    run = lib.result_name(name, lib.run_base(), target, variant)
    rc = stage(f'KUnit {run}', kunit_exec, f'{log}.exec',
               [*common, '--timeout=600', *kargs])
    tool(['cp', os.path.join(build, 'test.log'), log], check=True)
    return 1 if rc else 0


# kunit.py as its users run it.

def summary(log: str) -> str:
    """kunit.py's verdict, or the reason it stopped."""
    lines = read(log).splitlines() if os.path.exists(log) else []
    verdict = ' '.join(line[11:] for line in lines if SUMMARY.match(line))
    if verdict:
        return verdict
    for line in lines:
        if re.search(r'error|not satisfied|missing', line, re.I):
            return line
    return lines[-1] if lines else ''


def refused_for_perf_events(log: str) -> bool:
    """Whether kunit.py named CONFIG_PERF_EVENTS among the options it
    could not set."""
    return any(line.startswith('Missing:') and 'CONFIG_PERF_EVENTS' in line
               for line in read(log).splitlines())


def first_missing(log: str) -> str:
    for line in read(log).splitlines():
        if line.startswith('Missing:'):
            return line
    return ''


def groups(group: dict) -> Iterator[dict]:
    yield group
    for sub in group.get('sub_groups', []):
        yield from groups(sub)


def kernelci_results(path: str, suites: Sequence[str]) -> Tuple[List[str], bool]:
    """Our suites in the JSON of KernelCI's kunit-x86_64: a line each, and
    whether none failed."""
    try:
        with open(path, encoding='utf-8') as f:
            root = json.load(f)
    except (OSError, ValueError) as e:
        return [f'KernelCI JSON: {e}'], False
    found = {g['name']: g for g in groups(root)}
    lines, ok = [], True
    for name in suites:
        group = found.get(name)
        if group is None:
            lines.append(f'KernelCI JSON: suite {name} not run')
            ok = False
            continue
        # Parameterised cases are groups of their own, below the suite.
        n = Counter(t['status'] for s in groups(group)
                    for t in s.get('test_cases', []))
        lines.append(f'KernelCI JSON: {name}: {sum(n.values())} cases, '
                     + ', '.join(f'{v} {k}' for k, v in sorted(n.items())))
        ok = ok and not n.get('FAIL') and not n.get('ERROR')
    return lines, ok


def series_runs(tree: str) -> int:
    dirs = os.path.join(lib.cache(), 'kunitpy')
    out = os.path.join(lib.out(), 'kunitpy')
    if not tree:
        base = os.environ.get('BASE') or lib.default_base()
        tree = os.path.join(lib.cache(), 'series', base, 'tree')
    if not os.access(os.path.join(tree, KUNIT_PY), os.X_OK):
        shell.die(f'no kernel tree with kunit.py at {tree} '
                  '(PYTHONPATH=scripts python3 -m perf_aux series --check)')
    # kunit.py makes its build directory with os.mkdir(): the parent first.
    os.makedirs(out, exist_ok=True)
    os.makedirs(dirs, exist_ok=True)
    fail = False
    for kc, suite in SERIES_SUITES:
        for arch in (os.environ.get('KUNITPY_ARCHS')
                     or ' '.join(KUNITPY_CROSS)).split():
            log = f'{out}/{arch}-{suite}.log'
            cross = KUNITPY_CROSS[arch]
            # UML as a maintainer gets it: kunit.py's default.
            archarg = [] if arch == 'um' else [f'--arch={arch}']
            rc = lib.kunit_py(f'{dirs}/{arch}-{suite}', log,
                          ['run', f'--kunitconfig={kc}', *archarg,
                           *([f'--cross_compile={cross}'] if cross else [])],
                          tree, cross)
            if (arch, suite) == ('um', 'perf_aux_alloc'):
                # UML has no perf events: kunit.py refuses, and says why.
                missing = first_missing(log)
                print(f'kunit.py run (UML) --kunitconfig={kc}: rc={rc}: UML '
                      f'has no perf events: kunit.py: {missing}')
                fail |= not refused_for_perf_events(log)
            else:
                print(f"kunit.py run {archarg[0] if archarg else '(UML)'} "
                      f'--kunitconfig={kc}: rc={rc}: {summary(log)}')
                fail |= rc != 0

    # UML with every test option of the series it can have, built: the
    # kernel test robot's allmodconfig and randconfig builds of UML reach
    # them.  Those that need perf events cannot be set there; kunit.py
    # names them.
    rc = lib.kunit_py(f'{dirs}/um-all', f'{out}/um-all-options.log',
                  ['build', '--kunitconfig=mm/tests/vmap_granule_kunit.kunitconfig',
                   '--kconfig_add=CONFIG_VMAP_GRANULE_KUNIT_TEST_STRICT=y',
                   '--kconfig_add=CONFIG_TEST_VMALLOC=y'], tree)
    print(f'kunit.py build (UML) with every test option UML has: rc={rc}')
    fail |= rc != 0
    if (os.environ.get('KUNITPY_KERNELCI') or '1') != '1':
        return int(fail)

    # KernelCI's kunit-x86_64: its three steps, its JSON.
    log = f'{out}/kernelci-x86_64.log'
    rc = 0
    for step, step_log, extra in (
            ('config', f'{log}.config', []), ('build', f'{log}.build', []),
            ('exec', log, [f'--json={out}/kernelci-x86_64.json'])):
        rc = lib.kunit_py(f'{dirs}/x86_64-all', step_log,
                      [step, '--arch=x86_64', *extra], tree)
        if rc:
            break
    print('kunit.py config/build/exec --arch=x86_64 --json (KernelCI): '
          f'rc={rc}: {summary(log)}')
    lines, ok = kernelci_results(f'{out}/kernelci-x86_64.json',
                                 [suite for _, suite in SERIES_SUITES])
    for line in lines:
        print(line)
    return int(fail or not ok)


def main(argv: Optional[List[str]] = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] == '--series':
        return shell.entry(lambda: series_runs(args[1] if len(args) > 1
                                               else ''))
    if len(args) < 4:
        print(USAGE, file=sys.stderr)
        return 2
    return shell.entry(lambda: kunit(args[0], args[1], args[2], args[3],
                                     args[4:]))
