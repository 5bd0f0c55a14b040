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
        self.assertEqual([], deps.Deps.missing(['dpkg', 'bash']))
        self.assertEqual(['perf-aux-no-such-package'],
                         deps.Deps.missing(['bash', 'perf-aux-no-such-package']))

    def test_nothing_missing_installs_nothing(self) -> None:
        d = deps.Deps()
        with mock.patch.object(deps, 'run') as run:
            d.install_packages(['dpkg', 'bash'])
        run.assert_not_called()

    def test_private_apt_keeps_the_machines_state(self) -> None:
        d = deps.Deps()
        argv = d.apt_arm64('/c/apt/trixie-arm64', 'update')
        options = [argv[i + 1] for i, a in enumerate(argv) if a == '-o']
        for option in ('Dir::Etc::sourcelist', 'Dir::State::Lists',
                       'Dir::State::status', 'Dir::Cache::archives'):
            values = [o for o in options if o.startswith(option + '=')]
            self.assertEqual(1, len(values), option)
            self.assertTrue(values[0].split('=', 1)[1].startswith(
                '/c/apt/trixie-arm64/'), values[0])
        self.assertIn('APT::Architectures::=arm64', options)
        self.assertEqual('update', argv[-1])
        argv = d.apt_private('sid', 'download', 'x')
        self.assertIn(f'Dir::State::Lists={d.cache}/apt/sid/lists', argv)
        self.assertIn('Dir::Etc::sourceparts=-', argv)

    def test_debian_archive(self) -> None:
        uris = ('http://deb.example/debian/dists/bookworm/main/binary-amd64/'
                'Packages.xz\nhttp://deb.example/debian-security/dists/x/y\n')
        with mock.patch.object(deps, 'text', return_value=uris):
            self.assertEqual('http://deb.example/debian',
                             deps.Deps.debian_archive())
        with mock.patch.object(deps, 'text', return_value=''):
            self.assertEqual('', deps.Deps.debian_archive())

    def test_rootfs_unpacked_again_for_a_new_package(self) -> None:
        """A root filesystem unpacked before a package joined the list
        (its .perf_aux-packages lacks it) is unpacked again."""
        with tempfile.TemporaryDirectory() as d:
            self.assertEqual(set(), deps.unpacked(d))
            with open(os.path.join(d, '.perf_aux-packages'), 'w') as f:
                f.write('base-files 13.8\ndash 0.5.12-12\n')
            self.assertEqual({'base-files', 'dash'}, deps.unpacked(d))
            # The cache's rootfs/trixie-arm64 is that directory.
            os.makedirs(os.path.join(d, 'rootfs'))
            os.symlink(d, os.path.join(d, 'rootfs', 'trixie-arm64'))
            fetcher = deps.Deps()
            fetcher.cache = d
            with mock.patch.object(fetcher, 'unpack_arm64',
                                   return_value=1) as unpack, \
                    contextlib.redirect_stdout(io.StringIO()):
                fetcher.fetch_testdefs_rootfs()
            unpack.assert_called_once()

    def test_unknown_target_refused(self) -> None:
        proc = subprocess.run(lib.perf_aux('deps', 'sparc'),
                              stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
        self.assertEqual(2, proc.returncode)
        self.assertIn("unknown TARGET='sparc'", proc.stdout)
        self.assertNotIn('installing:', proc.stdout)


if __name__ == '__main__':
    unittest.main()
