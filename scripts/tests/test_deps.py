# SPDX-License-Identifier: GPL-2.0
"""perf_aux.deps (the deps verb): what is missing, and apt kept private.

Only what dpkg does not have installed is installed; the private apt
commands (another suite, arm64) name their own lists, status and
archives, so the machine's apt state is never read or changed; the
archive is the one the machine's own sources use for Debian; an unknown
name is refused before anything is installed.
"""

import contextlib
import io
import os
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.dirname(HERE)
sys.path.insert(0, SCRIPTS)
from perf_aux import deps, lib  # noqa: E402

class DepsTest(unittest.TestCase):
    def test_missing_as_dpkg_says(self) -> None:
        self.assertEqual([], deps.missing(['dpkg', 'bash']))
        self.assertEqual(['perf-aux-no-such-package'],
                         deps.missing(['bash', 'perf-aux-no-such-package']))

    def test_nothing_missing_installs_nothing(self) -> None:
        with mock.patch.object(deps, 'run') as run:
            deps.install(['dpkg', 'bash'])
        run.assert_not_called()

    def test_private_apt_keeps_the_machines_state(self) -> None:
        argv = deps.apt('/c/apt/trixie-arm64', 'arm64', 'update')
        options = [argv[i + 1] for i, a in enumerate(argv) if a == '-o']
        for option in ('Dir::Etc::sourcelist', 'Dir::State::Lists',
                       'Dir::State::status', 'Dir::Cache::archives'):
            values = [o for o in options if o.startswith(option + '=')]
            self.assertEqual(1, len(values), option)
            self.assertTrue(values[0].split('=', 1)[1].startswith(
                '/c/apt/trixie-arm64/'), values[0])
        self.assertIn('APT::Architectures::=arm64', options)
        self.assertEqual('update', argv[-1])

    def test_private_apt_updated_once(self) -> None:
        with tempfile.TemporaryDirectory() as d, \
                mock.patch.dict(os.environ, PERF_AUX_CACHE=d), \
                mock.patch.object(deps, 'archive', return_value='http://deb.example/debian'), \
                mock.patch.object(deps, 'run') as run:
            deps.private_apt.cache_clear()
            where = deps.private_apt('sid', 'amd64')
            self.assertEqual(where, deps.private_apt('sid', 'amd64'))
            deps.private_apt.cache_clear()
            self.assertEqual(1, run.call_count)
            with open(os.path.join(where, 'sources.list')) as f:
                self.assertEqual('deb [arch=amd64 signed-by=/usr/share/keyrings/debian-archive-'
                                 'keyring.gpg] http://deb.example/debian sid main\n', f.read())
            self.assertTrue(os.path.isfile(os.path.join(where, 'status')))

    def test_debian_archive(self) -> None:
        uris = ('http://deb.example/debian/dists/bookworm/main/binary-amd64/'
                'Packages.xz\nhttp://deb.example/debian-security/dists/x/y\n')
        deps.archive.cache_clear()
        self.addCleanup(deps.archive.cache_clear)
        with mock.patch.object(deps, 'text', return_value=uris):
            self.assertEqual('http://deb.example/debian', deps.archive())
        deps.archive.cache_clear()
        with mock.patch.object(deps, 'text', return_value=''), mock.patch('sys.stderr'), \
                self.assertRaises(lib.Error):
            deps.archive()

    def test_rootfs_unpacked_again_for_a_new_package(self) -> None:
        """A root filesystem unpacked before a package joined the list
        (its .perf_aux-packages lacks it) is unpacked again."""
        with tempfile.TemporaryDirectory() as d, \
                mock.patch.dict(os.environ, PERF_AUX_CACHE=d), \
                mock.patch.object(deps, 'unpack_arm64', return_value=1) as unpack, \
                contextlib.redirect_stdout(io.StringIO()):
            rootfs = os.path.join(d, 'rootfs', 'trixie-arm64')
            deps.fetch_testdefs_rootfs()
            self.assertEqual(1, unpack.call_count)  # none yet
            os.makedirs(rootfs)
            with open(os.path.join(rootfs, '.perf_aux-packages'), 'w') as f:
                f.write(''.join(f'{p} 1.0\n' for p in deps.TESTDEFS_PACKAGES[1:]))
            deps.fetch_testdefs_rootfs()
            self.assertEqual(2, unpack.call_count)  # one missing
            with open(os.path.join(rootfs, '.perf_aux-packages'), 'a') as f:
                f.write(f'{deps.TESTDEFS_PACKAGES[0]} 1.0\n')
            deps.fetch_testdefs_rootfs()
            self.assertEqual(2, unpack.call_count)  # all there

    def test_unknown_target_refused(self) -> None:
        proc = subprocess.run(lib.perf_aux('deps', 'sparc'),
                              stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
        self.assertEqual(2, proc.returncode)
        self.assertIn("unknown TARGET='sparc'", proc.stdout)
        self.assertNotIn('installing:', proc.stdout)

if __name__ == '__main__':
    unittest.main()
