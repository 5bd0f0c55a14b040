#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host tests of the results glue (scripts/perf_aux_results: KTAP splitting,
verdicts, flakes, benchmark; python3 -m perf_aux results) on saved and
crafted console logs."""

import io
import os
import subprocess
import sys
import tempfile
import unittest
from contextlib import redirect_stdout
from typing import Tuple
from unittest import mock

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..'))
from perf_aux import lib  # noqa: E402
from perf_aux_results import cli, ktap, report, verdicts  # noqa: E402

SCRIPTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(os.path.dirname(__file__), 'test_data')

def run_main(*argv: str) -> Tuple[int, str]:
    """results ARGV...: its exit status and output."""
    out = io.StringIO()
    with redirect_stdout(out):
        rc = cli.results_main(list(argv))
    return rc, out.getvalue()

def read(name: str) -> list:
    with open(os.path.join(DATA, name)) as f:
        return f.readlines()

class SplitKunitTest(unittest.TestCase):
    def test_one_document_per_suite(self) -> None:
        suites = ktap.split_kunit(read('kunit-two-suites.log'))
        self.assertEqual(['perf_aux_alloc', 'vmap_granule'], sorted(suites))

    def test_counts_leaf_cases_of_parameterised_tests(self) -> None:
        suites = ktap.split_kunit(read('kunit-two-suites.log'))
        r = verdicts.count('perf_aux_alloc', suites['perf_aux_alloc'])
        self.assertEqual((2, 1, 1), (r.passed, r.failed, r.skipped))

    def test_renumbers_each_suite_as_test_one(self) -> None:
        suites = ktap.split_kunit(read('kunit-two-suites.log'))
        self.assertTrue(suites['vmap_granule'].endswith('ok 1 vmap_granule\n'))
        r = verdicts.count('vmap_granule', suites['vmap_granule'])
        self.assertEqual((1, 0, 0, 0),
                         (r.passed, r.failed, r.skipped, r.errors))

    def test_drops_kernel_messages_between_results(self) -> None:
        suites = ktap.split_kunit(read('kunit-two-suites.log'))
        self.assertNotIn('crng', suites['perf_aux_alloc'])

    def test_keeps_expectation_message(self) -> None:
        log = ['KTAP version 1\n', '1..1\n',
               '    KTAP version 1\n', '    # Subtest: vmap_granule\n',
               '    1..1\n',
               '    # map_test: EXPECTATION FAILED at x.c:1\n',
               '    Expected 0 == bad, but\n', '        bad == 3 (0x3)\n',
               'page 1 of 4: found PTE, expected PMD\n',
               'random: crng init done\n',
               '    not ok 1 map_test\n', 'not ok 1 vmap_granule\n']
        doc = ktap.split_kunit(log)['vmap_granule']
        self.assertIn('    # page 1 of 4: found PTE, expected PMD', doc)
        self.assertNotIn('crng', doc)

    def test_crash_counts_as_failure(self) -> None:
        suites = ktap.split_kunit(read('kunit-crash.log'))
        r = verdicts.count('perf_aux_alloc', suites['perf_aux_alloc'])
        self.assertEqual(1, r.passed)
        self.assertTrue(r.failures)

class SplitTestVmallocTest(unittest.TestCase):
    LOG = [
        '[   12.1] Summary: fix_size_alloc_test passed: 2 failed: 0 '
        'repeat: 1 loops: 10000 avg: 812 usec\n',
        '[   12.2] Summary: align_shift_alloc_test passed: 0 failed: 2 '
        'repeat: 1 loops: 10000 avg: 3 usec\n',
        '[   12.3] All test took worker0=123 cycles\n',
    ]

    def test_case_per_summary_line(self):
        doc = ktap.split_test_vmalloc(self.LOG)['peer.test_vmalloc']
        r = verdicts.count('peer.test_vmalloc', doc)
        self.assertEqual((r.passed, r.failed), (1, 1))
        self.assertIn('not ok 2 align_shift_alloc_test', doc)

    def test_no_summary_is_a_failure(self):
        docs = ktap.split_test_vmalloc(['Kernel panic\n'])
        r = verdicts.count('peer.test_vmalloc', docs['peer.test_vmalloc'])
        self.assertEqual((r.passed, r.failed), (0, 1))

class BaselineTest(unittest.TestCase):
    def test_only_new_failures_kill(self):
        base = {'peer.test_vmalloc': verdicts.SuiteVerdict(1, ['align'])}
        same = {'peer.test_vmalloc': verdicts.SuiteVerdict(1, ['align'])}
        more = {'peer.test_vmalloc': verdicts.SuiteVerdict(2, ['align', 'fix'])}
        self.assertFalse(report.beyond_baseline(
            same, base)['peer.test_vmalloc'].killed)
        v = report.beyond_baseline(more, base)['peer.test_vmalloc']
        self.assertEqual((v.killed, v.cases), (True, ['fix']))

    def test_suites_without_baseline_keep_their_verdict(self):
        ours = {'perf_aux_alloc': verdicts.SuiteVerdict(3, ['a', 'b', 'c'])}
        self.assertEqual(report.beyond_baseline(ours, {}), ours)

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
        lines = verdicts.flakes(self.rounds(self.KTAP, self.KTAP))[1]
        self.assertEqual(lines, ['0 flaky of 2 cases over 2 rounds'])

    def test_changed_and_missing_results_are_flaky(self):
        changed = self.KTAP.replace('ok 1 wrap', 'not ok 1 wrap')
        lines = verdicts.flakes(self.rounds(self.KTAP, changed, None))[1]
        self.assertIn('flaky: perf_aux.wrap_test.wrap.spe.keep_up: '
                      'SUCCESS FAILURE MISSING', lines)
        self.assertEqual(lines[-1], '2 flaky of 2 cases over 3 rounds')

    def test_a_skip_for_want_of_memory_is_told_not_flaky(self):
        for reason, flaky in (('no free block of the order the rule asks', 0),
                              ('no PMU', 1)):
            skipped = self.KTAP.replace('ok 1 wrap.spe.keep_up',
                                        f'ok 1 wrap.spe.keep_up # SKIP {reason}')
            lines = verdicts.flakes(self.rounds(self.KTAP, skipped))[1]
            self.assertEqual(lines[-1], f'{flaky} flaky of 2 cases over 2 rounds')
            self.assertEqual(f'{"flaky" if flaky else "told"}: perf_aux.wrap_test.'
                             'wrap.spe.keep_up: SUCCESS SKIPPED' + (
                                 '' if flaky else ' (a skip for want of memory)'),
                             lines[0])

    def test_excepted_suite_is_not_compared(self):
        changed = self.KTAP.replace('ok 1 wrap', 'not ok 1 wrap')
        rounds = self.rounds(self.KTAP, changed)
        self.assertTrue(verdicts.flakes(rounds)[0])
        lines = verdicts.flakes(rounds, ('perf_aux.wrap_test',))[1]
        self.assertEqual(lines, ['0 flaky of 0 cases over 2 rounds'])

class SplitKselftestTest(unittest.TestCase):
    def setUp(self) -> None:
        self.suites = ktap.split_kselftest(read('kselftest-run.log'))

    def test_one_document_per_binary(self) -> None:
        self.assertEqual(['perf_aux.map_test', 'perf_aux.pagesize_test',
                          'perf_aux.wrap_test'], sorted(self.suites))

    def test_harness_output_is_unnested(self) -> None:
        r = verdicts.count('map', self.suites['perf_aux.map_test'])
        self.assertEqual((1, 1, 1), (r.passed, r.failed, r.skipped))

    def test_missing_binary_is_a_failure(self) -> None:
        r = verdicts.count('pagesize', self.suites['perf_aux.pagesize_test'])
        self.assertEqual((0, 1), (r.passed, r.failed))

    def test_kernel_messages_inside_output_are_ignored(self) -> None:
        r = verdicts.count('wrap', self.suites['perf_aux.wrap_test'])
        self.assertEqual((2, 0, 0), (r.passed, r.failed, r.skipped))
        self.assertNotIn('perf: interrupt', self.suites['perf_aux.wrap_test'])

class BenchTest(unittest.TestCase):
    SUMMARY = ('[    3.1] Summary: vmap_contig_chunks_test passed: 1 failed: 0 '
               'xfailed: 0 repeat: 1 loops: 5 avg: 1235 usec\n')

    def test_ratios_from_the_diagnostic_line(self) -> None:
        base = ktap.bench(
            '# vmap_bench: vmap_contig_chunks_usec=1235 loops=5\n')
        new = {'vmap_contig_chunks_usec': 149, 'loops': 5}
        self.assertEqual(['vmap_contig_chunks_usec: 1235 -> 149 usec, 8.29x'],
                         report.bench_lines(base, new))

    def test_no_diagnostic_no_values(self) -> None:
        self.assertEqual({}, ktap.bench('ok 1 vmap_granule\n'))

    def test_kunit_boot_gives_the_benchmark_suite(self) -> None:
        suites = ktap.split_kunit_boot([self.SUMMARY])
        self.assertEqual('KTAP version 1\n1..1\n'
                         '# vmap_bench: vmap_contig_chunks_usec=1235 loops=5\n'
                         'ok 1 vmap_contig_chunks_test\n',
                         suites['test_vmalloc'])

    def test_failed_benchmark_is_a_failed_case(self) -> None:
        line = self.SUMMARY.replace('passed: 1 failed: 0',
                                    'passed: 0 failed: 1')
        self.assertIn('not ok 1 vmap_contig_chunks_test',
                      ktap.split_kunit_boot([line])['test_vmalloc'])

    def test_no_benchmark_no_suite(self) -> None:
        self.assertNotIn('test_vmalloc', ktap.split_kunit_boot(['boot\n']))

class SummaryTest(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = os.path.join(self.tmp.name, 'reference-7.3-arm64-4k')
        ktap.write_suites(ktap.split_kunit(read('kunit-two-suites.log')),
                             self.dir)

    def tearDown(self) -> None:
        self.tmp.cleanup()

    def test_summary_ends_with_totals_and_fails(self) -> None:
        report = os.path.join(self.tmp.name, 'report.md')
        rc, out = run_main('summary', self.dir, '--report', report)
        self.assertEqual(1, rc)
        self.assertEqual('3 passed, 1 failed, 1 skipped',
                         out.splitlines()[-1])
        with open(report) as f:
            self.assertIn('| reference-7.3-arm64-4k | perf_aux_alloc | 2 | 1 | 1 |',
                          f.read())

    def expect(self, suite: str, failure, **kw) -> Tuple[bool, str]:
        return verdicts.expect(self.dir, suite,
                               verdicts.Expectation(failure, **kw))

    def test_expect_failure_of_a_failing_suite(self) -> None:
        self.assertTrue(self.expect('perf_aux_alloc', True)[0])

    def test_expect_no_failure_of_a_failing_suite(self) -> None:
        ok, line = self.expect('perf_aux_alloc', False)
        self.assertFalse(ok)
        self.assertIn('failures: aux_alloc_bad_input_test)', line)

    def test_expect_failure_allowed_still_counts_passes(self) -> None:
        self.assertTrue(self.expect('perf_aux_alloc', None, min_passed=2)[0])
        ok, line = self.expect('perf_aux_alloc', None, min_passed=3)
        self.assertFalse(ok)
        self.assertIn('fewer than 3 passed', line)

    def test_expect_no_failure_but_a_case_failing_by_design(self) -> None:
        ok, line = self.expect('perf_aux_alloc', False, allowed_failures=[
            'aux_alloc_bad_input_test'])
        self.assertTrue(ok, line)
        self.assertIn('2 passed, 0 failed, 1 skipped', line)
        self.assertIn('[1 failing by design: aux_alloc_bad_input_test]', line)

    def test_expect_allowed_failure_forgives_only_its_case(self) -> None:
        ok, line = self.expect('perf_aux_alloc', False, allowed_failures=[
            'aux_alloc_first_page_fails_test'])
        self.assertFalse(ok)
        self.assertIn('failures: aux_alloc_bad_input_test)', line)
        self.assertNotIn('by design', line)

    def test_expect_allowed_failure_is_a_whole_name(self) -> None:
        ok, line = self.expect('perf_aux_alloc', False,
                               allowed_failures=['input_test'])
        self.assertFalse(ok, line)

    def test_expect_minimum_passed(self) -> None:
        ok, line = self.expect('vmap_granule', False, min_passed=2)
        self.assertFalse(ok)
        self.assertIn('fewer than 2 passed', line)

    def test_expect_skips_counted_by_reason(self) -> None:
        ok, line = self.expect('perf_aux_alloc', True, min_skipped=1,
                               skip_reason='quarter of memory')
        self.assertTrue(ok, line)
        ok, line = self.expect('perf_aux_alloc', True, min_skipped=1,
                               skip_reason='base pages only')
        self.assertFalse(ok)
        self.assertIn('fewer than 1 skipped', line)

    def test_expect_missing_suite_fails(self) -> None:
        self.assertFalse(self.expect('no_such_suite', False)[0])

class RunNameTest(unittest.TestCase):
    def parts(self, name: str) -> tuple:
        p = ktap.parts(name)
        return p.kernel, p.base, p.target, p.variant

    def test_kernel_base_target_variant(self) -> None:
        self.assertEqual(('reference', '7.3', 'arm64-4k', 'default'),
                         self.parts('reference-7.3-arm64-4k'))
        self.assertEqual(('stock', '7.3', 'arm64-4k', 'strict'),
                         self.parts('stock-7.3-arm64-4k-strict'))
        self.assertEqual(('stock', '6.12', 'x86_64', 'default'),
                         self.parts('stock-6.12-x86_64'))
        self.assertEqual(('custom', '7.2', 'arm64-16k', 'nohugevmalloc'),
                         self.parts('custom-7.2-arm64-16k-nohugevmalloc'))

    def test_mutants_and_their_baseline(self) -> None:
        self.assertEqual(('pfn_alignment_unchecked', '6.12', 'arm64-4k',
                          'default'),
                         self.parts('pfn_alignment_unchecked-6.12-arm64-4k'))
        self.assertEqual(('baseline', '7.3', 'arm64-4k', 'default'),
                         self.parts('baseline-7.3-arm64-4k'))

    def test_names_of_no_known_form_are_all_kernel(self) -> None:
        for name in ('reference-arm64-4k', 'stock-7-arm64-4k', 'report'):
            self.assertEqual((name, '', '', ''), self.parts(name))

    def test_bases_newest_first(self) -> None:
        self.assertEqual(['7.3', '7.2', '6.12', '', 'x'],
                         sorted(['6.12', '', '7.3', 'x', '7.2'],
                                key=ktap.base_key))

class ResultLineTest(unittest.TestCase):
    def test_fields(self) -> None:
        r = ktap.result('    ok 2 large_rw # SKIP no PMU')
        assert r is not None
        self.assertEqual((True, 'large_rw', 'no PMU', False, True),
                         (r.ok, r.name, r.skip_reason(), r.top,
                          r.own))
        r = ktap.result('# not ok 3 - aux_map.bad_offset')
        assert r is not None
        self.assertEqual((False, 'aux_map.bad_offset', None, False),
                         (r.ok, r.name, r.skip_reason(), r.own))

    def test_diagnostics_are_no_results(self) -> None:
        for line in ('# vmap_granule_map_test: pass:1 fail:0',
                     '    # aux: ok 1 quoted', 'ok', 'okay 1 x'):
            self.assertIsNone(ktap.result(line), line)

    def test_renumbered_keeps_the_directive(self) -> None:
        r = ktap.result('ok 7 vmap_granule # SKIP no vmap')
        assert r is not None
        self.assertEqual('ok 1 suite # SKIP no vmap', r._replace(name='suite').line())

    def test_runner_line_names_a_binary(self) -> None:
        r = ktap.result('not ok 2 selftests: perf_aux: pagesize_test # '
                           'TIMEOUT 300 seconds')
        assert r is not None
        self.assertEqual(('perf_aux', 'pagesize_test'),
                         ktap.kselftest_binary(r))
        self.assertEqual('TIMEOUT 300 seconds', r.comment)

class KunitToolTest(unittest.TestCase):
    def test_tool_dir_then_the_newest_cached_tree(self) -> None:
        with tempfile.TemporaryDirectory() as cache:
            for base in ('6.12', '7.2', '7.3'):
                os.makedirs(os.path.join(cache, 'src', base, 'tools',
                                         'testing', 'kunit'))
            env = {'PERF_AUX_CACHE': cache, 'KUNIT_TOOL_DIR': '/k'}
            with mock.patch.dict(os.environ, env):
                dirs = ktap._tool_dirs()
        self.assertEqual(['/k'] + [os.path.join(cache, 'src', b, 'tools',
                                                'testing', 'kunit')
                                   for b in ('7.3', '7.2', '6.12')], dirs)

    def test_both_parser_apis(self) -> None:
        """6.12's parse_run_tests(lines) prints through kunit_parser.stdout;
        later ones take the printer as an argument."""
        calls = []

        def old_api(kernel_output):  # type: ignore[no-untyped-def]
            calls.append(('old', list(kernel_output)))

        def new_api(kernel_output, printer):  # type: ignore
            calls.append(('new', printer))

        for api in (old_api, new_api):
            parser = mock.Mock(parse_run_tests=api)
            with mock.patch.object(ktap, '_kunit',
                                   return_value=(parser, 'quiet')):
                ktap.parse('KTAP version 1\n1..0\n')
        self.assertEqual([('old', ['KTAP version 1', '1..0']),
                          ('new', 'quiet')], calls)

    def test_a_document_cut_short_fails(self) -> None:
        r = verdicts.count('x', 'KTAP version 1\n1..2\n    KTAP version 1\n'
                           '    1..1\n')
        self.assertTrue(r.failures)

class EntryPointTest(unittest.TestCase):
    """python3 -m perf_aux results as the pipeline runs it."""

    def run_script(self, *argv: str) -> subprocess.CompletedProcess:
        return subprocess.run(argv, capture_output=True, text=True, cwd='/',
                              timeout=60)

    def test_results_verb(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            log = os.path.join(DATA, 'kselftest-run.log')
            p = self.run_script(*lib.perf_aux('results', 'kselftest', log,
                                              tmp))
            self.assertEqual(0, p.returncode, p.stderr)
            p = self.run_script(*lib.perf_aux('results', 'summary', tmp))
        self.assertEqual('3 passed, 2 failed, 1 skipped',
                         p.stdout.splitlines()[-1], p.stderr)

if __name__ == '__main__':
    unittest.main()
