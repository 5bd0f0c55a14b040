# SPDX-License-Identifier: GPL-2.0
"""KernelCI's job made runnable in the local lab, and how its results are
judged.

A job written by hand in the shape kernelci-core's lava template gives
(deploy to tmpfs with a modules overlay, a docker boot, a git test
definition, a notify callback): only the URLs, the docker block and the
callback change.  Results in submit's "suite.case result" form: the shard
passed, every program reported and no failure pass; each fault alone
fails and is named.
"""

import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from perf_aux_lava import kernelci  # noqa: E402

URLS = {'kernel': 'file:///s/Image', 'modules': 'file:///s/modules.tar.xz',
        'ramdisk': 'file:///s/rootfs.cpio.gz',
        'testdefs': 'file:///s/test-definitions'}

def job():
    return {
        'job_name': '[None] 0123 kselftest-perf-aux v7.3-rc7',
        'device_type': 'qemu',
        'notify': {'callback': {'url': 'https://api.example.org/node/0123'}},
        'actions': [
            {'deploy': {'to': 'tmpfs', 'images': {
                'kernel': {'url': 'https://storage.example.org/b/Image'},
                'ramdisk': {'url': 'https://storage.kernelci.org/r.cpio.gz',
                            'overlays': {'modules': {
                                'url': 'https://storage.example.org/b/'
                                       'modules.tar.xz'}}}}}},
            {'boot': {'method': 'qemu', 'docker': {'image': 'kernelci/qemu'},
                      'prompts': ['/ #']}},
            {'test': {'definitions': [
                {'from': 'inline', 'name': 'timesync-off',
                 'path': 'inline/timesync-off.yaml'},
                {'from': 'git', 'name': 'kselftest-perf-aux',
                 'repository': 'https://github.com/linaro/'
                               'test-definitions.git',
                 'revision': 'master', 'path': kernelci.TESTDEF,
                 'parameters': {'TST_CMDFILES': 'perf_aux'}}]}}]}

class AdaptTest(unittest.TestCase):
    def test_only_what_points_off_the_machine_changes(self) -> None:
        j = job()
        changes = kernelci.adapt(j, URLS)
        images = j['actions'][0]['deploy']['images']
        self.assertEqual(URLS['kernel'], images['kernel']['url'])
        self.assertEqual(URLS['ramdisk'], images['ramdisk']['url'])
        self.assertEqual(URLS['modules'],
                         images['ramdisk']['overlays']['modules']['url'])
        self.assertEqual({'method': 'qemu', 'prompts': ['/ #']},
                         j['actions'][1]['boot'])
        defs = j['actions'][2]['test']['definitions']
        self.assertEqual('inline/timesync-off.yaml', defs[0]['path'])
        self.assertEqual(URLS['testdefs'], defs[1]['repository'])
        self.assertEqual('master', defs[1]['revision'])
        self.assertEqual({'TST_CMDFILES': 'perf_aux'}, defs[1]['parameters'])
        self.assertNotIn('notify', j)
        self.assertEqual(6, len(changes))

GOOD = ['0_timesync-off.timesync-off pass',
        '1_kselftest-perf-aux.shardfile-perf_aux pass',
        '1_kselftest-perf-aux.perf_aux_map_test_global_aux_before_data_area '
        'pass',
        '1_kselftest-perf-aux.perf_aux_map_test pass',
        '1_kselftest-perf-aux.perf_aux_hw_trace_test_no_arm_spe_0_PMU skip',
        'lava.job pass']

class JudgedTest(unittest.TestCase):
    def test_cases_of_the_definition_only(self) -> None:
        got = kernelci.results(GOOD)
        self.assertEqual(4, len(got))
        self.assertEqual('skip',
                         got['perf_aux_hw_trace_test_no_arm_spe_0_PMU'])

    def test_reported_and_none_failed_passes(self) -> None:
        got = kernelci.results(GOOD)
        self.assertEqual([], kernelci.judged(got, ['map_test',
                                                   'hw_trace_test']))

    def test_a_program_without_a_result_fails(self) -> None:
        got = kernelci.results(GOOD)
        self.assertEqual(['no result of wrap_test'],
                         kernelci.judged(got, ['map_test', 'wrap_test']))

    def test_a_failed_case_fails(self) -> None:
        got = kernelci.results(GOOD[:3] + [
            '1_kselftest-perf-aux.perf_aux_map_test fail'])
        self.assertEqual(['perf_aux_map_test failed'],
                         kernelci.judged(got, ['map_test']))

    def test_no_shard_fails(self) -> None:
        got = kernelci.results(GOOD[2:])
        self.assertEqual(['shardfile-perf_aux absent'],
                         kernelci.judged(got, ['map_test']))

if __name__ == '__main__':
    unittest.main()
