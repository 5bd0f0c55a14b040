# SPDX-License-Identifier: GPL-2.0
"""python3 -m perf_aux VERB (perf_aux/__main__.py): each verb is a module's
main() given the rest of the command line, --help lists every verb, and
the Makefile runs only verbs there are."""

import contextlib
import importlib
import io
import os
import re
import subprocess
import sys
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.dirname(HERE)
sys.path.insert(0, SCRIPTS)
from perf_aux import __main__ as entry, lib  # noqa: E402

class EntryTest(unittest.TestCase):

    def test_help_lists_every_verb(self) -> None:
        proc = subprocess.run(lib.perf_aux('--help'), stdout=subprocess.PIPE,
                              text=True, check=False)
        self.assertEqual(0, proc.returncode)
        for verb, (_, what) in entry.VERBS.items():
            self.assertRegex(proc.stdout, rf'(?m)^  {re.escape(verb)} +'
                             rf'{re.escape(what)}$')

    def test_each_verb_is_a_main(self) -> None:
        for verb, (target, _) in entry.VERBS.items():
            module, _, function = target.partition(':')
            where = importlib.import_module(module, 'perf_aux') if module \
                else entry
            with self.subTest(verb=verb):
                self.assertTrue(callable(getattr(where, function or 'main')))

    def test_verb_gets_the_rest(self) -> None:
        """The verb's arguments, options too, go to its main as they are;
        check-full is check --full."""
        for argv, want in ((['kunit', '--series', 'T'], ['--series', 'T']),
                           (['check-full', 'a'], ['--full', 'a']),
                           (['check'], [])):
            module = 'check' if argv[0].startswith('check') else \
                entry.VERBS[argv[0]][0][1:]
            with self.subTest(argv=argv), \
                    mock.patch(f'perf_aux.{module}.main',
                               return_value=7) as main:
                self.assertEqual(7, entry.main(argv))
                main.assert_called_once_with(want)

    def test_no_or_unknown_verb(self) -> None:
        for argv in ([], ['nonesuch'], ['tree']):
            with self.subTest(argv=argv), \
                    contextlib.redirect_stderr(io.StringIO()), \
                    self.assertRaises(SystemExit) as e:
                entry.main(argv)
            self.assertEqual(2, e.exception.code)

    def test_default_base(self) -> None:
        out = subprocess.run(lib.perf_aux('default-base'), check=True,
                             stdout=subprocess.PIPE, text=True).stdout
        self.assertEqual(lib.default_base() + '\n', out)

    def test_makefile_verbs(self) -> None:
        """Every $(PERF_AUX) VERB of the Makefile is a verb."""
        with open(os.path.join(lib.ROOT, 'Makefile')) as f:
            used = set(re.findall(r'\$\(PERF_AUX\) ([a-z-]+)', f.read()))
        self.assertTrue(used)
        self.assertEqual(set(), used - set(entry.VERBS))

if __name__ == '__main__':
    unittest.main()
