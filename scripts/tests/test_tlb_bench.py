#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host tests of perf_aux.tlb_bench (python3 -m perf_aux tlb-bench), the TLB
benchmark, against a fake perf on PATH and a fake PMU sysfs."""

import io
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout
from typing import List, Tuple
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
from perf_aux import lib, tlb_bench  # noqa: E402
from test_tlb_table import write_phase  # noqa: E402

# Stands in for perf: FAKE_PERF_MODE picks what "perf stat" does (syntax:
# unknown events, broken: another error, unsupported: <not supported>, else
# every event counts FAKE_COUNT); "perf record" writes its data file and
# FAKE_RECORD_STDERR. Every call is logged with the CPUs it may run on.
FAKE_PERF = r"""#!/bin/bash
echo "$* | cpus $(taskset -pc $$ | sed 's/.*: //')" >>"$FAKE_PERF_LOG"
[ "$1" = --version ] && { echo "perf version fake"; exit 0; }
cmd=$1 out=/dev/null events=""
shift
while [ $# -gt 0 ] && [ "$1" != -- ]; do
    case "$1" in
    -o) out=$2; shift ;;
    -e) events=$2; shift ;;
    esac
    shift
done
shift
if [ "$cmd" = record ]; then
    echo "${FAKE_RECORD_STDERR:-[ perf record: Woken up 1 times ]}" >&2
    echo trace >"$out"
fi
if [ "$cmd" = stat ]; then
    case "$FAKE_PERF_MODE" in
    syntax) echo "event syntax error: '$events'" >&2; exit 129 ;;
    broken) echo "perf: broken" >&2; exit 1 ;;
    unsupported) value='<not supported>' ;;
    *) value=$FAKE_COUNT ;;
    esac
    echo "# started on Tue Sep 22 10:00:00 2026" >"$out"
    for e in ${events//,/ }; do
        echo "$value,,$e,2004556,100.00,," >>"$out"
    done
fi
exec "$@"
"""

Result = Tuple[int, str, str]


def write(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w') as f:
        f.write(text)


class ParseArgsTest(unittest.TestCase):
    def test_defaults(self) -> None:
        with mock.patch.dict(os.environ, PERF_AUX_OUT='/o'):
            opts = tlb_bench.parse_args(['-p', 'before'])
        self.assertEqual(tlb_bench.Options(
            phase='before', out='/o/tlb-bench', aux='4M', tracer='arm_spe_0',
            runs='5', cpu='', keep=False,
            workload=tlb_bench.DEFAULT_WORKLOAD), opts)

    def test_every_option(self) -> None:
        opts = tlb_bench.parse_args(['-p', 'after', '-o', '/d', '-m', '8M',
                                     '-t', 'cs_etm', '-r', '3', '-C', '2',
                                     '-k', '--', 'stress', '-r', '9'])
        self.assertEqual(tlb_bench.Options(
            phase='after', out='/d', aux='8M', tracer='cs_etm', runs='3',
            cpu='2', keep=True, workload=['stress', '-r', '9']), opts)

    def test_the_workload_starts_at_the_first_word(self) -> None:
        opts = tlb_bench.parse_args(['-p', 'before', 'true', '-r', '3'])
        self.assertEqual(('5', ['true', '-r', '3']),
                         (opts.runs, opts.workload))

    def test_events_are_the_tables_events(self) -> None:
        self.assertEqual('dtlb_walk,l1d_tlb,l1d_tlb_refill,l2d_tlb_refill,'
                         'dtlb_walk:u,l1d_tlb:u,l1d_tlb_refill:u,'
                         'l2d_tlb_refill:u', tlb_bench.EVENTS)

    def test_usage_errors_exit_2(self) -> None:
        for argv, said in ((['-p', 'during'], 'usage: python3 -m perf_aux '
                            'tlb-bench OPTIONS'),
                           (['-p', 'before', '-h'], 'Exit status: 0 done'),
                           (['-x'], 'tlb-bench: option -x not recognized'),
                           (['-p', 'before', '-t', 'etm'],
                            'tlb-bench: error: unknown tracer etm\n'),
                           (['-p', 'before', '-r', '0'], 'bad run count 0\n'),
                           (['-p', 'before', '-r', '2x'], 'bad run count'),
                           (['-p', 'before', '-m', '4X'], 'bad AUX size 4X'),
                           (['-p', 'before', '-C', 'one'], 'bad CPU one\n')):
            with self.subTest(argv=argv):
                out, err = io.StringIO(), io.StringIO()
                with redirect_stdout(out), redirect_stderr(err):
                    self.assertEqual(2, tlb_bench.main(argv))
                self.assertIn(said, err.getvalue())
                self.assertEqual('', out.getvalue())


class CpuTest(unittest.TestCase):
    def setUp(self) -> None:
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.cpus = tmp.name

    def test_cpu_in_list(self) -> None:
        for cpu, expected in ((0, True), (3, True), (4, False), (6, True),
                              (7, False)):
            with self.subTest(cpu=cpu):
                self.assertEqual(expected, tlb_bench.cpu_in_list('0-3,6',
                                                                 cpu))
        self.assertFalse(tlb_bench.cpu_in_list('', 0))

    def test_first_isolated_cpu(self) -> None:
        write(os.path.join(self.cpus, 'isolated'), '2-3,5\n')
        self.assertEqual('2', tlb_bench.default_cpu(self.cpus))

    def test_else_the_last_online_cpu_with_a_note(self) -> None:
        write(os.path.join(self.cpus, 'isolated'), '\n')
        write(os.path.join(self.cpus, 'online'), '0,2-5\n')
        err = io.StringIO()
        with redirect_stderr(err):
            self.assertEqual('5', tlb_bench.default_cpu(self.cpus))
        self.assertIn('shares CPU 5', err.getvalue())


@unittest.skipUnless(shutil.which('taskset'), 'needs taskset')
class BenchCase(unittest.TestCase):
    """A fake perf first on PATH, a fake sysfs in TLB_BENCH_PMU_DIR; main()
    runs in this process as if root, so that no test needs root."""

    def setUp(self) -> None:
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.tmp = tmp.name
        self.bin = os.path.join(self.tmp, 'bin')
        os.mkdir(self.bin)
        perf = os.path.join(self.bin, 'perf')
        write(perf, FAKE_PERF)
        os.chmod(perf, stat.S_IRWXU)
        self.pmus = os.path.join(self.tmp, 'pmus')
        os.makedirs(os.path.join(self.pmus, 'arm_spe_0'))
        os.makedirs(os.path.join(self.pmus, 'cs_etm', 'sinks'))
        self.log = os.path.join(self.tmp, 'perf.log')
        self.env = dict(PATH=self.bin + os.pathsep + os.environ['PATH'],
                        TLB_BENCH_PMU_DIR=self.pmus, FAKE_PERF_LOG=self.log,
                        FAKE_PERF_MODE='count', FAKE_COUNT='100')
        self.out = os.path.join(self.tmp, 'out')
        self.uid = 0

    def bench(self, *args: str, **env: str) -> Result:
        out, err = io.StringIO(), io.StringIO()
        with mock.patch.dict(os.environ, dict(self.env, **env)), \
                mock.patch.object(os, 'geteuid', return_value=self.uid), \
                redirect_stdout(out), redirect_stderr(err):
            rc = tlb_bench.main(['-o', self.out, '-C', '0', *args])
        return rc, out.getvalue(), err.getvalue()

    def assertSkips(self, reason: str, result: Result) -> None:
        self.assertEqual((4, f'SKIP: {reason}\n'), result[:2], result[2])

    def perf_calls(self, command: str) -> List[str]:
        with open(self.log) as f:
            return [c for c in f.read().splitlines()
                    if c.startswith(command)]

    def phase_file(self, phase: str, name: str) -> str:
        with open(os.path.join(self.out, phase, name)) as f:
            return f.read()


class CheckBoardTest(BenchCase):
    """Each environment check that fails skips with its constant reason."""

    def test_not_root_skips(self) -> None:
        self.uid = 1000
        self.assertSkips('needs root', self.bench('-p', 'before'))

    def test_no_perf_skips(self) -> None:
        empty = os.path.join(self.tmp, 'empty')
        os.mkdir(empty)
        self.assertSkips('perf not installed',
                         self.bench('-p', 'before', PATH=empty))

    def test_no_taskset_skips(self) -> None:
        self.assertSkips('taskset not installed',
                         self.bench('-p', 'before', PATH=self.bin))

    def test_missing_events_skip(self) -> None:
        self.assertSkips('TLB PMU events missing',
                         self.bench('-p', 'before', FAKE_PERF_MODE='syntax'))

    def test_unsupported_events_skip(self) -> None:
        self.assertSkips('TLB PMU events not supported',
                         self.bench('-p', 'before',
                                    FAKE_PERF_MODE='unsupported'))

    def test_other_perf_stat_error_fails(self) -> None:
        rc, out, err = self.bench('-p', 'before', FAKE_PERF_MODE='broken')
        self.assertEqual((1, ''), (rc, out))
        self.assertEqual('tlb-bench: error: perf stat failed: perf: broken\n',
                         err)

    def test_missing_tracer_skips(self) -> None:
        shutil.rmtree(os.path.join(self.pmus, 'arm_spe_0'))
        self.assertSkips('no arm_spe_0 PMU', self.bench('-p', 'before'))

    def test_missing_cs_etm_skips(self) -> None:
        shutil.rmtree(os.path.join(self.pmus, 'cs_etm'))
        self.assertSkips('no cs_etm PMU',
                         self.bench('-p', 'before', '-t', 'cs_etm'))

    def test_cs_etm_without_trbe_skips(self) -> None:
        os.mkdir(os.path.join(self.pmus, 'cs_etm', 'sinks', 'tmc_etr0'))
        self.assertSkips('no TRBE sink',
                         self.bench('-p', 'before', '-t', 'cs_etm'))

    def test_cs_etm_with_trbe_passes(self) -> None:
        os.mkdir(os.path.join(self.pmus, 'cs_etm', 'sinks', 'trbe0'))
        tlb_bench.check_tracer(self.pmus, 'cs_etm', '0')

    def test_cpu_outside_the_tracer_cpumask_fails(self) -> None:
        write(os.path.join(self.pmus, 'arm_spe_0', 'cpumask'), '1-3\n')
        rc, out, err = self.bench('-p', 'before')
        self.assertEqual((2, ''), (rc, out))
        self.assertIn('CPU 0 has no arm_spe_0 (cpumask 1-3)', err)
        tlb_bench.check_tracer(self.pmus, 'arm_spe_0', '2')


class RunPhaseTest(BenchCase):
    """Runs against the fake perf: DIR/PHASE/runN.csv and the tables."""

    def test_runs_are_pinned_and_traced(self) -> None:
        rc, out, err = self.bench('-p', 'before', '-r', '3', '-m', '8M',
                                  '--', 'true')
        self.assertEqual(0, rc, err)
        self.assertEqual(['info', 'record1.log', 'record2.log',
                          'record3.log', 'run1.csv', 'run2.csv', 'run3.csv',
                          'settings'],
                         sorted(os.listdir(os.path.join(self.out, 'before'))))
        records = self.perf_calls('record')
        self.assertEqual(3, len(records))
        for call in records:
            self.assertIn('-e arm_spe_0// -m ,8M', call)
            self.assertIn('-- perf stat -x, -o', call)
            self.assertTrue(call.endswith('-- true | cpus 0'), call)
        self.assertIn('== before run 3/3 on CPU 0, arm_spe_0, AUX 8M\n', out)
        self.assertTrue(out.endswith('raw perf stat output: '
                                     f'{self.out}/before/run*.csv\n'), out)

    def test_settings_and_info(self) -> None:
        self.assertEqual(0, self.bench('-p', 'before', '-r', '1', '--',
                                       'true', 'x')[0])
        self.assertEqual('tracer=arm_spe_0\naux=4M\ncpu=0\nruns=1\n'
                         'workload=true x\n',
                         self.phase_file('before', 'settings'))
        info = self.phase_file('before', 'info').splitlines()
        self.assertEqual([f'kernel={os.uname().release}',
                          'perf=perf version fake'], info[:2])
        self.assertRegex(info[2], r'^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$')

    def test_perf_record_stderr_is_logged_and_shown(self) -> None:
        rc, _, err = self.bench('-p', 'before', '-r', '1', '--', 'true',
                                FAKE_RECORD_STDERR='Lost 3 AUX events!')
        self.assertEqual(0, rc, err)
        self.assertEqual('Lost 3 AUX events!\n',
                         self.phase_file('before', 'record1.log'))
        self.assertIn('Lost 3 AUX events!\n', err)
        self.assertIn('warning: run 1 lost trace data', err)

    def test_trace_data_kept_only_with_k(self) -> None:
        data = os.path.join(self.out, 'before', 'record1.data')
        self.bench('-p', 'before', '-r', '1', '--', 'true')
        self.assertFalse(os.path.exists(data))
        self.bench('-p', 'before', '-r', '1', '-k', '--', 'true')
        self.assertTrue(os.path.exists(data))

    def test_a_phase_starts_afresh(self) -> None:
        self.bench('-p', 'before', '-r', '3', '--', 'true')
        self.bench('-p', 'before', '-r', '1', '--', 'true')
        self.assertFalse(os.path.exists(os.path.join(self.out, 'before',
                                                     'run2.csv')))

    def test_failed_run_fails(self) -> None:
        rc, _, err = self.bench('-p', 'before', '-r', '2', '--', 'false')
        self.assertEqual(1, rc)
        log = os.path.join(self.out, 'before', 'record1.log')
        self.assertIn(f'tlb-bench: error: run 1 failed (see {log})', err)

    def test_after_phase_prints_the_tables(self) -> None:
        self.assertEqual(0, self.bench('-p', 'before', '-r', '2', '--',
                                       'true')[0])
        rc, out, err = self.bench('-p', 'after', '-r', '2', '--', 'true',
                                  FAKE_COUNT='75')
        self.assertEqual(0, rc, err)
        self.assertIn('l2d_tlb_refill:u\n|        | Run1 | Run2 |    Avg. |',
                      out)
        self.assertIn('| Diff.  |      |      | -25.00% |', out)
        tables = self.phase_file('.', 'tables.txt')
        self.assertTrue(out.endswith(tables), out)
        self.assertEqual(8, tables.count('-25.00%'))


class CompareTest(BenchCase):
    """-p compare on phase directories as a board leaves them."""

    def phases(self, before: object, after: object) -> None:
        os.mkdir(self.out)
        for phase, count in (('before', before), ('after', after)):
            write_phase(self.out, phase, [{'l1d_tlb': count}])
            write(os.path.join(self.out, phase, 'settings'), 'aux=4M\n')

    def test_compare_prints_and_writes_the_tables(self) -> None:
        self.phases(10, 5)
        rc, out, err = self.bench('-p', 'compare')
        self.assertEqual((0, ''), (rc, err))
        self.assertIn('| Diff.  |      | -50.00% |\n', out)
        self.assertEqual(out, self.phase_file('.', 'tables.txt'))

    def test_different_settings_warn(self) -> None:
        self.phases(10, 5)
        write(os.path.join(self.out, 'after', 'settings'), 'aux=8M\n')
        rc, _, err = self.bench('-p', 'compare')
        self.assertEqual(0, rc)
        self.assertIn('warning: before and after ran with different '
                      'settings:', err)
        self.assertIn('-aux=4M\n+aux=8M\n', err)

    def test_missing_event_fails(self) -> None:
        self.phases(10, '<not counted>')
        rc, out, _ = self.bench('-p', 'compare')
        self.assertEqual(1, rc)
        self.assertIn('missing (not counted in every run): l1d_tlb', out)

    def test_phase_without_runs_fails(self) -> None:
        self.phases(10, 5)
        os.remove(os.path.join(self.out, 'after', 'run1.csv'))
        rc, _, err = self.bench('-p', 'compare')
        self.assertEqual(1, rc)
        self.assertIn(f'no after runs in {self.out}/after', err)


class CommandTest(BenchCase):
    """python3 -m perf_aux tlb-bench, the boards' command, runs the module."""

    def command(self, *args: str) -> 'subprocess.CompletedProcess[str]':
        return subprocess.run(lib.perf_aux('tlb-bench', '-o', self.out, '-C',
                                           '0', *args),
                              env=dict(os.environ, **self.env),
                              capture_output=True, text=True, timeout=60)

    def test_usage_error(self) -> None:
        proc = self.command('-p', 'during')
        self.assertEqual(2, proc.returncode)
        self.assertIn('usage: python3 -m perf_aux tlb-bench OPTIONS',
                      proc.stderr)

    @unittest.skipUnless(os.geteuid() == 0, 'needs root')
    def test_before_and_after(self) -> None:
        self.assertEqual(0, self.command('-p', 'before', '-r', '1', '--',
                                      'true').returncode)
        proc = self.command('-p', 'after', '-r', '1', '--', 'true')
        self.assertEqual(0, proc.returncode, proc.stderr)
        self.assertIn('| Diff.  |      | +0.00% |\n', proc.stdout)


if __name__ == '__main__':
    unittest.main()
