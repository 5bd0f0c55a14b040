#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host tests of what make submit (perf_aux_lava.submit) reads from a LAVA
job log (log.yaml, as the API gives it): its entries, the console cut into the
direct run's two console logs, which the direct run's splitters turn into
the same KTAP, and LAVA's reasons for a job that did not complete."""

import json
import os
import sys
import unittest
from typing import Any, Dict, List

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..'))
DATA = os.path.join(HERE, 'test_data')

try:
    import yaml  # noqa: F401
    HAVE_YAML = True
except ImportError:
    HAVE_YAML = False

if HAVE_YAML:
    from perf_aux_results import ktap  # noqa: E402
    from perf_aux_lava import submit as lava  # noqa: E402

def read(name: str) -> List[str]:
    with open(os.path.join(DATA, name)) as f:
        return f.read().splitlines()

def entry(lvl: str, msg: Any) -> str:
    """One log.yaml line as LAVA writes it (JSON is a subset of its flow
    style)."""
    return '- ' + json.dumps({'dt': '2026-12-01T00:05:30.100374',
                              'lvl': lvl, 'msg': msg})

def job_log(boot: List[str], tests: List[str]) -> List[str]:
    """A QEMU job's log: deploy, boot (the console of boot), test action
    (the console of tests), with the dispatcher's own lines between."""
    lines = [entry('info', 'start: 0 validate'),
             entry('results', {'case': 'validate', 'definition': 'lava',
                               'result': 'pass'}),
             entry('info', 'start: 1 deployimages (timeout 00:05:00) '
                   '[common]'),
             entry('debug', 'Calling: qemu-system-aarch64 ...'),
             entry('info', 'start: 2 boot-image-retry (timeout 00:05:00) '
                   '[common]')]
    lines += [entry('target', line) for line in boot]
    lines += [entry('info', 'start: 3 lava-test-retry (timeout 00:20:00) '
                    '[common]'),
              entry('input', './lava-2/bin/lava-test-runner\n')]
    for i, line in enumerate(tests):
        lines.append(entry('target', line))
        if i == 3:
            # A result as LAVA writes it: tagged scalars, not JSON.
            lines.append('- {"dt": "2026-12-01T00:05:48.705330", "lvl": '
                         '"results", "msg": {"case": "perf_aux.map_test.x",'
                         ' "definition": "0_perf-aux", "endtc": ! "1332", '
                         '"result": "pass", "set": "map_test"}}')
            lines.append(entry('target', '<LAVA_SIGNAL_TESTCASE '
                               'TEST_CASE_ID=perf_aux.map_test.x '
                               'RESULT=pass>'))
    lines += [entry('info', 'end: 3 lava-test-retry (duration 00:01:50) '
                    '[common]'),
              entry('results', {'case': 'job', 'definition': 'lava',
                                'result': 'pass'})]
    return lines

@unittest.skipUnless(HAVE_YAML, 'no python3-yaml')
class LogEntriesTest(unittest.TestCase):
    def test_json_and_yaml_lines(self) -> None:
        log = job_log(['KTAP version 1'], ['a', 'b', 'c', 'd'])
        entries = list(lava.log_entries(log))
        self.assertEqual(len(entries), len(log))
        tagged = [e for e in entries if isinstance(e['msg'], dict) and
                  e['msg'].get('endtc')]
        self.assertEqual(str(tagged[0]['msg']['endtc']), '1332')

    def test_other_lines_left_out(self) -> None:
        log = ['', 'garbage', '- {"unclosed": ', '- [1, 2]',
               entry('target', 'x')]
        self.assertEqual([e['msg'] for e in lava.log_entries(log)], ['x'])

@unittest.skipUnless(HAVE_YAML, 'no python3-yaml')
class ConsoleTest(unittest.TestCase):
    """The job's console, split, gives what the direct run's two console
    logs give."""

    def setUp(self) -> None:
        self.kunit = read('kunit-two-suites.log')
        # The kselftest boot log from the init's first line on, as a LAVA
        # boot has it (the kernel's lines before belong to the boot part).
        run = read('kselftest-run.log')
        self.kselftest = run[[i for i, line in enumerate(run)
                              if line.startswith('PERF_AUX: kernel')][0]:]

    def test_parts(self) -> None:
        boot, tests = lava.console(lava.log_entries(
            job_log(self.kunit, self.kselftest)))
        self.assertEqual(boot, self.kunit)
        self.assertEqual(tests[0], self.kselftest[0])
        self.assertIn('<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=perf_aux.map_test.x'
                      ' RESULT=pass>', tests)
        self.assertEqual([t for t in tests if 'LAVA_SIGNAL' not in t],
                         self.kselftest)

    def test_same_ktap_as_the_direct_run(self) -> None:
        boot, tests = lava.console(lava.log_entries(
            job_log(self.kunit, self.kselftest)))
        self.assertEqual(ktap.split_kunit(boot),
                         ktap.split_kunit(read('kunit-two-suites.log')))
        self.assertEqual(ktap.split_kselftest(tests),
                         ktap.split_kselftest(read('kselftest-run.log')))
        self.assertTrue(ktap.split_kselftest(tests))

    def test_kernel_line_starts_the_second_part(self) -> None:
        boot, tests = lava.console(lava.log_entries(
            [entry('target', 'Linux version 7.3.0'),
             entry('target', 'PERF_AUX: kernel 7.3.0, page size 4 kB'),
             entry('target', 'PERF_AUX: shell for LAVA')]))
        self.assertEqual(boot, ['Linux version 7.3.0'])
        self.assertEqual(tests, ['PERF_AUX: kernel 7.3.0, page size 4 kB',
                                 'PERF_AUX: shell for LAVA'])

    def test_test_action_without_kernel_line(self) -> None:
        # A board booting its own OS: no ramdisk init of ours.
        boot, tests = lava.console(lava.log_entries(
            job_log(['KTAP version 1', '1..0'], ['TAP version 13'])))
        self.assertEqual(boot, ['KTAP version 1', '1..0'])
        self.assertEqual(tests, ['TAP version 13'])

    def test_carriage_returns_and_joined_lines(self) -> None:
        _, tests = lava.console(lava.log_entries(
            [entry('info', 'start: 3 lava-test-retry'),
             entry('target', 'ok 1 a\r'), entry('target', 'b\nc'),
             entry('target', '')]))
        self.assertEqual(tests, ['ok 1 a', 'b', 'c', ''])

@unittest.skipUnless(HAVE_YAML, 'no python3-yaml')
class JobErrorsTest(unittest.TestCase):
    def lava_fail(self, **msg: Any) -> Dict[str, Any]:
        return {'lvl': 'results', 'msg': dict(definition='lava',
                                              result='fail', **msg)}

    def test_reasons(self) -> None:
        entries = [
            self.lava_fail(case='validate'),
            self.lava_fail(case='file-download', error_type='Infrastructure',
                      error_msg='Unable to fetch\n  file:///x/Image.gz'),
            {'lvl': 'results', 'msg': {'definition': '0_perf-aux',
                                       'case': 'x', 'result': 'fail',
                                       'error_msg': 'a test, not LAVA'}},
            self.lava_fail(case='job', error_type='Infrastructure',
                      error_msg='Unable to fetch\n  file:///x/Image.gz'),
            self.lava_fail(case='job', error_type='Job',
                      error_msg='Invalid job data: ["Unknown user command"]'),
        ]
        self.assertEqual(lava.job_errors(entries), [
            'Infrastructure error: Unable to fetch file:///x/Image.gz',
            'Job error: Invalid job data: ["Unknown user command"]'])

    def test_complete_job_has_none(self) -> None:
        self.assertEqual(lava.job_errors(lava.log_entries(
            job_log(['x'], ['y']))), [])

if __name__ == '__main__':
    unittest.main()
