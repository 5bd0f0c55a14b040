# SPDX-License-Identifier: GPL-2.0
"""The kernel build and KUnit boot by the tree's kunit.py; kunit.py as users run it."""

import hashlib
import json
import os
import re
import shutil
from collections import Counter
from pathlib import Path
from typing import Dict, Iterator, List, Sequence, Tuple

from . import lib
from .lib import DEVNULL, KUNIT_PY, PIPE, Run, read, run, status
from .shell import stage
from .tree import seed_build

# kunit --series: kunit.py's architectures and their Debian cross compilers.
KUNITPY_CROSS = {'x86_64': '', 'arm64': 'aarch64-linux-gnu-', 'riscv': 'riscv64-linux-gnu-',
                 'powerpc': 'powerpc64-linux-gnu-', 's390': 's390x-linux-gnu-', 'i386': '',
                 'arm': 'arm-linux-gnueabihf-', 'um': ''}
BUILT = '.perf_aux-built'
VERDICT = re.compile(r'^\[..:..:..\] (Testing complete\.|Elapsed time)')
SERIES_SUITES = (('kernel/events/ring_buffer_kunit.kunitconfig', 'perf_aux_alloc'),
                 ('mm/tests/vmap_granule_kunit.kunitconfig', 'vmap_granule'))
EXEC_SECONDS = 900
# The granule suite fails, not skips, where vmap() maps smaller than a run allows.
GRANULE_STRICT = 'vmap_granule_kunit.strict=1'
# KCSAN's scope, as variant-kcsan.config says: make evaluates it per object.
KCSAN_SCOPE = ('$(if $(filter kernel/events/% mm/vmalloc mm/tests/% lib/test_aux_pmu,'
               '$(obj)/$(target-stem)),y,n)')
# Where the architecture has huge vmap: the granule suite runs with the reference large vmap.
REFERENCE_ARCHS = ('x86_64', 'arm64', 'riscv', 'powerpc')

def without_kvm(argv: Sequence[str]) -> List[str]:
    """ARGV with /dev/kvm hidden (nested KVM killed the x86_64 guest): under TCG."""
    if os.path.exists('/dev/kvm'):
        return ['unshare', '--mount', '--', 'sh', '-c',
                'mount --bind /dev/null /dev/kvm && exec "$@"', 'sh', *argv]
    return list(argv)

def kunit_py(build: str, log: str, args: Sequence[str], cwd: str, cross: str = '') -> int:
    """kunit.py ARGS in tree CWD with build directory BUILD and ccache, its output in LOG."""
    opts = ['--timeout=900'] if args[0] in ('run', 'exec') else []
    return status(without_kvm(['timeout', '1800', 'python3', KUNIT_PY, *args,
                               f'--build_dir={build}', *opts,
                               f'--make_options=CC=ccache {cross}gcc']),
                  cwd=cwd, log=log, env=lib.exports())

def ccache_line(stats: str) -> str:
    """How many compilations ccache answered (ccache --print-stats)."""
    n = Counter({key: int(value) for key, _, value in (line.partition('\t')
                                                         for line in stats.splitlines())
                 if value.isdigit()})
    hit = n['direct_cache_hit'] + n['preprocessed_cache_hit']
    total = hit + n['cache_miss']
    return f'ccache: {hit} of {total} compilations hit ({100 * hit // total if total else 100} %)'

def stack_erase_option(tree: str) -> str:
    """KSTACK_ERASE since 6.16, GCC_PLUGIN_STACKLEAK before (for kmemleak)."""
    kconfig = read(os.path.join(tree, 'security/Kconfig.hardening'))
    return 'CONFIG_KSTACK_ERASE' if re.search(r'^config KSTACK_ERASE$', kconfig, re.M) else \
        'CONFIG_GCC_PLUGIN_STACKLEAK'

def build_key(tree: str, args: Sequence[str], check: str) -> str:
    """A hash of CHECK, the recipe, the build's arguments and fragments ('' outside a check)."""
    if not check:
        return ''
    digest = hashlib.sha256(f'{check}\n'.encode())
    digest.update(Path(tree, '.perf_aux-recipe').read_bytes())
    for a in args:
        digest.update(os.fsencode(a + '\n'))
        if a.startswith('--kunitconfig='):
            digest.update(Path(a[len('--kunitconfig='):]).read_bytes())
    return digest.hexdigest()

def config_files(root: str, arch: str, target: str, variant_config: str) -> List[str]:
    """The kunitconfig fragments of a build, those that exist."""
    files = [f'{root}/kernel/events/ring_buffer_kunit.kunitconfig',
             f'{root}/mm/tests/vmap_granule_kunit.kunitconfig',
             f'{root}/scripts/config/boot.config', f'{root}/scripts/config/arch-{arch}.config',
             f'{root}/scripts/config/{target}.config', *variant_config.split()]
    return [f for f in files if os.path.isfile(f)]

def kernel_args(tree: str, variant: str, args: Sequence[str]) -> List[str]:
    """panic=-1, the vmap benchmark (unless ARGS set test_vmalloc's), ARGS, the variant's."""
    if not any(a.startswith('test_vmalloc.') for a in args):
        args = [*lib.vmalloc_args(tree, 'bench'), *args]
    args = [*args, *lib.variant_args(variant)]
    return ['--kernel_args=panic=-1', *(f'--kernel_args={a}' for a in args)]

def kunit_build(tree: str, log: str, args: Sequence[str], env: Dict[str, str]) -> int:
    run(['ccache', '--zero-stats'], stdout=DEVNULL, env=env)
    if run(['python3', KUNIT_PY, 'build', *args], log=log, cwd=tree, env=env).returncode:
        lib.show(b''.join(Path(log).read_bytes().splitlines(True)[-40:]))
        return 2
    print(ccache_line(run(['ccache', '--print-stats'], stdout=PIPE, env=env).stdout))
    return 0

def kunit_exec(tree: str, log: str, args: Sequence[str]) -> int:
    rc = run(without_kvm(['timeout', str(EXEC_SECONDS), 'python3', KUNIT_PY, 'exec', *args]),
             log=log, cwd=tree).returncode
    for line in read(log).splitlines():
        if VERDICT.match(line):
            print(line)
    return rc

def kunit(r: Run, log: str, check: str = '') -> int:
    """R's kernel built (once per CHECK), KUnit booted: 0 passed, 1 failed, 2 no build."""
    tree, build = r.tree, lib.build_dir(r.target, r.variant)
    arch, cross = lib.target_arch(r.target)
    common = [f'--arch={arch}', f'--build_dir={build}',
              *([f'--cross_compile={cross}'] if cross else [])]
    configs = [f'--kunitconfig={c}' for c in config_files(
        lib.ROOT, arch, r.target, lib.variant_config(r.variant))]
    env = lib.exports()
    # sanitize: test_aux_pmu a module, kernel stacks erased; ccache hashes the GCC plugins'
    # sources, not the plugin each build directory builds, so that plugin builds share objects.
    if lib.variant_build(r.variant) == 'sanitize':
        configs += ['--kconfig_add=CONFIG_TEST_AUX_PMU=m', '--kconfig_add=CONFIG_GCC_PLUGINS=y',
                    f'--kconfig_add={stack_erase_option(tree)}=y']
        env.update(CCACHE_IGNOREOPTIONS='-fplugin=*', CCACHE_EXTRAFILES=':'.join(
            lib.collated(str(p) for p in Path(tree, 'scripts/gcc-plugins').glob('*.[ch]'))))
    if lib.variant_build(r.variant) == 'kcsan':
        configs.append(f'--make_options=KCSAN_SANITIZE={KCSAN_SCOPE}')
    configs += [f'--make_options=CC=ccache {cross}gcc']
    if r.kernel != 'custom':
        seed_build(tree, build, r.base)
    key = build_key(tree, [*common, *configs], check)
    built = os.path.join(tree, build, BUILT)
    what = f'build {lib.tree_name(r.kernel, r.base)} {build}'
    if key and read(built) == key + '\n':
        print(f'{what}: built earlier in this check, unchanged')
    else:
        Path(built).unlink(missing_ok=True)
        if stage(what, kunit_build, tree, f'{log}.build', [*common, *configs], env):
            return 2
        if key:
            Path(built).write_text(key + '\n')
    # After kunit.py's own -m and -cpu, which they override; at 64K 8 GiB runs the PMD shapes.
    strict = [GRANULE_STRICT] if lib.granule_strict(r.kernel, r.variant) else []
    kargs = [*kernel_args(tree, r.variant, [*r.kargs, *strict]),
             f"--qemu_args=-m {8192 if r.target == 'arm64-64k' else lib.GUEST_MEMORY_MIB}",
             *([f'--qemu_args=-cpu {lib.ARM64_QEMU_CPU}'] if arch == 'arm64' else [])]
    rc = stage(f'KUnit {r.name}', kunit_exec, tree, f'{log}.exec',
               [*common, '--timeout=600', *kargs])
    if not os.path.isfile(f'{tree}/{build}/test.log'):
        return lib.error(f'kunit.py wrote no {tree}/{build}/test.log') or 1
    shutil.copyfile(f'{tree}/{build}/test.log', log)
    return int(bool(rc))

def summary(log: str) -> str:
    """kunit.py's verdict, or the reason it stopped."""
    lines = read(log).splitlines()
    verdict = ' '.join(line[11:] for line in lines if VERDICT.match(line))
    return verdict or next((line for line in lines if re.search(
        r'error|not satisfied|missing', line, re.I)), lines[-1] if lines else '')

def groups(group: dict) -> Iterator[dict]:
    yield group
    for sub in group.get('sub_groups', []):
        yield from groups(sub)

def kernelci_results(path: str, suites: Sequence[str]) -> Tuple[List[str], bool]:
    """Our suites in KernelCI's kunit-x86_64 JSON: a line each, and whether none failed."""
    try:
        found = {g['name']: g for g in groups(json.loads(Path(path).read_text()))}
    except (OSError, ValueError) as e:
        return [f'KernelCI JSON: {e}'], False
    lines, ok = [], True
    for name in suites:
        if name not in found:
            lines.append(f'KernelCI JSON: suite {name} not run')
            ok = False
            continue
        # Parameterised cases are groups of their own, below the suite.
        n = Counter(t['status'] for s in groups(found[name]) for t in s.get('test_cases', []))
        lines.append(f'KernelCI JSON: {name}: {sum(n.values())} cases, '
                     + ', '.join(f'{v} {k}' for k, v in sorted(n.items())))
        ok = ok and not n.get('FAIL') and not n.get('ERROR')
    return lines, ok

def series_runs(base: str) -> int:
    """kunit.py in the series tree as its users run it: 1 if a run that should pass did not."""
    tree, ref = f'{lib.cache()}/series/{base}/tree', f'{lib.cache()}/series/{base}/reference-tree'
    dirs, out = f'{lib.cache()}/kunitpy', f'{lib.out()}/kunitpy'
    if not os.access(os.path.join(tree, KUNIT_PY), os.X_OK):
        lib.die(f'no kernel tree with kunit.py at {tree} '
                '(PYTHONPATH=scripts python3 -m perf_aux series --check)')
    # kunit.py makes its build directory with os.mkdir(): the parent first.
    os.makedirs(out, exist_ok=True)
    os.makedirs(dirs, exist_ok=True)
    # REF: a hard-linked copy with the base's reference large vmap (patch writes new files).
    shutil.rmtree(ref, ignore_errors=True)
    run(['cp', '-al', tree, ref], what=f'cp -al {tree} {ref}')
    for p in sorted(Path(lib.ROOT, 'scripts/patches', base, 'reference').glob('*vmalloc*')) or \
            lib.die(f'no large vmap among the {base} reference patches'):
        run(['patch', '-s', '-p1', '-d', ref, '-i', str(p)],
            what=f'{p.name} does not apply to {tree}')
    runs = [(f'{arch}-{suite}', arch, kc, tree) for kc, suite in SERIES_SUITES
            for arch in KUNITPY_CROSS]
    runs += [(f'{arch}-vmap_granule-reference', arch, SERIES_SUITES[1][0], ref)
             for arch in REFERENCE_ARCHS]
    fail = False
    for name, arch, kc, where in runs:
        cross = KUNITPY_CROSS[arch]
        rc = kunit_py(f'{dirs}/{name}', f'{out}/{name}.log',
                      ['run', f'--kunitconfig={kc}', *([f'--arch={arch}'] if arch != 'um' else []),
                       *([f'--cross_compile={cross}'] if cross else [])], where, cross)
        if name == 'um-perf_aux_alloc':
            # UML has no perf events: kunit.py refuses, and says why.
            missing = next((line for line in read(f'{out}/{name}.log').splitlines()
                            if line.startswith('Missing:')), '')
            print(f'kunit.py run (UML) --kunitconfig={kc}: rc={rc}: UML has no perf events: '
                  f'kunit.py: {missing}')
            fail |= 'CONFIG_PERF_EVENTS' not in missing
            continue
        print(f"kunit.py run {'(UML)' if arch == 'um' else f'--arch={arch}'} --kunitconfig={kc}"
              f"{' (reference large vmap)' if where == ref else ''}: rc={rc}: "
              f"{summary(f'{out}/{name}.log')}")
        fail |= rc != 0
    # UML with every test option of the series it can have, built (the kernel test robot's).
    rc = kunit_py(f'{dirs}/um-all', f'{out}/um-all-options.log',
                  ['build', f'--kunitconfig={SERIES_SUITES[1][0]}',
                   '--kconfig_add=CONFIG_TEST_VMALLOC=y'], tree)
    print(f'kunit.py build (UML) with every test option UML has: rc={rc}')
    # KernelCI's kunit-x86_64: its three steps, its JSON.
    log = f'{out}/kernelci-x86_64.log'
    for step, step_log, extra in (('config', f'{log}.config', []),
                                  ('build', f'{log}.build', []),
                                  ('exec', log, [f'--json={out}/kernelci-x86_64.json'])):
        step_rc = kunit_py(f'{dirs}/x86_64-all', step_log, [step, '--arch=x86_64', *extra], tree)
        if step_rc:
            break
    print('kunit.py config/build/exec --arch=x86_64 --json (KernelCI): '
          f'rc={step_rc}: {summary(log)}')
    lines, ok = kernelci_results(f'{out}/kernelci-x86_64.json',
                                 [suite for _, suite in SERIES_SUITES])
    print(''.join(line + '\n' for line in lines), end='')
    return int(fail or rc != 0 or not ok)

def main(argv: List[str]) -> int:
    """kunit NAME TARGET VARIANT LOG [KERNEL_ARG...], or kunit --series."""
    env = os.environ
    base = env.get('BASE') or lib.default_base()
    if argv[:1] == ['--series']:
        return series_runs(base)
    if len(argv) < 4:
        lib.die('usage: python3 -m perf_aux kunit NAME TARGET VARIANT LOG [KERNEL_ARG...]')
    r = Run(argv[0], base, lib.check('TARGET', argv[1], lib.TARGETS),
            lib.check('VARIANT', argv[2], lib.VARIANTS), tuple(argv[4:]))
    return kunit(r, argv[3], env.get('PERF_AUX_CHECK_ID', ''))
