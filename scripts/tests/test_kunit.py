# SPDX-License-Identifier: GPL-2.0
"""perf_aux.kunit (the kunit verb): the build's arguments and the lines
it prints.

The build key is the same bytes the shell version hashed (a check that
boots one build several times must find it again); the ccache line counts
what ccache --print-stats reports; a kunit.py log's summary is its verdict
or the reason it stopped; KernelCI's JSON is read suite by suite, the
parameterised cases below a suite counted with it.
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.dirname(HERE)
ROOT = os.path.dirname(SCRIPTS)
sys.path.insert(0, SCRIPTS)
from perf_aux import kunit, lib  # noqa: E402

STATS = ('autoconf_test\t0\ncache_miss\t7\ndirect_cache_hit\t20\n'
         'preprocessed_cache_hit\t3\nlocal_storage_hit\t23\n')

class KunitTest(unittest.TestCase):

    def setUp(self) -> None:
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def path(self, name: str, text: str) -> str:
        path = os.path.join(self.dir.name, name)
        with open(path, 'w', encoding='utf-8') as f:
            f.write(text)
        return path

    def test_ccache_line(self) -> None:
        self.assertEqual('ccache: 23 of 30 compilations hit (76 %)',
                         kunit.ccache_line(STATS))
        self.assertEqual('ccache: 0 of 0 compilations hit (100 %)',
                         kunit.ccache_line(''))

    def test_build_key_is_the_shell_versions(self) -> None:
        """sha256 of: the check's id, the recipe, each argument and a
        kunitconfig's content after its argument."""
        tree = self.dir.name
        self.path('.perf_aux-recipe', 'abc\n')
        kc = self.path('a.kunitconfig', 'CONFIG_KUNIT=y\n')
        args = ['--arch=arm64', f'--kunitconfig={kc}', '--make_options=CC=x y']
        data = b'7.1\nabc\n--arch=arm64\n' + f'--kunitconfig={kc}\n'.encode() \
            + b'CONFIG_KUNIT=y\n--make_options=CC=x y\n'
        expected = subprocess.run(['sha256sum'], input=data, check=True,
                                  stdout=subprocess.PIPE).stdout.split()[0]
        self.assertEqual(expected.decode(), kunit.build_key(tree, args, '7.1'))
        self.assertEqual('', kunit.build_key(tree, args, ''))

    def test_summary(self) -> None:
        done = self.path('done.log', '[10:00:00] ==== x ====\n'
                         '[10:00:01] Testing complete. Ran 3 tests: passed: 3\n'
                         '[10:00:01] Elapsed time: 9.0s total\n')
        self.assertEqual('Testing complete. Ran 3 tests: passed: 3 '
                         'Elapsed time: 9.0s total', kunit.summary(done))
        refused = self.path('refused.log', 'Regenerating .config ...\n'
                            'Missing: CONFIG_PERF_EVENTS=y\nend\n')
        self.assertEqual('Missing: CONFIG_PERF_EVENTS=y',
                         kunit.summary(refused))
        self.assertEqual('end', kunit.summary(self.path('x.log', 'a\nend\n')))
        self.assertEqual('', kunit.summary(os.path.join(self.dir.name, 'no')))

    def test_kernelci_json(self) -> None:
        case = [{'name': 'a', 'status': 'PASS'}, {'name': 'b', 'status': 'SKIP'}]
        root = {'name': 'root', 'sub_groups': [
            {'name': 'perf_aux_alloc', 'test_cases': case,
             'sub_groups': [{'name': 'p', 'test_cases': case}]},
            {'name': 'vmap_granule', 'test_cases': [
                {'name': 'c', 'status': 'FAIL'}]}]}
        path = self.path('k.json', json.dumps(root))
        lines, ok = kunit.kernelci_results(path, ['perf_aux_alloc'])
        self.assertEqual(['KernelCI JSON: perf_aux_alloc: 4 cases, 2 PASS, '
                          '2 SKIP'], lines)
        self.assertTrue(ok)
        lines, ok = kunit.kernelci_results(path, ['vmap_granule', 'other'])
        self.assertEqual(['KernelCI JSON: vmap_granule: 1 cases, 1 FAIL',
                          'KernelCI JSON: suite other not run'], lines)
        self.assertFalse(ok)
        self.assertFalse(kunit.kernelci_results(path + '.no', ['x'])[1])

    def test_config_files_that_exist(self) -> None:
        files = kunit.config_files(ROOT, 'arm64', 'arm64-4k', '')
        self.assertEqual(f'{ROOT}/kernel/events/ring_buffer_kunit.kunitconfig',
                         files[0])
        self.assertIn(f'{ROOT}/scripts/config/boot.config', files)
        self.assertTrue(all(os.path.isfile(f) for f in files))
        hugetlb = f'{ROOT}/scripts/config/variant-hugetlb.config'
        self.assertEqual(hugetlb, kunit.config_files(ROOT, 'arm64', 'arm64-4k',
                                                     hugetlb)[-1])

    def test_kernel_args(self) -> None:
        with mock.patch('perf_aux.lib.vmalloc_args',
                        return_value=['test_vmalloc.a=1', 'test_vmalloc.b=2']), \
                mock.patch('perf_aux.lib.variant_args',
                           return_value=['perf_aux.strict']):
            self.assertEqual(
                ['--kernel_args=panic=-1', '--kernel_args=test_vmalloc.a=1',
                 '--kernel_args=test_vmalloc.b=2', '--kernel_args=x',
                 '--kernel_args=perf_aux.strict'],
                kunit.kernel_args('/t', 'strict', ['x']))
            # The caller's own test_vmalloc parameters replace the bench's.
            self.assertEqual(
                ['--kernel_args=panic=-1',
                 '--kernel_args=test_vmalloc.run_test_mask=0',
                 '--kernel_args=perf_aux.strict'],
                kunit.kernel_args('/t', 'strict',
                                  ['test_vmalloc.run_test_mask=0']))

    def test_stack_erase_option(self) -> None:
        os.makedirs(os.path.join(self.dir.name, 'security'))
        self.path('security/Kconfig.hardening', 'config KSTACK_ERASE\n')
        self.assertEqual('CONFIG_KSTACK_ERASE',
                         kunit.stack_erase_option(self.dir.name))
        self.path('security/Kconfig.hardening',
                  'config GCC_PLUGIN_STACKLEAK\n')
        self.assertEqual('CONFIG_GCC_PLUGIN_STACKLEAK',
                         kunit.stack_erase_option(self.dir.name))

    def test_ccache_settings_whoever_calls(self) -> None:
        """The build's ccache is the project's (perf_aux.lib's exports)."""
        with mock.patch.dict(os.environ, PERF_AUX_CACHE='/x/cache'):
            self.assertEqual('/x/cache/ccache', lib.exports()['CCACHE_DIR'])

    def test_usage_and_bad_target(self) -> None:
        with mock.patch('sys.stderr'), self.assertRaises(lib.Error) as e:
            kunit.main(['a'])
        self.assertEqual(2, e.exception.status)
        env = dict(os.environ, BASE='7.3')
        proc = subprocess.run(lib.perf_aux('kunit', 'reference', 'sparc',
                                           'default', '/dev/null'), env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True)
        self.assertEqual(2, proc.returncode)
        self.assertIn("unknown TARGET='sparc'", proc.stdout)

if __name__ == '__main__':
    unittest.main()
