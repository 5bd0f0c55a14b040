# SPDX-License-Identifier: GPL-2.0
"""The kselftest boot: static selftests in a busybox initramfs, or in KSELFTEST_ROOTFS."""

import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import List, NamedTuple, Sequence

from . import lib
from .lib import DEVNULL, Run, die, run, show, status
from .shell import stage

INITRAMFS_DIRS = ('dev', 'proc', 'sys', 'tmp', 'bin', 'sbin', 'kselftest')
BOOT_SECONDS = 1200
# Under the sanitizers fragment_test's fills alone take up to 16 minutes.
SANITIZE_EXTRA_SECONDS = 1200
MARK = b'PERF_AUX: '

class Build(NamedTuple):
    """A kernel build of a tree: where, and for which ARCH."""
    tree: str
    build: str
    arch: str
    cross: str

    def make(self, *args: str, directory: str = '') -> List[str]:
        return ['make', '-s', '-C', directory or self.tree, f'O={self.build}',
                f'ARCH={self.arch}', *([f'CROSS_COMPILE={self.cross}'] if self.cross else []),
                *args]

def entries(top: str) -> List[str]:
    """Every name under TOP (links not entered), relative, collated."""
    return lib.collated(os.path.relpath(os.path.join(d, name), top)
                        for d, dirs, names in os.walk(top) for name in dirs + names)

def selftests(b: Build, targets: str) -> int:
    """TARGETS' selftests installed in BUILD/kselftest_install (a failure fails the boot)."""
    install = os.path.join(b.build, 'kselftest_install')
    rc = status(b.make('headers_install'))
    if rc:
        print(f'kselftests: headers_install exit {rc}')
    shutil.rmtree(install, ignore_errors=True)
    rc = status(b.make(f'TARGETS={targets}', 'USERLDFLAGS=-static',
                       f'KSFT_INSTALL_PATH={install}', 'install',
                       directory=os.path.join(b.tree, 'tools/testing/selftests')))
    if rc:
        print(f'kselftests: the install of {targets} exit {rc}')
    listed = Path(install, 'kselftest-list.txt')
    names = listed.read_text(errors='surrogateescape').split() if listed.is_file() else []
    print(' '.join(['kselftests:', *(n.split(':', 1)[-1] for n in names)]) if names else
          f'kselftests: TARGETS={targets} holds no test yet')
    return 0

def cpio_entries(top: str, dest: str, mode: str = '') -> List[str]:
    """gen_init_cpio's lines of TOP's files at DEST, links left out, in MODE (else their own)."""
    paths = [(f, os.path.join(top, f)) for f in entries(top) if not os.path.islink(f'{top}/{f}')]
    return [f'dir {dest}/{f} 0755 0 0' if os.path.isdir(path) else
            f"file {dest}/{f} {path} {mode or format(os.stat(path).st_mode & 0o7777, 'o')} 0 0"
            for f, path in paths]

def gzipped(argv: Sequence[str], out: str, **kw) -> int:
    """ARGV's output gzipped (-1) into OUT (a name ending in .gz); the first failing status."""
    with open(out[:-3], 'wb') as f:
        rc = status(argv, stdout=f, **kw)
    return rc or status(['gzip', '-1', '-f', out[:-3]])

def busybox_initramfs(root: str, b: Build, busybox: str) -> int:
    """BUILD/initramfs.cpio.gz: busybox, the init, the kselftests, a modular kernel's modules."""
    lines = [*(f'dir /{d} 0755 0 0' for d in INITRAMFS_DIRS), 'nod /dev/console 0600 0 0 c 5 1',
             f'file /bin/busybox {busybox} 0755 0 0',
             f'file /init {root}/scripts/initramfs/init 0755 0 0',
             *cpio_entries(f'{b.build}/kselftest_install', '/kselftest')]
    if b'\nCONFIG_MODULES=y\n' in b'\n' + Path(b.build, '.config').read_bytes():
        mods = os.path.join(b.build, 'modules_install')
        shutil.rmtree(mods, ignore_errors=True)
        rc = status(b.make(f'INSTALL_MOD_PATH={mods}', 'INSTALL_MOD_STRIP=1', 'modules_install'))
        if rc:
            return rc
        lines += cpio_entries(mods, '', '0644')
    listed = os.path.join(b.build, 'initramfs.list')
    Path(listed).write_text(''.join(line + '\n' for line in lines), errors='surrogateescape')
    return gzipped([os.path.join(b.build, 'usr/gen_init_cpio'), listed],
                   os.path.join(b.build, 'initramfs.cpio.gz'))

def rootfs_initramfs(root: str, rootfs: str, ksft: str, testdefs: str, out: str,
                     init: str = 'testdefs-init') -> int:
    """ROOTFS with the kselftests as KernelCI has them, TESTDEFS and INIT, as a cpio.gz OUT."""
    work = tempfile.mkdtemp()
    try:
        run(['cp', '-a', f'{rootfs}/.', f'{work}/'], check=True)
        os.makedirs(f'{work}/opt/kselftests', exist_ok=True)
        run(['cp', '-a', ksft, f'{work}/opt/kselftests/mainline'], check=True)
        run(['install', '-m', '0755', f'{root}/scripts/initramfs/{init}', f'{work}/init'],
            check=True)
        if testdefs:
            run(['cp', '-a', testdefs, f'{work}/opt/test-definitions'], check=True)
        with tempfile.TemporaryFile() as names:
            names.write(os.fsencode(''.join(f'./{f}\n' for f in entries(work))))
            names.seek(0)
            return gzipped(['cpio', '-o', '-H', 'newc', '--quiet'], out, cwd=work, stdin=names)
    finally:
        shutil.rmtree(work, ignore_errors=True)

def boot(target: str, b: Build, initrd: str, log: str, cpus: str, args: Sequence[str],
         extra: int = 0) -> int:
    """INITRD booted with ARGS, the console in LOG; an oops panics, and panic=-1 ends it."""
    cmdline = ' '.join(['panic=-1 oops=panic kunit.enable=0', *lib.vmalloc_args('-', 'off'),
                        'rdinit=/init', *args])
    qemu = ['qemu-system-aarch64', '-machine', 'virt', '-cpu', lib.ARM64_QEMU_CPU, '-kernel',
            f'{b.build}/arch/arm64/boot/Image.gz', '-append', f'console=ttyAMA0 {cmdline}'] \
        if target.startswith('arm64-') else ['qemu-system-x86_64', '-kernel',
                                             f'{b.build}/arch/x86/boot/bzImage', '-append',
                                             f'console=ttyS0 {cmdline}']
    return status(['timeout', str(BOOT_SECONDS + extra), *qemu, '-nodefaults', '-m',
                   str(lib.GUEST_MEMORY_MIB), '-smp', cpus, '-initrd', initrd, '-no-reboot',
                   '-nographic', '-serial', 'stdio'], stdin=DEVNULL, log=log)

def marked(log: str) -> List[bytes]:
    """The log's lines of the init's and the tests' own (PERF_AUX: ...)."""
    with open(log, 'rb') as f:
        return [line.rstrip(b'\n') + b'\n' for line in f if line.startswith(MARK)]

def extra_seconds(r: Run, duration: str) -> int:
    """R's boot time beyond BOOT_SECONDS: a soak's DURATION, the sanitizers'
    own, and the whole again for each of make repeat's rounds past the first."""
    extra = {'soak': int(duration), 'sanitize': SANITIZE_EXTRA_SECONDS}.get(r.variant, 0)
    rounds = max([int(a.split('=')[1]) for a in r.kargs
                  if re.fullmatch(r'perf_aux\.repeat=[1-9][0-9]*', a)], default=1)
    return (BOOT_SECONDS + extra) * rounds - BOOT_SECONDS

def kselftest(r: Run, log: str) -> int:
    """R's KSELFTEST_TARGETS booted (on KSELFTEST_ROOTFS), the console in LOG, our lines shown."""
    env = os.environ
    rootfs = env.get('KSELFTEST_ROOTFS', '')
    b = Build(r.tree, os.path.join(r.tree, lib.build_dir(r.target, r.variant)),
              *lib.target_arch(r.target))
    busybox = os.path.join(lib.cache(), 'busybox/arm64/busybox') \
        if r.target.startswith('arm64-') else '/bin/busybox'
    if not os.access(busybox, os.X_OK):
        die(f'no busybox for {r.target} (run PYTHONPATH=scripts python3 -m perf_aux deps '
            f'{r.target})')
    stage(f'build kselftests {r.kernel}-{r.target}', selftests, b,
          env.get('KSELFTEST_TARGETS') or 'perf_aux perf_events')
    initrd = os.path.join(b.build, 'initramfs-rootfs.cpio.gz' if rootfs else 'initramfs.cpio.gz')
    rc = rootfs_initramfs(lib.ROOT, rootfs, f'{b.build}/kselftest_install',
                          env.get('TESTDEFS_DIR', ''), initrd) if rootfs else \
        busybox_initramfs(lib.ROOT, b, busybox)
    rc = rc or stage(f"boot {'test-definitions' if rootfs else 'kselftests'} {r.name}", boot,
                     r.target, b, initrd, log, str(lib.variant_cpus(r.variant)),
                     [*r.kargs, *([] if rootfs else lib.variant_args(r.variant))],
                     extra_seconds(r, env.get('DURATION') or '600'))
    if rc:
        return rc
    lines = marked(log)
    if not lines:
        if not rootfs:
            show(b''.join(Path(log).read_bytes().splitlines(True)[-30:]))
        die('the test-definitions boot printed nothing of ours' if rootfs else
            f'the kselftest boot of {r.kernel}-{r.target} printed nothing of ours')
    show(b''.join(lines))
    return 0

def main(argv: List[str]) -> int:
    """kselftest NAME TARGET VARIANT LOG [KERNEL_ARG...]."""
    if len(argv) < 4:
        die('usage: python3 -m perf_aux kselftest NAME TARGET VARIANT LOG [KERNEL_ARG...]')
    r = Run(argv[0], os.environ.get('BASE') or lib.default_base(), argv[1], argv[2],
            tuple(argv[4:]))
    return kselftest(r, argv[3])
