# SPDX-License-Identifier: GPL-2.0
"""Before/after tables of the TLB benchmark (perf_aux.tlb_bench).

  python3 -m perf_aux.tlb_table compare OUT/before OUT/after
      tables from perf stat -x, files (tlb-bench -p compare -o OUT too)
  python3 -m perf_aux.tlb_table fixture FILE.json
      tables from published numbers

A phase directory holds one `perf stat -x,` file per run (run1.csv,
run2.csv, ...). Each event gets a table: the runs and their average for the
"before" and "after" kernels, then Diff. = (after - before) / before * 100.
An event perf could not count (<not supported>, <not counted>) is reported
missing, never as 0: a 0 would pass for a 100 % improvement.
"""

import argparse
import csv
import enum
import json
import os
import re
import sys
from dataclasses import dataclass, field
from typing import (Callable, Dict, Iterable, List, Optional, Sequence,
                    Tuple)

# The events of the published method, each also in its user-only (:u) form.
TLB_EVENTS = ('dtlb_walk', 'l1d_tlb', 'l1d_tlb_refill', 'l2d_tlb_refill')
EVENTS = TLB_EVENTS + tuple(e + ':u' for e in TLB_EVENTS)

RUN_FILE = re.compile(r'^run(\d+)\.csv$')
# perf names an event of a named PMU "pmu/event/modifiers" on some systems
# (e.g. armv8_cortex_a76/l2d_tlb_refill/u on big.LITTLE).
PMU_EVENT = re.compile(r'^[^/]+/([^/]+)/([a-zA-Z]*)$')


class Status(enum.Enum):
    COUNTED = 'counted'
    NOT_COUNTED = '<not counted>'
    NOT_SUPPORTED = '<not supported>'


@dataclass
class Reading:
    """One event of one run."""
    status: Status
    value: Optional[float] = None


@dataclass
class Phase:
    """The runs of one kernel: for each run, event -> Reading."""
    name: str
    runs: List[Dict[str, Reading]] = field(default_factory=list)
    avg: Dict[str, float] = field(default_factory=dict)  # published only

    def values(self, event: str) -> List[Optional[Reading]]:
        return [run.get(event) for run in self.runs]


@dataclass
class EventTable:
    event: str
    before: List[Optional[Reading]]
    after: List[Optional[Reading]]
    before_avg: Optional[float]
    after_avg: Optional[float]

    @property
    def diff(self) -> Optional[float]:
        if self.before_avg is None or self.after_avg is None:
            return None
        return diff_percent(self.before_avg, self.after_avg)


def normalize_event(name: str) -> str:
    """'armv8_pmuv3_0/l2d_tlb_refill/u' -> 'l2d_tlb_refill:u'."""
    m = PMU_EVENT.match(name)
    if not m:
        return name
    event, mods = m.groups()
    return f'{event}:{mods}' if mods else event


def parse_perf_stat_csv(text: str) -> Dict[str, Reading]:
    """Readings of one `perf stat -x,` output, by normalized event name.

    Lines for the same event on several PMUs (hybrid CPUs) are added up; the
    event is missing only if no PMU counted it.
    """
    readings: Dict[str, Reading] = {}
    for row in csv.reader(text.splitlines()):
        if not row or row[0].startswith('#') or len(row) < 3:
            continue
        value, event = row[0].strip(), normalize_event(row[2].strip())
        if value in (Status.NOT_COUNTED.value, Status.NOT_SUPPORTED.value):
            reading = Reading(Status(value))
        else:
            try:
                reading = Reading(Status.COUNTED, float(value))
            except ValueError:
                continue
        old = readings.get(event)
        if old is None or (old.status != Status.COUNTED and
                           reading.status == Status.COUNTED):
            readings[event] = reading
        elif old.value is not None and reading.value is not None:
            readings[event] = Reading(Status.COUNTED,
                                      old.value + reading.value)
    return readings


def load_phase(name: str, directory: str) -> Phase:
    """All runN.csv files of a phase directory, in run order."""
    runs = []
    for entry in os.listdir(directory):
        m = RUN_FILE.match(entry)
        if m:
            runs.append((int(m.group(1)), entry))
    if not runs:
        raise ValueError(f'{directory}: no run<N>.csv files')
    phase = Phase(name)
    for _, entry in sorted(runs):
        with open(os.path.join(directory, entry)) as f:
            phase.runs.append(parse_perf_stat_csv(f.read()))
    return phase


def average(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def diff_percent(before: float, after: float) -> float:
    return (after - before) / before * 100.0


def phase_average(phase: Phase, event: str) -> Optional[float]:
    """Average of the runs, None unless every run counted the event."""
    if event in phase.avg:
        return phase.avg[event]
    readings = phase.values(event)
    if not readings or any(r is None or r.status != Status.COUNTED
                           for r in readings):
        return None
    return average([r.value for r in readings if r and r.value is not None])


def build_tables(before: Phase, after: Phase,
                 events: Optional[Iterable[str]] = None) -> List[EventTable]:
    """One table per event: the published events first, then any other."""
    if events is None:
        seen: List[str] = list(EVENTS)
        for phase in (before, after):
            for run in phase.runs:
                seen += [e for e in run if e not in seen]
            seen += [e for e in phase.avg if e not in seen]
        events = [e for e in seen if has_event(before, e) or
                  has_event(after, e)]
    return [EventTable(e, before.values(e), after.values(e),
                       phase_average(before, e), phase_average(after, e))
            for e in events]


def has_event(phase: Phase, event: str) -> bool:
    return event in phase.avg or any(event in run for run in phase.runs)


def format_count(value: float) -> str:
    return f'{value:.0f}' if value == int(value) else f'{value:.1f}'


def format_reading(reading: Optional[Reading]) -> str:
    if reading is None:
        return 'missing'
    if reading.status != Status.COUNTED or reading.value is None:
        return reading.status.value
    return format_count(reading.value)


def format_diff(diff: Optional[float]) -> str:
    return 'n/a' if diff is None else f'{diff:+.2f}%'


def format_table(table: EventTable) -> str:
    """The published layout: Run1..RunN, Avg. per kernel, then Diff."""
    nr_runs = max(len(table.before), len(table.after))
    header = ['', *[f'Run{i + 1}' for i in range(nr_runs)], 'Avg.']
    rows = [header]
    for name, readings, avg in (('before', table.before, table.before_avg),
                                ('after', table.after, table.after_avg)):
        cells = [format_reading(r) for r in readings]
        cells += ['-'] * (nr_runs - len(cells))
        rows.append([name, *cells,
                     'n/a' if avg is None else f'{avg:.1f}'])
    rows.append(['Diff.', *[''] * nr_runs, format_diff(table.diff)])
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = [table.event]
    for i, row in enumerate(rows):
        lines.append('| ' + ' | '.join(cell.rjust(w) if j else cell.ljust(w)
                                       for j, (cell, w) in
                                       enumerate(zip(row, widths))) + ' |')
        if i == 0:
            lines.append('|' + '|'.join('-' * (w + 2) for w in widths) + '|')
    return '\n'.join(lines)


def missing_events(tables: Iterable[EventTable]) -> List[str]:
    return [t.event for t in tables if t.diff is None]


def format_report(tables: List[EventTable]) -> str:
    text = '\n\n'.join(format_table(t) for t in tables)
    missing = missing_events(tables)
    if missing:
        text += '\n\nmissing (not counted in every run): ' + ', '.join(missing)
    return text


def load_fixture(path: str) -> Dict[str, List[EventTable]]:
    """Published tables: {tracer: [EventTable]} (see test_data/tlb/)."""
    with open(path) as f:
        data = json.load(f)
    result: Dict[str, List[EventTable]] = {}
    for entry in data['tables']:
        phases = []
        for name in ('before', 'after'):
            published = entry[name]
            phase = Phase(name)
            for value in published.get('runs') or []:
                phase.runs.append({entry['event']:
                                   Reading(Status.COUNTED, float(value))})
            if not phase.runs:
                phase.avg[entry['event']] = float(published['avg'])
            phases.append(phase)
        result.setdefault(entry['tracer'], []).extend(
            build_tables(phases[0], phases[1], [entry['event']]))
    return result


def compare_dirs(before: str, after: str) -> Tuple[str, int]:
    """The report of two phase directories and its exit status: 1 when an
    event is missing, since a table without its Diff. proves nothing."""
    tables = build_tables(load_phase('before', before),
                          load_phase('after', after))
    return format_report(tables), 1 if missing_events(tables) else 0


def cmd_compare(args: argparse.Namespace) -> int:
    report, status = compare_dirs(args.before, args.after)
    print(report)
    return status


def cmd_fixture(args: argparse.Namespace) -> int:
    for tracer, tables in load_fixture(args.file).items():
        print(f'{tracer}\n\n{format_report(tables)}\n')
    return 0


HANDLERS: Dict[str, Callable[[argparse.Namespace], int]] = {
    'compare': cmd_compare,
    'fixture': cmd_fixture,
}


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest='command', required=True)
    compare = sub.add_parser('compare', help='tables of two phase dirs')
    compare.add_argument('before')
    compare.add_argument('after')
    fixture = sub.add_parser('fixture', help='tables of published numbers')
    fixture.add_argument('file')
    args = parser.parse_args(argv)
    return HANDLERS[args.command](args)


if __name__ == '__main__':
    sys.exit(main())
