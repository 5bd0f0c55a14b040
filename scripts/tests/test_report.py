#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host tests of the acceptance report and the mutation matrix
(scripts/perf_aux_results/report.py; python3 -m perf_aux results), on the
crafted out/ tree in test_data/report/."""

import os
import re
import shutil
import sys
import tempfile
import unittest
from typing import Dict, List, Tuple
from unittest import mock

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..'))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perf_aux_results import ktap, report  # noqa: E402
from test_results import run_main  # noqa: E402

DATA = os.path.join(os.path.dirname(__file__), 'test_data', 'report')
PATCHES = os.path.join(DATA, 'patches')

def copy_run(src: str, dst: str, subs: Dict[str, str]) -> None:
    """Run directory src again as dst, each text old replaced by new."""
    shutil.copytree(src, dst)
    for name in os.listdir(dst):
        path = os.path.join(dst, name)
        with open(path) as f:
            text = f.read()
        for old, new in subs.items():
            text = text.replace(old, new)
        with open(path, 'w') as f:
            f.write(text)

class MatrixTest(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.mutants = os.path.join(self.tmp.name, 'mutants')
        shutil.copytree(os.path.join(DATA, 'mutants'), self.mutants)

    def tearDown(self) -> None:
        self.tmp.cleanup()

    def matrix(self, patches: str = PATCHES) -> Tuple[int, List[str]]:
        rc, out = run_main('matrix', '--mutants', self.mutants,
                           '--patches', patches)
        return rc, out.splitlines()

    def row(self, lines: List[str], name: str) -> Dict[str, str]:
        header = [c.strip() for c in next(
            line for line in lines if line.startswith('| group')
        ).strip('|').split('|')]
        row = next(line for line in lines if f'| {name} |' in line)
        return dict(zip(header, (c.strip() for c in
                                 re.split(r'(?<!\\)\|', row.strip('|')))))

    def test_final_line_counts_every_patch(self) -> None:
        rc, lines = self.matrix()
        self.assertEqual('2 killed of 4', lines[-1])
        self.assertEqual(1, rc)

    def test_cells(self) -> None:
        _, lines = self.matrix()
        killed = self.row(lines, 'flag_lost')
        self.assertEqual('killed (3 failed: aux_alloc_orders_test.large_rw_2p,'
                         ' aux_alloc_orders_test.large_rw_16p)',
                         killed['perf_aux_alloc'])
        self.assertEqual('survived', killed['vmap_granule'])
        self.assertEqual('not run', self.row(lines, 'oops_on_free')
                         ['vmap_granule'])
        never = self.row(lines, 'never_run')
        self.assertEqual(['not run'] * 4,
                         [never[s] for s in ('perf_aux_alloc', 'vmap_granule',
                                             'peer.test_vmalloc',
                                             'perf_events.mmap')])
        self.assertEqual('vmap_granule', never['group'])

    def test_a_crash_kills(self) -> None:
        _, lines = self.matrix()
        self.assertTrue(self.row(lines, 'oops_on_free')['perf_aux_alloc']
                        .startswith('killed ('))

    def test_description_from_the_first_line(self) -> None:
        _, lines = self.matrix()
        self.assertEqual('the vmap area is one page off \\| a fixture '
                         'nobody catches',
                         self.row(lines, 'area_shifted')['description'])

    def test_peers_counted_apart(self) -> None:
        _, lines = self.matrix()
        self.assertEqual('1 killed of 4 by the peers', lines[-2])
        self.assertEqual('survived',
                         self.row(lines, 'area_shifted')['perf_events.mmap'])

    def test_peers_not_run(self) -> None:
        os.remove(os.path.join(self.mutants, 'flag_lost-6.12-arm64-4k',
                               'peer.test_vmalloc.ktap'))
        os.remove(os.path.join(self.mutants, 'area_shifted-6.12-arm64-4k',
                               'perf_events.mmap.ktap'))
        _, lines = self.matrix()
        self.assertEqual(['peers not run', '2 killed of 4'], lines[-2:])

    def test_all_killed_exits_zero(self) -> None:
        patches = os.path.join(self.tmp.name, 'patches', 'aux_alloc')
        os.makedirs(patches)
        for name in ('flag_lost', 'oops_on_free'):
            shutil.copy(os.path.join(PATCHES, 'aux_alloc', f'{name}.patch'),
                        patches)
        rc, lines = self.matrix(os.path.dirname(patches))
        self.assertEqual(('2 killed of 2', 0), (lines[-1], rc))

    def add_base(self) -> None:
        """Base 7.3: flag_lost fails there only what its baseline (the
        unmutated kernel of 7.3) fails too, so nothing kills it."""
        for run in ('flag_lost', 'baseline'):
            copy_run(os.path.join(self.mutants, 'flag_lost-6.12-arm64-4k'),
                     os.path.join(self.mutants, f'{run}-7.3-arm64-4k'), {})

    def test_a_block_per_base_newest_first(self) -> None:
        self.add_base()
        rc, lines = self.matrix()
        self.assertEqual(1, rc)
        self.assertEqual(['base 7.3:', 'base 6.12:'],
                         [x for x in lines if x.startswith('base ')])
        blocks = '\n'.join(lines).split('base 6.12:\n')
        self.assertEqual(['0 killed of 4 by the peers', '0 killed of 4'],
                         blocks[0].splitlines()[-2:])
        self.assertEqual(['1 killed of 4 by the peers', '2 killed of 4'],
                         blocks[1].splitlines()[-2:])
        first = blocks[0].splitlines()
        self.assertEqual('survived',
                         self.row(first, 'flag_lost')['perf_aux_alloc'])
        self.assertEqual('not run',
                         self.row(first, 'oops_on_free')['perf_aux_alloc'])
        # The baseline is no mutant: no row.
        self.assertFalse([x for x in lines if '| baseline |' in x])

    def test_a_base_of_its_own_patch(self) -> None:
        patches = os.path.join(self.tmp.name, 'patches')
        shutil.copytree(PATCHES, patches)
        own = os.path.join(patches, 'vmap_granule', '7.3')
        os.makedirs(own)
        with open(os.path.join(own, 'area_shifted.patch'), 'w') as f:
            f.write('Mutant: the area one page off, where 7.3 moved it\n')
        with open(os.path.join(own, 'only_on_73.patch'), 'w') as f:
            f.write('Mutant: what only 7.3 has\n')
        self.add_base()
        _, lines = self.matrix(patches)
        new, old = '\n'.join(lines).split('base 6.12:\n')
        new_lines, old_lines = new.splitlines(), old.splitlines()
        self.assertEqual('the area one page off, where 7.3 moved it',
                         self.row(new_lines, 'area_shifted')['description'])
        self.assertEqual('vmap_granule',
                         self.row(new_lines, 'only_on_73')['group'])
        self.assertEqual('0 killed of 5', new_lines[-1])
        self.assertTrue(self.row(old_lines, 'area_shifted')['description']
                        .startswith('the vmap area is one page off'))
        self.assertFalse([x for x in old_lines if 'only_on_73' in x])

    def test_every_base_must_kill_every_mutant(self) -> None:
        patches = os.path.join(self.tmp.name, 'patches', 'aux_alloc')
        os.makedirs(patches)
        shutil.copy(os.path.join(PATCHES, 'aux_alloc', 'oops_on_free.patch'),
                    patches)
        copy_run(os.path.join(self.mutants, 'oops_on_free-6.12-arm64-4k'),
                 os.path.join(self.mutants, 'oops_on_free-7.2-arm64-4k'), {})
        rc, lines = self.matrix(os.path.dirname(patches))
        self.assertEqual((0, ['1 killed of 1', '1 killed of 1']),
                         (rc, [x for x in lines if x.endswith(' of 1')]))
        os.remove(os.path.join(self.mutants, 'oops_on_free-7.2-arm64-4k',
                               'perf_aux_alloc.ktap'))
        rc, lines = self.matrix(os.path.dirname(patches))
        self.assertEqual((1, ['base 7.2:', 'base 6.12:']),
                         (rc, [x for x in lines if x.startswith('base ')]))
        self.assertIn('0 killed of 1', lines)

class ReportTest(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.out = os.path.join(self.tmp.name, 'out')
        shutil.copytree(DATA, self.out, ignore=shutil.ignore_patterns(
            'patches'))
        self.path = os.path.join(self.out, 'report.md')

    def tearDown(self) -> None:
        self.tmp.cleanup()

    def report(self) -> str:
        report.write_report(self.path, ktap.run_dirs(
            os.path.join(self.out, 'results')), os.path.join(
                self.out, 'mutants'), PATCHES)
        with open(self.path) as f:
            return f.read()

    def test_matrix_only_with_mutants(self) -> None:
        self.assertIn('**2 killed of 4**', self.report())
        shutil.rmtree(os.path.join(self.out, 'mutants'))
        self.assertNotIn('## Mutation matrix', self.report())

    def test_summary_report_as_make_run_calls_it(self) -> None:
        run = os.path.join(self.out, 'results', 'reference-6.12-arm64-4k')
        with mock.patch.object(ktap, 'PATCHES', PATCHES):
            rc, out = run_main('summary', run + '/', '--report', self.path)
        self.assertEqual((0, '6 passed, 0 failed, 0 skipped'),
                         (rc, out.splitlines()[-1]))
        with open(self.path) as f:
            text = f.read()
        for section in ('## Results', '## Mutation matrix'):
            self.assertIn(section, text)
        # Every run so far, not only the one named.
        self.assertIn('| stock-6.12-arm64-4k | perf_aux.pagesize_test | 2 | 0 '
                      '| 1 |', text)

if __name__ == '__main__':
    unittest.main()
