#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host tests of make submit (scripts/perf_aux_lava/submit.py)
through Debian's lavacli against a fake LAVA server on 127.0.0.1 (XML-RPC
in a thread): a job submitted, waited for, its results fetched; a run's
console split into out/results/<run>/; an Incomplete job, a refused job,
a refused token, no server, the wait's bound; the proxy rule; and the
token never in what is printed."""

import base64
import gzip
import io
import os
import shutil
import sys
import tempfile
import threading
import unittest
import urllib.parse
import xmlrpc.client
from contextlib import redirect_stderr, redirect_stdout
from typing import Any, Dict, List, Optional, Tuple
from unittest import mock
from xmlrpc.server import SimpleXMLRPCRequestHandler, SimpleXMLRPCServer

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.dirname(HERE)
sys.path.insert(0, SCRIPTS)
sys.path.insert(0, HERE)

import perf_aux_lava  # noqa: E402
from perf_aux_lava import __main__ as entry, submit  # noqa
from test_lava_log import HAVE_YAML, entry as log_entry, job_log, read  # noqa

TOKEN = 'perf-aux-sekrit-0123456789'
AUTH = 'Basic ' + base64.b64encode(f'perf_aux:{TOKEN}'.encode()).decode()
TIMES = {'submit_time': xmlrpc.client.DateTime('20261201T00:00:00'),
         'start_time': xmlrpc.client.DateTime('20261201T00:00:03'),
         'end_time': xmlrpc.client.DateTime('20261201T00:00:13')}

class FakeLava:
    """The part of LAVA 2023.01's XML-RPC API that submit uses, with its
    Basic authentication.  A job's definition says how it ends:
    "incomplete" in it, Incomplete; "forever", Running until canceled;
    else Complete on the second poll.  Also a proxy: a request for an
    absolute URL is answered as for its path (proxied records them)."""

    def __init__(self) -> None:
        self.jobs: Dict[int, Dict[str, Any]] = {}
        self.auth: List[Optional[str]] = []
        self.proxied: List[str] = []
        self.logs: Dict[int, str] = {}
        self.fail = 0
        fake = self

        class Handler(SimpleXMLRPCRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def is_rpc_path_valid(self) -> bool:
                if self.path.startswith('http://'):
                    fake.proxied.append(self.path)
                return urllib.parse.urlsplit(self.path).path == '/RPC2'

            def do_POST(self) -> None:
                auth = self.headers.get('Authorization')
                fake.auth.append(auth)
                status = fake.fail or (401 if auth != AUTH else 0)
                if not status:
                    return super().do_POST()
                self.send_response(status)
                self.send_header('Content-Length', '13')
                self.end_headers()
                self.wfile.write(b'Invalid token')

        self.server = SimpleXMLRPCServer(('127.0.0.1', 0), Handler,
                                         allow_none=True, logRequests=False)
        for name, func in (
                ('system.whoami', lambda: 'perf_aux'),
                ('system.version', lambda: '2023.01-fake'),
                ('scheduler.jobs.submit', self.submit),
                ('scheduler.jobs.show', self.show),
                ('scheduler.jobs.cancel', self.cancel),
                ('scheduler.jobs.logs', lambda n, start=0, end=None: (
                    True, self.logs.get(int(n), ''))),
                ('results.get_testjob_results_yaml', self.results)):
            self.server.register_function(func, name)
        self.url = f'http://127.0.0.1:{self.server.server_address[1]}'
        threading.Thread(target=self.server.serve_forever,
                         daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def submit(self, definition: str) -> int:
        if 'perf_aux_not_a_key' in definition:
            raise xmlrpc.client.Fault(400, 'Problem with submitted job data: '
                                      'extra keys not allowed @ '
                                      "data['perf_aux_not_a_key']")
        n = len(self.jobs) + 1
        self.jobs[n] = {'definition': definition, 'polls': 0,
                        'canceled': False}
        return n

    def cancel(self, n: str) -> None:
        self.jobs[int(n)]['canceled'] = True

    def results(self, n: str) -> str:
        return """- {suite: 0_perf-aux, name: perf_aux.map_test.x, result: pass, measurement: 'None', unit: ''}
- {suite: 0_perf-aux, name: perf_aux.pagesize_test.y, result: pass, measurement: '3.0', unit: entries}
- {suite: lava, name: job, result: pass, measurement: 'None', unit: ''}
"""

    def show(self, n: str) -> Dict[str, Any]:
        job = self.jobs[int(n)]
        definition = job['definition']
        job['polls'] += 1
        state, health, device = 'Submitted', 'Unknown', None
        if job['canceled']:
            state, health, device = 'Finished', 'Canceled', 'qemu-01'
        elif job['polls'] >= 2 or 'forever' in definition:
            state, device = 'Running', 'qemu-01'
            if job['polls'] >= 2 and 'forever' not in definition:
                state = 'Finished'
                health = ('Incomplete' if 'incomplete' in definition
                          else 'Complete')
        d = dict(state=state, health=health, device=device,
                 failure_comment='the fake says so' if health ==
                 'Incomplete' else None, submit_time=None, start_time=None,
                 end_time=None)
        return dict(d, **(TIMES if state == 'Finished' else {}))

def job_file(tmp: str, name: str, text: str = '') -> str:
    path = os.path.join(tmp, name)
    with open(path, 'w') as f:
        f.write(f'job_name: {name}\n{text}\n')
    return path

class SubmitCase(unittest.TestCase):
    """submit run in-process against the fake, its exit status and output."""

    def setUp(self) -> None:
        self.fake = FakeLava()
        self.tmp = tempfile.mkdtemp()
        self.env = {'LAB': self.fake.url, 'LAVA_TOKEN': TOKEN,
                    'LAVA_USER': 'perf_aux',
                    'PERF_AUX_OUT': os.path.join(self.tmp, 'out')}
        for p in (mock.patch.object(submit, 'POLL', 0.01),
                  mock.patch.object(submit, 'CANCEL_WAIT', 2)):
            p.start()
            self.addCleanup(p.stop)

    def tearDown(self) -> None:
        self.fake.close()
        shutil.rmtree(self.tmp)

    def submit(self, *args: str, **env: str) -> Tuple[int, str, str]:
        full = {k: v for k, v in os.environ.items()
                if not k.lower().endswith('_proxy') and
                k not in ('LAVA_TOKEN', 'LAVA_TOKEN_FILE', 'LAVA_WAIT',
                          'LAVA_USER',
                          'LAVA_LAB_FILE', 'LAVA_ARTIFACTS_URL')}
        full.update(self.env)
        full.update(env)
        out, err = io.StringIO(), io.StringIO()
        with mock.patch.dict(os.environ, full, clear=True), \
                redirect_stdout(out), redirect_stderr(err):
            rc = entry.main(['submit', *args])
        text = out.getvalue() + err.getvalue()
        self.assertNotIn(TOKEN, text)
        return rc, out.getvalue(), err.getvalue()

class SubmitTest(SubmitCase):
    def test_job_file_submitted_waited_for_results_fetched(self) -> None:
        rc, out, err = self.submit(job_file(self.tmp, 'hello.yaml'))
        self.assertEqual(0, rc, out + err)
        url = self.fake.url
        self.assertIn(f'submit: {url}/ as perf_aux, lava-server 2023.01-fake',
                      out)
        self.assertIn(f'submit: job 1 submitted: {self.tmp}/hello.yaml '
                      f'({url}/scheduler/job/1)', out)
        self.assertIn('submit: job 1 (', out)
        self.assertIn('Complete, ', out)
        self.assertIn('on qemu-01, queued 3 s, ran 10 s', out)
        self.assertIn('  0_perf-aux.perf_aux.pagesize_test.y pass 3.0 entries',
                      out)
        self.assertIn('  lava.job pass', out)
        # Sent as a header to the server, and to nothing else.
        self.assertEqual({AUTH}, set(self.fake.auth))
        self.assertEqual('job_name: hello.yaml\n\n',
                         self.fake.jobs[1]['definition'])

    def test_incomplete_job_is_exit_3_with_lava_reasons(self) -> None:
        n = 1
        self.fake.logs[n] = '\n'.join([log_entry('results', {
            'definition': 'lava', 'case': 'job', 'result': 'fail',
            'error_type': 'Job', 'error_msg': 'Invalid job data: x'})]) + '\n'
        path = job_file(self.tmp, 'incomplete.yaml')
        rc, out, err = self.submit(path)
        self.assertEqual(3, rc, out + err)
        want = (f'submit: infrastructure error: job 1 ({path}) at '
                f'{self.fake.url}/scheduler/job/1: Incomplete')
        if HAVE_YAML:
            want += ': Job error: Invalid job data: x'
        self.assertEqual(want + '; the fake says so', err.strip())

    def test_wait_bound_cancels(self) -> None:
        rc, out, err = self.submit(job_file(self.tmp, 'forever.yaml'),
                                   LAVA_WAIT='0')
        self.assertEqual(3, rc, out + err)
        self.assertIn(': not finished within 0 s (Running on qemu-01): '
                      'canceled, ended Canceled', err)
        self.assertTrue(self.fake.jobs[1]['canceled'])

    def test_refused_job_cancels_those_submitted(self) -> None:
        first = job_file(self.tmp, 'forever.yaml')
        bad = job_file(self.tmp, 'bad.yaml', 'perf_aux_not_a_key: 1')
        rc, out, err = self.submit(first, bad)
        self.assertEqual(2, rc)
        self.assertIn('submit: job 1 (', out)
        self.assertIn('): canceled', out)
        self.assertEqual(
            f'perf_aux: error: submit: {self.fake.url}/ refused {bad} (HTTP '
            "400): Problem with submitted job data: extra keys not allowed @ "
            "data['perf_aux_not_a_key']", err.strip())
        self.assertTrue(self.fake.jobs[1]['canceled'])

    def test_wrong_token(self) -> None:
        rc, out, err = self.submit(job_file(self.tmp, 'a.yaml'),
                                   LAVA_TOKEN='not-it')
        self.assertEqual((2, f'perf_aux: error: submit: {self.fake.url}/ '
                          'refused the token (HTTP 401: Unauthorized)'),
                         (rc, err.strip()))
        self.assertEqual({}, self.fake.jobs)

    def test_server_error_without_the_token(self) -> None:
        # lavacli names the URL, the token in it, in an HTTP error.
        self.fake.fail = 500
        rc, _, err = self.submit(job_file(self.tmp, 'a.yaml'))
        self.assertEqual((2, f'perf_aux: error: submit: {self.fake.url}/: '
                          'HTTP 500: Internal Server Error'),
                         (rc, err.strip()))

    def test_token_file_and_missing_token(self) -> None:
        path = os.path.join(self.tmp, 'token')
        with open(path, 'w') as f:
            f.write(f' {TOKEN}\n')
        rc, out, err = self.submit(job_file(self.tmp, 'a.yaml'),
                                   LAVA_TOKEN='', LAVA_TOKEN_FILE=path)
        self.assertEqual(0, rc, out + err)
        rc, _, err = self.submit(job_file(self.tmp, 'a.yaml'),
                                 LAVA_TOKEN='')
        self.assertEqual((2, f'perf_aux: error: submit: no token for '
                          f'{self.fake.url}/: set LAVA_TOKEN or '
                          'LAVA_TOKEN_FILE'), (rc, err.strip()))
        rc, _, err = self.submit(job_file(self.tmp, 'a.yaml'),
                                 LAVA_TOKEN='', LAVA_TOKEN_FILE=path + '.no')
        self.assertEqual((2, 'perf_aux: error: submit: cannot read the token '
                          f'file {path}.no'), (rc, err.strip()))

    def test_no_server(self) -> None:
        port = self.fake.server.server_address[1]
        self.fake.close()
        self.fake = FakeLava()
        rc, _, err = self.submit(job_file(self.tmp, 'a.yaml'),
                                 LAB=f'http://127.0.0.1:{port}/')
        self.assertEqual(2, rc)
        self.assertRegex(err.strip(), r'^perf_aux: error: submit: http://'
                         rf'127\.0\.0\.1:{port}/ unreachable: .*Connection '
                         'refused')

    def test_bad_arguments(self) -> None:
        cases = [
            (['nonsense'], 'submit: nonsense: not a run name '
             '<reference|stock>-<base>-<target>[-<variant>]'),
            (['reference-9.9-arm64-4k'], "unknown BASE='9.9'"),
            (['reference-7.3-x86_64'], 'submit: reference-7.3-x86_64: '
             'lava-jobs has no job for x86_64'),
            (['reference-7.3-arm64-4k-strict'], 'VARIANT=strict adds boot '
             'parameters, which the LAVA jobs do not pass'),
            (['reference-7.3-arm64-4k-smp'], 'VARIANT=smp boots 4 CPUs, the '
             'LAVA jobs 2'),
            (['reference-7.3-arm64-4k'] * 2,
             'submit: reference-7.3-arm64-4k named twice'),
            ([os.path.join(self.tmp, 'none.yaml')], 'submit: no job file'),
        ]
        local = str(self.fake.server.server_address[1])
        for args, want in cases:
            rc, _, err = self.submit(*args, PERF_AUX_LAB_PORT=local)
            self.assertEqual(2, rc, args)
            self.assertIn(want, err, args)
        # Another lab reads the staged kernels at LAVA_ARTIFACTS_URL only.
        rc, _, err = self.submit('reference-7.3-arm64-4k',
                                 LAB='http://lava.invalid')
        self.assertIn('is not this machine\'s lab: set LAVA_ARTIFACTS_URL',
                      err)
        self.assertEqual([], self.fake.auth)

class ProxyTest(SubmitCase):
    """One rule: the loopback never through a proxy; any other lab through
    the environment's proxy, unless no_proxy names it."""

    def refused(self) -> str:
        return job_file(self.tmp, 'bad.yaml', 'perf_aux_not_a_key: 1')

    def test_other_lab_through_the_proxy(self) -> None:
        rc, out, err = self.submit(self.refused(), LAB='http://lava.invalid',
                                   http_proxy=self.fake.url)
        self.assertIn('http://lava.invalid/ refused', err)
        self.assertTrue(self.fake.proxied)
        self.assertTrue(all(p == 'http://lava.invalid/RPC2'
                            for p in self.fake.proxied))

    def test_no_proxy(self) -> None:
        rc, _, err = self.submit(job_file(self.tmp, 'a.yaml'),
                                 LAB='http://lava.invalid',
                                 http_proxy=self.fake.url,
                                 no_proxy='lava.invalid')
        self.assertEqual(2, rc)
        self.assertIn('http://lava.invalid/ unreachable', err)
        self.assertEqual([], self.fake.proxied)

    def test_loopback_lab_bypasses_the_proxy(self) -> None:
        rc, out, err = self.submit(self.refused(),
                                   http_proxy='http://127.0.0.1:9',
                                   HTTP_PROXY='http://127.0.0.1:9')
        self.assertIn(f'{self.fake.url}/ refused', err)
        self.assertEqual([], self.fake.proxied)

@unittest.skipUnless(HAVE_YAML and os.path.exists(perf_aux_lava.PYTHON),
                     'no python3-yaml or /usr/bin/python3')
class RunTest(SubmitCase):
    """A run's job: staged from its build, its console through the API
    split into out/results/<run>/ as the direct run's."""

    def build(self) -> str:
        cache = os.path.join(self.tmp, 'cache')
        tree = os.path.join(cache, 'trees', '7.3-reference')
        build = os.path.join(tree, '.build-arm64-4k')
        os.makedirs(os.path.join(build, 'arch', 'arm64', 'boot'))
        with gzip.open(os.path.join(build, 'arch', 'arm64', 'boot',
                                    'Image.gz'), 'wb') as f:
            f.write(b'kernel')
        with gzip.open(os.path.join(build, 'initramfs.cpio.gz'), 'wb') as f:
            f.write(b'ramdisk')
        with open(os.path.join(build, '.config'), 'w') as f:
            f.write(''.join(f'CONFIG_{o}=y\n' for o in
                            perf_aux_lava.OVERLAY_OPTIONS))
        with open(os.path.join(tree, '.perf_aux-source'), 'w') as f:
            f.write('debian linux-source-7.3 (test)\n')
        return cache

    def test_run_results_collected(self) -> None:
        from perf_aux_results import ktap
        try:
            ktap.kunit()  # found in the real cache, before it is moved
        except SystemExit:
            self.skipTest('no kunit_parser.py')
        cache = self.build()
        run = read('kselftest-run.log')
        tests = run[[i for i, line in enumerate(run)
                     if line.startswith('PERF_AUX: kernel')][0]:]
        self.fake.logs[1] = '\n'.join(job_log(
            read('kunit-two-suites.log'), tests)) + '\n'
        with mock.patch.dict(os.environ, PERF_AUX_CACHE=cache):
            rc, out, err = self.submit('reference-7.3-arm64-4k',
                                       PERF_AUX_LAB_PORT=str(
                                           self.fake.server.server_address[1]))
        self.assertIn(rc, (0, 1), out + err)
        definition = self.fake.jobs[1]['definition']
        self.assertIn('job_name: perf_aux reference-7.3-arm64-4k', definition)
        self.assertIn('/reference-7.3-arm64-4k/Image.gz', definition)
        res = os.path.join(self.env['PERF_AUX_OUT'], 'results',
                           'reference-7.3-arm64-4k')
        self.assertIn(f'submit: job 1: results in {res}', out)
        self.assertTrue([f for f in os.listdir(res) if f.endswith('.ktap')])
        with open(os.path.join(res, 'source.txt')) as f:
            self.assertEqual(['source: debian linux-source-7.3 (test)',
                              f'lava: job 1 at {self.fake.url}/scheduler/'
                              'job/1, on qemu-01, queued 3 s, ran 10 s'],
                             f.read().splitlines())
        logs = os.path.join(self.env['PERF_AUX_OUT'], 'logs')
        self.assertEqual(sorted(os.listdir(logs)), [
            'reference-7.3-arm64-4k-kselftest.log',
            'reference-7.3-arm64-4k-kunit.log',
            'reference-7.3-arm64-4k-lava.yaml'])
        # The staged kernel and ramdisk are removed, the job stays.
        staged = os.path.join(self.env['PERF_AUX_OUT'], 'lava', 'submit')
        (stage,) = os.listdir(staged)
        self.assertEqual(['job.yaml', 'kselftest.log', 'kunit.log',
                          'source.txt'], sorted(
            f for f in os.listdir(os.path.join(staged, stage,
                                               'reference-7.3-arm64-4k'))
            if os.path.isfile(os.path.join(staged, stage,
                                           'reference-7.3-arm64-4k', f))))

if __name__ == '__main__':
    unittest.main()
