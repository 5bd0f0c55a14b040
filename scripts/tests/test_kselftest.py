# SPDX-License-Identifier: GPL-2.0
"""perf_aux.kselftest (the kselftest verb): the initramfs and the boot.

The initramfs list is what gen_init_cpio packs: every installed file with
its mode, every directory before what it holds, no link followed, checked
against what find, sort and stat print for the same directory.  The boot's
command line and QEMU's arguments per target; the lines of ours a console
log gives (its "\\r\\n" kept); the statuses a failing step returns.
"""

import gzip
import locale
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.dirname(HERE)
ROOT = os.path.dirname(SCRIPTS)
sys.path.insert(0, SCRIPTS)
from perf_aux import kselftest, lib, shell  # noqa: E402

class InitramfsTest(unittest.TestCase):

    def setUp(self) -> None:
        locale.setlocale(locale.LC_COLLATE, '')
        self.dir = tempfile.mkdtemp(prefix='kselftest.')
        self.ksft = os.path.join(self.dir, 'kselftest_install')
        os.makedirs(os.path.join(self.ksft, 'perf_aux', 'lib'))
        for path, mode in (('run_kselftest.sh', 0o744),
                           ('kselftest-list.txt', 0o644),
                           ('perf_aux/map_test', 0o755),
                           ('perf_aux/settings', 0o644),
                           ('perf_aux/lib/B', 0o600),
                           ('perf_aux/lib/a-b', 0o4755)):
            with open(os.path.join(self.ksft, path), 'w') as f:
                f.write(path)
            os.chmod(os.path.join(self.ksft, path), mode)
        os.symlink('perf_aux', os.path.join(self.ksft, 'alias'))

    def tearDown(self) -> None:
        shutil.rmtree(self.dir)

    def shell_names(self, top: str):
        """The names the shell version listed: find . -mindepth 1 | sort."""
        out = subprocess.run(['bash', '-c', 'cd "$1" && find . -mindepth 1 | sort',
                              'bash', top], check=True, stdout=subprocess.PIPE,
                             text=True)
        return [line[2:] for line in out.stdout.splitlines()]

    def test_entries_as_find_and_sort(self) -> None:
        self.assertEqual(self.shell_names(self.ksft),
                         kselftest.entries(self.ksft))

    def test_initramfs_list(self) -> None:
        """busybox, the init, the kselftests with their modes (as stat prints them), each
        directory before what it holds, no link; gen_init_cpio's output gzipped."""
        build = os.path.join(self.dir, 'build')
        os.makedirs(os.path.join(build, 'usr'))
        os.rename(self.ksft, os.path.join(build, 'kselftest_install'))
        self.ksft = os.path.join(build, 'kselftest_install')
        with open(os.path.join(build, '.config'), 'w') as f:
            f.write('CONFIG_MODULES=n\n')
        gen = os.path.join(build, 'usr', 'gen_init_cpio')
        with open(gen, 'w') as f:
            f.write('#!/bin/sh\ncat "$1"\n')
        os.chmod(gen, 0o755)
        b = kselftest.Build('/t', build, 'arm64', '')
        self.assertEqual(0, kselftest.busybox_initramfs(ROOT, b, '/bb'))
        with gzip.open(os.path.join(build, 'initramfs.cpio.gz'), 'rt') as f:
            lines = f.read().splitlines()
        self.assertEqual('dir /dev 0755 0 0', lines[0])
        self.assertIn('nod /dev/console 0600 0 0 c 5 1', lines)
        self.assertIn('file /bin/busybox /bb 0755 0 0', lines)
        self.assertIn(f'file /init {ROOT}/scripts/initramfs/init 0755 0 0',
                      lines)
        files = [line for line in lines if line.startswith('file /kselftest/')]
        self.assertEqual(6, len(files))
        for line in files:
            _, _, path, mode, _, _ = line.split(' ')
            stat = subprocess.run(['stat', '-c', '%a', path], check=True,
                                  stdout=subprocess.PIPE, text=True)
            self.assertEqual(stat.stdout.strip(), mode, path)
        self.assertIn('dir /kselftest/perf_aux 0755 0 0', lines)
        self.assertIn('dir /kselftest/perf_aux/lib 0755 0 0', lines)
        self.assertFalse([line for line in lines if 'alias' in line])
        # Each directory before what it holds.
        names = [line.split(' ')[1] for line in lines]
        for i, name in enumerate(names):
            parent = os.path.dirname(name)
            if parent != '/':
                self.assertLess(names.index(parent), i, name)

    def test_modules_leave_links_out(self) -> None:
        mods = os.path.join(self.dir, 'modules_install')
        ver = os.path.join(mods, 'lib/modules/7.3.0')
        os.makedirs(os.path.join(ver, 'kernel/lib'))
        with open(os.path.join(ver, 'kernel/lib/test_aux_pmu.ko'), 'w') as f:
            f.write('ko')
        os.symlink('/nowhere', os.path.join(ver, 'build'))
        self.assertEqual(
            ['dir /lib 0755 0 0', 'dir /lib/modules 0755 0 0',
             'dir /lib/modules/7.3.0 0755 0 0',
             'dir /lib/modules/7.3.0/kernel 0755 0 0',
             'dir /lib/modules/7.3.0/kernel/lib 0755 0 0',
             f'file /lib/modules/7.3.0/kernel/lib/test_aux_pmu.ko '
             f'{ver}/kernel/lib/test_aux_pmu.ko 0644 0 0'],
            kselftest.cpio_entries(mods, '', '0644'))

    def test_rootfs_initramfs(self) -> None:
        """The root, the kselftests where KernelCI has them, test-definitions, the init."""
        rootfs, testdefs = os.path.join(self.dir, 'rootfs'), os.path.join(self.dir, 'td')
        for d in (os.path.join(rootfs, 'etc'), testdefs):
            os.makedirs(d)
        with open(os.path.join(rootfs, 'etc', 'os-release'), 'w') as f:
            f.write('ID=debian\n')
        out = os.path.join(self.dir, 'rootfs.cpio.gz')
        self.assertEqual(0, kselftest.rootfs_initramfs(ROOT, rootfs, self.ksft, testdefs, out))
        with gzip.open(out) as f:
            listed = subprocess.run(['cpio', '-t', '--quiet'], input=f.read(), check=True,
                                    stdout=subprocess.PIPE).stdout.decode().split()
        for name in ('etc/os-release', 'init', 'opt/test-definitions',
                     'opt/kselftests/mainline/perf_aux/map_test'):
            self.assertIn(name, listed)

    def test_gzipped_gives_the_failing_status(self) -> None:
        out = os.path.join(self.dir, 'x.gz')
        self.assertEqual(0, kselftest.gzipped(['printf', 'abc'], out))
        with gzip.open(out) as f:
            self.assertEqual(b'abc', f.read())
        self.assertEqual(0, kselftest.gzipped(['cat'], out, stdin=subprocess.DEVNULL))
        self.assertEqual(3, kselftest.gzipped(['sh', '-c', 'exit 3'], out))

class BootTest(unittest.TestCase):

    def test_boot_command_line(self) -> None:
        b = kselftest.Build('/t', '/b', 'arm64', 'aarch64-linux-gnu-')
        self.assertEqual(['make', '-s', '-C', '/t', 'O=/b', 'ARCH=arm64',
                          'CROSS_COMPILE=aarch64-linux-gnu-', 'headers_install'],
                         b.make('headers_install'))
        real = lib.run
        booted = []

        def run(argv, *args, **kwargs):
            """QEMU's run recorded, the others made."""
            if argv[0] != 'timeout':
                return real(argv, *args, **kwargs)
            booted.append(argv)
            return subprocess.CompletedProcess(argv, 0)

        with tempfile.NamedTemporaryFile() as log, \
                mock.patch.object(lib, 'run', run):
            self.assertEqual(0, kselftest.boot('arm64-4k', b, '/b/i.gz',
                                               log.name, '4', ['x=1', 'y'],
                                               600))
            self.assertEqual(0, kselftest.boot('x86_64', b, '/b/i.gz', log.name, '1', []))
        argv, x86 = booted
        self.assertEqual(['timeout', '1800', 'qemu-system-aarch64', '-machine', 'virt', '-cpu',
                          lib.ARM64_QEMU_CPU, '-kernel', '/b/arch/arm64/boot/Image.gz'],
                         argv[:9])
        self.assertEqual(['timeout', '1200', 'qemu-system-x86_64', '-kernel',
                          '/b/arch/x86/boot/bzImage', '-append'], x86[:6])
        self.assertTrue(x86[6].startswith('console=ttyS0 panic=-1 '))
        self.assertEqual('console=ttyAMA0 panic=-1 oops=panic '
                         'kunit.enable=0 test_vmalloc.run_test_mask=0 '
                         'rdinit=/init x=1 y',
                         argv[argv.index('-append') + 1])
        self.assertEqual(['-nodefaults', '-m', str(lib.GUEST_MEMORY_MIB),
                          '-smp', '4', '-initrd', '/b/i.gz', '-no-reboot',
                          '-nographic', '-serial', 'stdio'],
                         argv[argv.index('-append') + 2:])

    def test_boot_time_bound(self) -> None:
        """Each of make repeat's rounds has the time one boot has."""
        for variant, kargs, want in (
                ('default', (), 0), ('soak', (), 60), ('default',
                 ('a=1', 'perf_aux.repeat=3'), 2 * kselftest.BOOT_SECONDS),
                ('sanitize', ('perf_aux.repeat=2',),
                 kselftest.BOOT_SECONDS + 2 * kselftest.SANITIZE_EXTRA_SECONDS)):
            with self.subTest(variant=variant, kargs=kargs):
                self.assertEqual(want, kselftest.extra_seconds(
                    lib.Run('reference', '7.3', 'arm64-4k', variant, kargs), '60'))

    def test_marked_lines_keep_their_ends(self) -> None:
        with tempfile.NamedTemporaryFile() as log:
            log.write(b'boot\r\nPERF_AUX: a\r\nx PERF_AUX: b\nPERF_AUX: c')
            log.flush()
            self.assertEqual([b'PERF_AUX: a\r\n', b'PERF_AUX: c\n'],
                             kselftest.marked(log.name))

    def test_stage_lines(self) -> None:
        with mock.patch('sys.stdout') as out:
            self.assertEqual(5, shell.stage('x', lambda: 5))
        printed = ''.join(c.args[0] for c in out.write.call_args_list)
        self.assertRegex(printed, r'^==> x\n<== x: [0-9]+ s, exit 5\n$')

    def test_no_busybox_dies(self) -> None:
        env = dict(os.environ, PERF_AUX_CACHE='/nonexistent', BASE='7.3')
        proc = subprocess.run(lib.perf_aux('kselftest', 'reference',
                                           'arm64-4k', 'default', '/dev/null'),
                              env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
        self.assertEqual(2, proc.returncode)
        self.assertIn('no busybox for arm64-4k', proc.stdout)

    def test_usage(self) -> None:
        with mock.patch('sys.stderr'), self.assertRaises(lib.Error) as e:
            kselftest.main(['a', 'b'])
        self.assertEqual(2, e.exception.status)

if __name__ == '__main__':
    unittest.main()
