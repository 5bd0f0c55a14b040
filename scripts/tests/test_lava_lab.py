#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host tests of the local lab's pieces that need no lab: a daemon started
and stopped by its pid file, the device dictionaries, the selftest's jobs
and message lines, its fault checks against a fake server."""

import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
from contextlib import redirect_stdout
from io import StringIO
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from perf_aux_lava import lab  # noqa: E402

class DaemonTest(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = tempfile.mkdtemp()
        for p in (mock.patch.object(lab, 'RUN', self.tmp),
                  mock.patch.object(lab, 'LOGS', self.tmp),
                  mock.patch.object(lab, 'say')):
            p.start()
            self.addCleanup(p.stop)

    def tearDown(self) -> None:
        shutil.rmtree(self.tmp)

    def test_start_and_stop_by_pid_file(self) -> None:
        d = lab.Daemon('sleeper', ['/bin/sh', '-c', 'sleep 60; :',
                                   self.tmp], self.tmp)
        self.assertFalse(d.running())
        d.start()
        self.assertTrue(d.running())
        d.stop(timeout=5)
        self.assertFalse(d.running())
        self.assertFalse(os.path.exists(d.pidfile))
        # A stale pid file naming another process is not the daemon.
        with open(d.pidfile, 'w') as f:
            f.write(f'{os.getpid()}\n')
        self.assertFalse(d.running())

    def test_daemons_are_the_units_commands(self) -> None:
        self.assertEqual('/usr/bin/lava-worker', lab.WORKER_DAEMON.argv[0])
        self.assertFalse(lab.WORKER_DAEMON.group)  # KillMode=process
        self.assertIn(f'127.0.0.1:{lab.PORT}', lab.GUNICORN.argv)

class PartsTest(unittest.TestCase):
    def test_device_dict(self) -> None:
        text = lab.device_dict(2)
        self.assertIn('52:54:00:12:34:62', text)
        self.assertNotIn('52:54:00:12:34:59', text)
        self.assertIn("'perf_aux_lab_hello': {'do': 'uname -sm'}", text)
        self.assertIn("{% set netdevice = 'user,restrict=on' %}", text)

    def test_command_job(self) -> None:
        try:
            import yaml
        except ImportError:
            self.skipTest('no python3-yaml')
        job = yaml.safe_load(lab.command_job(
            'rejected', 'perf_aux_lab_hello', perf_aux_not_a_key=1))
        self.assertEqual('perf_aux lab rejected', job['job_name'])
        self.assertEqual([{'command': {'name': 'perf_aux_lab_hello'}}],
                         job['actions'])
        self.assertEqual(1, job['perf_aux_not_a_key'])

    def test_message_is_the_last_reason(self) -> None:
        with tempfile.NamedTemporaryFile('w', suffix='.out') as f:
            f.write('submit: job 1 submitted\nperf_aux: error: submit: a\n'
                    'submit: infrastructure error: job 2: b\nsubmit: x\n')
            f.flush()
            self.assertEqual('submit: infrastructure error: job 2: b',
                             lab.message(f.name))

    def test_children(self) -> None:
        p = subprocess.Popen(['sleep', '30'])
        try:
            time.sleep(0.1)
            self.assertIn(p.pid, lab.children(os.getpid()))
        finally:
            p.kill()
            p.wait()

class FaultTest(unittest.TestCase):
    """The selftest's submit and fault checks against the fake LAVA server."""

    def test_fault_lines(self) -> None:
        sys.path.insert(0, HERE)
        from test_lava_submit import TOKEN, FakeLava
        fake = FakeLava()
        self.addCleanup(fake.close)
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        env = {k: v for k, v in os.environ.items()
               if not k.lower().endswith('_proxy')}
        env.update(PERF_AUX_OUT=tmp, LAVA_TOKEN=TOKEN, LAVA_USER='perf_aux')
        out = StringIO()
        with mock.patch.dict(os.environ, env, clear=True), \
                mock.patch.object(lab, 'URL', fake.url), redirect_stdout(out):
            t = lab.Selftest()
            os.makedirs(t.dir)
            hello = t.job('hello', 'perf_aux_lab_hello')
            t.fault('rejected', 2, 'refused .*HTTP 400.*extra keys',
                    [t.job('rejected', 'x', perf_aux_not_a_key=1)], {})
            t.fault('wrong token', 2, r'refused the token \(HTTP 401', [hello],
                    {'LAVA_TOKEN': 'perf-aux-not-a-token'})
            t.fault('complete', 3, 'x', [hello], {})
        lines = [line for line in out.getvalue().splitlines()
                 if not line.startswith('#')]
        self.assertEqual(['ok - lava: lab: rejected: exit 2, "submit: '
                          f'{fake.url}/ refused {t.path("rejected.yaml")} '
                          '(HTTP 400): Problem with submitted job data: extra '
                          "keys not allowed @ data['perf_aux_not_a_key']\"",
                          'ok - lava: lab: wrong token: exit 2, "submit: '
                          f'{fake.url}/ refused the token (HTTP 401: '
                          'Unauthorized)"',
                          'not ok - lava: lab: complete: exit 0, "" (wanted '
                          'exit 3, /x/, no results)'], lines)
        self.assertTrue(t.bad)

if __name__ == '__main__':
    unittest.main()
