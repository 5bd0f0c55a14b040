# SPDX-License-Identifier: GPL-2.0
"""Host tests of scripts/perf_aux_lava/checks.py (the direct run's cases
named as LAVA names them, what lava-run recorded, device dictionaries) and
lava-jobs/generate.py."""

import json
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, '..', '..'))
sys.path.insert(0, os.path.join(ROOT, 'scripts'))
sys.path.insert(0, os.path.join(ROOT, 'lava-jobs'))
sys.path.insert(0, HERE)

try:
    import yaml  # noqa: F401
    import jinja2  # noqa: F401
    HAVE_LIBS = True
except ImportError:
    HAVE_LIBS = False

if HAVE_LIBS:
    import generate  # noqa: E402
    from perf_aux_lava import checks as lava  # noqa: E402
import test_lava_converter as conv  # noqa: E402

def log_line(msg: dict, lvl: str = 'results') -> str:
    return json.dumps({'dt': '2026-01-01T00:00:00', 'lvl': lvl, 'msg': msg})

@unittest.skipUnless(HAVE_LIBS, 'no python3-yaml or python3-jinja2')
class CompareTest(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.results = os.path.join(self.tmp.name, 'results')
        os.mkdir(self.results)
        with open(os.path.join(self.results,
                               'perf_aux.pagesize_test.ktap'), 'w') as f:
            f.write(conv.HARNESS)
        self.want = dict(c[:2] for c in lava.converted(self.results)[
            'pagesize_test'])

    def tearDown(self) -> None:
        self.tmp.cleanup()

    def write_log(self, cases: dict, job: str = 'pass') -> str:
        lines = [log_line('Start time: ...', 'info')]
        lines.append(log_line({'definition': 'lava', 'case': 'validate',
                               'result': 'pass'}))
        for name, result in cases.items():
            group = name.split('.')[1]
            msg = {'definition': '0_perf-aux', 'case': name,
                   'result': result, 'set': group}
            if name.endswith('large_rw_256m.vmap_in_vmallocinfo'):
                msg.update(measurement=53.0, units='entries')
            lines.append(log_line(msg))
        lines.append(log_line({'definition': 'lava', 'case': 'job',
                               'result': job}))
        path = os.path.join(self.tmp.name, 'lava.log')
        with open(path, 'w') as f:
            f.write('\n'.join(lines) + '\n')
        return path

    def verdicts(self, log: str) -> dict:
        return {what: ok for ok, what, _ in
                lava.compare(self.results, log, 't')}

    def test_equal_runs_pass_every_check(self) -> None:
        cases = dict(self.want)
        cases['perf_aux.kselftest.suite'] = 'pass'
        verdicts = self.verdicts(self.write_log(cases))
        self.assertTrue(all(verdicts.values()), verdicts)
        self.assertEqual(len(verdicts), 5)  # job, 2 groups, measurements, names

    def test_a_changed_result_fails_its_group(self) -> None:
        cases = dict(self.want)
        cases['perf_aux.kselftest.suite'] = 'pass'
        name = 'perf_aux.pagesize_test.aux_pagesize.large_rw_256m.' \
               'large_chunks_mapped_large'
        cases[name] = 'skip'
        checks = lava.compare(self.results, self.write_log(cases), 't')
        bad = [(what, details) for ok, what, details in checks if not ok]
        self.assertEqual(len(bad), 1)
        self.assertIn('pagesize_test', bad[0][0])
        self.assertEqual(bad[0][1], [f'{name}: direct pass, LAVA skip'])

    def test_a_skip_for_want_of_memory_is_told_not_failed(self) -> None:
        name = 'aux_pagesize.large_rw_256m.large_chunks_mapped_large'
        cases = dict(self.want)
        cases['perf_aux.kselftest.suite'] = 'pass'
        cases[f'perf_aux.pagesize_test.{name}'] = 'skip'
        for reason, ok in (('no free block of the order the rule asks', True),
                           ('no kernel page-table dump', False)):
            path = self.write_log(cases)
            with open(path, 'a') as f:
                f.write(log_line(f'# ok 3 {name} # SKIP {reason}', 'target'))
            group = lava.compare(self.results, path, 't')[2]
            self.assertEqual((ok, [f'perf_aux.pagesize_test.{name}: direct '
                                   'pass, LAVA skip' + ' (a skip for want of '
                                   'memory)' * ok]),
                             (group.ok, group.details), reason)
            self.assertIn('memory skips aside' if ok else '!=', group.what)

    def test_incomplete_job_fails(self) -> None:
        verdicts = self.verdicts(self.write_log({}, job='fail'))
        self.assertFalse(verdicts['t: lava-run job finished correctly'])

    def test_wrong_test_set_is_reported(self) -> None:
        path = self.write_log({'perf_aux.pagesize_test.suite': 'pass'})
        with open(path) as f:
            text = f.read().replace('"set": "pagesize_test"', '"set": "x"')
        with open(path, 'w') as f:
            f.write(text)
        names = lava.compare(self.results, path, 't')[-1]
        self.assertEqual((False, ["perf_aux.pagesize_test.suite in test "
                                  "set 'x', not 'pagesize_test'"]),
                         (names.ok, names.details))

    def test_measured_cases(self) -> None:
        self.assertEqual(
            [c for c in lava.converted(self.results)['pagesize_test']
             if len(c) > 2],
            [['perf_aux.pagesize_test.aux_pagesize.large_rw_256m.'
              'vmap_in_vmallocinfo', 'pass', '53']])

@unittest.skipUnless(HAVE_LIBS, 'no python3-yaml or python3-jinja2')
class DeviceTest(unittest.TestCase):
    """The device dictionaries of scripts/lava/devices/, over stand-ins
    for lava-server's device-type templates."""

    def render(self, device_type: str, context: dict) -> dict:
        with tempfile.TemporaryDirectory() as templates:
            with open(os.path.join(templates, f'{device_type}.jinja2'),
                      'w') as f:
                f.write('mac: "{{ mac_addr }}"\n'
                        'power_on: "{{ power_on_command }}"\n'
                        'memory: {{ memory | default(512) }}\n')
            text = lava.device_text(
                {'device_type': device_type, 'context': context}, templates)
        return yaml.safe_load(text)

    def test_every_job_type_has_a_dictionary(self) -> None:
        for name in generate.JOBS:
            with open(os.path.join(ROOT, 'lava-jobs', 'jobs',
                                   f'{name}.yaml')) as f:
                kind = yaml.safe_load(f)['device_type']
            self.assertTrue(os.path.isfile(os.path.join(
                lava.DEVICES, f'perf-aux-{kind}01.jinja2')), kind)

    def test_lab_values_and_job_context(self) -> None:
        qemu = self.render('qemu', {'memory': 2048})
        self.assertEqual(('52:54:00:12:34:59', 2048),
                         (qemu['mac'], qemu['memory']))
        self.assertEqual('/bin/true', self.render('n1sdp', {})['power_on'])

@unittest.skipUnless(HAVE_LIBS, 'no python3-yaml or python3-jinja2')
class GenerateTest(unittest.TestCase):
    def lab(self) -> dict:
        with open(os.path.join(ROOT, 'lava-jobs', 'lab.example.yaml')) as f:
            return yaml.safe_load(f)

    def test_committed_jobs_are_rendered_from_the_example(self) -> None:
        lab = self.lab()
        for name in generate.JOBS:
            with open(os.path.join(ROOT, 'lava-jobs', 'jobs',
                                   f'{name}.yaml')) as f:
                self.assertEqual(f.read(), generate.render(lab, name), name)

    def test_set_overrides_one_value(self) -> None:
        lab = self.lab()
        generate.set_value(lab, 'jobs.qemu-arm64-4k.kernel=file:///k/Image.gz')
        job = yaml.safe_load(generate.render(lab, 'qemu-arm64-4k'))
        kernel = job['actions'][0]['deploy']['images']['kernel']
        self.assertEqual(kernel['url'], 'file:///k/Image.gz')
        self.assertNotIn('kunit.enable=0', kernel['image_arg'])
        self.assertIn('perf_aux.shell', kernel['image_arg'])

    def test_qemu_jobs_boot_with_the_direct_runs_memory(self) -> None:
        # Cases skip for want of memory: the LAVA job and the direct run
        # it is compared with must have the same.
        with open(os.path.join(ROOT, 'scripts', 'perf_aux', 'lib.py')) as f:
            direct = [line.split('=', 1)[1].strip() for line in f
                      if line.startswith('GUEST_MEMORY_MIB = ')]
        self.assertEqual(1, len(direct))
        for name in ('qemu-arm64-4k', 'qemu-arm64-16k'):
            job = yaml.safe_load(generate.render(self.lab(), name))
            self.assertEqual(int(direct[0]), job['context']['memory'], name)

    def test_a_missing_value_is_an_error(self) -> None:
        lab = self.lab()
        del lab['jobs']['n1sdp-spe']['kernel']
        with self.assertRaises(jinja2.UndefinedError):
            generate.render(lab, 'n1sdp-spe')

    def test_values_stay_strings(self) -> None:
        lab = self.lab()
        generate.set_value(lab, 'testdefs.revision=1234')
        job = yaml.safe_load(generate.render(lab, 'qemu-arm64-4k'))
        test = job['actions'][2]['test']
        self.assertEqual(test['definitions'][0]['revision'], '1234')

if __name__ == '__main__':
    unittest.main()
