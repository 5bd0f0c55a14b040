# SPDX-License-Identifier: GPL-2.0
"""make repeat and make soak (perf_aux.run) with stand-in programs: the
one-boot log cut into rounds, the boots and comparisons repeat asks for,
soak's DURATION bound and its summary lines."""

import contextlib
import fcntl
import io
import os
import shutil
import sys
import tempfile
import unittest
from unittest import mock

SCRIPTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, SCRIPTS)
from perf_aux import lib, run  # noqa: E402

ONE_BOOT = (b'boot\r\nPERF_AUX: round 1\r\nok 1 a\r\n'
            b'PERF_AUX: round 2\nok 1 a\nBUG: KASAN: x\n')

class RunTest(unittest.TestCase):

    def setUp(self) -> None:
        self.out = tempfile.mkdtemp(prefix='run.')
        self.addCleanup(shutil.rmtree, self.out)
        patch = mock.patch.dict(os.environ, PERF_AUX_OUT=self.out,
                                BASE='7.3', DURATION='60')
        patch.start()
        self.addCleanup(patch.stop)

    def test_split_rounds(self) -> None:
        log = os.path.join(self.out, 'one-boot.log')
        with open(log, 'wb') as f:
            f.write(ONE_BOOT)
        run.split_rounds(log, self.out)
        for n, want in (('1', b'PERF_AUX: round 1\nok 1 a\n'),
                        ('2', b'PERF_AUX: round 2\nok 1 a\nBUG: KASAN: x\n')):
            with open(os.path.join(self.out, f'round{n}.log'), 'rb') as f:
                self.assertEqual(want, f.read())

    def test_repeat(self) -> None:
        """ROUNDS fresh KUnit and kselftest boots, one boot of ROUNDS
        rounds, each round's results, the flakes of both; a kernel report
        on any console fails it."""
        calls = []

        def status(argv, **kw):
            calls.append(argv[argv.index('perf_aux') + 1:])
            if argv[-1] == 'perf_aux.repeat=2':
                with open(calls[-1][4], 'wb') as f:
                    f.write(ONE_BOOT)
            return 0
        r = lib.env_run({}, kernel='stock', kargs=['a=1'])
        d = f'{self.out}/repeat/stock-7.3-arm64-4k'
        with mock.patch.object(run, 'status', status), \
                contextlib.redirect_stdout(io.StringIO()) as out:
            self.assertEqual(1, run.repeat(r, 2))
        boot = ['stock', 'arm64-4k', 'default']
        self.assertEqual(
            [['kunit', *boot, f'{d}/logs/kunit1.log', 'a=1'],
             ['results', 'kunit', f'{d}/logs/kunit1.log', f'{d}/fresh/.1'],
             ['kselftest', *boot, f'{d}/logs/kselftest1.log', 'a=1'],
             ['results', 'kselftest', f'{d}/logs/kselftest1.log',
              f'{d}/fresh/.1'],
             ['kunit', *boot, f'{d}/logs/kunit2.log', 'a=1'],
             ['results', 'kunit', f'{d}/logs/kunit2.log', f'{d}/fresh/.2'],
             ['kselftest', *boot, f'{d}/logs/kselftest2.log', 'a=1'],
             ['results', 'kselftest', f'{d}/logs/kselftest2.log',
              f'{d}/fresh/.2'],
             ['kselftest', *boot, f'{d}/logs/one-boot.log', 'a=1',
              'perf_aux.repeat=2'],
             ['results', 'kselftest', f'{d}/logs/round1.log',
              f'{d}/.one-boot/1'],
             ['results', 'kselftest', f'{d}/logs/round2.log',
              f'{d}/.one-boot/2'],
             ['results', 'flakes', f'{d}/one-boot/*'],
             ['results', 'flakes', f'{d}/fresh/1', f'{d}/fresh/2']], calls)
        self.assertIn('kernel reports on the consoles: 1',
                      out.getvalue().splitlines())

    def test_repeat_resumed(self) -> None:
        """RESUME after a stop in the second fresh round boots that round
        again and nothing before it; other ROUNDS start over."""
        calls, stop = [], ['kselftest2.log']

        def status(argv, **kw):
            call = argv[argv.index('perf_aux') + 1:]
            calls.append(call[:2] if call[0] == 'results' else
                         [call[0], os.path.basename(call[4])])
            if calls[-1][1] in stop:
                raise KeyboardInterrupt
            if argv[-1].startswith('perf_aux.repeat='):
                with open(call[4], 'wb') as f:
                    f.write(ONE_BOOT)
            return 0
        r = lib.env_run({}, kernel='stock')
        d = f'{self.out}/repeat/stock-7.3-arm64-4k'
        with mock.patch.object(run, 'status', status), \
                contextlib.redirect_stdout(io.StringIO()):
            self.assertRaises(KeyboardInterrupt, run.repeat, r, 2)
            self.assertEqual(['.2', '1'], sorted(os.listdir(f'{d}/fresh')))
            stop[:], calls[:] = [], []
            self.assertEqual(1, run.repeat(r, 2, resume=True))  # ONE_BOOT's BUG
            self.assertEqual([['kunit', 'kunit2.log'], ['results', 'kunit'],
                              ['kselftest', 'kselftest2.log'],
                              ['results', 'kselftest'],
                              ['kselftest', 'one-boot.log'],
                              ['results', 'kselftest'], ['results', 'kselftest'],
                              ['results', 'flakes'], ['results', 'flakes']],
                             calls)
            calls[:] = []
            run.repeat(r, 3, resume=True)
        self.assertEqual(['kselftest', 'one-boot.log'], calls[-6])
        self.assertEqual(1 + 3 + 3 * 4 + 2, len(calls))

    def test_repeat_round_statuses(self) -> None:
        """A failed KUnit case and a hung kselftest boot are their round's
        outcome, kept; a boot killed or unbuilt stops the repeat, its round
        unkept; a second repeat of the run while one runs is refused."""
        codes = {'kunit1.log': 1, 'kselftest1.log': 124, 'kunit2.log': -15}

        def status(argv, **kw):
            call = argv[argv.index('perf_aux') + 1:]
            return 0 if call[0] == 'results' else codes.get(
                os.path.basename(call[4]), 0)
        r = lib.env_run({}, kernel='stock')
        d = f'{self.out}/repeat/stock-7.3-arm64-4k'
        with mock.patch.object(run, 'status', status), \
                mock.patch('sys.stderr'), \
                contextlib.redirect_stdout(io.StringIO()):
            with self.assertRaises(lib.Error) as e:
                run.repeat(r, 2)
            self.assertEqual(2, e.exception.status)
            self.assertEqual(['.2', '1'], sorted(os.listdir(f'{d}/fresh')))
            with open(f'{self.out}/repeat/.stock-7.3-arm64-4k.lock') as held:
                fcntl.flock(held, fcntl.LOCK_EX)
                self.assertRaises(lib.Error, run.repeat, r, 2, True)
            self.assertEqual(['.2', '1'], sorted(os.listdir(f'{d}/fresh')))

    def test_soak_duration_bound(self) -> None:
        for duration in ('999999', 'abc'):
            with self.subTest(duration=duration), \
                    mock.patch.dict(os.environ, DURATION=duration), \
                    mock.patch('sys.stderr'), \
                    self.assertRaises(lib.Error):
                run.soak_main([])

    def test_soak_summary(self) -> None:
        """SOAK_SUMMARY_ONLY=1: the last soak's lines, its kernel reports
        (any fails it), else soak_test's verdict."""
        os.makedirs(f'{self.out}/logs')
        log = f'{self.out}/logs/reference-7.3-arm64-4k-soak-kselftest.log'
        for console, rc, lines in (
                ('# soak_test.c:202:soak: 60 s, 4 CPUs\n# other\n', 1,
                 ['soak: 60 s, 4 CPUs', 'soak: 0 kernel reports']),
                ('# soak_test.c:211:soak: no fault injection\n'
                 'WARNING: CPU: 1 at x\n', 1,
                 ['soak: no fault injection', 'soak: 1 kernel reports',
                  'WARNING: CPU: 1 at x'])):
            with open(log, 'w') as f:
                f.write(console)
            with self.subTest(console=console), \
                    mock.patch.dict(os.environ, SOAK_SUMMARY_ONLY='1'), \
                    contextlib.redirect_stdout(io.StringIO()) as out:
                self.assertEqual(rc, run.soak_main([]))
            self.assertEqual(lines, out.getvalue().splitlines()[:len(lines)])

if __name__ == '__main__':
    unittest.main()
