# SPDX-License-Identifier: GPL-2.0
"""The stage engine's line_checks: a command's own check lines counted as
checks.

The series stage and the LAVA checks print "ok - ..."/"not ok - ..." lines
that perf_aux.check counts.  A failed line must reach the tier's closing
line: a "not ok" once went uncounted (a local variable of the shell
version shadowed the failure counter), so a series prefix that did not
build ended "0 failed".
"""

import contextlib
import io
import os
import sys
import unittest

SCRIPTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, SCRIPTS)
from perf_aux import check  # noqa: E402

class LineChecksTest(unittest.TestCase):

    def counts(self, *argv: str):
        c = check.Check(False)
        with contextlib.redirect_stdout(io.StringIO()) as out:
            c.line_checks(*argv)
        return c.counts, out.getvalue()

    def test_failed_line_counted(self) -> None:
        counts, out = self.counts('printf', '%s\\n', 'ok - a', 'not ok - b',
                                  '  ok - c # SKIP d', 'other')
        self.assertEqual((1, 1, 1), counts)
        self.assertEqual('ok - a\nnot ok - b\nok - c # SKIP d\nother\n', out)

    def test_failure_without_a_line_is_a_failure(self) -> None:
        counts, out = self.counts('sh', '-c', 'echo checked nothing; exit 3')
        self.assertEqual((0, 1, 0), counts)
        self.assertIn('not ok - sh -c exited 3 with no failed check', out)

    def test_failure_with_its_own_line_counts_once(self) -> None:
        counts, _ = self.counts('sh', '-c', 'echo "not ok - x"; exit 1')
        self.assertEqual((0, 1, 0), counts)

if __name__ == '__main__':
    unittest.main()
