# SPDX-License-Identifier: GPL-2.0
"""Host tests of lava-jobs/perf-aux-ktap-to-lava.sh, the KTAP to
lava-test-case converter that runs on the device.

It runs as on a busybox ramdisk: busybox sh, and a PATH holding only
busybox applets and stand-ins for LAVA's lava-test-case and lava-test-set
that record their arguments.  Without /bin/busybox the tests skip.
"""

import os
import shutil
import subprocess
import tempfile
import textwrap
import unittest
from typing import Dict, List, Optional, Tuple

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
CONVERTER = os.path.join(ROOT, 'lava-jobs', 'perf-aux-ktap-to-lava.sh')
BUSYBOX = '/bin/busybox'

# What LAVA's helpers would signal, one line a call.
STUB = '#!/bin/sh\necho "$(basename "$0") $*" >> "$LAVA_CALLS"\n'

def ktap(text: str) -> str:
    return textwrap.dedent(text).lstrip('\n')

class Device:
    """A PATH of busybox applets and LAVA stand-ins, as on the ramdisk."""

    def __init__(self, lava: bool = True) -> None:
        self.dir = tempfile.mkdtemp(prefix='perf-aux-lava-')
        self.bin = os.path.join(self.dir, 'bin')
        os.mkdir(self.bin)
        applets = subprocess.run([BUSYBOX, '--list'], capture_output=True,
                                 text=True, check=True).stdout.split()
        for applet in applets:
            os.symlink(BUSYBOX, os.path.join(self.bin, applet))
        if lava:
            for helper in ('lava-test-case', 'lava-test-set'):
                path = os.path.join(self.bin, helper)
                with open(path, 'w') as f:
                    f.write(STUB)
                os.chmod(path, 0o755)
        self.calls = os.path.join(self.dir, 'calls')

    def run(self, *args: str, stdin: Optional[str] = None) -> Tuple[int, str]:
        env = {'PATH': self.bin, 'LAVA_CALLS': self.calls, 'HOME': self.dir,
               'TMPDIR': self.dir}
        p = subprocess.run([BUSYBOX, 'sh', CONVERTER, *args], input=stdin,
                           capture_output=True, text=True, env=env,
                           cwd=self.dir, timeout=60)
        return p.returncode, p.stdout + p.stderr

    def lines(self) -> List[str]:
        if not os.path.exists(self.calls):
            return []
        with open(self.calls) as f:
            return f.read().splitlines()

    def cases(self) -> Dict[str, str]:
        """{name: result} of the lava-test-case calls."""
        out = {}
        for line in self.lines():
            words = line.split()
            if words[0] == 'lava-test-case':
                out[words[1]] = words[words.index('--result') + 1]
        return out

    def write(self, rel: str, text: str, mode: int = 0o644) -> str:
        path = os.path.join(self.dir, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'w') as f:
            f.write(text)
        os.chmod(path, mode)
        return path

    def close(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)

KUNIT_NESTED = ktap('''
    KTAP version 1
    1..1
        KTAP version 1
        # Subtest: perf_aux_alloc
        # module: perf_aux_alloc_kunit
        1..3
            KTAP version 1
            # Subtest: aux_alloc_orders_test
            ok 1 none_rw_1p_wm_default
            not ok 2 large_rw_2p_wm_half
            ok 3 nosg_snapshot_max # SKIP no memory for this size
        # aux_alloc_orders_test: pass:1 fail:1 skip:1 total:3
        not ok 1 aux_alloc_orders_test
        ok 2 aux_alloc_chunk_fails_test
        ok 3 aux_alloc_bad_input_test # SKIP reason that changes 42
    # perf_aux_alloc: pass:1 fail:1 skip:1 total:3
    not ok 1 perf_aux_alloc
''')

HARNESS = ktap('''
    TAP version 13
    1..4
    # Starting 4 tests from 2 test cases.
    #  RUN           aux_pagesize.large_rw_256m.vmap_in_vmallocinfo ...
    # pagesize_test.c:204:vmap_in_vmallocinfo:entries 53 for 16384 pages (PMD 10240, cont 6144, PTE 0), at least 8
    #            OK  aux_pagesize.large_rw_256m.vmap_in_vmallocinfo
    ok 1 aux_pagesize.large_rw_256m.vmap_in_vmallocinfo
    #  RUN           aux_pagesize.large_rw_256m.granules_agree_with_page_tables ...
    #      SKIP      no kernel page-table dump
    ok 2 aux_pagesize.large_rw_256m.granules_agree_with_page_tables # SKIP no kernel page-table dump
    #  RUN           aux_pagesize.large_rw_256m.large_chunks_mapped_large ...
    ok 3 aux_pagesize.large_rw_256m.large_chunks_mapped_large
    ok 4 hw_pagesize.arm_spe.driver_vmap_granules # SKIP no arm_spe_0 PMU
    # Totals: pass:2 fail:0 xfail:0 xpass:0 skip:2 error:0
''')

# A parameterised case without its result line, another case after it (the
# converter follows the indentation and the "# Subtest:" names), and the
# output ending inside a third: no result for it, nor for the suite.
KUNIT_CRASH = ktap('''
    KTAP version 1
    1..1
        KTAP version 1
        # Subtest: vmap_granule
        1..3
            KTAP version 1
            # Subtest: vmap_granule_map_test
            ok 1 single_page
            ok 2 scattered
        ok 1 vmap_granule_lookup_test
            KTAP version 1
            # Subtest: vmap_granule_data_test
            ok 1 single_page
''')

# The usual crash: the kernel's output stops inside a parameterised case.
KUNIT_CRASH_EOF = KUNIT_CRASH.split('    ok 1 vmap_granule_lookup_test')[0]

@unittest.skipUnless(os.access(BUSYBOX, os.X_OK), 'no /bin/busybox')
class ConverterTest(unittest.TestCase):
    """One KTAP document at a time (mode ktap)."""

    def setUp(self) -> None:
        self.dev = Device()

    def tearDown(self) -> None:
        self.dev.close()

    def convert(self, group: str, text: str, verdict: str = '') -> Dict[str, str]:
        path = self.dev.write('in.ktap', text)
        args = ['ktap', group, path] + ([verdict] if verdict else [])
        rc, out = self.dev.run(*args)
        self.assertEqual(rc, 0, out)
        return self.dev.cases()

    def test_kunit_nested_names_results(self) -> None:
        cases = self.convert('perf_aux_alloc', KUNIT_NESTED)
        self.assertEqual(cases, {
            'perf_aux.perf_aux_alloc.aux_alloc_orders_test.none_rw_1p_wm_default': 'pass',
            'perf_aux.perf_aux_alloc.aux_alloc_orders_test.large_rw_2p_wm_half': 'fail',
            'perf_aux.perf_aux_alloc.aux_alloc_orders_test.nosg_snapshot_max': 'skip',
            'perf_aux.perf_aux_alloc.aux_alloc_orders_test': 'fail',
            'perf_aux.perf_aux_alloc.aux_alloc_chunk_fails_test': 'pass',
            'perf_aux.perf_aux_alloc.aux_alloc_bad_input_test': 'skip',
            'perf_aux.perf_aux_alloc.suite': 'fail',
        })

    def test_one_test_set_per_group(self) -> None:
        self.convert('perf_aux_alloc', KUNIT_NESTED)
        lines = self.dev.lines()
        self.assertEqual(lines[0], 'lava-test-set start perf_aux_alloc')
        self.assertEqual(lines[-1], 'lava-test-set stop')
        self.assertEqual(sum(1 for l in lines if 'lava-test-set' in l), 2)

    def test_harness_skips_without_reasons(self) -> None:
        cases = self.convert('pagesize_test', HARNESS)
        self.assertEqual(cases, {
            'perf_aux.pagesize_test.aux_pagesize.large_rw_256m.vmap_in_vmallocinfo': 'pass',
            'perf_aux.pagesize_test.aux_pagesize.large_rw_256m.granules_agree_with_page_tables': 'skip',
            'perf_aux.pagesize_test.aux_pagesize.large_rw_256m.large_chunks_mapped_large': 'pass',
            'perf_aux.pagesize_test.hw_pagesize.arm_spe.driver_vmap_granules': 'skip',
            'perf_aux.pagesize_test.suite': 'pass',
        })

    def test_measurement_on_its_case_only(self) -> None:
        self.convert('pagesize_test', HARNESS)
        measured = [l for l in self.dev.lines() if '--measurement' in l]
        self.assertEqual(measured, [
            'lava-test-case perf_aux.pagesize_test.aux_pagesize.large_rw_256m'
            '.vmap_in_vmallocinfo --result pass --measurement 53 --units entries'])

    def test_crashed_kunit_suite_without_plan_end(self) -> None:
        cases = self.convert('vmap_granule', KUNIT_CRASH)
        self.assertEqual(cases, {
            'perf_aux.vmap_granule.vmap_granule_map_test.single_page': 'pass',
            'perf_aux.vmap_granule.vmap_granule_map_test.scattered': 'pass',
            # No result line: the kernel died in it.
            'perf_aux.vmap_granule.vmap_granule_map_test': 'fail',
            'perf_aux.vmap_granule.vmap_granule_lookup_test': 'pass',
            'perf_aux.vmap_granule.vmap_granule_data_test.single_page': 'pass',
            'perf_aux.vmap_granule.vmap_granule_data_test': 'fail',
            'perf_aux.vmap_granule.suite': 'fail',
        })

    def test_crash_at_end_of_output(self) -> None:
        cases = self.convert('vmap_granule', KUNIT_CRASH_EOF)
        self.assertEqual(cases, {
            'perf_aux.vmap_granule.vmap_granule_map_test.single_page': 'pass',
            'perf_aux.vmap_granule.vmap_granule_map_test.scattered': 'pass',
            'perf_aux.vmap_granule.vmap_granule_map_test': 'fail',
            'perf_aux.vmap_granule.suite': 'fail',
        })

    def test_harness_cut_short_fails_its_group(self) -> None:
        cut = HARNESS.split('ok 3 ')[0]
        cases = self.convert('pagesize_test', cut)
        self.assertEqual(cases['perf_aux.pagesize_test.suite'], 'fail')
        self.assertEqual(len(cases), 3)

    def test_runner_verdict_fail_wins(self) -> None:
        cases = self.convert('pagesize_test', HARNESS, 'fail')
        self.assertEqual(cases['perf_aux.pagesize_test.suite'], 'fail')

    def test_no_ktap_takes_runner_verdict(self) -> None:
        self.assertEqual(self.convert('map_test', '', 'skip'),
                         {'perf_aux.map_test.suite': 'skip'})

    def test_names_cleaned(self) -> None:
        text = ktap('''
            KTAP version 1
            1..1
                KTAP version 1
                # Subtest: vmap_granule
                1..1
                    KTAP version 1
                    # Subtest: param_test
                    ok 1 size=4096 order>2 #1
                    ok 2 - dash
                ok 1 param_test
            ok 1 vmap_granule
        ''')
        cases = self.convert('vmap_granule', text)
        self.assertIn('perf_aux.vmap_granule.param_test.size_4096_order_2', cases)
        self.assertIn('perf_aux.vmap_granule.param_test.dash', cases)
        for name in cases:
            self.assertRegex(name, r'^[-_A-Za-z0-9.]+$')

    def test_lower_case_skip_is_a_skip(self) -> None:
        text = 'TAP version 13\n1..1\nok 1 global.case # skip not here\n'
        self.assertEqual(self.convert('map_test', text)['perf_aux.map_test.global.case'],
                         'skip')

    def test_duplicate_names_kept_apart(self) -> None:
        text = 'TAP version 13\n1..2\nok 1 global.same\nnot ok 2 global.same\n'
        cases = self.convert('map_test', text)
        self.assertEqual(cases['perf_aux.map_test.global.same'], 'pass')
        self.assertEqual(cases['perf_aux.map_test.global.same_dup2'], 'fail')

    def test_missing_results_file_fails(self) -> None:
        rc, out = self.dev.run('ktap', 'vmap_granule', '/nonexistent')
        self.assertEqual(rc, 0, out)
        self.assertEqual(self.dev.cases(), {'perf_aux.vmap_granule.suite': 'fail'})

    def test_outside_lava_prints(self) -> None:
        dev = Device(lava=False)
        try:
            path = dev.write('in.ktap', HARNESS)
            rc, out = dev.run('ktap', 'pagesize_test', path)
            self.assertEqual(rc, 0, out)
            self.assertIn('perf_aux.pagesize_test.aux_pagesize.large_rw_256m.'
                          'vmap_in_vmallocinfo pass 53\n', out)
            self.assertIn('perf_aux.pagesize_test.suite pass\n', out)
        finally:
            dev.close()

# The kselftest runner's output for one binary, as 6.12's runner.sh
# prints it (the binary's KTAP behind "# ", written through a second open
# of /dev/stdout).
RUNNER = '''#!/bin/sh
# Stand-in for run_kselftest.sh -t perf_aux:BIN
bin=${2#perf_aux:}
echo "TAP version 13"
echo "1..1"
echo "# timeout set to 45"
echo "# selftests: perf_aux: $bin"
if [ ! -e "perf_aux/$bin" ]; then
	echo "not ok 1 selftests: perf_aux: $bin"
	exit 0
fi
(cd perf_aux && ./$bin) > /tmp/out.$$ 2>&1
rc=$?
# As runner.sh does (4>>"$logfile", logfile=/dev/stdout): a second open.
sed 's/^/# /' /tmp/out.$$ >> /dev/stdout
rm -f /tmp/out.$$
case $rc in
0) echo "ok 1 selftests: perf_aux: $bin" ;;
4) echo "ok 1 selftests: perf_aux: $bin # SKIP" ;;
*) echo "not ok 1 selftests: perf_aux: $bin # exit=$rc" ;;
esac
'''

@unittest.skipUnless(os.access(BUSYBOX, os.X_OK), 'no /bin/busybox')
class KselftestModeTest(unittest.TestCase):
    """kselftest and kunit modes: what is installed, what is missing."""

    def setUp(self) -> None:
        self.dev = Device()
        self.dev.write('ksft/run_kselftest.sh', RUNNER, 0o755)

    def tearDown(self) -> None:
        self.dev.close()

    def binary(self, name: str, output: str, rc: int = 0) -> None:
        self.dev.write(f'ksft/perf_aux/{name}',
                       f"#!/bin/sh\ncat <<'EOF'\n{output}EOF\nexit {rc}\n", 0o755)

    def test_listed_binaries_run_and_report(self) -> None:
        self.dev.write('ksft/kselftest-list.txt',
                       'perf_aux:pagesize_test\nother:thing\n')
        self.binary('pagesize_test', HARNESS)
        rc, out = self.dev.run('kselftest', 'ksft', 'pagesize_test')
        self.assertEqual(rc, 0, out)
        cases = self.dev.cases()
        self.assertEqual(cases['perf_aux.kselftest.suite'], 'pass')
        self.assertEqual(cases['perf_aux.pagesize_test.suite'], 'pass')
        self.assertEqual(cases['perf_aux.pagesize_test.hw_pagesize.arm_spe.'
                               'driver_vmap_granules'], 'skip')
        self.assertEqual(len(cases), 6)
        self.assertIn('lava-test-set start pagesize_test', self.dev.lines())

    def test_binary_missing_is_a_fail(self) -> None:
        self.dev.write('ksft/kselftest-list.txt', 'perf_aux:map_test\n')
        rc, out = self.dev.run('kselftest', 'ksft')
        self.assertEqual(rc, 0, out)
        self.assertEqual(self.dev.cases(), {'perf_aux.kselftest.suite': 'pass',
                                            'perf_aux.map_test.suite': 'fail'})

    def test_required_binary_not_listed_is_a_fail(self) -> None:
        self.dev.write('ksft/kselftest-list.txt', 'perf_aux:pagesize_test\n')
        self.binary('pagesize_test', HARNESS)
        self.dev.run('kselftest', 'ksft', 'map_test', 'pagesize_test')
        cases = self.dev.cases()
        self.assertEqual(cases['perf_aux.map_test.suite'], 'fail')
        self.assertEqual(cases['perf_aux.pagesize_test.suite'], 'pass')

    def test_no_kselftest_installed_is_a_fail(self) -> None:
        rc, out = self.dev.run('kselftest', 'nowhere', 'map_test')
        self.assertEqual(rc, 0, out)
        self.assertEqual(self.dev.cases(), {'perf_aux.kselftest.suite': 'fail',
                                            'perf_aux.map_test.suite': 'fail'})

    def test_crashing_binary_fails_its_group(self) -> None:
        self.dev.write('ksft/kselftest-list.txt', 'perf_aux:pagesize_test\n')
        self.binary('pagesize_test', HARNESS.split('ok 3 ')[0], rc=139)
        self.dev.run('kselftest', 'ksft')
        cases = self.dev.cases()
        self.assertEqual(cases['perf_aux.pagesize_test.suite'], 'fail')
        self.assertEqual(cases['perf_aux.pagesize_test.aux_pagesize.'
                               'large_rw_256m.vmap_in_vmallocinfo'], 'pass')

    def test_kunit_debugfs_suites(self) -> None:
        self.dev.write('kunit/perf_aux_alloc/results', KUNIT_NESTED)
        rc, out = self.dev.run('kunit', 'kunit', 'perf_aux_alloc', 'vmap_granule')
        self.assertEqual(rc, 0, out)
        cases = self.dev.cases()
        self.assertEqual(cases['perf_aux.perf_aux_alloc.suite'], 'fail')
        self.assertEqual(cases['perf_aux.vmap_granule.suite'], 'fail')
        self.assertEqual(len(cases), 8)

if __name__ == '__main__':
    unittest.main()
