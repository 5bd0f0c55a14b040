# SPDX-License-Identifier: GPL-2.0
"""make check's stages that build no kernel run beside the mutant stage.

The host, series and LAVA schema stages run in the background while the mutants
boot; their check lines must then count exactly as if they had run in the
foreground, in stage order, with their times in the table.  The stages are
stand-ins that print check lines and say whether they ran in the
background process.
"""

import contextlib
import io
import os
import shutil
import sys
import tempfile
import time
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.dirname(HERE)
sys.path.insert(0, SCRIPTS)
from perf_aux import check  # noqa: E402

# The stand-in stages, in this process and in the background one.
FAKE = r'''
import os, sys, time
sys.path.insert(0, SCRIPTS)
from perf_aux import check

def fake(name):
    where = 'here' if os.getpid() == int(os.environ['TOP']) else 'beside'
    print(f'RAN {name} {where}')
    if name == 'series':
        time.sleep(1)
        print('ok - series: a')
        if os.environ.get('DIE'):
            sys.exit(3)
        print('ok - series: b')
    elif name == 'lava_schema':
        print('ok - lava: c')
        print('ok - lava: d # SKIP no fvp')
        print('not ok - lava: e')
    else:
        print(f'ok - {name}: f')

def run_stage(self, s):
    self.timed(f'stage {s}', fake, s)
'''

class BesideStagesTest(unittest.TestCase):

    def setUp(self) -> None:
        self.out = tempfile.mkdtemp(prefix='beside.')
        os.makedirs(os.path.join(self.out, 'logs'))
        stub = os.path.join(self.out, 'stub.py')
        with open(stub, 'w') as f:
            f.write(f'SCRIPTS = {SCRIPTS!r}\n' + FAKE +
                    'check.Check.run_stage = run_stage\n'
                    'sys.exit(check.main(sys.argv[1:]))\n')
        namespace = {'SCRIPTS': SCRIPTS}
        exec(compile(FAKE, 'fake', 'exec'), namespace)  # noqa: S102
        for patch in (mock.patch.dict(os.environ, PERF_AUX_OUT=self.out,
                                      TOP=str(os.getpid())),
                      mock.patch.object(check, 'BESIDE_COMMAND',
                                        [sys.executable, stub]),
                      mock.patch.object(check.Check, 'run_stage',
                                        namespace['run_stage'])):
            patch.start()
            self.addCleanup(patch.stop)

    def tearDown(self) -> None:
        shutil.rmtree(self.out)

    def test_counted_in_order_as_if_run_here(self) -> None:
        c = check.Check(False)
        with contextlib.redirect_stdout(io.StringIO()) as out:
            c.beside_start(['series', 'lava_schema'])
            c.run_stage('mutants')
            c.beside_end()
        lines = out.getvalue().splitlines()
        # The stand-in mutant stage prints its line, it counts nothing.
        self.assertEqual((3, 1, 1), c.counts)
        self.assertEqual(['lava: e'],
                         [w for k, w in c.checks if k == 'fail'])
        ran = [line for line in lines if line.startswith('RAN ')]
        self.assertEqual(['RAN mutants here', 'RAN series beside',
                          'RAN lava_schema beside'], ran)
        checks = [line for line in lines if 'ok - ' in line]
        self.assertEqual(['ok - mutants: f', 'ok - series: a',
                          'ok - series: b', 'ok - lava: c',
                          'ok - lava: d # SKIP no fvp', 'not ok - lava: e'],
                         checks)
        self.assertEqual(3, len(c.stage_times))
        self.assertTrue(c.stage_times[1].endswith(
            'stage series (beside the mutants)'))
        self.assertTrue(c.stage_times[2].endswith(
            'stage lava_schema (beside the mutants)'))

    def test_started_before_the_mutants_end(self) -> None:
        # beside_start returns at once: series sleeps, the caller does not.
        c = check.Check(False)
        with contextlib.redirect_stdout(io.StringIO()) as out:
            start = time.monotonic()
            c.beside_start(['series'])
            took = time.monotonic() - start
            c.beside_end()
        self.assertLess(took, 0.5)
        self.assertIn('RAN series beside', out.getvalue().splitlines())

    def test_a_stage_that_dies_is_a_failed_check(self) -> None:
        c = check.Check(False)
        with mock.patch.dict(os.environ, DIE='1'), \
                contextlib.redirect_stdout(io.StringIO()) as out:
            c.beside_start(['series', 'lava_schema'])
            c.beside_end()
        self.assertEqual((1, 1, 0), c.counts)
        self.assertIn('not ok - the stages beside the mutants ended, exit 3',
                      out.getvalue().splitlines())

    def tier_runs(self, *stages: str) -> list:
        c = check.Check(False)
        with mock.patch.object(check.Check, 'call', return_value=0), \
                mock.patch.object(check.Check, 'capture',
                                  return_value=(0, '')), \
                mock.patch.object(check.Check, 'results_shown',
                                  return_value=0), \
                contextlib.redirect_stdout(io.StringIO()) as out:
            check.tier(c, list(stages))
        return [line for line in out.getvalue().splitlines()
                if line.startswith('RAN ')]

    def test_make_check_runs_them_beside_the_mutants(self) -> None:
        self.assertEqual(['RAN mutants here', 'RAN host beside',
                          'RAN series beside', 'RAN lava_schema beside'],
                         self.tier_runs('host', 'mutants', 'series',
                                        'lava_schema'))

    def test_without_the_mutant_stage_they_run_here(self) -> None:
        self.assertEqual(['RAN host here', 'RAN series here',
                          'RAN lava_schema here'],
                         self.tier_runs('host', 'series', 'lava_schema'))

if __name__ == '__main__':
    unittest.main()
