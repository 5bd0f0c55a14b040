#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host tests of integrations/: the patches are unified diffs that only add,
their pins agree with README.md; integrations/check.py against the upstream
mirrors only where they are on this machine (else the full tier's
`integrations` stage)."""

import os
import re
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, '..', '..'))
INTEGRATIONS = os.path.join(ROOT, 'integrations')
sys.path.insert(0, INTEGRATIONS)
import check  # noqa: E402

MIRRORS = os.environ.get('PERF_AUX_MIRRORS', check.DEFAULT_MIRRORS)
# One constant reason, so the skip reads the same on every machine.
NO_MIRRORS = 'no upstream mirrors (the full tier runs integrations/check.py)'

def have_mirrors() -> bool:
    return any(check.mirror_of(MIRRORS, key) for key in check.PINS)

def read(name: str) -> str:
    with open(os.path.join(INTEGRATIONS, name), encoding='utf-8') as f:
        return f.read()

class PatchFormTest(unittest.TestCase):
    """Each patch is a unified diff that only adds, for its pinned commit."""

    def test_patches_are_diffs_that_only_add(self) -> None:
        for name in check.PATCHES:
            with self.subTest(patch=name):
                res = subprocess.run(['git', 'apply', '--numstat', '-'],
                                     input=read(name), capture_output=True,
                                     text=True, cwd='/')
                self.assertEqual(0, res.returncode, res.stderr)
                stats = [line.split('\t') for line in res.stdout.splitlines()]
                self.assertTrue(stats)
                self.assertEqual([], [s for s in stats if s[1] != '0'])

    def test_each_patch_names_its_pin(self) -> None:
        for name, (key, _) in check.PATCHES.items():
            with self.subTest(patch=name):
                self.assertIn(check.PINS[key][1], read(name))

    def test_readme_pins(self) -> None:
        readme = read('README.md')
        for repo, commit in check.PINS.values():
            with self.subTest(repo=repo):
                self.assertRegex(readme, rf'{re.escape(repo)} \| `{commit}`')

@unittest.skipUnless(have_mirrors(), NO_MIRRORS)
class UpstreamTest(unittest.TestCase):
    """integrations/check.py against the mirrors: no check fails (the
    schema checks skip where this python has no lava_common)."""

    def test_check_py(self) -> None:
        res = subprocess.run([sys.executable,
                              os.path.join(INTEGRATIONS, 'check.py'),
                              '--mirrors', MIRRORS],
                             capture_output=True, text=True, timeout=60)
        self.assertEqual(0, res.returncode, res.stdout + res.stderr)
        self.assertNotIn('not ok', res.stdout)
        self.assertIn('applies to kernelci/kernelci-pipeline', res.stdout)

if __name__ == '__main__':
    unittest.main()
