# SPDX-License-Identifier: GPL-2.0
"""perf_aux.lib: the selectors and what follows from them, as literal
cases: result and build directory names, the variants' boot parameters
and builds, which kernels build the granule suite strict, the files a
patch changes (git's b/, the mm queue's a/, a deleted file), the version
of a posted series, the kernel's reports in a console log and in both of
a run's, the vmap
benchmark's test mask from a tree's own test_case_array.
"""

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.dirname(HERE)
sys.path.insert(0, SCRIPTS)
from perf_aux import kunit, lib  # noqa: E402

class LibTest(unittest.TestCase):

    def setUp(self) -> None:
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def write(self, name: str, text: str) -> str:
        path = os.path.join(self.dir.name, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'w') as f:
            f.write(text)
        return path

    def test_stopped_run_stops_its_program(self) -> None:
        # timeout(1) leads a process group of its own: a stop of the
        # caller's group misses it, so run() must pass SIGTERM on.
        up, stopped = (os.path.join(self.dir.name, n) for n in ('up', 'stopped'))
        script = (f'trap "echo stopped > {stopped}; exit 0" TERM; echo > {up}; '
                  'for i in $(seq 300); do sleep 0.1; done')
        caller = subprocess.Popen([sys.executable, '-c', (
            'import signal, sys; sys.path.insert(0, sys.argv[1]); from perf_aux import lib; '
            'signal.signal(signal.SIGTERM, lib.stopped); '
            'lib.run(["timeout", "60", "sh", "-c", sys.argv[2]])'), SCRIPTS, script],
                                  stderr=subprocess.DEVNULL)
        for _ in range(300):
            if os.path.exists(up) or caller.poll() is not None:
                break
            time.sleep(0.1)
        caller.send_signal(signal.SIGTERM)
        self.assertEqual(128 + signal.SIGTERM, caller.wait(30))
        with open(stopped) as f:
            self.assertEqual('stopped\n', f.read())

    def test_stopped_tier_keeps_its_log(self) -> None:
        # A stop of the whole process group reaches the tee of the tier's
        # output too: it must live on to take the stopped stage's last line.
        up, log = (os.path.join(self.dir.name, n) for n in ('up', 'log'))
        caller = subprocess.Popen([sys.executable, '-c', (
            'import signal, sys, time; sys.path.insert(0, sys.argv[1]); '
            'from perf_aux import check, lib, shell; '
            'signal.signal(signal.SIGTERM, lib.stopped); '
            'check.teed(sys.argv[2], lambda: shell.stage("s", lambda: '
            'open(sys.argv[3], "w").close() or time.sleep(60)))'), SCRIPTS, log, up],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                  start_new_session=True)
        for _ in range(300):
            if os.path.exists(up) or caller.poll() is not None:
                break
            time.sleep(0.1)
        time.sleep(0.2)
        os.killpg(caller.pid, signal.SIGTERM)
        _, err = caller.communicate(timeout=30)
        self.assertNotIn(b'Traceback', err)
        self.assertEqual(128 + signal.SIGTERM, caller.returncode)
        for _ in range(50):  # tee ends at the end of its input
            with open(log) as f:
                if '<== s: ' in f.read():
                    break
            time.sleep(0.1)
        with open(log) as f:
            self.assertRegex(f.read(), r'\n<== s: [0-9]+ s, exit 143\n$')

    def test_names(self) -> None:
        self.assertEqual('reference-7.3-arm64-4k',
                         lib.result_name('reference', '7.3', 'arm64-4k',
                                         'default'))
        self.assertEqual('stock-6.12-x86_64-strict',
                         lib.result_name('stock', '6.12', 'x86_64', 'strict'))
        for variant, build in (('default', '.build-arm64-16k'),
                               ('strict', '.build-arm64-16k'),
                               ('hugetlb', '.build-arm64-16k-hugetlb'),
                               ('soak', '.build-arm64-16k-sanitize')):
            self.assertEqual(build, lib.build_dir('arm64-16k', variant))
        self.assertEqual('7.2-series', lib.tree_name('series-v4', '7.2'))
        self.assertEqual('custom', lib.tree_name('custom', '7.2'))

    def test_variants(self) -> None:
        self.assertEqual(['nohugevmalloc', 'perf_aux.strict'],
                         lib.variant_args('nohugevmalloc'))
        self.assertEqual([], lib.variant_args('default'))
        with mock.patch.dict(os.environ, DURATION='120'):
            self.assertIn('perf_aux.soak=120', lib.variant_args('soak'))
        self.assertEqual(4, lib.variant_cpus('smp'))
        self.assertEqual(2, lib.variant_cpus('strict'))
        self.assertTrue(lib.granule_strict('series-v9', 'default'))
        self.assertTrue(lib.granule_strict('stock', 'nohugevmalloc'))
        self.assertFalse(lib.granule_strict('custom', 'hugetlb'))

    def test_selectors_die(self) -> None:
        with mock.patch('sys.stderr'), self.assertRaises(lib.Error) as e:
            lib.check('TARGET', 'sparc', lib.TARGETS)
        self.assertEqual("unknown TARGET='sparc' (one of: arm64-4k arm64-16k "
                         "arm64-64k x86_64)", str(e.exception))
        self.assertEqual('', lib.unknown('BASE', '7.2', lib.BASES))
        self.assertEqual('7.3', lib.version_base('7.3.0-rc7'))

    def test_patched_files(self) -> None:
        patch = self.write('a.patch', (
            'diff --git a/mm/vmalloc.c b/mm/vmalloc.c\n'
            '--- a/mm/vmalloc.c\n+++ b/mm/vmalloc.c\n'
            '--- a/mm/old.c~fix\n+++ /dev/null\n'
            '--- a/include/x.h~name\n+++ a/include/x.h\n'
            '--- a/mm/vmalloc.c\n+++ b/mm/vmalloc.c\t2026-01-01\n'))
        self.assertEqual(['include/x.h', 'mm/old.c~fix', 'mm/vmalloc.c'],
                         lib.patched_files(patch))

    def test_series_version(self) -> None:
        d = os.path.join(self.dir.name, 'series')
        self.write('series/0000-cover-letter.patch',
                   'From: a\nSubject: [PATCH v7 0/3] mm/vmalloc: speed up\n'
                   ' vmap with contiguous memory\nDate: x\n')
        self.write('series/0001-a.patch', 'Subject: [PATCH v7 1/3] a\n\n')
        self.write('series/0002-b.patch', 'Subject: [PATCH v7 2/3] b\n\n')
        self.assertEqual([f'{d}/0001-a.patch', f'{d}/0002-b.patch'],
                         lib.series_mails(d))
        self.assertEqual('[PATCH v7 0/3] mm/vmalloc: speed up vmap with '
                         'contiguous memory', lib.series_subject(d))
        mbox = self.write('one.mbox', 'Subject: [PATCH] x\nFrom: y\n')
        self.assertEqual('series-v1', lib.kernel_name('reference', mbox))
        self.assertEqual('series-v7', lib.kernel_name('reference', d))
        self.assertEqual('stock', lib.kernel_name('stock', d))
        self.assertEqual('custom', lib.kernel_name('reference', '', '/src'))

    def test_run_from_the_selectors(self) -> None:
        """make's selectors read once into a Run, checked; its results
        directory says what it is of (run.json)."""
        env = {'KERNEL': 'stock', 'BASE': '7.2', 'VARIANT': 'strict',
               'KERNEL_ARGS': 'a=1 b', 'PERF_AUX_OUT': self.dir.name}
        with mock.patch.dict(os.environ, env):
            r = lib.env_run(env)
            self.assertEqual('stock-7.2-arm64-4k-strict', r.name)
            self.assertEqual(('a=1', 'b'), r.kargs)
            os.makedirs(r.results)
            r.save()
            with open(os.path.join(r.results, 'run.json')) as f:
                saved = json.load(f)
            self.assertEqual(r, lib.Run(**{**saved,
                                          'kargs': tuple(saved['kargs'])}))
        with mock.patch('sys.stderr'), self.assertRaises(lib.Error):
            lib.env_run({'VARIANT': 'nonesuch'})
        with mock.patch('sys.stderr'), self.assertRaises(lib.Error):
            lib.env_run({'SERIES': 'x', 'KERNEL_SRC': 'y'})

    def test_console_reports(self) -> None:
        log = self.write('console.log', (
            'ok\nBUG: KASAN: x\nWARNING: CPU: 1 at mm/vmalloc.c\n'
            'kmemleak: 0 unreferenced objects\nkmemleak: 3 unreferenced\n'
            'BUG: KASAN: x\nUBSAN: shift-out-of-bounds in mm/vmalloc.c\n'
            'Internal error: Oops: 0000000096000005 [#1] SMP\n'))
        self.assertEqual(['BUG: KASAN: x',
                          'Internal error: Oops: 0000000096000005 [#1] SMP',
                          'UBSAN: shift-out-of-bounds in mm/vmalloc.c',
                          'WARNING: CPU: 1 at mm/vmalloc.c',
                          'kmemleak: 3 unreferenced'],
                         sorted(lib.console_reports(log, log + '.none')))

    def test_run_reports(self) -> None:
        """Both boots of a run, from their first lines: the oops that
        ended the kselftest boot before its last program."""
        self.write('logs/r-kunit.log', 'ok 1 perf_aux_alloc\n')
        self.write('logs/r-kselftest.log', (
            'WARNING: kernel/events/core.c:4228 at ctx_sched_in\n'
            'ok 1 selftests: perf_aux: aux_contract_test\n'))
        with mock.patch.dict(os.environ, {'PERF_AUX_OUT': self.dir.name}):
            self.assertEqual(
                ['WARNING: kernel/events/core.c:4228 at ctx_sched_in'],
                lib.run_reports('r'))
            self.assertEqual([], lib.run_reports('none'))

    def test_vmalloc_args(self) -> None:
        self.write('tree/lib/test_vmalloc.c', (
            'static struct test_case_desc test_case_array[] = {\n'
            '\t{ "fix_size_alloc_test", fix_size_alloc_test, },\n'
            '\t{ "full_fit_alloc_test", full_fit_alloc_test, },\n'
            '\t{ "vmap_contig_chunks_test", vmap_contig_chunks_test, },\n'
            '};\n'))
        tree = os.path.join(self.dir.name, 'tree')
        self.assertEqual('test_vmalloc.run_test_mask=4',
                         lib.vmalloc_args(tree, 'bench')[0])
        self.assertEqual(['test_vmalloc.run_test_mask=0'],
                         lib.vmalloc_args(tree, 'off'))
        self.assertEqual(['test_vmalloc.run_test_mask=0'],
                         lib.vmalloc_args('/nonexistent', 'bench'))

    def test_without_kvm(self) -> None:
        argv = kunit.without_kvm(['qemu', '-m', '1'])
        self.assertEqual(['qemu', '-m', '1'], argv[-3:])
        self.assertEqual(os.path.exists('/dev/kvm'), argv[0] == 'unshare')

if __name__ == '__main__':
    unittest.main()
