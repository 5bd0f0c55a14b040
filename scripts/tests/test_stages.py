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
import shutil
import sys
import tempfile
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.dirname(HERE)
sys.path.insert(0, SCRIPTS)
from perf_aux import check, shell, stages  # noqa: E402


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
                mock.patch.object(check.Check, 'results',
                                  return_value=(0, 'stand-in line')),
                mock.patch.object(check.Check, 'results_shown',
                                  return_value=0),
                mock.patch.object(stages, 'tool', return_value=0),
                mock.patch.object(shell, 'tool', return_value=0)):
            patch.start()
            self.addCleanup(patch.stop)

    def tearDown(self) -> None:
        shutil.rmtree(self.out)

    def stage(self, full: bool, name: str) -> check.Check:
        c = check.Check(full)
        with contextlib.redirect_stdout(io.StringIO()) as out:
            c.run_stage(name)
        self.assertGreater(c.passed + c.failed + c.skipped, 0,
                           f'{name}: no check line\n{out.getvalue()}')
        self.assertEqual(1, len(c.stage_times), name)
        return c

    def test_quick_stages(self) -> None:
        for name in check.QUICK_STAGES:
            if name != 'host':
                with self.subTest(stage=name):
                    self.stage(False, name)

    def test_full_stages(self) -> None:
        for name in check.FULL_STAGES:
            if name != 'host':
                with self.subTest(stage=name):
                    self.stage(True, name)

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
            stages.lava_runs(c)
        run_job.assert_called_once_with('reference', 'arm64-16k', 'default')

    def test_full_tier_order(self) -> None:
        """The full tier runs the default base, the once stages, the rest.

        Each other base runs what can differ there; the peers run by
        default on the default base only."""
        ran = []

        def run_stage(c, s):
            ran.append((s, os.environ['BASE'], c.peers_default))
        os.environ.pop('BASE')
        c = check.Check(True)
        with mock.patch.object(check.Check, 'run_stage', run_stage), \
                contextlib.redirect_stdout(io.StringIO()):
            check.tier(c, [])
        default, *others = c.bases
        per_base = [s for s in check.FULL_STAGES if s not in check.ONCE_STAGES]
        once = [s for s in check.FULL_STAGES if s in check.ONCE_STAGES]
        # host, the first, runs before any base's.
        want = [(s, default, True) for s in once[:1] + per_base + once[1:]]
        for b in others:
            want += [(s, b, False) for s in per_base
                     if s not in check.DEFAULT_BASE_STAGES]
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
        self.assertEqual((2, 0, 1), (c.passed, c.failed, c.skipped))
        c = self.host(ran.replace('Said something ... ok\n',
                                  'said something\nok\n') +
                      'Ran 3 tests in 0.1s\n\nOK')
        self.assertEqual((1, 1, 1), (c.passed, c.failed, c.skipped))
        self.assertEqual(['host: 3 tests ran, 2 gave a verdict line'],
                         c.failures)

    def test_unknown_stage(self) -> None:
        c = check.Check(False)
        with mock.patch('sys.stderr'), self.assertRaises(SystemExit) as e:
            c.run_stage('nonesuch')
        self.assertEqual(2, e.exception.code)


if __name__ == '__main__':
    unittest.main()
