# SPDX-License-Identifier: GPL-2.0
"""out/measurements/<tier>.md comes from the check's own log.

A log shaped as perf_aux's check, run and kunit print it: each build
with the ccache line printed inside its stage, a build reused within the
check, boots, a failed stage, the stage table, the suites' lines and the
closing line.  Each must land in its section, and nothing else.
"""

import os
import tempfile
import unittest

from perf_aux_results import report

LOG = '''==> install packages
<== install packages: 25 s
==> build 7.3-reference .build-arm64-4k
ccache: 32 of 1058 compilations hit (3 %)
<== build 7.3-reference .build-arm64-4k: 951 s
==> KUnit reference-7.3-arm64-4k
<== KUnit reference-7.3-arm64-4k: 30 s
build 7.3-reference .build-arm64-4k: built earlier in this check, unchanged
==> boot kselftests reference-7.3-arm64-4k
<== boot kselftests reference-7.3-arm64-4k: 142 s, exit 1
ok - reference-7.3-arm64-4k: perf_aux_alloc 344 passed
not ok - stock-7.3-arm64-4k: vmap_granule failed
ccache: 5 of 10 compilations hit (50 %)
<== build 7.3-mutant .build-arm64-4k-peers: 40 s
suites: 900 passed, 1 failed, 28 skipped
measurements: out/measurements/check.md
stage times:
    25 s  install packages
  1190 s  7.3 reference kernel, default and strict
   129 s  series (beside the mutants)
  1666 s  in all
failed: stock-7.3-arm64-4k: vmap_granule failed
300 passed, 1 failed, 0 skipped
'''

class MeasurementsTest(unittest.TestCase):

    def setUp(self) -> None:
        self.m = report.parse_log(LOG.splitlines(keepends=True))

    def test_builds_with_their_ccache_share(self) -> None:
        self.assertEqual(
            [('7.3-reference .build-arm64-4k', 951,
              '32 of 1058 compilations hit (3 %)'),
             ('7.3-mutant .build-arm64-4k-peers', 40,
              '5 of 10 compilations hit (50 %)')],
            [(b.name, b.secs, b.ccache) for b in self.m.builds])
        self.assertEqual(['7.3-reference .build-arm64-4k'], self.m.reused)

    def test_boots_and_their_exit(self) -> None:
        self.assertEqual(
            [('KUnit reference-7.3-arm64-4k', 30, None),
             ('boot kselftests reference-7.3-arm64-4k', 142, 1)],
            [(b.name, b.secs, b.rc) for b in self.m.boots])

    def test_stage_table_results_and_closing_line(self) -> None:
        self.assertEqual(['install packages',
                          '7.3 reference kernel, default and strict',
                          'series (beside the mutants)', 'in all'],
                         [s.name for s in self.m.stages])
        self.assertEqual(1666, self.m.stages[-1].secs)
        self.assertEqual(['900 passed, 1 failed, 28 skipped'], self.m.suites)
        self.assertEqual(['stock-7.3-arm64-4k: vmap_granule failed'],
                         self.m.failures)
        self.assertEqual('300 passed, 1 failed, 0 skipped', self.m.counts)

    def test_unfinished_check_says_so(self) -> None:
        m = report.parse_log(LOG.splitlines()[:6])
        self.assertIsNone(m.counts)
        page = report.render_measurements(m, 'check', {})
        self.assertIn('no closing line', page)

    def test_page_written(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            log = os.path.join(d, 'check.log')
            with open(log, 'w', encoding='utf-8') as f:
                f.write(LOG)
            out = os.path.join(d, 'measurements', 'check.md')
            report.write_measurements(log, 'check', out, ' reference')
            with open(out, encoding='utf-8') as f:
                page = f.read()
        self.assertIn('| 7.3-reference .build-arm64-4k | 951 s (15 min 51 s) '
                      '| 32 of 1058 compilations hit (3 %) |', page)
        self.assertIn('- stages:  reference', page)
        self.assertTrue(page.rstrip().endswith(
            '300 passed, 1 failed, 0 skipped'))

if __name__ == '__main__':
    unittest.main()
