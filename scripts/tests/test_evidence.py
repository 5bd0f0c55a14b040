#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host tests of the plain-text evidence for a cover letter or a
Tested-by reply (report.evidence in scripts/perf_aux_results/; python3 -m
perf_aux results evidence), on the crafted 16K runs in
test_data/evidence/ and the mutants of test_data/report/."""

import os
import shutil
import sys
import tempfile
import unittest
from typing import Dict, List, Optional

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..'))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perf_aux_results import ktap, report as evidence  # noqa: E402
from test_results import run_main  # noqa: E402

DATA = os.path.join(os.path.dirname(__file__), 'test_data', 'evidence')
REPORT = os.path.join(os.path.dirname(__file__), 'test_data', 'report')
KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB

def walk_minimum(size: int, page: int, pmd: int, cont: int) -> int:
    """The entries of a buffer at address 0 (naturally aligned, physically
    contiguous), mapped a piece at a time with the largest granule that
    is aligned there and fits: an independent count of the minimum."""
    at = entries = 0
    while at < size:
        for block in (pmd, cont, page):
            if at % block == 0 and size - at >= block:
                break
        else:
            block = page    # a partial last page still takes a PTE
        at += block
        entries += 1
    return entries

def definitions(page: int) -> Dict[str, int]:
    """The issue's definitions: a PMD maps page * page / 8 bytes; a
    cont-PTE block 64 KiB at 4K, 2 MiB at 16K and at 64K."""
    return {'page': page, 'pmd': page * page // 8,
            'cont': {4 * KIB: 64 * KIB, 16 * KIB: 2 * MIB,
                     64 * KIB: 2 * MIB}[page]}

def run_dir(name: str) -> str:
    return os.path.join(DATA, 'results', name)

REFERENCE = run_dir('reference-7.3-arm64-16k')
STOCK = run_dir('stock-7.3-arm64-16k')
NO_MUTANTS = os.path.join(DATA, 'no-mutants')

def text_of(*dirs: str, mutants: str = NO_MUTANTS,
            logs: Optional[str] = None) -> List[str]:
    return evidence.evidence(list(dirs), mutants,
                             os.path.join(REPORT, 'patches'), logs)

def section(lines: List[str], title: str) -> List[str]:
    """The lines from the one starting with title to the next title (a
    line starting at column 0)."""
    start = next(i for i, x in enumerate(lines) if x.startswith(title))
    end = next((i for i in range(start + 1, len(lines))
                if lines[i][:1].strip()), len(lines))
    return lines[start:end]

def copy_tree(dst: str) -> None:
    """test_data/evidence as dst/results and dst/logs, to edit."""
    for sub in ('results', 'logs'):
        shutil.copytree(os.path.join(DATA, sub), os.path.join(dst, sub))

def edit(path: str, old: str, new: str) -> None:
    with open(path) as f:
        text = f.read()
    assert old in text, (path, old)
    with open(path, 'w') as f:
        f.write(text.replace(old, new))

class MinimumTest(unittest.TestCase):
    def least(self, size: int, page: int) -> int:
        return evidence.least_entries(size, evidence.geometry(page))

    def test_4k(self) -> None:
        self.assertEqual(16, self.least(1 * MIB, 4 * KIB))
        self.assertEqual(128, self.least(256 * MIB, 4 * KIB))

    def test_geometry_follows_the_definitions(self) -> None:
        for page in (4 * KIB, 16 * KIB, 64 * KIB):
            g = evidence.geometry(page)
            d = definitions(page)
            self.assertEqual((d['pmd'], d['cont']), (g.pmd, g.cont), page)
        self.assertEqual((2 * MIB, 32 * MIB, 512 * MIB),
                         tuple(evidence.geometry(p).pmd
                               for p in (4 * KIB, 16 * KIB, 64 * KIB)))

    def test_16k_and_64k_as_an_aligned_walk_counts_them(self) -> None:
        sizes = {16 * KIB: [16 * MIB, 32 * MIB, 64 * MIB, 2 * MIB,
                            34 * MIB + 48 * KIB, 100 * MIB + 16 * KIB],
                 64 * KIB: [512 * MIB, 1 * GIB, 2 * MIB, 64 * KIB,
                            1 * GIB + 4 * MIB + 64 * KIB, 3 * MIB]}
        for page, cases in sizes.items():
            d = definitions(page)
            for size in cases:
                self.assertEqual(walk_minimum(size, **d),
                                 self.least(size, page), (page, size))
        # Worked by hand: 34 MiB + 48 KiB at 16K is one 32 MiB PMD, one
        # 2 MiB cont block and three pages; 1 GiB + 4 MiB + 64 KiB at 64K
        # two 512 MiB PMDs, two 2 MiB cont blocks and one page.
        self.assertEqual(5, self.least(34 * MIB + 48 * KIB, 16 * KIB))
        self.assertEqual(5, self.least(1 * GIB + 4 * MIB + 64 * KIB,
                                       64 * KIB))

    def test_unaligned_remainder(self) -> None:
        # 2 MiB + 64 KiB + 12 KiB at 4K: a PMD, a cont block, 3 PTEs.
        self.assertEqual(5, self.least(2 * MIB + 64 * KIB + 12 * KIB,
                                       4 * KIB))
        # Below a cont block only PTEs; a partial page still takes one.
        self.assertEqual(15, self.least(60 * KIB, 4 * KIB))
        self.assertEqual(2, self.least(4 * KIB + 1, 4 * KIB))
        for size in range(4 * KIB, 5 * MIB, 52 * KIB):
            self.assertEqual(walk_minimum(size, **definitions(4 * KIB)),
                             self.least(size, 4 * KIB), size)

    def test_no_cont_pte_on_x86(self) -> None:
        g = evidence.geometry(4 * KIB, 'x86_64')
        self.assertEqual(2 * MIB, g.pmd)
        self.assertEqual(256, evidence.least_entries(1 * MIB, g))

    def test_the_run_s_page_size_not_4k(self) -> None:
        self.assertEqual(16 * KIB, evidence.target_page_size('arm64-16k'))
        self.assertEqual(64 * KIB, evidence.target_page_size('arm64-64k'))
        self.assertEqual(4 * KIB, evidence.target_page_size('x86_64'))
        self.assertIsNone(evidence.target_page_size('arm64-big'))

class FormatsTest(unittest.TestCase):
    def test_granule_pages_of_an_entries_line(self) -> None:
        e = ktap.entries('# entries 5 for 2179 pages (PMD 2048, cont 128,'
                            ' PTE 3), at least 5')
        assert e is not None
        self.assertEqual({'PMD': 2048, 'cont': 128, 'PTE': 3},
                         e.granule_pages())

class EvidenceTest(unittest.TestCase):
    def test_no_line_wider_than_72(self) -> None:
        for lines in (text_of(REFERENCE, STOCK), text_of(STOCK),
                      text_of(REFERENCE, STOCK, REFERENCE, STOCK,
                              mutants=os.path.join(REPORT, 'mutants'))):
            wide = [x for x in lines if len(x) > 72]
            self.assertEqual([], wide)

    def test_long_facts_are_wrapped_not_cut(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            copy_tree(tmp)
            ref = os.path.join(tmp, 'results', 'reference-7.3-arm64-16k')
            long_path = '/home/someone/' + 'a-very-long-directory/' * 6
            with open(os.path.join(ref, 'source.txt'), 'w') as f:
                f.write(f'source: {long_path}linux (v7.3-rc7-42-gdeadbeef'
                        '-dirty), version 7.3.0-rc7\n')
            edit(os.path.join(tmp, 'logs',
                              'reference-7.3-arm64-16k-kunit.log'),
                 'kunit_shutdown=reboot',
                 'kunit_shutdown=reboot ' + ' '.join(
                     f'param{i}=value{i}' for i in range(20)))
            edit(os.path.join(ref, 'perf_aux.pagesize_test.ktap'),
                 '# SKIP no arm_spe_0 PMU',
                 '# SKIP ' + 'a reason that goes on and on ' * 5)
            lines = text_of(ref)
        self.assertEqual([], [x for x in lines if len(x) > 72])
        joined = ' '.join(x.strip() for x in lines)
        self.assertIn('param19=value19', joined)
        self.assertIn('v7.3-rc7-42-gdeadbeef-dirty', joined)

    def test_header_gives_kernel_base_page_size_variant_and_boot(self) -> None:
        lines = text_of(REFERENCE, STOCK)
        head = section(lines, 'reference:')
        self.assertEqual('reference: kernel 7.3.0-rc7 '
                         '(reference-7.3-arm64-16k)', head[0])
        self.assertIn('  tree: Debian linux-source-7.3 7.3~rc7-1~exp1', head)
        self.assertIn('  base 7.3, target arm64-16k, 16 KiB pages, variant '
                      'default', head)
        self.assertIn('  KUnit boot: panic=-1 kunit.enable=1 console=ttyAMA0',
                      head)
        self.assertIn('  kselftest boot: console=ttyAMA0 panic=-1 '
                      'kunit.enable=0 rdinit=/init', head)
        # The stock run has no KUnit log: no KUnit boot line.
        self.assertFalse(any('KUnit boot' in x
                             for x in section(lines, 'stock:')))
        self.assertIn('Page size 16 KiB: PMD block 32 MiB (2048 pages), '
                      'cont-PTE block 2 MiB', ' '.join(lines))

    def test_results_per_run_and_suite(self) -> None:
        lines = section(text_of(REFERENCE, STOCK), 'Results')
        stock = lines[lines.index('  stock:') + 1:]
        self.assertEqual('    suite                   pass  fail  skip',
                         stock[0])
        self.assertEqual(['perf_aux.pagesize_test', '4', '0', '5'],
                         stock[1].split())
        self.assertEqual(['vmap_granule', '1', '0', '3'], stock[2].split())
        self.assertEqual(['total', '5', '0', '8'], stock[3].split())

    def entries_rows(self, lines: List[str]) -> Dict[str, List[str]]:
        table = section(lines, 'Translation entries')
        head = next(i for i, x in enumerate(table)
                    if x.split()[:2] == ['buffer', 'size'])
        rows = {}
        for x in table[head + 1:]:
            if not x:
                break
            rows[x.split()[0]] = x.split()[1:]
        return {'head': table[head].split(), **rows}

    def test_candidate_stock_and_minimum_side_by_side(self) -> None:
        rows = self.entries_rows(text_of(REFERENCE, STOCK))
        self.assertEqual(['buffer', 'size', 'reference', 'stock', 'minimum'],
                         rows['head'])
        # size (a number and its unit), reference, stock, minimum.
        self.assertEqual(['16', 'MiB', '8', 'C', '1024', 'T', '8'],
                         rows['large_rw_half_pmd'])
        self.assertEqual(['64', 'MiB', '2', 'P', '4096', 'T', '2'],
                         rows['large_rw_2pmd'])
        self.assertEqual(['34864', 'KiB', '5', 'PCT', '2179', 'T', '5'],
                         rows['large_rw_odd'])
        table = ' '.join(section(text_of(REFERENCE, STOCK),
                                 'Translation entries'))
        self.assertIn('At the minimum: reference 3 of 4, stock 0 of 4 '
                      'buffers.', table)

    def test_minimum_is_computed_from_the_page_size(self) -> None:
        rows = self.entries_rows(text_of(REFERENCE))
        # 16 MiB at 16K pages: 8 cont-PTE blocks of 2 MiB.
        self.assertEqual('8', rows['large_rw_half_pmd'][-1])

    def test_page_size_from_the_run_and_disagreement_flagged(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            copy_tree(tmp)
            ref = os.path.join(tmp, 'results', 'reference-7.3-arm64-16k')
            edit(os.path.join(tmp, 'logs',
                              'reference-7.3-arm64-16k-kselftest.log'),
                 'page size 16 kB', 'page size 4 kB')
            lines = text_of(ref)
            # Without a log, the target's name.
            renamed = os.path.join(tmp, 'results', 'stock-7.3-arm64-64k')
            os.rename(os.path.join(tmp, 'results', 'stock-7.3-arm64-16k'),
                      renamed)
            by_target = text_of(renamed)
        joined = ' '.join(x.strip() for x in lines)
        self.assertIn('! reference: page sizes disagree: kernel log 4 KiB, '
                      'target name 16 KiB', joined)
        self.assertIn('Page size 4 KiB:', joined)
        self.assertIn('Page size 64 KiB: PMD block 512 MiB (8192 pages), '
                      'cont-PTE block 2 MiB (32 pages).',
                      ' '.join(x.strip() for x in by_target))
        rows = self.entries_rows(by_target)
        # 1024 pages of 64 KiB are 64 MiB: 32 cont blocks.
        self.assertEqual(['64', 'MiB', '1024', 'T', '32'],
                         rows['large_rw_half_pmd'])

    def test_skips_grouped_by_reason(self) -> None:
        lines = section(text_of(REFERENCE, STOCK), 'Skipped, by reason')
        self.assertEqual(['no kernel page-table dump', 'no arm_spe_0 PMU',
                          'no cs_etm PMU with a TRBE sink',
                          'vmap() maps base pages only'],
                         [x.strip() for x in lines
                          if x.startswith('  ') and not
                          x.startswith('   ')])
        start = lines.index('  vmap() maps base pages only') + 1
        base_pages = [x for x in lines[start:] if x]
        # Leaf cases only: the parent vmap_granule_lookup_test's own SKIP
        # is not a fourth case; the counts add up to the results table's.
        self.assertEqual(['    stock: 4', '      perf_aux.pagesize_test:',
                          '        aux_pagesize.large_rw_2pmd.'
                          'large_chunks_mapped_large',
                          '      vmap_granule: 3 cases'], base_pages)
        self.assertIn('    reference, stock: 2 each', lines)

    def test_mutation_score_not_run(self) -> None:
        lines = text_of(REFERENCE, STOCK)
        self.assertEqual(['Mutation score', ''], lines[-3:-1])
        self.assertTrue(lines[-1].startswith('  Not run: no kill matrix in '))

    def test_mutation_score_of_the_run_s_base(self) -> None:
        mutants = os.path.join(REPORT, 'mutants')
        report_run = os.path.join(REPORT, 'results', 'reference-6.12-arm64-4k')
        score = ' '.join(x.strip() for x in section(
            text_of(report_run, mutants=mutants), 'Mutation score'))
        self.assertIn('Base 6.12 (arm64-4k): 2 killed of 4', score)
        self.assertIn('Not run: never_run', score)
        other = ' '.join(x.strip() for x in section(
            text_of(REFERENCE, mutants=mutants), 'Mutation score'))
        self.assertIn('Base 7.3: not run (no mutant runs of this base', other)

    def test_cli_out_file_and_missing_run(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, 'evidence.txt')
            rc, printed = run_main('evidence', '--out', out, REFERENCE,
                                   run_dir('custom-7.3-arm64-16k'))
            with open(out) as f:
                text = f.read()
            self.assertEqual(0, rc)
            self.assertEqual(f'evidence: {out}\n', printed)
            self.assertIn('custom: no run directory', text)
            self.assertTrue(all(len(x) <= 72 for x in text.splitlines()))
            rc, printed = run_main('evidence',
                                   os.path.join(tmp, 'nothing-7.3-x86_64'))
            self.assertEqual(1, rc)
            self.assertIn('no run directory', printed)

if __name__ == '__main__':
    unittest.main()
