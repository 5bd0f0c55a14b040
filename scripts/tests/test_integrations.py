#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host tests of integrations/: the KernelCI and LKFT patches read on their
own (well-formed unified diffs; the YAML, Jinja2 and Python they add parse
and name the perf_aux collection), the pins in check.py and README.md
agreeing, and check.py's own parser and checks against broken input.
Against the upstream repositories (integrations/check.py with the fetched
mirrors) only where the mirrors are on this machine: CI's clean clone has
none, and that part is the full tier's `integrations` stage."""

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

try:
    import yaml  # noqa: F401
    HAVE_YAML = True
except ImportError:
    HAVE_YAML = False

MIRRORS = os.environ.get('PERF_AUX_MIRRORS', check.DEFAULT_MIRRORS)
# One constant reason, so the skip reads the same on every machine.
NO_MIRRORS = 'no upstream mirrors (the full tier runs integrations/check.py)'


def have_mirrors() -> bool:
    return any(check.mirror_of(MIRRORS, key) for key in check.PINS)


def read(name: str) -> str:
    with open(os.path.join(INTEGRATIONS, name), encoding='utf-8') as f:
        return f.read()


GOOD = """\
diff --git a/config/x.yaml b/config/x.yaml
--- a/config/x.yaml
+++ b/config/x.yaml
@@ -1,2 +1,3 @@
 a: 1
+b: 2
 c: 3
"""


class PatchFormTest(unittest.TestCase):
    """Each patch is a unified diff git apply would take as one."""

    def test_patches_parse(self) -> None:
        for name in check.PATCHES:
            with self.subTest(patch=name):
                blocks = check.added_blocks(read(name))
                self.assertTrue(blocks)
                self.assertTrue(all(added for _, added in blocks))
                # Additions only: the upstream lines stay as they are.
                removed = [line for line in read(name).split('\n')
                           if line.startswith('-') and
                           not line.startswith(('---', '-- '))]
                self.assertEqual([], removed)

    def test_each_patch_names_its_pin(self) -> None:
        for name, key in check.PATCHES.items():
            with self.subTest(patch=name):
                self.assertIn(check.PINS[key][1], read(name))

    def test_readme_pins(self) -> None:
        readme = read('README.md')
        for repo, commit in check.PINS.values():
            with self.subTest(repo=repo):
                self.assertRegex(readme, rf'{re.escape(repo)} \| `{commit}`')

    def test_parser_takes_good(self) -> None:
        self.assertEqual([('config/x.yaml', ['b: 2'])],
                         check.added_blocks(GOOD))

    def test_parser_rejects_short_hunk(self) -> None:
        with self.assertRaises(ValueError):
            check.added_blocks(GOOD.replace('+1,3 @@', '+1,4 @@'))

    def test_parser_rejects_bad_line(self) -> None:
        with self.assertRaises(ValueError):
            check.added_blocks(GOOD.replace('+b: 2', '*b: 2'))

    def test_parser_rejects_no_diff(self) -> None:
        with self.assertRaises(ValueError):
            check.added_blocks('just text\n')


@unittest.skipUnless(HAVE_YAML, 'no python3-yaml')
class FragmentTest(unittest.TestCase):
    """What the patches add parses and is about perf_aux, from the patch
    alone."""

    def test_fragments(self) -> None:
        for name in check.PATCHES:
            with self.subTest(patch=name):
                self.assertEqual([], check.fragment_problems(name))

    def job(self) -> dict:
        (jobs,) = [a for path, a in check.added_blocks(
            check.read_patch('kernelci-pipeline.patch'))
            if path == 'config/jobs.yaml']
        return check.yaml_fragment(jobs)

    def test_job_entry(self) -> None:
        job = self.job()[check.JOB]
        self.assertEqual('perf_aux', job['params']['collections'])
        self.assertEqual('kselftest.perf_aux', job['kcidb_test_suite'])
        # The collection is this tree's selftest directory, whose config
        # asks for the module the tests load.
        with open(os.path.join(check.SELFTEST_DIR, 'config'),
                  encoding='utf-8') as f:
            self.assertIn('CONFIG_TEST_AUX_PMU=m', f.read().split())

    def test_wrong_collection_caught(self) -> None:
        jobs = self.job()
        jobs[check.JOB]['params']['collections'] = 'perf_events'
        jobs[check.JOB]['kcidb_test_suite'] = 'kselftest.perf_events'
        self.assertEqual(2, len(check.job_problems(jobs)))

    def test_wrong_tuxlava_class_caught(self) -> None:
        attrs = {'KSelftestPerfAux': {
            'name': 'kselftest-perf_events', 'timeout': 30,
            'devices': ['qemu-arm64']}}
        self.assertTrue(check.tuxlava_class_problems(attrs))
        attrs['KSelftestPerfAux']['name'] = check.TUXLAVA_TEST
        self.assertEqual([], check.tuxlava_class_problems(attrs))
        attrs['KSelftestPerfAux']['cmdfile'] = 'perf_events'
        self.assertTrue(check.tuxlava_class_problems(attrs))

    def test_aliases_stand_in(self) -> None:
        frag = check.yaml_fragment(['  j:', '    <<: *tmpl', '    x: 1'])
        self.assertEqual({'j': {'x': 1}}, frag)

    def test_unbalanced_template_caught(self) -> None:
        ((path, added),) = check.added_blocks(
            GOOD.replace('x.yaml', 'x.jinja2').replace('+b: 2', '+{%- if a %}'))
        self.assertTrue(check.jinja_problems(path, added))


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
