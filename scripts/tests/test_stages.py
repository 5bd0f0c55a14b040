# SPDX-License-Identifier: GPL-2.0
"""Every stage of both tiers runs to its end with stand-in programs.

The stages of the full tier take hours of builds and boots, so most of
them run rarely; a stage that breaks on its own code (a name, an argument)
must not wait for that run to show it.  Here every program a stage runs
(perf_aux's run, kunit, kselftest, kernel-tree, deps and results, the
LAVA and series checks) is a stand-in that succeeds, and
each stage must end, print its check lines, and count them.
"""

import contextlib
import io
import os
import re
import shutil
import sys
import tempfile
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.dirname(HERE)
sys.path.insert(0, SCRIPTS)
from perf_aux import check, lib  # noqa: E402
from perf_aux_results import ktap  # noqa: E402

CACHE = lib.cache()  # the real one, where kunit_parser.py is

class StagesTest(unittest.TestCase):

    def setUp(self) -> None:
        self.out = tempfile.mkdtemp(prefix='stages.')
        os.makedirs(os.path.join(self.out, 'logs'))
        for patch in (
                mock.patch.dict(os.environ, PERF_AUX_OUT=self.out, BASE='7.3',
                                PERF_AUX_CACHE=self.out),
                mock.patch.object(check.Check, 'call', return_value=0),
                mock.patch.object(check.Check, 'capture',
                                  return_value=(0, 'ok - stand-in: a')),
                mock.patch.object(check.Check, 'results_shown',
                                  return_value=0),
                mock.patch('perf_aux.run.job', return_value=0)):
            patch.start()
            self.addCleanup(patch.stop)

    def tearDown(self) -> None:
        shutil.rmtree(self.out)

    def stage(self, full: bool, name: str) -> check.Check:
        c = check.Check(full)
        with contextlib.redirect_stdout(io.StringIO()) as out:
            c.run_stage(name)
        self.assertGreater(sum(c.counts), 0,
                           f'{name}: no check line\n{out.getvalue()}')
        self.assertEqual(1, len(c.stage_times), name)
        return c

    def every_row(self, full: bool) -> None:
        """Each row of the tier's registry, run by its name: no name
        without a row, no row that run_stage cannot reach."""
        for i, row in enumerate(check.STAGES):
            if row.name == 'host' or row not in check.tier_rows(full):
                continue
            run = mock.Mock(wraps=row.run)
            table = list(check.STAGES)
            table[i] = row._replace(run=run)
            with self.subTest(stage=row.name), \
                    mock.patch.object(check, 'STAGES', tuple(table)):
                self.stage(full, row.name)
                run.assert_called_once()

    def test_quick_stages(self) -> None:
        self.every_row(False)

    def test_full_stages(self) -> None:
        self.every_row(True)

    def test_lava_makes_the_direct_runs_it_lacks(self) -> None:
        """The lava stage named alone makes the direct runs it lacks.

        Its jobs are compared with them; after the reference and targets
        stages it reuses theirs."""
        c = check.Check(True)
        os.makedirs(os.path.join(self.out, 'results',
                                 c.result_name('reference', 'arm64-4k',
                                               'default')))
        with mock.patch.object(check.Check, 'run_job') as run_job, \
                contextlib.redirect_stdout(io.StringIO()):
            check.lava_runs(c)
        run_job.assert_called_once_with('reference', 'arm64-16k', 'default')

    def test_stock_plain_boot_fails_as_stock_must(self) -> None:
        """Stock's plain boot fails only the cases stock lacks a fix for.

        So may its default boot; any other failure still fails, and so does
        a destructive program skipped for a reason other than the one."""
        with mock.patch.dict(os.environ, PERF_AUX_CACHE=CACHE):
            try:
                ktap.kunit()
            except ktap.ToolMissing:
                self.skipTest('no kunit_parser.py')
        res = os.path.join(self.out, 'results', 'stock-7.3-arm64-4k-plain')
        os.makedirs(res)
        with open(os.path.join(self.out, 'logs', os.path.basename(res)
                               + '-kselftest.log'), 'w') as f:
            f.write('PERF_AUX: time perf_aux:mmap_test 3 s\n')
        pinned = 'not ok 2 global.aux_area_mapped_again_charged_once'
        one = 'destructive, PERF_AUX_DESTRUCTIVE=1 runs it'

        def failed(mmap_test: str, reason: str = one) -> list:
            for t in check.DESTRUCTIVE_TESTS:
                with open(os.path.join(res, f'perf_aux.{t}.ktap'), 'w') as f:
                    f.write(f'TAP version 13\n1..1\nok 1 x # SKIP {reason}\n')
            with open(os.path.join(res, 'perf_aux.mmap_test.ktap'), 'w') as f:
                f.write(f'TAP version 13\n1..{mmap_test.count(chr(10)) + 2}\n'
                        f'ok 1 global.a\n{mmap_test}\n')
            c = check.Check(True)
            with contextlib.redirect_stdout(io.StringIO()):
                check.plain_run(c, 'stock')
            return [line for kind, line in c.checks if kind == 'fail']
        self.assertEqual([], failed(pinned))
        self.assertEqual(1, len(failed(f'{pinned}\nnot ok 3 global.b')))
        self.assertEqual(3, len(failed(pinned, 'no fail_page_alloc')))

    def test_a_run_that_dies_leaves_the_tier_going(self) -> None:
        """make run in this process: a run that dies is judged by what it
        left, the tier goes on."""
        c = check.Check(False)
        with mock.patch('perf_aux.run.job', side_effect=lib.Error('x')), \
                contextlib.redirect_stdout(io.StringIO()) as out:
            c.run_job('reference', 'arm64-4k', 'strict', 'a=1')
        self.assertEqual(['ok - reference-7.3-arm64-4k-strict: 0 kernel '
                          'reports on its consoles'],
                         out.getvalue().splitlines())
        self.assertEqual(os.path.join(self.out, 'results',
                                      'reference-7.3-arm64-4k-strict'), c.res)

    def test_full_tier_order(self) -> None:
        """The full tier runs the default base, the once stages, the rest.

        Each other base runs what can differ there; the peers run by
        default on the default base only."""
        ran = []

        def run_stage(c, s):
            ran.append((s, c.base, c.peers_default))
        os.environ.pop('BASE')
        c = check.Check(True)
        with mock.patch.object(check.Check, 'run_stage', run_stage), \
                contextlib.redirect_stdout(io.StringIO()):
            check.tier(c, [])
        default, *others = c.bases
        rows = check.tier_rows(True)
        per_base = [r.name for r in rows if r.scope != check.ONCE]
        once = [r.name for r in rows if r.scope == check.ONCE]
        # host, the first, runs before any base's.
        want = [(s, default, True) for s in once[:1] + per_base + once[1:]]
        for b in others:
            want += [(r.name, b, False) for r in rows
                     if r.scope == check.EACH]
        self.assertEqual(want, ran)

    def host(self, out: str) -> check.Check:
        c = check.Check(False)
        with mock.patch.object(check.Check, 'capture',
                               return_value=(0, out)), \
                contextlib.redirect_stdout(io.StringIO()):
            c.host_tests()
        return c

    def test_host_counts_every_test_unittest_ran(self) -> None:
        """A host test that printed between its name and its verdict
        (no " ... ok" line) is a failed check, not a lost one."""
        ran = ('test_a (t.T.test_a) ... ok\n'
               'test_b (t.T.test_b) ... skipped "no mirror"\n'
               'test_c (t.T.test_c)\nSaid something ... ok\n')
        c = self.host(ran + 'Ran 3 tests in 0.1s\n\nOK')
        self.assertEqual((2, 0, 1), c.counts)
        c = self.host(ran.replace('Said something ... ok\n',
                                  'said something\nok\n') +
                      'Ran 3 tests in 0.1s\n\nOK')
        self.assertEqual((1, 1, 1), c.counts)
        self.assertEqual(['host: 3 tests ran, 2 gave a verdict line'],
                         [w for k, w in c.checks if k == 'fail'])

    def test_unknown_stage(self) -> None:
        c = check.Check(False)
        with mock.patch('sys.stderr'), self.assertRaises(lib.Error) as e:
            c.run_stage('nonesuch')
        self.assertEqual(2, e.exception.status)

def sections(text: str, heading: str) -> dict:
    """TEXT's sections by what HEADING (a pattern, one group) names."""
    parts = re.split(f'^{heading}\n', text, flags=re.M)[1:]
    return dict(zip(parts[::2], parts[1::2]))

def page(name: str) -> str:
    with open(os.path.join(os.path.dirname(SCRIPTS), 'docs', name)) as f:
        return f.read()

class StagesDocsTest(unittest.TestCase):
    """The docs' stage tables say what the registry says."""

    def test_check_full_tables(self) -> None:
        doc = sections(page('check-full.md'), '## (.*)')
        rows = check.tier_rows(True)
        for heading, once in (('Stages run for each base', False),
                              ('Stages run once', True)):
            named = [n for line in doc[heading].splitlines()
                     if line.startswith('| `')
                     for n in re.findall(r'`(\w+)`', line.split('|')[1])]
            self.assertEqual([r.name for r in rows
                              if (r.scope == check.ONCE) == once], named)
        text = ' '.join(doc['Stages run for each base'].split())
        default = re.search(r'((?:`\w+`(?:, | and ))*`\w+`) run on the '
                            'default base only', text).group(1)
        self.assertEqual({r.name for r in rows if r.scope == check.DEFAULT},
                         set(re.findall(r'`(\w+)`', default)))

    def test_make_check_stage_by_stage(self) -> None:
        doc = sections(sections(page('selectors.md'), '## (.*)')
                       ['`make check`, stage by stage'], r'### `(\w+)`')
        rows = check.tier_rows(False)
        self.assertEqual([r.name for r in rows], list(doc))
        for r in rows:
            self.assertEqual(r.beside, 'beside the mutants' in doc[r.name],
                             r.name)

if __name__ == '__main__':
    unittest.main()
