# SPDX-License-Identifier: GPL-2.0
"""The direct run named as test-definitions names it, and the comparison.

Names written out by hand from the rule parse-output.py applies (module
docstring of perf_aux_results/testdefs.py): a passed case, a skipped case
whose reason joins its name, a failed program, the shard line; then a
guest log whose printed results differ in one case, and one that never
printed its end marker.
"""

import os
import tempfile
import unittest

from perf_aux_results import testdefs

MAP_KTAP = '''TAP version 13
1..3
# Starting 3 tests from 2 test cases.
ok 1 global.aux_before_data_area
ok 2 aux_map.none_rw_1g.chunk_orders_follow_rule # SKIP buffer larger than half of available memory
not ok 3 aux_map.nosg_rw_2p.pages_zeroed_and_mapped
# Totals: pass:1 fail:1 xfail:0 xpass:0 skip:1 error:0
'''
HW_KTAP = '''TAP version 13
1..1
ok 1 hw_trace.arm_spe.records_parse # SKIP no arm_spe_0 PMU
'''
CONSOLE = '''PERF_AUX: kselftests begin
TAP version 13
1..2
# selftests: perf_aux: map_test
# TAP version 13
not ok 1 selftests: perf_aux: map_test # exit=1
# selftests: perf_aux: hw_trace_test
ok 2 selftests: perf_aux: hw_trace_test # SKIP
PERF_AUX: kselftests end
'''
WANT = {
    'shardfile-perf_aux': 'pass',
    'perf_aux_map_test_global_aux_before_data_area': 'pass',
    'perf_aux_map_test_aux_map_none_rw_1g_chunk_orders_follow_rule_buffer_'
    'larger_than_half_of_available_memory': 'skip',
    'perf_aux_map_test_aux_map_nosg_rw_2p_pages_zeroed_and_mapped': 'fail',
    'perf_aux_map_test': 'fail',
    'perf_aux_hw_trace_test_hw_trace_arm_spe_records_parse_no_arm_spe_0_PMU':
        'skip',
    'perf_aux_hw_trace_test': 'skip',
}

def guest_log(results: dict, end: bool = True) -> list:
    lines = ['[   12.000000] random kernel line\n', testdefs.BEGIN + '\r\n']
    lines += [f'{n} {r}\r\n' for n, r in results.items()]
    return lines + ([testdefs.END + '\r\n'] if end else [])

class TestdefsTest(unittest.TestCase):

    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.res = os.path.join(self.tmp.name, 'reference-7.3-arm64-4k')
        os.makedirs(self.res)
        for name, text in (('map_test', MAP_KTAP), ('hw_trace_test', HW_KTAP)):
            with open(os.path.join(self.res, f'perf_aux.{name}.ktap'), 'w',
                      encoding='utf-8') as f:
                f.write(text)

    def tearDown(self) -> None:
        self.tmp.cleanup()

    def test_slug_rule(self) -> None:
        self.assertEqual('perf_aux_map_test', testdefs.slug(' perf_aux: map_test'))
        self.assertEqual('a__b', testdefs.slug('a -b'))
        self.assertEqual('x_y', testdefs.slug('_x[12] y_'))

    def test_direct_run_named_as_test_definitions_names_it(self) -> None:
        self.assertEqual(WANT, testdefs.expected(self.res, CONSOLE.splitlines()))

    def test_equal_results_pass(self) -> None:
        ok, lines = testdefs.compare(WANT, testdefs.reported(guest_log(WANT)))
        self.assertTrue(ok, lines)
        self.assertIn('7 results (2 pass, 2 fail, 3 skip), 0 differing', lines[0])

    def test_one_differing_case_fails_and_is_named(self) -> None:
        got = dict(WANT, perf_aux_map_test_global_aux_before_data_area='fail')
        ok, lines = testdefs.compare(WANT, testdefs.reported(guest_log(got)))
        self.assertFalse(ok)
        self.assertEqual(['# perf_aux_map_test_global_aux_before_data_area: '
                          'direct run pass, test-definitions fail'], lines[1:])

    def test_a_skip_for_want_of_memory_is_told_not_a_difference(self) -> None:
        passed = 'perf_aux_map_test_aux_map_none_rw_1g_chunk_orders_follow_rule'
        skipped = [n for n in WANT if n.startswith(f'{passed}_')][0]
        got = {n: r for n, r in WANT.items() if n != skipped}
        got[passed] = 'pass'
        ok, lines = testdefs.compare(WANT, testdefs.reported(guest_log(got)))
        self.assertTrue(ok, lines)
        self.assertEqual([f'# {passed}: a pass, and {skipped} '
                          '(a skip for want of memory)'], lines[1:])
        hw = 'perf_aux_hw_trace_test_hw_trace_arm_spe_records_parse'
        got = dict(WANT, **{hw: 'pass'})
        del got[f'{hw}_no_arm_spe_0_PMU']
        ok, lines = testdefs.compare(WANT, testdefs.reported(guest_log(got)))
        self.assertEqual((False, 3), (ok, len(lines)), lines)

    def test_missing_case_fails(self) -> None:
        got = dict(WANT)
        del got['perf_aux_hw_trace_test']
        ok, lines = testdefs.compare(WANT, testdefs.reported(guest_log(got)))
        self.assertFalse(ok)
        self.assertIn('test-definitions absent', lines[1])

    def test_unfinished_run_fails(self) -> None:
        self.assertIsNone(testdefs.reported(guest_log(WANT, end=False)))
        ok, lines = testdefs.compare(WANT, None)
        self.assertFalse(ok)
        self.assertIn('did not finish', lines[0])

if __name__ == '__main__':
    unittest.main()
