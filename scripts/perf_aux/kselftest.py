# SPDX-License-Identifier: GPL-2.0
"""The kselftest boot (python3 -m perf_aux kselftest).

Builds the perf_aux kselftests with the tree's own selftests build (static,
cross-compiled), packs them with busybox and scripts/initramfs/init into an
initramfs, and boots it on the kernel perf_aux kunit built for TARGET.
The console log goes to LOG.

Usage: python3 -m perf_aux kselftest NAME TARGET VARIANT LOG [KERNEL_ARG...]

KSELFTEST_TARGETS: the selftest collections to install (perf_aux and
perf_events, of which the boot runs mmap_accounting unless told which).
KSELFTEST_ROOTFS=DIR: boot the Debian root filesystem DIR instead (perf_aux
deps testdefs), the kselftests where KernelCI's root filesystems have
them, test-definitions' files from TESTDEFS_DIR, and scripts/initramfs/
testdefs-init as /init: the way KernelCI and LKFT run them.

The initramfs is written by the kernel's own usr/gen_init_cpio from a list
of entries, so it needs no root and no mknod; the Debian root filesystem,
which has device nodes and owners of its own, goes through cpio.
"""

import os
import shutil
import subprocess
import sys
import tempfile
from typing import List, NamedTuple, Optional, Sequence

from . import lib, shell
from .files import collated, records, remove
from .shell import stage, tool

USAGE = ('usage: python3 -m perf_aux kselftest NAME TARGET VARIANT LOG '
         '[KERNEL_ARG...]')
# The directories of the busybox initramfs, before the kselftests.
INITRAMFS_DIRS = ('dev', 'proc', 'sys', 'tmp', 'bin', 'sbin', 'kselftest')
# How long a boot may take, plus a variant's own time (BOOT_EXTRA_SECONDS).
BOOT_SECONDS = 1200
# Under the sanitizers fragment_test's five fills alone take 9 to 16
# minutes in a 2 GiB guest.
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
    """find TOP -mindepth 1 | sort, less the leading "./": every name
    under TOP (a symbolic link to a directory is not entered), in the
    locale's collation."""
    found = []
    for path, dirs, names in os.walk(top):
        rel = os.path.relpath(path, top)
        for name in dirs + names:
            found.append(name if rel == '.' else os.path.join(rel, name))
    return collated(found)


def selftests(b: Build, targets: str) -> int:
    """headers_install, then the selftests of TARGETS installed (static)
    in BUILD/kselftest_install; prints what was installed.  A failing make
    does not end the run: the boot goes on with what was installed, and
    a program that is not there fails in the results; the status line
    says which make failed."""
    install = os.path.join(b.build, 'kselftest_install')
    rc = tool(b.make('headers_install'))
    if rc:
        print(f'kselftests: headers_install exit {rc}')
    remove(install)
    rc = tool(b.make(f'TARGETS={targets}', 'USERLDFLAGS=-static',
                     f'KSFT_INSTALL_PATH={install}', 'install',
                     directory=os.path.join(b.tree, 'tools/testing/selftests')))
    if rc:
        print(f'kselftests: the install of {targets} exit {rc}')
    listed = os.path.join(install, 'kselftest-list.txt')
    if os.path.isfile(listed) and os.path.getsize(listed):
        with open(listed, encoding='utf-8', errors='surrogateescape') as f:
            names = [line.split(':')[1] if ':' in line else line
                     for line in records(f.read())]
        print(' '.join(['kselftests:', *' '.join(names).split()]))
    else:
        print(f'kselftests: TARGETS={targets} holds no test yet')
    return 0


def cpio_list(root: str, busybox: str, ksft: str) -> List[str]:
    """gen_init_cpio's entries of the busybox initramfs: busybox, the
    project's init, the installed kselftests under /kselftest with their
    modes."""
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
    """gen_init_cpio's entries of the modules installed under TOP
    (lib/modules/...), at /; symbolic links (build, source) left out."""
    lines = []
    for f in entries(top):
        path = os.path.join(top, f)
        if os.path.islink(path):
            continue
        if os.path.isdir(path):
            lines.append(f'dir /{f} 0755 0 0')
        else:
            lines.append(f'file /{f} {path} 0644 0 0')
    return lines


def write_lines(path: str, lines: Sequence[str]) -> None:
    with open(path, 'w', encoding='utf-8', errors='surrogateescape') as f:
        f.write(''.join(line + '\n' for line in lines))


def gzip_of(argv: Sequence[str], out: str, cwd: Optional[str] = None,
            stdin=None) -> int:
    """ARGV | gzip -1 > OUT; the first failing status of the two."""
    sys.stdout.flush()
    with open(out, 'wb') as f:
        with subprocess.Popen(argv, cwd=cwd, stdin=stdin,
                              stdout=subprocess.PIPE) as producer:
            rc = subprocess.run(['gzip', '-1'], stdin=producer.stdout,
                                stdout=f, check=False).returncode
            producer.stdout.close()
    return producer.returncode or rc


def busybox_initramfs(root: str, b: Build, busybox: str) -> int:
    """BUILD/initramfs.cpio.gz: busybox, init, the kselftests and, for a
    kernel with modules, its modules at /lib/modules (for modprobe)."""
    lines = cpio_list(root, busybox, os.path.join(b.build, 'kselftest_install'))
    with open(os.path.join(b.build, '.config'), 'rb') as f:
        modules = b'\nCONFIG_MODULES=y\n' in b'\n' + f.read()
    if modules:
        mods = os.path.join(b.build, 'modules_install')
        remove(mods)
        rc = tool(b.make(f'INSTALL_MOD_PATH={mods}', 'INSTALL_MOD_STRIP=1',
                         'modules_install'))
        if rc:
            return rc
        lines += modules_list(mods)
    listed = os.path.join(b.build, 'initramfs.list')
    write_lines(listed, lines)
    return gzip_of([os.path.join(b.build, 'usr/gen_init_cpio'), listed],
                   os.path.join(b.build, 'initramfs.cpio.gz'))


def rootfs_initramfs(root: str, rootfs: str, ksft: str, testdefs: str,
                     out: str, init: str = 'testdefs-init') -> int:
    """The Debian root filesystem ROOTFS with the kselftests where
    KernelCI's root filesystems have them and test-definitions (TESTDEFS,
    unless empty) in it and scripts/initramfs/INIT as /init, as a gzipped
    cpio in OUT.  cp -a and cpio keep its owners and device nodes."""
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
            tool(argv, check=True)
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
         args: Sequence[str]) -> int:
    """The initramfs INITRD booted on CPUS CPUs with ARGS on the command
    line, under timeout; the console in LOG."""
    # lib/test_vmalloc.c runs in the KUnit boot only (perf_aux.kunit).
    # An oops panics and panic=-1 ends the boot at once: a task that dies
    # holding a lock would otherwise hang the rest until the timeout.
    cmdline = ' '.join(['panic=-1 oops=panic kunit.enable=0',
                        *lib.vmalloc_args('-', 'off'),
                        'rdinit=/init', *args])
    seconds = BOOT_SECONDS + int(os.environ.get('BOOT_EXTRA_SECONDS') or 0)
    argv = ['timeout', str(seconds),
            *qemu(target, b, cmdline, lib.ARM64_QEMU_CPU),
            '-nodefaults', '-m', str(lib.GUEST_MEMORY_MIB), '-smp', cpus,
            '-initrd', initrd, '-no-reboot', '-nographic', '-serial', 'stdio']
    sys.stdout.flush()
    with open(log, 'wb') as f:
        return subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=f,
                              stderr=subprocess.STDOUT).returncode


def marked(log: str) -> List[bytes]:
    """The log's lines of the init's and the tests' own (PERF_AUX: ...)."""
    with open(log, 'rb') as f:
        return [line.rstrip(b'\n') + b'\n' for line in f
                if line.startswith(MARK)]


def show(lines: Sequence[bytes]) -> None:
    sys.stdout.flush()
    sys.stdout.buffer.write(b''.join(lines))
    sys.stdout.buffer.flush()


def kselftest(name: str, target: str, variant: str, log: str,
              args: Sequence[str]) -> int:
    root = lib.ROOT
    tree = lib.tree_dir(name)
    b = Build(tree, os.path.join(tree, lib.build_dir(target, variant)),
              lib.target_arch(target), lib.target_cross(target))
    if target.startswith('arm64-'):
        busybox = os.path.join(lib.cache(), 'busybox/arm64/busybox')
    else:
        busybox = '/bin/busybox'
    if not os.access(busybox, os.X_OK):
        shell.die(f'no busybox for {target} (run PYTHONPATH=scripts '
                  f'python3 -m perf_aux deps {target})')
    run = lib.result_name(name, lib.run_base(), target, variant)
    cpus = str(lib.variant_cpus(variant))

    stage(f'build kselftests {name}-{target}', selftests, b,
          os.environ.get('KSELFTEST_TARGETS') or 'perf_aux perf_events')
    rootfs = os.environ.get('KSELFTEST_ROOTFS')
    if rootfs:
        initrd = os.path.join(b.build, 'initramfs-rootfs.cpio.gz')
        rc = rootfs_initramfs(root, rootfs,
                              os.path.join(b.build, 'kselftest_install'),
                              os.environ.get('TESTDEFS_DIR', ''), initrd)
        if rc:
            return rc
        rc = stage(f'boot test-definitions {run}', boot, target, b, initrd,
                   log, cpus, args)
        if rc:
            return rc
        lines = marked(log)
        show(lines)
        if not lines:
            shell.die('the test-definitions boot printed nothing of ours')
        return 0

    rc = busybox_initramfs(root, b, busybox)
    if rc:
        return rc
    # A soak's own time on top (make soak DURATION=...), and the sanitizers'.
    if variant == 'soak':
        os.environ['BOOT_EXTRA_SECONDS'] = os.environ.get('DURATION') or '600'
    elif variant == 'sanitize':
        os.environ['BOOT_EXTRA_SECONDS'] = str(SANITIZE_EXTRA_SECONDS)
    rc = stage(f'boot kselftests {run}', boot, target, b,
               os.path.join(b.build, 'initramfs.cpio.gz'), log, cpus,
               [*args, *lib.variant_args(variant)])
    if rc:
        return rc
    lines = marked(log)
    if not lines:
        with open(log, 'rb') as f:
            show(f.read().splitlines(keepends=True)[-30:])
        shell.die(f'the kselftest boot of {name}-{target} printed nothing of ours')
    show(lines)
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) < 4:
        print(USAGE, file=sys.stderr)
        return 2
    return shell.entry(lambda: kselftest(args[0], args[1], args[2], args[3],
                                         args[4:]))
