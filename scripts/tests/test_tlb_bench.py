# SPDX-License-Identifier: GPL-2.0
"""Host tests of lava-jobs/perf-aux-tlb-bench.sh, the TLB benchmark: its
compare mode on perf stat CSV fixtures, and its board phases against a
fake perf in a busybox PATH."""

import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest
from typing import Mapping, Sequence, Tuple

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
SCRIPT = os.path.join(ROOT, 'lava-jobs', 'perf-aux-tlb-bench.sh')
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'test_data',
                    'tlb')
BUSYBOX = '/bin/busybox'

# Stands in for perf: FAKE_PERF_MODE picks what "perf stat" does (syntax:
# unknown events, broken: another error, unsupported: <not supported>, else
# every event counts FAKE_COUNT); "perf record" writes its data file and
# FAKE_RECORD_STDERR. Every call is logged with its CPU affinity.
FAKE_PERF = r"""#!/bin/sh
echo "$* | $(taskset -p $$)" >> "$FAKE_PERF_LOG"
[ "$1" = --version ] && { echo "perf version fake"; exit 0; }
cmd=$1 out=/dev/stderr events=
shift
while [ $# -gt 0 ] && [ "$1" != -- ]; do
    case $1 in
    -o) out=$2; shift ;;
    -e) events=$2; shift ;;
    esac
    shift
done
shift
if [ "$cmd" = record ]; then
    echo "${FAKE_RECORD_STDERR:-[ perf record: Woken up 1 times ]}" >&2
    echo trace > "$out"
fi
if [ "$cmd" = stat ]; then
    case $FAKE_PERF_MODE in
    syntax) echo "event syntax error: '$events'" >&2; exit 129 ;;
    broken) echo "perf: broken" >&2; exit 1 ;;
    unsupported) value='<not supported>' ;;
    *) value=$FAKE_COUNT ;;
    esac
    echo "# started on Tue Sep 22 10:00:00 2026" > "$out"
    for e in $(echo "$events" | tr , ' '); do
        echo "$value,,$e,2004556,100.00,," >> "$out"
    done
fi
exec "$@"
"""

Result = Tuple[int, str, str]

def write(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w') as f:
        f.write(text)

def perf_stat_csv(counts: Mapping[str, object]) -> str:
    """A perf stat -x, file; a value may be '<not counted>' etc."""
    lines = ['# started on Tue Sep 22 10:00:00 2026', '']
    lines += [f'{value},,{event},2004556,100.00,,'
              for event, value in counts.items()]
    return '\n'.join(lines) + '\n'

class Case(unittest.TestCase):
    def setUp(self) -> None:
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.tmp = tmp.name
        self.out = os.path.join(self.tmp, 'out dir')

    def run_script(self, *args: str, env: Mapping[str, str],
                   ) -> Result:
        p = subprocess.run(['/bin/sh', SCRIPT, '-o', self.out, *args], env=env,
                           capture_output=True, text=True, timeout=60)
        return p.returncode, p.stdout, p.stderr

    def read(self, *path: str) -> str:
        with open(os.path.join(self.out, *path)) as f:
            return f.read()

class CompareTest(Case):
    """-p compare on a host, on a copy of a board's out/tlb-bench."""

    def phases(self, before: Sequence[Mapping[str, object]],
               after: Sequence[Mapping[str, object]]) -> None:
        for phase, runs in (('before', before), ('after', after)):
            for i, counts in enumerate(runs, 1):
                write(os.path.join(self.out, phase, f'run{i}.csv'),
                      perf_stat_csv(counts))
            write(os.path.join(self.out, phase, 'settings'), 'aux=4M\n')

    def compare(self) -> Result:
        return self.run_script('-p', 'compare', env=dict(os.environ))

    def test_the_published_spe_figure(self) -> None:
        """Five runs a kernel whose averages are the published ones."""
        with open(os.path.join(DATA, 'published.json')) as f:
            published = json.load(f)['tables'][0]
        sides = []
        for side in ('before', 'after'):
            total = round(published[side]['avg'] * 5)
            sides.append([{published['event']: total // 5 + (i < total % 5)}
                          for i in range(5)])
        self.phases(*sides)
        rc, out, err = self.compare()
        self.assertEqual((0, ''), (rc, err))
        lines = out.splitlines()
        self.assertEqual('l2d_tlb_refill', lines[0])
        self.assertRegex(lines[3], r'^\| before \|( +4796 \|){5} +4796\.0 \|$')
        self.assertRegex(lines[4], r'^\| after  \|.* +2931\.2 \|$')
        self.assertRegex(lines[5], r'^\| Diff\.  \|.* ' +
                         re.escape(published['diff']) + r' \|$')
        self.assertEqual('-38.88%', published['diff'])
        self.assertEqual(out, self.read('tables.txt'))

    def test_table_layout(self) -> None:
        self.phases([{'l2d_tlb_refill:u': v} for v in (100, 110, 120, 130,
                                                       140)],
                    [{'l2d_tlb_refill:u': v} for v in (60, 55, 60, 65, 60)])
        self.assertEqual(
            (0, 'l2d_tlb_refill:u\n'
             '|        | Run1 | Run2 | Run3 | Run4 | Run5 |    Avg. |\n'
             '|--------|------|------|------|------|------|---------|\n'
             '| before |  100 |  110 |  120 |  130 |  140 |   120.0 |\n'
             '| after  |   60 |   55 |   60 |   65 |   60 |    60.0 |\n'
             '| Diff.  |      |      |      |      |      | -50.00% |\n', ''),
            self.compare())

    def test_uncounted_events_are_missing_never_zero(self) -> None:
        """perf-stat-hybrid.csv: <not supported>, <not counted>, and the
        counts of two PMUs of one event added up."""
        for phase in ('before', 'after'):
            os.makedirs(os.path.join(self.out, phase))
            shutil.copy(os.path.join(DATA, 'perf-stat-hybrid.csv'),
                        os.path.join(self.out, phase, 'run1.csv'))
        rc, out, _ = self.compare()
        self.assertEqual(1, rc)
        self.assertTrue(out.endswith(
            '\n\nmissing (not counted in every run): dtlb_walk, '
            'dtlb_walk:u, l2d_tlb_refill:u\n'), out)
        self.assertIn('| before | <not supported> |  n/a |', out)
        self.assertIn('| after  | <not counted> |  n/a |', out)
        self.assertIn('l1d_tlb:u\n', out)
        self.assertIn('| before | 81234 | 81234.0 |', out)
        self.assertIn('| before | 9024 | 9024.0 |', out)
        self.assertNotIn('-100.00%', out)
        self.assertEqual(8, out.count('\n\n'))

    def test_an_event_absent_from_a_run_is_missing(self) -> None:
        self.phases([{'l1d_tlb': 1}, {'cycles': 1}], [{'l1d_tlb': 1}] * 2)
        rc, out, _ = self.compare()
        self.assertEqual(1, rc)
        self.assertIn('| before |    1 | missing |  n/a |', out)
        self.assertIn('missing (not counted in every run): l1d_tlb, cycles\n',
                      out)

    def test_published_events_first_then_others_in_run_order(self) -> None:
        run = {'cycles': 1, 'l2d_tlb_refill': 4, 'dtlb_walk:u': 3,
               'dtlb_walk': 2}
        self.phases([run], [run])
        out = self.compare()[1]
        self.assertEqual(['dtlb_walk', 'l2d_tlb_refill', 'dtlb_walk:u',
                          'cycles'],
                         [line for line in out.splitlines()
                          if line and line[0] != '|'])

    def test_runs_are_read_in_numeric_order(self) -> None:
        self.phases([{'l1d_tlb': i} for i in range(1, 12)], [{'l1d_tlb': 1}])
        out = self.compare()[1]
        self.assertIn('| before |    1 |    2 |', out)
        self.assertIn('|    10 |    11 |     6.0 |', out)
        self.assertIn('| after  |    1 |    - |', out)

    def test_different_settings_warn(self) -> None:
        self.phases([{'l1d_tlb': 10}], [{'l1d_tlb': 5}])
        write(os.path.join(self.out, 'after', 'settings'), 'aux=8M\n')
        rc, out, err = self.compare()
        self.assertEqual(0, rc)
        self.assertIn('| Diff.  |      | -50.00% |\n', out)
        self.assertIn('warning: before and after ran with different '
                      'settings:', err)
        self.assertIn('-aux=4M\n+aux=8M\n', err)

    def test_a_phase_without_runs_fails(self) -> None:
        self.phases([{'l1d_tlb': 10}], [])
        self.assertEqual(
            (1, '', f'tlb-bench: error: no after runs in {self.out}/after\n'),
            self.compare())

@unittest.skipUnless(os.path.exists(BUSYBOX), 'needs busybox')
class BoardTest(Case):
    """The board phases with busybox's applets, a fake perf and a fake id
    (root) on PATH, a fake sysfs in TLB_BENCH_PMU_DIR."""

    def setUp(self) -> None:
        super().setUp()
        self.applets = os.path.join(self.tmp, 'applets')
        os.mkdir(self.applets)
        for applet in subprocess.run([BUSYBOX, '--list'], check=True,
                                     capture_output=True,
                                     text=True).stdout.split():
            os.symlink(BUSYBOX, os.path.join(self.applets, applet))
        self.bin = os.path.join(self.tmp, 'bin')
        for name, text in (('perf', FAKE_PERF),
                           ('id', '#!/bin/sh\necho "${FAKE_UID:-0}"\n')):
            write(os.path.join(self.bin, name), text)
            os.chmod(os.path.join(self.bin, name), 0o755)
        self.pmus = os.path.join(self.tmp, 'pmus')
        os.makedirs(os.path.join(self.pmus, 'arm_spe_0'))
        os.makedirs(os.path.join(self.pmus, 'cs_etm', 'sinks'))
        self.log = os.path.join(self.tmp, 'perf.log')
        self.env = dict(PATH=f'{self.bin}:{self.applets}',
                        TLB_BENCH_PMU_DIR=self.pmus, FAKE_PERF_LOG=self.log,
                        FAKE_PERF_MODE='count', FAKE_COUNT='100')

    def bench(self, *args: str, **env: str) -> Result:
        return self.run_script('-C', '0', *args, env=dict(self.env, **env))

    def test_skips(self) -> None:
        """Each check that fails: "SKIP: <reason>", status 4."""
        shutil.rmtree(os.path.join(self.pmus, 'cs_etm'))
        os.mkdir(os.path.join(self.tmp, 'no-perf'))
        os.symlink(os.path.join(self.bin, 'id'),
                   os.path.join(self.tmp, 'no-perf', 'id'))
        for reason, args, env in (
                ('needs root', (), dict(FAKE_UID='1000')),
                ('perf not installed', (),
                 dict(PATH=f'{self.tmp}/no-perf:{self.applets}')),
                ('TLB PMU events missing', (), dict(FAKE_PERF_MODE='syntax')),
                ('TLB PMU events not supported', (),
                 dict(FAKE_PERF_MODE='unsupported')),
                ('no cs_etm PMU', ('-t', 'cs_etm'), {})):
            with self.subTest(reason=reason):
                self.assertEqual((4, f'SKIP: {reason}\n'),
                                 self.bench('-p', 'before', *args, **env)[:2])
        self.assertFalse(os.path.exists(self.out))

    def test_tracer_checks(self) -> None:
        os.rmdir(os.path.join(self.pmus, 'arm_spe_0'))
        self.assertEqual((4, 'SKIP: no arm_spe_0 PMU\n'),
                         self.bench('-p', 'before')[:2])
        os.mkdir(os.path.join(self.pmus, 'cs_etm', 'sinks', 'tmc_etr0'))
        self.assertEqual((4, 'SKIP: no TRBE sink\n'),
                         self.bench('-p', 'before', '-t', 'cs_etm')[:2])
        write(os.path.join(self.pmus, 'cs_etm', 'cpumask'), '1-3,6\n')
        os.mkdir(os.path.join(self.pmus, 'cs_etm', 'sinks', 'trbe0'))
        self.assertEqual(
            (2, '', 'tlb-bench: error: CPU 0 has no cs_etm (cpumask 1-3,6)\n'),
            self.bench('-p', 'before', '-t', 'cs_etm'))

    def test_other_perf_stat_errors_fail(self) -> None:
        self.assertEqual(
            (1, '', 'tlb-bench: error: perf stat failed: perf: broken\n'),
            self.bench('-p', 'before', FAKE_PERF_MODE='broken'))

    def test_usage_errors(self) -> None:
        for args, said in ((('-p', 'during'), 'Usage:\n'),
                           (('-p', 'before', '-h'), 'Exit status: 0 done'),
                           (('-p', 'before', '-t', 'etm'),
                            'tlb-bench: error: unknown tracer etm\n'),
                           (('-p', 'before', '-r', '0'), 'bad run count 0\n'),
                           (('-p', 'before', '-r', '2x'), 'bad run count'),
                           (('-p', 'before', '-m', '4X'), 'bad AUX size 4X'),
                           (('-p', 'before', '-m', 'M4'), 'bad AUX size M4'),
                           (('-p', 'before', '-C', 'one'), 'bad CPU one\n')):
            with self.subTest(args=args):
                rc, out, err = self.bench(*args)
                self.assertEqual((2, ''), (rc, out))
                self.assertIn(said, err)

    def test_before_then_after(self) -> None:
        rc, out, err = self.bench('-p', 'before', '-r', '2', '-m', '8M', '--',
                                  'true', 'x')
        self.assertEqual(0, rc, err)
        self.assertIn('== before run 2/2 on CPU 0, arm_spe_0, AUX 8M\n', out)
        self.assertTrue(out.endswith(
            f'raw perf stat output: {self.out}/before/run*.csv\n'), out)
        self.assertEqual(['info', 'record1.log', 'record2.log', 'run1.csv',
                          'run2.csv', 'settings'],
                         sorted(os.listdir(os.path.join(self.out, 'before'))))
        self.assertEqual('tracer=arm_spe_0\naux=8M\ncpu=0\nruns=2\n'
                         'workload=true x\n', self.read('before', 'settings'))
        info = self.read('before', 'info').splitlines()
        self.assertEqual('perf=perf version fake', info[1])
        self.assertRegex(info[2], r'^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$')
        with open(self.log) as f:
            records = [c for c in f if c.startswith('record')]
        self.assertEqual(2, len(records))
        for call in records:
            self.assertIn('-e arm_spe_0// -m ,8M', call)
            self.assertIn(' -- perf stat -x, -o ', call)
            self.assertRegex(call, r' -- true x \| .*affinity.*: 1$')

        rc, out, err = self.bench('-p', 'after', '-r', '2', '-m', '8M', '--',
                                  'true', 'x', FAKE_COUNT='75')
        self.assertEqual(0, rc, err)
        self.assertIn('l2d_tlb_refill:u\n|        | Run1 | Run2 |    Avg. |',
                      out)
        self.assertEqual(8, out.count('| Diff.  |      |      | -25.00% |'))
        self.assertTrue(out.endswith(self.read('tables.txt')), out)

    def test_trace_loss_warns_and_k_keeps_the_data(self) -> None:
        rc, _, err = self.bench('-p', 'before', '-r', '1', '-k', '--', 'true',
                                FAKE_RECORD_STDERR='Lost 3 AUX events!')
        self.assertEqual(0, rc, err)
        self.assertEqual('Lost 3 AUX events!\n',
                         self.read('before', 'record1.log'))
        self.assertIn('Lost 3 AUX events!\nwarning: run 1 lost trace data',
                      err)
        self.assertTrue(os.path.exists(os.path.join(self.out, 'before',
                                                    'record1.data')))

    def test_a_phase_starts_afresh(self) -> None:
        self.bench('-p', 'before', '-r', '3', '--', 'true')
        self.bench('-p', 'before', '-r', '1', '--', 'true')
        self.assertEqual(['info', 'record1.log', 'run1.csv', 'settings'],
                         sorted(os.listdir(os.path.join(self.out, 'before'))))

    def test_a_failed_run_fails(self) -> None:
        rc, _, err = self.bench('-p', 'before', '-r', '2', '--', 'false')
        self.assertEqual(1, rc)
        log = os.path.join(self.out, 'before', 'record1.log')
        self.assertIn(f'tlb-bench: error: run 1 failed (see {log})\n', err)

if __name__ == '__main__':
    unittest.main()
