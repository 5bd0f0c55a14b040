# SPDX-License-Identifier: GPL-2.0
"""The kselftest boot: the tree's selftests built static, packed with
busybox and scripts/initramfs/init by the kernel's own gen_init_cpio (no
root, no mknod), booted under QEMU on the kernel perf_aux kunit built.
KSELFTEST_ROOTFS=DIR boots a Debian root filesystem instead, the way
KernelCI and LKFT run the kselftests (test-definitions from TESTDEFS_DIR).
"""

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import List, NamedTuple, Optional, Sequence

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
                f'ARCH={self.arch}',
                *([f'CROSS_COMPILE={self.cross}'] if self.cross else []),
                *args]


def entries(top: str) -> List[str]:
    """Every name under TOP (links not entered), relative, collated."""
    found = []
    for path, dirs, names in os.walk(top):
        rel = os.path.relpath(path, top)
        found += [name if rel == '.' else os.path.join(rel, name)
                  for name in dirs + names]
    return lib.collated(found)


def selftests(b: Build, targets: str) -> int:
    """The selftests of TARGETS installed (static) in
    BUILD/kselftest_install; a failing make leaves the boot to fail."""
    install = os.path.join(b.build, 'kselftest_install')
    rc = status(b.make('headers_install'))
    if rc:
        print(f'kselftests: headers_install exit {rc}')
    shutil.rmtree(install, ignore_errors=True)
    rc = status(b.make(f'TARGETS={targets}', 'USERLDFLAGS=-static',
                       f'KSFT_INSTALL_PATH={install}', 'install',
                       directory=os.path.join(b.tree,
                                              'tools/testing/selftests')))
    if rc:
        print(f'kselftests: the install of {targets} exit {rc}')
    listed = Path(install, 'kselftest-list.txt')
    if listed.is_file() and listed.stat().st_size:
        names = [line.split(':')[1] if ':' in line else line
                 for line in listed.read_text(
                     errors='surrogateescape').splitlines()]
        print(' '.join(['kselftests:', *' '.join(names).split()]))
    else:
        print(f'kselftests: TARGETS={targets} holds no test yet')
    return 0


def cpio_list(root: str, busybox: str, ksft: str) -> List[str]:
    """gen_init_cpio's entries: busybox, the init, the kselftests."""
    lines = [f'dir /{d} 0755 0 0' for d in INITRAMFS_DIRS]
    lines += ['nod /dev/console 0600 0 0 c 5 1',
              f'file /bin/busybox {busybox} 0755 0 0',
              f'file /init {root}/scripts/initramfs/init 0755 0 0']
    for f in entries(ksft):
        path = os.path.join(ksft, f)
        if os.path.isdir(path):
            lines.append(f'dir /kselftest/{f} 0755 0 0')
        else:
            mode = format(os.lstat(path).st_mode & 0o7777, 'o')
            lines.append(f'file /kselftest/{f} {path} {mode} 0 0')
    return lines


def modules_list(top: str) -> List[str]:
    """gen_init_cpio's entries of the modules under TOP, links left out."""
    return [f'dir /{f} 0755 0 0' if os.path.isdir(f'{top}/{f}') else
            f'file /{f} {top}/{f} 0644 0 0'
            for f in entries(top) if not os.path.islink(f'{top}/{f}')]


def gzip_of(argv: Sequence[str], out: str, cwd: Optional[str] = None,
            stdin=None) -> int:
    """ARGV | gzip -1 > OUT; the first failing status of the two."""
    sys.stdout.flush()
    with open(out, 'wb') as f:
        with subprocess.Popen(argv, cwd=cwd, stdin=stdin,
                              stdout=subprocess.PIPE) as producer:
            rc = status(['gzip', '-1'], stdin=producer.stdout, stdout=f)
            producer.stdout.close()
    return producer.returncode or rc


def busybox_initramfs(root: str, b: Build, busybox: str) -> int:
    """BUILD/initramfs.cpio.gz, a modular kernel's modules included."""
    lines = cpio_list(root, busybox, f'{b.build}/kselftest_install')
    config = Path(b.build, '.config').read_bytes()
    if b'\nCONFIG_MODULES=y\n' in b'\n' + config:
        mods = os.path.join(b.build, 'modules_install')
        shutil.rmtree(mods, ignore_errors=True)
        rc = status(b.make(f'INSTALL_MOD_PATH={mods}', 'INSTALL_MOD_STRIP=1',
                           'modules_install'))
        if rc:
            return rc
        lines += modules_list(mods)
    listed = os.path.join(b.build, 'initramfs.list')
    Path(listed).write_text(''.join(line + '\n' for line in lines),
                            errors='surrogateescape')
    return gzip_of([os.path.join(b.build, 'usr/gen_init_cpio'), listed],
                   os.path.join(b.build, 'initramfs.cpio.gz'))


def rootfs_initramfs(root: str, rootfs: str, ksft: str, testdefs: str,
                     out: str, init: str = 'testdefs-init') -> int:
    """ROOTFS with the kselftests where KernelCI has them, test-definitions
    and scripts/initramfs/INIT as /init, as a gzipped cpio (owners and nodes
    kept)."""
    work = tempfile.mkdtemp()
    try:
        steps = [['cp', '-a', f'{rootfs}/.', f'{work}/'],
                 ['mkdir', '-p', f'{work}/opt/kselftests'],
                 ['cp', '-a', ksft, f'{work}/opt/kselftests/mainline'],
                 ['install', '-m', '0755',
                  f'{root}/scripts/initramfs/{init}', f'{work}/init']]
        if testdefs:
            steps.append(['cp', '-a', testdefs,
                          f'{work}/opt/test-definitions'])
        for argv in steps:
            run(argv, check=True)
        names = ''.join(f'./{f}\n' for f in entries(work)).encode(
            'utf-8', 'surrogateescape')
        with tempfile.TemporaryFile() as listing:
            listing.write(names)
            listing.seek(0)
            return gzip_of(['cpio', '-o', '-H', 'newc', '--quiet'], out,
                           cwd=work, stdin=listing)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def qemu(target: str, b: Build, cmdline: str, cpu: str) -> List[str]:
    """QEMU for TARGET booting BUILD's kernel with CMDLINE."""
    if target.startswith('arm64-'):
        return ['qemu-system-aarch64', '-machine', 'virt', '-cpu', cpu,
                '-kernel', os.path.join(b.build, 'arch/arm64/boot/Image.gz'),
                '-append', f'console=ttyAMA0 {cmdline}']
    return ['qemu-system-x86_64',
            '-kernel', os.path.join(b.build, 'arch/x86/boot/bzImage'),
            '-append', f'console=ttyS0 {cmdline}']


def boot(target: str, b: Build, initrd: str, log: str, cpus: str,
         args: Sequence[str], extra: int = 0) -> int:
    """INITRD booted on CPUS CPUs with ARGS, under timeout (EXTRA seconds
    more), the console in LOG.  An oops panics, and panic=-1 ends the
    boot at once."""
    cmdline = ' '.join(['panic=-1 oops=panic kunit.enable=0',
                        *lib.vmalloc_args('-', 'off'), 'rdinit=/init', *args])
    return status(['timeout', str(BOOT_SECONDS + extra),
                   *qemu(target, b, cmdline, lib.ARM64_QEMU_CPU),
                   '-nodefaults', '-m', str(lib.GUEST_MEMORY_MIB),
                   '-smp', cpus,
                   '-initrd', initrd, '-no-reboot', '-nographic', '-serial',
                   'stdio'], stdin=DEVNULL, log=log)


def marked(log: str) -> List[bytes]:
    """The log's lines of the init's and the tests' own (PERF_AUX: ...)."""
    with open(log, 'rb') as f:
        return [line.rstrip(b'\n') + b'\n' for line in f
                if line.startswith(MARK)]


def kselftest(r: Run, log: str, targets: str = '', rootfs: str = '',
              testdefs: str = '') -> int:
    """R's kselftests of TARGETS booted (ROOTFS: on that root filesystem),
    the console in LOG; the marked lines shown."""
    env = os.environ
    targets = targets or env.get('KSELFTEST_TARGETS') or 'perf_aux perf_events'
    rootfs = rootfs or env.get('KSELFTEST_ROOTFS', '')
    b = Build(r.tree, os.path.join(r.tree, lib.build_dir(r.target, r.variant)),
              lib.target_arch(r.target), lib.target_cross(r.target))
    busybox = os.path.join(lib.cache(), 'busybox/arm64/busybox') \
        if r.target.startswith('arm64-') else '/bin/busybox'
    if not os.access(busybox, os.X_OK):
        die(f'no busybox for {r.target} (run PYTHONPATH=scripts '
            f'python3 -m perf_aux deps {r.target})')
    cpus = str(lib.variant_cpus(r.variant))
    # A soak's own time on top, and the sanitizers'.
    extra = int(env.get('BOOT_EXTRA_SECONDS') or 0)
    if r.variant == 'soak':
        extra = int(env.get('DURATION') or 600)
    elif r.variant == 'sanitize':
        extra = SANITIZE_EXTRA_SECONDS
    stage(f'build kselftests {r.kernel}-{r.target}', selftests, b, targets)
    if rootfs:
        initrd = os.path.join(b.build, 'initramfs-rootfs.cpio.gz')
        rc = rootfs_initramfs(lib.ROOT, rootfs,
                              os.path.join(b.build, 'kselftest_install'),
                              testdefs or env.get('TESTDEFS_DIR', ''), initrd)
        rc = rc or stage(f'boot test-definitions {r.name}', boot, r.target,
                         b, initrd, log, cpus, r.kargs, extra)
        if rc:
            return rc
        lines = marked(log)
        show(b''.join(lines))
        if not lines:
            die('the test-definitions boot printed nothing of ours')
        return 0
    rc = busybox_initramfs(lib.ROOT, b, busybox)
    if rc:
        return rc
    rc = stage(f'boot kselftests {r.name}', boot, r.target, b,
               os.path.join(b.build, 'initramfs.cpio.gz'), log, cpus,
               [*r.kargs, *lib.variant_args(r.variant)], extra)
    if rc:
        return rc
    lines = marked(log)
    if not lines:
        show(b''.join(Path(log).read_bytes().splitlines(True)[-30:]))
        die(f'the kselftest boot of {r.kernel}-{r.target} printed nothing '
            'of ours')
    show(b''.join(lines))
    return 0


def main(argv: List[str]) -> int:
    """kselftest NAME TARGET VARIANT LOG [KERNEL_ARG...]."""
    if len(argv) < 4:
        print('usage: python3 -m perf_aux kselftest NAME TARGET VARIANT LOG '
              '[KERNEL_ARG...]', file=sys.stderr)
        return 2
    r = Run(argv[0], os.environ.get('BASE') or lib.default_base(),
            argv[1], argv[2], tuple(argv[4:]))
    return kselftest(r, argv[3])
