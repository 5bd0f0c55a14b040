# SPDX-License-Identifier: GPL-2.0
"""perf's Arm SPE shell tests as the testdefs boot reports them.

Console lines written by hand in the form scripts/initramfs/testdefs-init
prints and tools/perf/tests/shell/test_arm_spe.sh's own result lines: the
check passes when every script ended with one of perf test's statuses,
whatever they say; it fails when none ran, when one never ended (the guest
stopped inside it), and when one was killed by its time limit.
"""

import unittest

from perf_aux_results import perf_shell

RAN = '''PERF_AUX: test-definitions end
PERF_AUX: perf shell test test_arm_spe.sh begin
Recording trace with snapshot mode /tmp/__perf_test.perf.data.abcde
Looking at perf.data file for dumping samples:
SPE snapshot testing: FAIL
[   12.345678] random: crng init done
SPE discard mode not present: SKIPPED
PERF_AUX: perf shell test test_arm_spe.sh exit 1
PERF_AUX: perf shell test test_arm_spe_fork.sh begin
SPE hang test: PASS
PERF_AUX: perf shell test test_arm_spe_fork.sh exit 0
'''


class PerfShellTest(unittest.TestCase):
    def test_scripts_that_ended_pass_whatever_they_report(self) -> None:
        ok, lines = perf_shell.report(RAN.splitlines())
        self.assertTrue(ok)
        self.assertEqual(lines, [
            "perf's Arm SPE shell tests ran to their end on the synthetic "
            'arm_spe_0: test_arm_spe.sh fail, test_arm_spe_fork.sh pass',
            '# test_arm_spe.sh: SPE snapshot testing: FAIL',
            '# test_arm_spe.sh: SPE discard mode not present: SKIPPED',
            '# test_arm_spe_fork.sh: SPE hang test: PASS'])

    def test_none_ran_fails(self) -> None:
        ok, lines = perf_shell.report(['PERF_AUX: test-definitions end'])
        self.assertFalse(ok)
        self.assertIn('none ran', lines[0])

    def test_unended_script_fails(self) -> None:
        cut = RAN.splitlines()[:5]
        ok, lines = perf_shell.report(cut)
        self.assertFalse(ok)
        self.assertIn('not ended: test_arm_spe.sh', lines[0])

    def test_time_limit_fails(self) -> None:
        killed = RAN.replace('test_arm_spe_fork.sh exit 0',
                             'test_arm_spe_fork.sh exit 124')
        ok, lines = perf_shell.report(killed.splitlines())
        self.assertFalse(ok)
        self.assertIn('test_arm_spe_fork.sh exit 124', lines[0])


if __name__ == '__main__':
    unittest.main()
