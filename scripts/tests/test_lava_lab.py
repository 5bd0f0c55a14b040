#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host tests of the local lab's pieces that need no lab
(scripts/perf_aux_lava: lab, selftest): a daemon started and stopped by
its pid file, the device dictionaries and the selftest's jobs and message
lines."""

import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from perf_aux_lava import lab, selftest  # noqa: E402

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
        self.assertIn("'perf_aux_lab_sleep': {'do': 'sleep 150'}", text)
        self.assertIn("{% set netdevice = 'user,restrict=on' %}", text)

    def test_command_job(self) -> None:
        try:
            import yaml
        except ImportError:
            self.skipTest('no python3-yaml')
        job = yaml.safe_load(selftest.command_job(
            'rejected', 'perf_aux_lab_hello', 'perf_aux_not_a_key: 1'))
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
                             selftest.message(f.name))

    def test_children(self) -> None:
        p = subprocess.Popen(['sleep', '30'])
        try:
            time.sleep(0.1)
            self.assertIn(p.pid, lab.children(os.getpid()))
        finally:
            p.kill()
            p.wait()


if __name__ == '__main__':
    unittest.main()
