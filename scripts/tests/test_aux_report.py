#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host tests of tools/testing/selftests/perf_aux/aux_report.c.

The synthetic PMUs' report (lib/test_aux_pmu.c, aux_test_buffers_show())
is a line of key=value fields per buffer, in the module's order.  The
parser reads them so, and a line not of that form (a field missing or out
of place, a number that is not one, no chunks) is -EBADMSG.
"""

import errno
import os
import re
import subprocess
import unittest
from typing import Dict, List

from host_driver import (HERE, ROOT, SELFTEST_DIR, DriverTestCase,
                         HeaderBuilds, HostDriver)

HEADER = os.path.join(SELFTEST_DIR, 'aux_report.h')
SOURCE = os.path.join(SELFTEST_DIR, 'aux_report.c')
DRIVER = os.path.join(HERE, 'aux_report_host.c')
MODULE = os.path.join(ROOT, 'lib', 'test_aux_pmu.c')

# A line as the module prints it (a PREFER_LARGE snapshot buffer at 4K).
FIELDS = [
    ('event', '42'), ('pmu', 'test_aux_large'), ('pages', '549'),
    ('snapshot', '1'), ('base', 'ffff800082a00000'),
    ('chunks', '9x1,5x1,2x1,0x1'),
]
EBADMSG = f'ret={-errno.EBADMSG}'


def line(fields) -> str:
    return ' '.join(f'{k}={v}' for k, v in fields)


class ReportHost(HostDriver):
    """aux_report_host.c built: parses report lines."""

    def __init__(self) -> None:
        super().__init__(DRIVER, SOURCE)

    def parse(self, *lines: str) -> List[str]:
        proc = subprocess.run([self.binary], input=''.join(
            text + '\n' for text in lines), capture_output=True, text=True,
            check=True)
        return proc.stdout.splitlines()


class ReportTestCase(DriverTestCase):
    host: ReportHost

    @classmethod
    def make_host(cls) -> ReportHost:
        return ReportHost()

    def fields(self, text: str) -> Dict[str, str]:
        out, = self.host.parse(text)
        return dict(kv.split('=', 1) for kv in out.split(' '))

    def bad(self, *lines: str) -> None:
        self.assertEqual([EBADMSG] * len(lines), self.host.parse(*lines))


class ModuleLineTest(ReportTestCase):

    def test_module_line(self) -> None:
        got = self.fields(line(FIELDS))
        self.assertEqual('0', got['ret'])
        for k, v in FIELDS:
            self.assertEqual(v, got[k], k)
        self.assertEqual('9,5,2,0', got['orders'])

    def test_lines_in_turn(self) -> None:
        other = dict(FIELDS, event='43', pmu='test_aux_none', pages='2',
                     snapshot='0', chunks='0x2')
        out = self.host.parse(line(FIELDS), line(other.items()))
        self.assertEqual(['ret=0', 'ret=0'], [o.split(' ')[0] for o in out])
        self.assertIn(' pmu=test_aux_none pages=2 ', out[1])
        self.assertIn(' orders=0,0 ', out[1])

    def test_ptrval_base(self) -> None:
        got = self.fields(line(dict(FIELDS, base='(____ptrval____)').items()))
        self.assertEqual(('0', '0'), (got['ret'], got['base']))


class MalformedTest(ReportTestCase):
    """Each way a line can be wrong is caught."""

    def test_each_key_missing(self) -> None:
        self.bad(*(line(FIELDS[:i] + FIELDS[i + 1:])
                   for i in range(len(FIELDS))))

    def test_fields_out_of_order(self) -> None:
        self.bad(line(FIELDS[1:] + FIELDS[:1]), line(FIELDS[::-1]))

    def test_not_numbers_and_no_chunks(self) -> None:
        self.bad(line(dict(FIELDS, event='x').items()),
                 line(dict(FIELDS, pages='').items()),
                 line(dict(FIELDS, chunks='').items()),
                 line(dict(FIELDS, pmu='p' * 32).items()), '')

    def test_old_positional_form(self) -> None:
        self.bad(' '.join(f'{k} {v}' for k, v in FIELDS))


class ModuleFormatTest(unittest.TestCase):
    """The module prints every key the parser needs, as key=value."""

    def test_keys_in_module(self) -> None:
        with open(MODULE) as f:
            text = f.read()
        show = text[text.index('static int aux_test_buffers_show('):]
        show = show[:show.index('\n}\n')]
        printed = re.findall(r'(?:"| )([a-z_]+)=', show)
        self.assertEqual([k for k, _ in FIELDS], printed)


class HeaderBuildTest(HeaderBuilds, unittest.TestCase):
    """The header and aux_report.c build alone for the host and arm64."""

    HEADER = HEADER
    SOURCE = SOURCE
    FLAGS = ('-std=gnu99',)


if __name__ == '__main__':
    unittest.main()
