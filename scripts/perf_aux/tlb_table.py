# SPDX-License-Identifier: GPL-2.0
"""The before/after tables of the TLB benchmark (perf_aux.tlb_bench): per
event the runs of each kernel, their average and Diff. = (after - before)
/ before.  An event perf could not count is missing, never 0 (a 0 would
pass for a 100 % improvement)."""

import csv
import enum
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

# The events of the published method, each also in its user-only form.
TLB_EVENTS = ('dtlb_walk', 'l1d_tlb', 'l1d_tlb_refill', 'l2d_tlb_refill')
EVENTS = TLB_EVENTS + tuple(e + ':u' for e in TLB_EVENTS)
RUN_FILE = re.compile(r'^run(\d+)\.csv$')
# "pmu/event/modifiers", as perf names some events on big.LITTLE.
PMU_EVENT = re.compile(r'^[^/]+/([^/]+)/([a-zA-Z]*)$')
Run = Dict[str, 'Reading']


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
        return (self.after_avg - self.before_avg) / self.before_avg * 100.0


def parse_perf_stat_csv(text: str) -> Run:
    """The readings of one `perf stat -x,` output by event, those of
    several PMUs (hybrid CPUs) added up."""
    readings: Run = {}
    for row in csv.reader(text.splitlines()):
        if not row or row[0].startswith('#') or len(row) < 3:
            continue
        value, event = row[0].strip(), row[2].strip()
        m = PMU_EVENT.match(event)
        if m:
            event = f'{m.group(1)}:{m.group(2)}' if m.group(2) else m.group(1)
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


def load_phase(name: str, directory: str) -> List[Run]:
    """The runN.csv files of a phase directory, in run order."""
    runs = sorted((int(m.group(1)), m.group(0)) for m in
                  map(RUN_FILE.match, os.listdir(directory)) if m)
    if not runs:
        raise ValueError(f'{directory}: no run<N>.csv files')
    return [parse_perf_stat_csv(Path(directory, f).read_text())
            for _, f in runs]


def average(readings: Sequence[Optional[Reading]]) -> Optional[float]:
    """The runs' average, None unless every run counted the event."""
    if not readings or any(r is None or r.status != Status.COUNTED
                           for r in readings):
        return None
    return sum(r.value for r in readings) / len(readings)


def build_tables(before: List[Run], after: List[Run]) -> List[EventTable]:
    """A table per event: the published events first, then any other."""
    seen = list(EVENTS)
    for run in before + after:
        seen += [e for e in run if e not in seen]
    tables = []
    for e in seen:
        if any(e in run for run in before + after):
            b, a = [r.get(e) for r in before], [r.get(e) for r in after]
            tables.append(EventTable(e, b, a, average(b), average(a)))
    return tables


def format_reading(reading: Optional[Reading]) -> str:
    if reading is None:
        return 'missing'
    if reading.status != Status.COUNTED or reading.value is None:
        return reading.status.value
    v = reading.value
    return f'{v:.0f}' if v == int(v) else f'{v:.1f}'


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
        rows.append([name, *cells, 'n/a' if avg is None else f'{avg:.1f}'])
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


def compare_dirs(before: str, after: str) -> Tuple[str, int]:
    """The report of two phase directories and its status: 1 when an
    event is missing (a table without its Diff. proves nothing)."""
    tables = build_tables(load_phase('before', before),
                          load_phase('after', after))
    return format_report(tables), 1 if missing_events(tables) else 0
