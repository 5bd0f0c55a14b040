# SPDX-License-Identifier: GPL-2.0
"""python3 -m perf_aux tlb-bench, on boards: what the trace unit's writes
through the vmap() of the perf AUX buffer cost the traced workload in TLB
walks and refills (perf stat of the pinned workload while perf record
traces it with SPE or TRBE), on a "before" and an "after" kernel; the
after phase (or -p compare) prints perf_aux.tlb_table's tables, also in
DIR/tables.txt (docs/tlb-benchmark.md).

Options: -p before|after|compare [-o DIR] [-m SIZE] [-t arm_spe_0|cs_etm]
         [-r RUNS] [-C CPU] [-k] [-- WORKLOAD...]
  -o DIR     output directory (default out/tlb-bench); DIR/PHASE/runN.csv
             is the raw perf stat output of run N
  -m SIZE    AUX buffer size, as perf record -m ,SIZE (default 4M)
  -t TRACER  arm_spe_0 (default) or cs_etm with a TRBE sink
  -r RUNS    runs per phase (default 5)
  -C CPU     CPU to pin to (default: the first isolated CPU, else the last
             online one)
  -k         keep each run's perf.data
  WORKLOAD   default: perf bench mem memset over 64 MB, 50 times

Exit status: 0 done, 1 a run or the comparison failed, 2 usage error,
4 skipped ("SKIP: <reason>": no perf, no PMU events or no tracer, as under
QEMU). TLB_BENCH_PMU_DIR replaces /sys/bus/event_source/devices (the host
tests point it at a fake sysfs).
"""

import datetime
import difflib
import getopt
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Optional

from . import tlb_table
from .lib import PIPE, STDOUT, run, text

SCRIPTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The table printer's event list, so that what is counted is what is shown.
EVENTS = ','.join(tlb_table.EVENTS)
PMU_DIR = '/sys/bus/event_source/devices'
CPU_DIR = '/sys/devices/system/cpu'
DEFAULT_WORKLOAD = ['perf', 'bench', 'mem', 'memset', '-f', 'default',
                    '-s', '64MB', '-l', '50']
PHASES = ('before', 'after', 'compare')
# kselftest's KSFT_SKIP: a harness counts a board without the PMUs (QEMU) as
# a skip, not a failure.
KSFT_SKIP = 4
USAGE_ERROR = 2


class Usage(Exception):
    """The command line is off: the options are printed, exit status 2."""


class Fatal(Exception):
    """'tlb-bench: error: MESSAGE' and the status (1 or 2)."""

    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.status = status


class Skip(Exception):
    """The board cannot run the benchmark: 'SKIP: REASON', status 4."""


@dataclass
class Options:
    """The command line, as given: DIR/PHASE/settings compares them."""
    phase: str = ''
    out: str = ''
    aux: str = '4M'
    tracer: str = 'arm_spe_0'
    runs: str = '5'
    cpu: str = ''
    keep: bool = False
    workload: List[str] = field(
        default_factory=lambda: list(DEFAULT_WORKLOAD))


# The options that take a value, by the field they set.
VALUE_OPTIONS = {'-p': 'phase', '-o': 'out', '-m': 'aux', '-t': 'tracer',
                 '-r': 'runs', '-C': 'cpu'}


def parse_args(argv: List[str]) -> Options:
    """The options, then the values in a fixed order (the boards' logs'
    messages); the first word that is not an option starts the workload."""
    try:
        pairs, rest = getopt.getopt(argv, 'p:o:m:t:r:C:kh')
    except getopt.GetoptError as e:
        raise Usage(str(e)) from e
    flags = [flag for flag, _ in pairs]
    if '-h' in flags:
        raise Usage()
    opts = Options(**{VALUE_OPTIONS[flag]: value for flag, value in pairs
                      if flag in VALUE_OPTIONS}, keep='-k' in flags)
    opts.out = opts.out or os.path.join(
        os.environ.get('PERF_AUX_OUT') or os.path.join(SCRIPTS, '..', 'out'),
        'tlb-bench')
    opts.workload = rest or opts.workload
    if opts.phase not in PHASES:
        raise Usage()
    if not (opts.tracer.startswith('arm_spe_') or opts.tracer == 'cs_etm'):
        raise Fatal(f'unknown tracer {opts.tracer}', USAGE_ERROR)
    if not re.fullmatch(r'[1-9][0-9]*', opts.runs):
        raise Fatal(f'bad run count {opts.runs}', USAGE_ERROR)
    if not re.fullmatch(r'[0-9]+[BKMGbkmg]?', opts.aux):
        raise Fatal(f'bad AUX size {opts.aux}', USAGE_ERROR)
    return opts


def read_text(path: str) -> str:
    """A sysfs file's content without its newline, '' when unreadable."""
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return ''


def cpu_in_list(cpus: str, cpu: int) -> bool:
    """Whether cpu is in a sysfs CPU list such as '0-3,6'."""
    for item in filter(None, cpus.split(',')):
        first, _, last = item.partition('-')
        if int(first) <= cpu <= int(last or first):
            return True
    return False


def default_cpu(cpu_dir: str = CPU_DIR) -> str:
    """The first isolated CPU: nothing else is scheduled there."""
    isolated = read_text(os.path.join(cpu_dir, 'isolated'))
    if isolated:
        return isolated.split(',')[0].split('-')[0]
    last = read_text(os.path.join(cpu_dir, 'online')).split(',')[-1]
    cpu = last.split('-')[-1]
    print(f'note: no isolated CPU (isolcpus=), the workload shares CPU {cpu}',
          file=sys.stderr)
    return cpu


def check_board(pmu_dir: str, tracer: str, cpu: str) -> None:
    """Each check that fails skips with a constant reason
    (docs/tlb-benchmark.md), which logs can be searched for."""
    if os.geteuid() != 0:
        raise Skip('needs root')
    for tool in ('perf', 'taskset'):
        if not shutil.which(tool):
            raise Skip(f'{tool} not installed')
    # Under QEMU perf rejects the events' names or cannot count them.
    with tempfile.TemporaryDirectory() as tmp:
        probe = os.path.join(tmp, 'probe.csv')
        proc = run(['perf', 'stat', '-x,', '-o', probe, '-e', EVENTS, '--',
                    'true'], stdout=PIPE, stderr=STDOUT)
        if proc.returncode:
            if 'event syntax error' in proc.stdout:
                raise Skip('TLB PMU events missing')
            raise Fatal(f'perf stat failed: {proc.stdout.rstrip()}')
        if '<not supported>' in read_text(probe):
            raise Skip('TLB PMU events not supported')
    check_tracer(pmu_dir, tracer, cpu)


def check_tracer(pmu_dir: str, tracer: str, cpu: str) -> None:
    if not os.path.isdir(os.path.join(pmu_dir, tracer)):
        raise Skip(f'no {tracer} PMU')
    # The benchmark measures TRBE: cs_etm with only an ETR or ETF sink
    # would trace, but not through the path it compares.
    if tracer == 'cs_etm' and not glob.glob(
            os.path.join(pmu_dir, 'cs_etm', 'sinks', 'trbe*')):
        raise Skip('no TRBE sink')
    cpumask = os.path.join(pmu_dir, tracer, 'cpumask')
    if os.path.isfile(cpumask) and os.access(cpumask, os.R_OK):
        cpus = read_text(cpumask)
        if not cpu_in_list(cpus, int(cpu)):
            raise Fatal(f'CPU {cpu} has no {tracer} (cpumask {cpus})',
                        USAGE_ERROR)


def run_teeing_stderr(argv: List[str], log: str) -> int:
    """Runs argv with its stderr on ours and in log: perf record reports
    lost AUX data there, and the log is read back for it."""
    # The child writes to our stdout directly: ours must come out first.
    sys.stdout.flush()
    with open(log, 'w') as f, subprocess.Popen(
            argv, stderr=subprocess.PIPE, text=True,
            errors='replace') as proc:
        assert proc.stderr is not None
        for line in proc.stderr:
            sys.stderr.write(line)
            f.write(line)
    return proc.returncode


def run_once(opts: Options, directory: str, i: int) -> None:
    """Run I: perf stat counts the workload, perf record traces perf stat
    and so the workload, all on one CPU."""
    print(f'== {os.path.basename(directory)} run {i}/{opts.runs} on CPU '
          f'{opts.cpu}, {opts.tracer}, AUX {opts.aux}')
    log = os.path.join(directory, f'record{i}.log')
    data = os.path.join(directory, f'record{i}.data')
    argv = ['taskset', '-c', opts.cpu, 'perf', 'record', '-e',
            f'{opts.tracer}//', '-m', f',{opts.aux}', '-o', data, '--',
            'perf', 'stat', '-x,', '-o', f'{directory}/run{i}.csv', '-e',
            EVENTS, '--', *opts.workload]
    if run_teeing_stderr(argv, log):
        raise Fatal(f'run {i} failed (see {log})')
    with open(log, errors='replace') as f:
        if 'lost' in f.read().lower():
            print(f'warning: run {i} lost trace data (see {log})',
                  file=sys.stderr)
    if not opts.keep:
        # The trace is only the load; its size would fill a board's disk.
        Path(data).unlink(missing_ok=True)


def run_phase(opts: Options, directory: str) -> None:
    # A phase is run again from scratch: stale runN.csv of an earlier,
    # longer run would enter the averages.
    shutil.rmtree(directory, ignore_errors=True)
    os.makedirs(directory)
    # The settings a comparison depends on, and what ran.
    Path(directory, 'settings').write_text(
        f'tracer={opts.tracer}\naux={opts.aux}\ncpu={opts.cpu}\n'
        f'runs={opts.runs}\nworkload={" ".join(opts.workload)}\n')
    now = datetime.datetime.now(datetime.timezone.utc)
    Path(directory, 'info').write_text(
        f'kernel={os.uname().release}\nperf={text(["perf", "--version"])}\n'
        f'{now.strftime("%Y-%m-%dT%H:%M:%SZ")}\n')
    for i in range(1, int(opts.runs) + 1):
        run_once(opts, directory, i)


def compare(out: str) -> int:
    for phase in ('before', 'after'):
        if not glob.glob(os.path.join(out, phase, 'run*.csv')):
            raise Fatal(f'no {phase} runs in {os.path.join(out, phase)}')
    # Other settings make the Diff. meaningless, yet the tables may help.
    before, after = (os.path.join(out, p, 'settings')
                     for p in ('before', 'after'))
    diff = list(difflib.unified_diff(
        [line + '\n' for line in read_text(before).splitlines()],
        [line + '\n' for line in read_text(after).splitlines()],
        before, after, n=0))
    if diff:
        print('warning: before and after ran with different settings:',
              file=sys.stderr)
        sys.stderr.writelines(diff)
    try:
        report, status = tlb_table.compare_dirs(os.path.join(out, 'before'),
                                                os.path.join(out, 'after'))
    except (OSError, ValueError) as e:
        raise Fatal(str(e)) from e
    print(report)
    Path(out, 'tables.txt').write_text(report + '\n')
    return status


def bench(opts: Options) -> int:
    if opts.phase == 'compare':
        return compare(opts.out)
    opts.cpu = opts.cpu or default_cpu()
    if not re.fullmatch(r'[0-9]+', opts.cpu):
        raise Fatal(f'bad CPU {opts.cpu}', USAGE_ERROR)
    check_board(os.environ.get('TLB_BENCH_PMU_DIR') or PMU_DIR,
                opts.tracer, opts.cpu)
    run_phase(opts, os.path.join(opts.out, opts.phase))
    if opts.phase == 'after' and os.path.isdir(os.path.join(opts.out,
                                                            'before')):
        return compare(opts.out)
    print(f'raw perf stat output: {opts.out}/{opts.phase}/run*.csv')
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    try:
        return bench(parse_args(sys.argv[1:] if argv is None else argv))
    except Usage as e:
        if str(e):
            print(f'tlb-bench: {e}', file=sys.stderr)
        print('usage: python3 -m perf_aux tlb-bench OPTIONS\n' +
              __doc__[__doc__.index('Options:'):], end='', file=sys.stderr)
        return USAGE_ERROR
    except Skip as e:
        print(f'SKIP: {e}')
        return KSFT_SKIP
    except Fatal as e:
        print(f'tlb-bench: error: {e}', file=sys.stderr)
        return e.status
