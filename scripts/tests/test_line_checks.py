# SPDX-License-Identifier: GPL-2.0
"""check.sh's line_checks: a command's own check lines counted as checks.

The series stage and the LAVA checks print "ok - ..."/"not ok - ..." lines
that check.sh counts.  A failed line must reach the tier's closing line:
a "not ok" once went uncounted (a local variable shadowed the failure
counter), so a series prefix that did not build ended "0 failed".
"""

import os
import subprocess
import tempfile
import unittest

SCRIPTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

STUBS = r'''
. "$1"; shift
lines() { printf '%s\n' "$@"; }
fails_quietly() { echo "checked nothing"; return 3; }
'''


class LineChecksTest(unittest.TestCase):

    def counts(self, script: str) -> str:
        with tempfile.TemporaryDirectory() as out:
            env = dict(os.environ, PERF_AUX_OUT=out)
            res = subprocess.run(
                ['bash', '-c', STUBS + script +
                 '; echo "COUNTS $passed $failed $skipped"', 'sh',
                 os.path.join(SCRIPTS, 'check.sh')],
                env=env, capture_output=True, text=True)
        return [line for line in res.stdout.splitlines()
                if line.startswith('COUNTS ')][-1]

    def test_failed_line_counted(self) -> None:
        self.assertEqual('COUNTS 1 1 1', self.counts(
            'line_checks lines "ok - a" "not ok - b" "ok - c # SKIP d"'))

    def test_failure_without_a_line_is_a_failure(self) -> None:
        self.assertEqual('COUNTS 0 1 0', self.counts(
            'line_checks fails_quietly'))


if __name__ == '__main__':
    unittest.main()
