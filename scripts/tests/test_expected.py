#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host tests of the committed expected results (perf_aux_results.expected,
results expected): a run is judged case by case, and a reference that
loses what it proves fails, where a floor would have let it pass."""

import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..'))
from perf_aux_results import expected, ktap  # noqa: E402

DATA = os.path.join(os.path.dirname(__file__), 'test_data')

def suite(name: str, cases: str) -> str:
    """A KTAP document of one suite whose cases are 'ok'/'skip'/'fail'."""
    lines = ['KTAP version 1', '1..1', '    KTAP version 1',
             f'    # Subtest: {name}', f'    1..{len(cases.split())}']
    for i, c in enumerate(cases.split(), 1):
        status = {'ok': 'ok', 'skip': 'ok', 'fail': 'not ok'}[c]
        reason = ' # SKIP vmap() maps base pages only' if c == 'skip' else ''
        lines.append(f'    {status} {i} case{i}{reason}')
    bad = 'fail' in cases.split()
    lines.append(f'{"not ok" if bad else "ok"} 1 {name}')
    return '\n'.join(lines) + '\n'

class ExpectedTest(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = tempfile.mkdtemp()
        self.root = os.path.join(self.tmp, 'expected')

    def tearDown(self) -> None:
        shutil.rmtree(self.tmp)

    def run_dir(self, name: str, cases: str) -> str:
        d = os.path.join(self.tmp, 'results', name)
        ktap.write_suites({'vmap_granule': suite('vmap_granule', cases)}, d)
        return d

    def test_file_per_base_target_variant(self) -> None:
        d = self.run_dir('reference-7.3-arm64-4k-strict', 'ok')
        self.assertEqual(os.path.join(self.root, '7.3', 'arm64-4k-strict.txt'),
                         expected.path_for(d, self.root))
        d = self.run_dir('reference-7.3-arm64-16k', 'ok')
        self.assertEqual(os.path.join(self.root, '7.3', 'arm64-16k.txt'),
                         expected.path_for(d, self.root))

    def test_written_run_matches_itself(self) -> None:
        d = self.run_dir('reference-7.3-arm64-4k', 'ok ok skip')
        diff = expected.write([d], self.root)
        self.assertIn('+vmap_granule.case1 SUCCESS', diff)
        ok, lines = expected.check_line(d, expected.path_for(d, self.root))
        self.assertTrue(ok, lines)
        self.assertIn('3 of 3 cases', lines[0])

    def test_pass_turned_skip_fails_where_a_floor_passes(self) -> None:
        ref = self.run_dir('reference-7.3-arm64-4k', 'ok ok ok ok')
        expected.write([ref], self.root)
        lost = self.run_dir('stock-7.3-arm64-4k', 'ok skip skip skip')
        ok, lines = expected.check_line(lost, expected.path_for(ref, self.root))
        self.assertFalse(ok)
        self.assertIn('3 differ', lines[0])
        self.assertIn('vmap_granule.case2: expected SUCCESS, got SKIPPED',
                      lines[1])

    def test_missing_and_new_cases_differ(self) -> None:
        ref = self.run_dir('reference-7.3-arm64-4k', 'ok ok')
        expected.write([ref], self.root)
        path = expected.path_for(ref, self.root)
        _, lines = expected.check_line(
            self.run_dir('a-7.3-arm64-4k', 'ok'), path)
        self.assertEqual(['  vmap_granule.case2: expected SUCCESS, missing'],
                         lines[1:])
        _, lines = expected.check_line(
            self.run_dir('b-7.3-arm64-4k', 'ok ok ok'), path)
        self.assertEqual(['  vmap_granule.case3: SUCCESS, not in the expected '
                          'results'], lines[1:])

    def test_runs_merged_allow_either_status(self) -> None:
        a = self.run_dir('reference-7.3-arm64-4k', 'ok ok')
        expected.write([a], self.root)
        b = os.path.join(self.tmp, 'round2', 'reference-7.3-arm64-4k')
        ktap.write_suites({'vmap_granule': suite('vmap_granule', 'ok skip')},
                          b)
        expected.write([a, b], self.root)
        path = expected.path_for(a, self.root)
        self.assertEqual({'SKIPPED', 'SUCCESS'},
                         expected.read(path)['vmap_granule.case2'])
        ok, lines = expected.check_line(b, path)
        self.assertTrue(ok, lines)
        self.assertIn('2 of 2 cases', lines[0])
        fail = self.run_dir('c-7.3-arm64-4k', 'ok fail')
        self.assertIn('1 differ', expected.check_line(fail, path)[1][0])

    def test_suites_not_run_are_kept(self) -> None:
        # make check boots the strict variant with vmap_granule only: make
        # expected from that run must not drop the file's other suites.
        full = os.path.join(self.tmp, 'full', 'reference-7.3-arm64-4k-strict')
        ktap.write_suites({'vmap_granule': suite('vmap_granule', 'ok ok'),
                           'perf_aux_alloc': suite('perf_aux_alloc', 'ok')},
                          full)
        expected.write([full], self.root)
        part = self.run_dir('reference-7.3-arm64-4k-strict', 'ok skip')
        diff = expected.write([part], self.root)
        want = expected.read(expected.path_for(part, self.root))
        self.assertEqual({'SUCCESS'}, want['perf_aux_alloc.case1'])
        self.assertEqual({'SKIPPED'}, want['vmap_granule.case2'])
        self.assertFalse([d for d in diff if d.startswith('-perf_aux_alloc')])

    def test_suite_filter(self) -> None:
        ref = self.run_dir('reference-7.3-arm64-4k', 'ok ok')
        expected.write([ref], self.root)
        path = expected.path_for(ref, self.root)
        ok, lines = expected.check_line(ref, path, {'vmap_granule'})
        self.assertTrue(ok, lines)
        self.assertIn('2 of 2 cases (vmap_granule)', lines[0])
        ok, lines = expected.check_line(ref, path, {'perf_aux.map_test'})
        self.assertTrue(ok, lines)
        self.assertIn('0 of 0 cases', lines[0])

    def test_no_file_is_a_failure(self) -> None:
        d = self.run_dir('reference-7.3-arm64-4k', 'ok')
        ok, lines = expected.check_line(d, os.path.join(self.tmp, 'none.txt'))
        self.assertFalse(ok)
        self.assertIn('no expected results', lines[0])

if __name__ == '__main__':
    unittest.main()
