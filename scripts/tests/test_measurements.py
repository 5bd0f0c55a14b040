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
        self.page = report.measurements(LOG.splitlines(keepends=True),
                                        'check', {'stages': 'reference'})

    def section(self, title: str) -> list:
        return self.page.split(f'## {title}\n\n', 1)[1].split('\n\n')[0] \
            .splitlines()[2:]

    def test_builds_with_their_ccache_share(self) -> None:
        self.assertEqual(
            ['| 7.3-reference .build-arm64-4k | 951 s (15 min 51 s) | '
             '32 of 1058 compilations hit (3 %) |',
             '| 7.3-mutant .build-arm64-4k-peers | 40 s | '
             '5 of 10 compilations hit (50 %) |'],
            self.section('Kernel builds'))
        self.assertIn('Reused within the check, not rebuilt: 1 '
                      '(7.3-reference .build-arm64-4k).', self.page)

    def test_boots_and_their_exit(self) -> None:
        self.assertEqual(
            ['| KUnit reference-7.3-arm64-4k | 30 s |',
             '| boot kselftests reference-7.3-arm64-4k | 142 s (2 min 22 s), '
             'exit 1 |'], self.section('Boots'))

    def test_stage_table_results_and_closing_line(self) -> None:
        self.assertEqual(['install packages',
                          '7.3 reference kernel, default and strict',
                          'series (beside the mutants)', 'in all'],
                         [x.split(' | ')[0][2:]
                          for x in self.section('Stages')])
        self.assertIn('| in all | 1666 s (27 min 46 s) |', self.page)
        self.assertIn('## Results\n\n- 900 passed, 1 failed, 28 skipped\n',
                      self.page)
        self.assertIn('Failed checks:\n\n- stock-7.3-arm64-4k: vmap_granule '
                      'failed\n\n300 passed, 1 failed, 0 skipped\n', self.page)
        self.assertIn('- stages: reference', self.page)

    def test_unfinished_check_says_so(self) -> None:
        page = report.measurements(LOG.splitlines()[:6], 'check', {})
        self.assertIn('no closing line', page)
        self.assertIn('## Boots\n\nNone in this check.', page)

    def test_page_written(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            log = os.path.join(d, 'check.log')
            with open(log, 'w', encoding='utf-8') as f:
                f.write(LOG)
            out = os.path.join(d, 'measurements', 'check.md')
            report.write_measurements(log, 'check', out, ' reference')
            with open(out, encoding='utf-8') as f:
                page = f.read()
        self.assertIn('- stages:  reference', page)
        self.assertTrue(page.rstrip().endswith(
            '300 passed, 1 failed, 0 skipped'))

if __name__ == '__main__':
    unittest.main()
