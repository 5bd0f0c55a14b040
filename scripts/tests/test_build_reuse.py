# SPDX-License-Identifier: GPL-2.0
"""The kunit verb: one build serves every boot of it within a check.

A check boots the default build of a tree several times (the strict,
nohugevmalloc and smp boots); each kunit.py build after the first is a
Kconfig run and a no-op make (16 s).  Within one check (PERF_AUX_CHECK_ID)
a build whose tree recipe and build arguments are unchanged is not run
again; outside a check, or after the tree, its configuration or a failed
build, it always is: an edited tree must never boot an old kernel.  The
script runs against a stand-in tree whose kunit.py records each call.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.dirname(HERE)
sys.path.insert(0, SCRIPTS)
from perf_aux import lib  # noqa: E402

# Records "build" or "exec" per call; a build fails while FAIL_BUILD exists.
KUNIT_PY = '''import os, sys
build = [a.split('=', 1)[1] for a in sys.argv if a.startswith('--build_dir=')][0]
os.makedirs(build, exist_ok=True)
with open(os.path.join(os.environ['CALLS'], 'calls'), 'a') as f:
    f.write(sys.argv[1] + '\\n')
if sys.argv[1] == 'build' and os.path.exists(os.environ['CALLS'] + '/FAIL_BUILD'):
    sys.exit(1)
if sys.argv[1] == 'exec':
    open(os.path.join(build, 'test.log'), 'w').write('ok 1 stand-in\\n')
    with open(os.path.join(os.environ['CALLS'], 'exec-args'), 'a') as f:
        f.write(' '.join(sys.argv[2:]) + '\\n')
'''

class BuildReuseTest(unittest.TestCase):

    def setUp(self) -> None:
        self.dir = tempfile.mkdtemp(prefix='build-reuse.')
        for kernel in ('stock', 'reference'):
            self.tree = os.path.join(self.dir, 'cache', 'trees', f'7.3-{kernel}')
            kunit = os.path.join(self.tree, 'tools', 'testing', 'kunit')
            os.makedirs(kunit)
            with open(os.path.join(kunit, 'kunit.py'), 'w') as f:
                f.write(KUNIT_PY)
            self.set_recipe('one')
        # ccache's statistics are not what is tested here.
        bin_dir = os.path.join(self.dir, 'bin')
        os.makedirs(bin_dir)
        with open(os.path.join(bin_dir, 'ccache'), 'w') as f:
            f.write('#!/bin/sh\nexit 0\n')
        os.chmod(os.path.join(bin_dir, 'ccache'), 0o755)
        self.path = bin_dir + os.pathsep + os.environ['PATH']

    def tearDown(self) -> None:
        shutil.rmtree(self.dir)

    def set_recipe(self, text: str) -> None:
        with open(os.path.join(self.tree, '.perf_aux-recipe'), 'w') as f:
            f.write(text + '\n')

    def boot(self, variant: str, check_id: str = '', kernel: str = 'reference') -> None:
        env = dict(os.environ, PERF_AUX_CACHE=os.path.join(self.dir, 'cache'),
                   CALLS=self.dir, BASE='7.3', PATH=self.path)
        env.pop('PERF_AUX_CHECK_ID', None)
        env.pop('KERNEL_SRC', None)
        if check_id:
            env['PERF_AUX_CHECK_ID'] = check_id
        subprocess.run(lib.perf_aux('kunit', kernel, 'arm64-4k', variant,
                                    os.path.join(self.dir, 'log')),
                       env=env, check=False, capture_output=True, text=True)

    def calls(self) -> list:
        with open(os.path.join(self.dir, 'calls')) as f:
            return f.read().split()

    def test_later_boots_of_a_check_reuse_the_build(self) -> None:
        for variant in ('default', 'strict', 'nohugevmalloc'):
            self.boot(variant, 'check-1')
        self.assertEqual(['build', 'exec', 'exec', 'exec'], self.calls())

    def test_strict_is_a_boot_parameter_of_the_same_build(self) -> None:
        self.set_recipe('reference')
        self.boot('default', 'check-1', 'stock')
        self.boot('strict', 'check-1', 'stock')
        self.boot('default', 'check-1')
        self.assertEqual(['build', 'exec', 'exec', 'build', 'exec'], self.calls())
        with open(os.path.join(self.dir, 'exec-args')) as f:
            strict = ['vmap_granule_kunit.strict=1' in line for line in f]
        # Stock: as its variant says; a kernel with large vmap: always.
        self.assertEqual([False, True, True], strict)

    def test_outside_a_check_every_boot_builds(self) -> None:
        self.boot('default')
        self.boot('strict')
        self.assertEqual(['build', 'exec', 'build', 'exec'], self.calls())

    def test_another_check_builds_again(self) -> None:
        self.boot('default', 'check-1')
        self.boot('strict', 'check-2')
        self.assertEqual(['build', 'exec', 'build', 'exec'], self.calls())

    def test_a_changed_tree_is_built_again(self) -> None:
        self.boot('default', 'check-1')
        self.set_recipe('two')  # a mutant staged in the same tree
        self.boot('default', 'check-1')
        self.assertEqual(['build', 'exec', 'build', 'exec'], self.calls())

    def test_another_configuration_is_built_apart(self) -> None:
        self.boot('default', 'check-1')
        self.boot('hugetlb', 'check-1')
        self.boot('strict', 'check-1')
        self.assertEqual(['build', 'exec', 'build', 'exec', 'exec'],
                         self.calls())

    def test_a_failed_build_is_not_reused(self) -> None:
        self.boot('default', 'check-1')
        open(os.path.join(self.dir, 'FAIL_BUILD'), 'w').close()
        self.set_recipe('two')
        self.boot('default', 'check-1')
        os.remove(os.path.join(self.dir, 'FAIL_BUILD'))
        self.set_recipe('one')  # back to what the first build was made of
        self.boot('strict', 'check-1')
        self.assertEqual(['build', 'exec', 'build', 'build', 'exec'],
                         self.calls())

if __name__ == '__main__':
    unittest.main()
