# SPDX-License-Identifier: GPL-2.0
"""The kernel build and the KUnit boot, with the tree's own kunit.py (the
build serves the kselftest boot too); and kunit.py run as its users run it
(kunit --series: each suite on every architecture, UML, KernelCI's
kunit-x86_64 form)."""

import hashlib
import json
import os
import re
import shutil
import sys
from collections import Counter
from pathlib import Path
from typing import Dict, Iterator, List, Sequence, Tuple

from . import lib
from .lib import DEVNULL, KUNIT_PY, PIPE, Run, run, status
from .shell import stage
from .tree import cat, seed_build, write_line

# kunit.py's architectures of the series and their Debian cross compilers.
KUNITPY_CROSS = {'x86_64': '', 'arm64': 'aarch64-linux-gnu-',
                 'riscv': 'riscv64-linux-gnu-',
                 'powerpc': 'powerpc64-linux-gnu-', 's390': 's390x-linux-gnu-',
                 'i386': '', 'arm': 'arm-linux-gnueabihf-', 'um': ''}
BUILT = '.perf_aux-built'
# kunit.py's own lines of a run's verdict and time.
VERDICT = re.compile(r'^\[..:..:..\] (Testing complete|Elapsed)')
SUMMARY = re.compile(r'^\[..:..:..\] (Testing complete\.|Elapsed time)')
SERIES_SUITES = (('kernel/events/ring_buffer_kunit.kunitconfig',
                  'perf_aux_alloc'),
                 ('mm/tests/vmap_granule_kunit.kunitconfig', 'vmap_granule'))
EXEC_SECONDS = 900
# Where the architecture has huge vmap: the granule suite runs on the tree
# with the reference large vmap (the base's reference patches *vmalloc*).
REFERENCE_ARCHS = ('x86_64', 'arm64', 'riscv', 'powerpc')


def without_kvm(argv: Sequence[str]) -> List[str]:
    """ARGV with /dev/kvm hidden: nested KVM killed the x86_64 guest, so
    every boot runs under TCG."""
    if os.path.exists('/dev/kvm'):
        return ['unshare', '--mount', '--', 'sh', '-c',
                'mount --bind /dev/null /dev/kvm && exec "$@"', 'sh', *argv]
    return list(argv)


def jobs() -> int:
    return len(os.sched_getaffinity(0))


def kunit_py(build: str, log: str, args: Sequence[str], cwd: str,
             cross: str = '') -> int:
    """kunit.py ARGS in tree CWD with build directory BUILD and ccache,
    under TCG, its output in LOG; its status."""
    opts = {'run': [f'--jobs={jobs()}', '--timeout=900'],
            'build': [f'--jobs={jobs()}'],
            'exec': ['--timeout=900']}.get(args[0] if args else '', [])
    return status(without_kvm(
        ['timeout', '1800', 'python3', KUNIT_PY, *args, f'--build_dir={build}',
         *opts, f'--make_options=CC=ccache {cross}gcc']),
        cwd=cwd, log=log, env=lib.exports())


def ccache_line(stats: str) -> str:
    """How many compilations ccache answered (ccache --print-stats)."""
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


def stack_erase_option(tree: str) -> str:
    """KSTACK_ERASE since 6.16, GCC_PLUGIN_STACKLEAK before (kmemleak sees
    no stale pointer in an erased stack)."""
    kconfig = cat(os.path.join(tree, 'security/Kconfig.hardening'))
    if re.search(r'^config KSTACK_ERASE$', kconfig, re.M):
        return 'CONFIG_KSTACK_ERASE'
    return 'CONFIG_GCC_PLUGIN_STACKLEAK'


def plugin_sources_hashed(tree: str) -> Dict[str, str]:
    """ccache hashes the GCC plugins' sources, not the plugin each build
    directory builds, so that plugin builds share objects."""
    sources = lib.collated(str(p) for p in
                           Path(tree, 'scripts/gcc-plugins').glob('*.[ch]'))
    return {'CCACHE_IGNOREOPTIONS': '-fplugin=*',
            'CCACHE_EXTRAFILES': ':'.join(sources)}


def build_key(tree: str, args: Sequence[str], check: str) -> str:
    """The check CHECK, the tree's recipe and kunit.py's build arguments
    with the fragments' content: a later boot of a check with the same key
    skips kunit.py build.  Empty outside a check."""
    if not check:
        return ''
    digest = hashlib.sha256(f'{check}\n'.encode())
    digest.update(Path(tree, '.perf_aux-recipe').read_bytes())
    for a in args:
        digest.update(os.fsencode(a + '\n'))
        if a.startswith('--kunitconfig='):
            digest.update(Path(a[len('--kunitconfig='):]).read_bytes())
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
    """--kernel_args: panic=-1, the vmap benchmark unless ARGS set
    test_vmalloc's own, ARGS, the variant's."""
    if not any(a.startswith('test_vmalloc.') for a in args):
        args = [*lib.vmalloc_args(tree, 'bench'), *args]
    args = [*args, *lib.variant_args(variant)]
    return ['--kernel_args=panic=-1', *(f'--kernel_args={a}' for a in args)]


def kunit_build(tree: str, log: str, args: Sequence[str],
                env: Dict[str, str]) -> int:
    run(['ccache', '--zero-stats'], stdout=DEVNULL, env=env)
    if run(['python3', KUNIT_PY, 'build', *args], log=log, cwd=tree,
           env=env).returncode:
        lib.show(b''.join(Path(log).read_bytes().splitlines(True)[-40:]))
        return 2
    print(ccache_line(run(['ccache', '--print-stats'], stdout=PIPE,
                          env=env).stdout))
    return 0


def kunit_exec(tree: str, log: str, args: Sequence[str]) -> int:
    rc = run(without_kvm(['timeout', str(EXEC_SECONDS), 'python3', KUNIT_PY,
                          'exec', *args]), log=log, cwd=tree).returncode
    for line in Path(log).read_text(errors='surrogateescape').splitlines():
        if VERDICT.match(line):
            print(line)
    return rc


def kunit(r: Run, log: str, check: str = '') -> int:
    """R's kernel built (once per CHECK) and KUnit booted, the console in
    LOG: 0 all passed, 1 a test failed, 2 the build failed."""
    tree = r.tree
    arch, cross = lib.target_arch(r.target), lib.target_cross(r.target)
    build = lib.build_dir(r.target, r.variant)
    common = [f'--arch={arch}', f'--build_dir={build}',
              *([f'--cross_compile={cross}'] if cross else [])]
    configs = [f'--kunitconfig={c}' for c in config_files(
        lib.ROOT, arch, r.target, lib.variant_config(r.variant))]
    kargs = kernel_args(tree, r.variant, r.kargs)
    env = lib.exports()
    # sanitize: test_aux_pmu a module, kernel stacks erased.
    if lib.variant_build(r.variant) == 'sanitize':
        configs += ['--kconfig_add=CONFIG_TEST_AUX_PMU=m',
                    '--kconfig_add=CONFIG_GCC_PLUGINS=y',
                    f'--kconfig_add={stack_erase_option(tree)}=y']
        env.update(plugin_sources_hashed(tree))
    strict = lib.granule_strict(r.kernel, r.variant)
    configs.append('--kconfig_add=CONFIG_VMAP_GRANULE_KUNIT_TEST_STRICT='
                   + ('y' if strict else 'n'))
    if r.kernel != 'custom':
        seed_build(tree, build, r.base)
    configs.append(f'--make_options=CC=ccache {cross}gcc')
    key = build_key(tree, [*common, *configs], check)
    built = os.path.join(tree, build, BUILT)
    what = f'build {lib.tree_name(r.kernel, r.base)} {build}'
    if key and cat(built) == key:
        print(f'{what}: built earlier in this check, unchanged')
    else:
        Path(built).unlink(missing_ok=True)
        if stage(what, kunit_build, tree, f'{log}.build',
                 [*common, f'--jobs={jobs()}', *configs], env):
            return 2
        if key:
            write_line(built, key)
    # After kunit.py's own -m and -cpu, which they override.
    kargs.append(f'--qemu_args=-m {lib.kunit_memory_mib(r.target)}')
    if arch == 'arm64':
        kargs.append(f'--qemu_args=-cpu {lib.ARM64_QEMU_CPU}')
    rc = stage(f'KUnit {r.name}', kunit_exec, tree, f'{log}.exec',
               [*common, '--timeout=600', *kargs])
    try:
        shutil.copyfile(os.path.join(tree, build, 'test.log'), log)
    except OSError as e:
        lib.error(f'cp: {e}')
        return 1
    return 1 if rc else 0


def summary(log: str) -> str:
    """kunit.py's verdict, or the reason it stopped."""
    lines = cat(log).splitlines()
    verdict = ' '.join(line[11:] for line in lines if SUMMARY.match(line))
    if verdict:
        return verdict
    for line in lines:
        if re.search(r'error|not satisfied|missing', line, re.I):
            return line
    return lines[-1] if lines else ''


def first_missing(log: str) -> str:
    """kunit.py's "Missing:" line: the options it could not set."""
    return next((line for line in cat(log).splitlines()
                 if line.startswith('Missing:')), '')


def groups(group: dict) -> Iterator[dict]:
    yield group
    for sub in group.get('sub_groups', []):
        yield from groups(sub)


def kernelci_results(path: str,
                     suites: Sequence[str]) -> Tuple[List[str], bool]:
    """Our suites in KernelCI's kunit-x86_64 JSON: a line each, and
    whether none failed."""
    try:
        root = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        return [f'KernelCI JSON: {e}'], False
    found = {g['name']: g for g in groups(root)}
    lines, ok = [], True
    for name in suites:
        if name not in found:
            lines.append(f'KernelCI JSON: suite {name} not run')
            ok = False
            continue
        # Parameterised cases are groups of their own, below the suite.
        n = Counter(t['status'] for s in groups(found[name])
                    for t in s.get('test_cases', []))
        lines.append(f'KernelCI JSON: {name}: {sum(n.values())} cases, '
                     + ', '.join(f'{v} {k}' for k, v in sorted(n.items())))
        ok = ok and not n.get('FAIL') and not n.get('ERROR')
    return lines, ok


def reference_tree(tree: str, base: str) -> str:
    """TREE with the base's reference large vmap applied, as a hard-linked
    copy beside it (patch writes new files: TREE stays as it is)."""
    ref = os.path.join(os.path.dirname(tree), 'reference-tree')
    shutil.rmtree(ref, ignore_errors=True)
    run(['cp', '-al', tree, ref], what=f'cp -al {tree} {ref}')
    patches = sorted(Path(lib.ROOT, 'scripts/patches', base,
                          'reference').glob('*vmalloc*'))
    if not patches:
        lib.die(f'no large vmap among the {base} reference patches')
    for p in patches:
        run(['patch', '-s', '-p1', '-d', ref, '-i', str(p)],
            what=f'{p.name} does not apply to {tree}')
    return ref


def series_runs(tree: str, archs: str, kernelci: bool, base: str) -> int:
    """kunit.py in TREE as its users run it; 1 if a run that should pass
    did not."""
    dirs = os.path.join(lib.cache(), 'kunitpy')
    out = os.path.join(lib.out(), 'kunitpy')
    if not os.access(os.path.join(tree, KUNIT_PY), os.X_OK):
        lib.die(f'no kernel tree with kunit.py at {tree} '
                '(PYTHONPATH=scripts python3 -m perf_aux series --check)')
    # kunit.py makes its build directory with os.mkdir(): the parent first.
    os.makedirs(out, exist_ok=True)
    os.makedirs(dirs, exist_ok=True)
    fail = False
    for kc, suite in SERIES_SUITES:
        for arch in (archs or ' '.join(KUNITPY_CROSS)).split():
            log = f'{out}/{arch}-{suite}.log'
            cross = KUNITPY_CROSS[arch]
            # UML as a maintainer gets it: kunit.py's default.
            archarg = [] if arch == 'um' else [f'--arch={arch}']
            rc = kunit_py(f'{dirs}/{arch}-{suite}', log,
                          ['run', f'--kunitconfig={kc}', *archarg,
                           *([f'--cross_compile={cross}'] if cross else [])],
                          tree, cross)
            if (arch, suite) == ('um', 'perf_aux_alloc'):
                # UML has no perf events: kunit.py refuses, and says why.
                missing = first_missing(log)
                print(f'kunit.py run (UML) --kunitconfig={kc}: rc={rc}: UML '
                      f'has no perf events: kunit.py: {missing}')
                fail |= 'CONFIG_PERF_EVENTS' not in missing
            else:
                print(f"kunit.py run {archarg[0] if archarg else '(UML)'} "
                      f'--kunitconfig={kc}: rc={rc}: {summary(log)}')
                fail |= rc != 0
    ref = reference_tree(tree, base)
    kc = 'mm/tests/vmap_granule_kunit.kunitconfig'
    for arch in REFERENCE_ARCHS:
        if archs and arch not in archs.split():
            continue
        cross = KUNITPY_CROSS[arch]
        log = f'{out}/{arch}-vmap_granule-reference.log'
        rc = kunit_py(f'{dirs}/{arch}-vmap_granule-reference', log,
                      ['run', f'--kunitconfig={kc}', f'--arch={arch}',
                       *([f'--cross_compile={cross}'] if cross else [])],
                      ref, cross)
        print(f'kunit.py run --arch={arch} --kunitconfig={kc} (reference '
              f'large vmap): rc={rc}: {summary(log)}')
        fail |= rc != 0
    # UML with every test option of the series it can have, built (the
    # kernel test robot's UML builds reach them).
    rc = kunit_py(f'{dirs}/um-all', f'{out}/um-all-options.log',
                  ['build', '--kunitconfig=mm/tests/vmap_granule_kunit.'
                   'kunitconfig',
                   '--kconfig_add=CONFIG_VMAP_GRANULE_KUNIT_TEST_STRICT=y',
                   '--kconfig_add=CONFIG_TEST_VMALLOC=y'], tree)
    print(f'kunit.py build (UML) with every test option UML has: rc={rc}')
    fail |= rc != 0
    if not kernelci:
        return int(fail)
    # KernelCI's kunit-x86_64: its three steps, its JSON.
    log = f'{out}/kernelci-x86_64.log'
    rc = 0
    for step, step_log, extra in (
            ('config', f'{log}.config', []), ('build', f'{log}.build', []),
            ('exec', log, [f'--json={out}/kernelci-x86_64.json'])):
        rc = kunit_py(f'{dirs}/x86_64-all', step_log,
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


def main(argv: List[str]) -> int:
    """kunit NAME TARGET VARIANT LOG [KERNEL_ARG...], or kunit --series
    [TREE]; BASE and the check's id from the environment."""
    env = os.environ
    base = env.get('BASE') or lib.default_base()
    if argv[:1] == ['--series']:
        tree = argv[1] if len(argv) > 1 else \
            os.path.join(lib.cache(), 'series', base, 'tree')
        return series_runs(tree, env.get('KUNITPY_ARCHS', ''),
                           (env.get('KUNITPY_KERNELCI') or '1') == '1', base)
    if len(argv) < 4:
        print('usage: python3 -m perf_aux kunit NAME TARGET VARIANT LOG '
              '[KERNEL_ARG...]', file=sys.stderr)
        return 2
    r = Run(argv[0], base, lib.check_target(argv[1]),
            lib.check('VARIANT', argv[2], lib.VARIANTS), tuple(argv[4:]))
    return kunit(r, argv[3], env.get('PERF_AUX_CHECK_ID', ''))
