#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host tests of scripts/results.py on saved and crafted console logs."""

import io
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stdout

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..'))
import results  # noqa: E402

DATA = os.path.join(os.path.dirname(__file__), 'test_data')


def read(name: str) -> list:
    with open(os.path.join(DATA, name)) as f:
        return f.readlines()


class SplitKunitTest(unittest.TestCase):
    def test_one_document_per_suite(self) -> None:
        suites = results.split_kunit(read('kunit-two-suites.log'))
        self.assertEqual(['perf_aux_alloc', 'vmap_granule'], sorted(suites))

    def test_counts_leaf_cases_of_parameterised_tests(self) -> None:
        suites = results.split_kunit(read('kunit-two-suites.log'))
        r = results.count('perf_aux_alloc', suites['perf_aux_alloc'])
        self.assertEqual((2, 1, 1), (r.passed, r.failed, r.skipped))

    def test_renumbers_each_suite_as_test_one(self) -> None:
        suites = results.split_kunit(read('kunit-two-suites.log'))
        self.assertTrue(suites['vmap_granule'].endswith('ok 1 vmap_granule\n'))
        r = results.count('vmap_granule', suites['vmap_granule'])
        self.assertEqual((1, 0, 0, 0),
                         (r.passed, r.failed, r.skipped, r.errors))

    def test_drops_kernel_messages_between_results(self) -> None:
        suites = results.split_kunit(read('kunit-two-suites.log'))
        self.assertNotIn('crng', suites['perf_aux_alloc'])

    def test_crash_counts_as_failure(self) -> None:
        suites = results.split_kunit(read('kunit-crash.log'))
        r = results.count('perf_aux_alloc', suites['perf_aux_alloc'])
        self.assertEqual(1, r.passed)
        self.assertFalse(r.ok)


class SplitTestVmallocTest(unittest.TestCase):
    LOG = [
        '[   12.1] Summary: fix_size_alloc_test passed: 2 failed: 0 '
        'repeat: 1 loops: 10000 avg: 812 usec\n',
        '[   12.2] Summary: align_shift_alloc_test passed: 0 failed: 2 '
        'repeat: 1 loops: 10000 avg: 3 usec\n',
        '[   12.3] All test took worker0=123 cycles\n',
    ]

    def test_case_per_summary_line(self):
        ktap = results.split_test_vmalloc(self.LOG)['peer.test_vmalloc']
        r = results.count('peer.test_vmalloc', ktap)
        self.assertEqual((r.passed, r.failed), (1, 1))
        self.assertIn('not ok 2 align_shift_alloc_test', ktap)

    def test_no_summary_is_a_failure(self):
        ktap = results.split_test_vmalloc(['Kernel panic\n'])
        r = results.count('peer.test_vmalloc', ktap['peer.test_vmalloc'])
        self.assertEqual((r.passed, r.failed), (0, 1))


class BaselineTest(unittest.TestCase):
    def test_only_new_failures_kill(self):
        base = {'peer.test_vmalloc': results.SuiteVerdict(1, ['align'])}
        same = {'peer.test_vmalloc': results.SuiteVerdict(1, ['align'])}
        more = {'peer.test_vmalloc': results.SuiteVerdict(2, ['align', 'fix'])}
        self.assertFalse(results.beyond_baseline(
            same, base)['peer.test_vmalloc'].killed)
        v = results.beyond_baseline(more, base)['peer.test_vmalloc']
        self.assertEqual((v.killed, v.cases), (True, ['fix']))

    def test_suites_without_baseline_keep_their_verdict(self):
        ours = {'perf_aux_alloc': results.SuiteVerdict(3, ['a', 'b', 'c'])}
        self.assertEqual(results.beyond_baseline(ours, {}), ours)


class FlakesTest(unittest.TestCase):
    KTAP = ('KTAP version 1\n1..2\nok 1 wrap.spe.keep_up\n'
            'ok 2 wrap.trbe.keep_up # SKIP no PMU\n')

    def rounds(self, *docs):
        dirs = []
        for doc in docs:
            d = tempfile.mkdtemp()
            if doc is not None:
                with open(os.path.join(d, 'perf_aux.wrap_test.ktap'), 'w') as f:
                    f.write(doc)
            dirs.append(d)
        return dirs

    def test_same_results_are_not_flaky(self):
        lines = results.flakes(self.rounds(self.KTAP, self.KTAP))
        self.assertEqual(lines, ['0 flaky of 2 cases over 2 rounds'])

    def test_changed_and_missing_results_are_flaky(self):
        changed = self.KTAP.replace('ok 1 wrap', 'not ok 1 wrap')
        lines = results.flakes(self.rounds(self.KTAP, changed, None))
        self.assertIn('flaky: perf_aux.wrap_test.wrap.spe.keep_up: '
                      'SUCCESS FAILURE MISSING', lines)
        self.assertEqual(lines[-1], '2 flaky of 2 cases over 3 rounds')


class SplitKselftestTest(unittest.TestCase):
    def setUp(self) -> None:
        self.suites = results.split_kselftest(read('kselftest-run.log'))

    def test_one_document_per_binary(self) -> None:
        self.assertEqual(['perf_aux.map_test', 'perf_aux.pagesize_test',
                          'perf_aux.wrap_test'], sorted(self.suites))

    def test_harness_output_is_unnested(self) -> None:
        r = results.count('map', self.suites['perf_aux.map_test'])
        self.assertEqual((1, 1, 1), (r.passed, r.failed, r.skipped))

    def test_missing_binary_is_a_failure(self) -> None:
        r = results.count('pagesize', self.suites['perf_aux.pagesize_test'])
        self.assertEqual((0, 1), (r.passed, r.failed))

    def test_kernel_messages_inside_output_are_ignored(self) -> None:
        r = results.count('wrap', self.suites['perf_aux.wrap_test'])
        self.assertEqual((2, 0, 0), (r.passed, r.failed, r.skipped))
        self.assertNotIn('perf: interrupt', self.suites['perf_aux.wrap_test'])


class BenchTest(unittest.TestCase):
    def test_ratios_from_the_diagnostic_line(self) -> None:
        base = results.bench_values(
            '    # vmap_granule_bench_test: vmap_bench: order8_mib=100 '
            'vmap_order8_ns=1235000 vmap_vunmap_1page_ns=600\n')
        new = {'order8_mib': 100, 'vmap_order8_ns': 149000,
               'vmap_vunmap_1page_ns': 600}
        self.assertEqual(['vmap_order8_ns: 1235000 -> 149000 ns, 8.29x',
                          'vmap_vunmap_1page_ns: 600 -> 600 ns, 1.00x'],
                         results.bench_lines(base, new))

    def test_no_diagnostic_no_values(self) -> None:
        self.assertEqual({}, results.bench_values('ok 1 vmap_granule\n'))


class SummaryTest(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = os.path.join(self.tmp.name, 'reference-arm64-4k')
        results.write_suites(results.split_kunit(read('kunit-two-suites.log')),
                             self.dir)

    def tearDown(self) -> None:
        self.tmp.cleanup()

    def run_main(self, *argv: str) -> tuple:
        out = io.StringIO()
        with redirect_stdout(out):
            rc = results.main(list(argv))
        return rc, out.getvalue()

    def test_summary_ends_with_totals_and_fails(self) -> None:
        report = os.path.join(self.tmp.name, 'report.md')
        rc, out = self.run_main('summary', self.dir, '--report', report)
        self.assertEqual(1, rc)
        self.assertEqual('3 passed, 1 failed, 1 skipped',
                         out.splitlines()[-1])
        with open(report) as f:
            self.assertIn('| reference-arm64-4k | perf_aux_alloc | 2 | 1 | 1 |',
                          f.read())

    def test_expect_failure_of_a_failing_suite(self) -> None:
        rc, _ = self.run_main('expect', self.dir, 'perf_aux_alloc',
                              '--failure')
        self.assertEqual(0, rc)

    def test_expect_no_failure_of_a_failing_suite(self) -> None:
        rc, out = self.run_main('expect', self.dir, 'perf_aux_alloc',
                                '--no-failure')
        self.assertEqual(1, rc)
        self.assertIn('failures: aux_alloc_bad_input_test)', out)

    def test_expect_minimum_passed(self) -> None:
        rc, out = self.run_main('expect', self.dir, 'vmap_granule',
                                '--no-failure', '--min-passed', '2')
        self.assertEqual(1, rc)
        self.assertIn('fewer than 2 passed', out)

    def test_expect_skips_counted_by_reason(self) -> None:
        rc, out = self.run_main('expect', self.dir, 'perf_aux_alloc',
                                '--failure', '--min-skipped', '1',
                                '--skip-reason', 'quarter of memory')
        self.assertEqual(0, rc, out)
        rc, out = self.run_main('expect', self.dir, 'perf_aux_alloc',
                                '--failure', '--min-skipped', '1',
                                '--skip-reason', 'base pages only')
        self.assertEqual(1, rc)
        self.assertIn('fewer than 1 skipped', out)

    def test_expect_missing_suite_fails(self) -> None:
        rc, _ = self.run_main('expect', self.dir, 'no_such_suite',
                              '--no-failure')
        self.assertEqual(1, rc)


if __name__ == '__main__':
    unittest.main()
