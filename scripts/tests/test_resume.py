# SPDX-License-Identifier: GPL-2.0
"""make check-full RESUME=1: a stage that passed with the same inputs is
not run again, its check lines are replayed and counted; a changed input,
a failure, an interruption or a plain run runs it.

The stage is a stand-in in a registry of its own, the clone a scratch git
repository.
"""

import contextlib
import io
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

SCRIPTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, SCRIPTS)
from perf_aux import check  # noqa: E402

class ResumeTest(unittest.TestCase):

    def setUp(self) -> None:
        self.tmp = tempfile.mkdtemp(prefix='resume.')
        self.clone = os.path.join(self.tmp, 'clone')
        os.makedirs(self.clone)
        self.write('a.c', 'int a;\n')
        self.write('README.md', 'words\n')
        subprocess.run(['git', 'init', '-q', self.clone], check=True)
        subprocess.run(['git', '-C', self.clone, 'add', '.'], check=True)
        self.ran = 0
        self.outcome = 0
        row = check.Stage('fake', 'quick full', check.ONCE, 'fake on {base}',
                          self.fake)
        env = {'PERF_AUX_OUT': os.path.join(self.tmp, 'out'),
               'PERF_AUX_CACHE': self.tmp, 'BASE': '7.3'}
        for patch in (mock.patch.dict(os.environ, env),
                      mock.patch.object(check, 'STAGES', (row,))):
            patch.start()
            self.addCleanup(patch.stop)
        os.environ.pop('RESUME', None)
        os.environ.pop('PERF_AUX_PEERS', None)

    def tearDown(self) -> None:
        shutil.rmtree(self.tmp)

    def write(self, name: str, text: str) -> None:
        with open(os.path.join(self.clone, name), 'w') as f:
            f.write(text)

    def fake(self, c: check.Check) -> None:
        self.ran += 1
        c.verdict(0, 'fake: a')
        c.skip('ok - fake: b # SKIP no board')
        if self.outcome == 'die':
            raise SystemExit(3)
        c.verdict(self.outcome, 'fake: c')

    def run_stage(self, resume: str = '') -> tuple:
        with mock.patch.dict(os.environ, RESUME=resume), \
                contextlib.redirect_stdout(io.StringIO()) as out:
            c = check.Check(True)
            c.root = self.clone
            c.run_stage('fake')
        return c, out.getvalue().splitlines()

    def test_passed_and_unchanged_is_replayed(self) -> None:
        self.run_stage()
        c, lines = self.run_stage('1')
        self.assertEqual(1, self.ran)
        self.assertEqual((2, 0, 1), c.counts)
        self.assertRegex(lines[0], r'^# resumed: fake on 7.3 \(inputs '
                         r'unchanged, passed at 20[0-9-]+T[0-9:]+Z\)$')
        self.assertEqual(['ok - fake: a', 'ok - fake: b # SKIP no board',
                          'ok - fake: c'], lines[1:])
        self.assertEqual(['     0 s  fake on 7.3 (resumed)'], c.stage_times)

    def test_changed_input_runs_again(self) -> None:
        self.run_stage()
        self.write('README.md', 'other words\n')
        for f in ('scripts/tests/test_a.py', 'lava-jobs/a.yaml',
                  'scripts/mutants/aux_alloc/a.patch'):
            os.makedirs(os.path.join(self.clone, os.path.dirname(f)))
            self.write(f, 'a\n')
        self.run_stage('1')
        self.assertEqual(1, self.ran, 'a kernel stage reads no documentation, '
                         'host test, LAVA job or mutant')
        for change in (lambda: self.write('a.c', 'int b;\n'),
                       lambda: self.write('new.c', 'int c;\n'),
                       lambda: os.environ.update(PERF_AUX_PEERS='0'),
                       lambda: os.environ.update(BASE='7.2')):
            change()
            self.run_stage('1')
            ran = self.ran
            self.run_stage('1')
            self.assertEqual(ran, self.ran)
        self.assertEqual(5, self.ran)

    def test_mutant_stage_reads_its_family(self) -> None:
        row = check.STAGES[0]._replace(deps=check.family('aux_alloc'))
        with mock.patch.object(check, 'STAGES', (row,)):
            self.run_stage()
            for family, ran in (('vmap_granule', 1), ('aux_alloc', 2)):
                os.makedirs(os.path.join(self.clone, f'scripts/mutants/{family}'))
                self.write(f'scripts/mutants/{family}/a.patch', 'a\n')
                self.run_stage('1')
                self.assertEqual(ran, self.ran, family)

    def test_kunit_stage_reads_no_kselftest(self) -> None:
        selftest = 'tools/testing/selftests/perf_aux'
        os.makedirs(os.path.join(self.clone, selftest))
        for deps, ran in ((check.kunit_only(), 1), (check.family(), 2)):
            self.ran = 0
            row = check.STAGES[0]._replace(deps=deps)
            with mock.patch.object(check, 'STAGES', (row,)):
                self.run_stage()
                self.write(f'{selftest}/a_test.c', f'int a{ran};\n')
                self.run_stage('1')
                self.assertEqual(ran, self.ran)

    def test_failed_runs_again(self) -> None:
        self.outcome = 1
        self.run_stage()
        self.outcome = 0
        c, _ = self.run_stage('1')
        self.assertEqual(2, self.ran)
        self.assertEqual((2, 0, 1), c.counts)

    def test_interrupted_runs_again(self) -> None:
        self.outcome = 'die'
        with self.assertRaises(SystemExit):
            self.run_stage()
        self.assertFalse(os.path.exists(os.path.join(
            self.tmp, 'out', 'state', 'check-full', 'fake-7.3.json')))
        self.outcome = 0
        self.run_stage('1')
        self.assertEqual(2, self.ran)

    def test_plain_run_runs_everything(self) -> None:
        self.run_stage()
        c, lines = self.run_stage()
        self.assertEqual(2, self.ran)
        self.assertNotIn('# resumed', '\n'.join(lines))
        self.assertNotIn('(resumed)', c.stage_times[0])

    def test_whole_tier(self) -> None:
        """A resumed tier keeps earlier results, a plain one none.

        A plain tier starts from nothing, its records gone with them."""
        kept = os.path.join(self.tmp, 'out', 'results', 'run')
        for resume, ran in (('', 1), ('1', 1), ('', 2)):
            os.makedirs(kept, exist_ok=True)
            with mock.patch.dict(os.environ, RESUME=resume), \
                    mock.patch.object(check.Check, 'call', return_value=0), \
                    mock.patch.object(check.Check, 'capture',
                                      return_value=(0, '')), \
                    contextlib.redirect_stdout(io.StringIO()):
                c = check.Check(True)
                c.root = self.clone
                check.tier(c, [])
            self.assertEqual(ran, self.ran)
            self.assertEqual(bool(resume), os.path.isdir(kept))
            self.assertEqual((2, 0, 1), c.counts)

if __name__ == '__main__':
    unittest.main()
