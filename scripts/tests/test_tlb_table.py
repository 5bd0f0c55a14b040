#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host tests of perf_aux.tlb_table, the tables of the TLB benchmark."""

import json
import os
import sys
import tempfile
import unittest
from typing import Any, Dict, List, Mapping, Sequence

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..'))
from perf_aux import tlb_table  # noqa: E402
from perf_aux.tlb_table import Reading, Status  # noqa: E402

DATA = os.path.join(os.path.dirname(__file__), 'test_data', 'tlb')
PUBLISHED = os.path.join(DATA, 'published.json')


def read(name: str) -> str:
    with open(os.path.join(DATA, name)) as f:
        return f.read()


def perf_stat_csv(counts: Mapping[str, object]) -> str:
    """A perf stat -x, file; a value may be '<not counted>' etc."""
    lines = ['# started on Tue Sep 22 10:00:00 2026', '']
    for event, value in counts.items():
        lines.append(f'{value},,{event},2004556,100.00,,')
    return '\n'.join(lines) + '\n'


def write_phase(root: str, name: str,
                runs: Sequence[Mapping[str, object]]) -> str:
    directory = os.path.join(root, name)
    os.mkdir(directory)
    for i, counts in enumerate(runs, 1):
        with open(os.path.join(directory, f'run{i}.csv'), 'w') as f:
            f.write(perf_stat_csv(counts))
    return directory


def load_published(path: str) -> Dict[str, List[tlb_table.EventTable]]:
    """The published tables, {tracer: [EventTable]}: the runs where
    published, else the averages alone."""
    tables: Dict[str, List[tlb_table.EventTable]] = {}
    with open(path) as f:
        for entry in json.load(f)['tables']:
            sides = []
            for name in ('before', 'after'):
                runs = [Reading(Status.COUNTED, float(v))
                        for v in entry[name].get('runs') or []]
                sides += [runs, tlb_table.average(runs) if runs
                          else float(entry[name]['avg'])]
            tables.setdefault(entry['tracer'], []).append(
                tlb_table.EventTable(entry['event'], sides[0], sides[2],
                                     sides[1], sides[3]))
    return tables


class PublishedNumbersTest(unittest.TestCase):
    """The published results, reproduced from test_data/tlb/published.json."""

    def setUp(self) -> None:
        with open(PUBLISHED) as f:
            self.entries = json.load(f)['tables']
        self.tables = load_published(PUBLISHED)

    def published(self, tracer: str, event: str) -> Dict[str, Any]:
        for entry in self.entries:
            if (entry['tracer'], entry['event']) == (tracer, event):
                return dict(entry)
        raise KeyError((tracer, event))

    def table(self, tracer: str, event: str) -> tlb_table.EventTable:
        return next(t for t in self.tables[tracer] if t.event == event)

    def test_spe_l2d_tlb_refill_averages(self) -> None:
        table = self.table('SPE', 'l2d_tlb_refill')
        self.assertEqual((4796.0, 2931.2), (table.before_avg, table.after_avg))

    def test_spe_l2d_tlb_refill_diff(self) -> None:
        table = self.table('SPE', 'l2d_tlb_refill')
        published = self.published('SPE', 'l2d_tlb_refill')['diff']
        assert table.diff is not None
        self.assertAlmostEqual(float(published.rstrip('%')), table.diff,
                               delta=0.01)
        self.assertEqual(published, tlb_table.format_diff(table.diff))

    def test_every_published_diff(self) -> None:
        for entry in self.entries:
            table = self.table(entry['tracer'], entry['event'])
            with self.subTest(tracer=entry['tracer'], event=entry['event']):
                self.assertEqual(entry['diff'],
                                 tlb_table.format_diff(table.diff))

    def test_the_published_table(self) -> None:
        self.assertIn('l2d_tlb_refill\n'
                      '|        |    Avg. |\n'
                      '|--------|---------|\n'
                      '| before |  4796.0 |\n'
                      '| after  |  2931.2 |\n'
                      '| Diff.  | -38.88% |',
                      tlb_table.format_report(self.tables['SPE']))


class ParsePerfStatTest(unittest.TestCase):
    def setUp(self) -> None:
        self.readings = tlb_table.parse_perf_stat_csv(
            read('perf-stat-hybrid.csv'))

    def test_not_supported_is_missing_not_zero(self) -> None:
        self.assertEqual(Reading(Status.NOT_SUPPORTED),
                         self.readings['dtlb_walk'])
        self.assertIsNone(self.readings['dtlb_walk:u'].value)

    def test_not_counted_is_missing_not_zero(self) -> None:
        self.assertEqual(Reading(Status.NOT_COUNTED),
                         self.readings['l2d_tlb_refill:u'])

    def test_counted_events(self) -> None:
        self.assertEqual(Reading(Status.COUNTED, 4796.0),
                         self.readings['l2d_tlb_refill'])
        self.assertEqual(Reading(Status.COUNTED, 9512.0),
                         self.readings['l1d_tlb_refill'])

    def test_pmu_names_are_normalized(self) -> None:
        self.assertEqual(sorted(tlb_table.EVENTS), sorted(self.readings))

    def test_hybrid_pmus_counted_are_added(self) -> None:
        self.assertEqual(Reading(Status.COUNTED, 9024.0),
                         self.readings['l1d_tlb_refill:u'])

    def test_hybrid_pmu_not_counted_is_ignored(self) -> None:
        self.assertEqual(Reading(Status.COUNTED, 182311.0),
                         self.readings['l1d_tlb'])
        self.assertEqual(Reading(Status.COUNTED, 81234.0),
                         self.readings['l1d_tlb:u'])


class CompareTest(unittest.TestCase):
    BEFORE = [100, 110, 120, 130, 140]
    AFTER = [60, 55, 60, 65, 60]

    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def phases(self, before: Sequence[Mapping[str, object]],
               after: Sequence[Mapping[str, object]]) -> List[str]:
        return [write_phase(self.tmp.name, 'before', before),
                write_phase(self.tmp.name, 'after', after)]

    def compare(self, before: Sequence[Mapping[str, object]],
                after: Sequence[Mapping[str, object]]
                ) -> List[tlb_table.EventTable]:
        dirs = self.phases(before, after)
        return tlb_table.build_tables(tlb_table.load_phase('before', dirs[0]),
                                      tlb_table.load_phase('after', dirs[1]))

    def test_averages_and_diff(self) -> None:
        tables = self.compare([{'l2d_tlb_refill': v} for v in self.BEFORE],
                              [{'l2d_tlb_refill': v} for v in self.AFTER])
        self.assertEqual(['l2d_tlb_refill'], [t.event for t in tables])
        self.assertEqual((120.0, 60.0),
                         (tables[0].before_avg, tables[0].after_avg))
        self.assertEqual('-50.00%', tlb_table.format_diff(tables[0].diff))

    def test_table_layout(self) -> None:
        tables = self.compare([{'l2d_tlb_refill:u': v} for v in self.BEFORE],
                              [{'l2d_tlb_refill:u': v} for v in self.AFTER])
        self.assertEqual(
            'l2d_tlb_refill:u\n'
            '|        | Run1 | Run2 | Run3 | Run4 | Run5 |    Avg. |\n'
            '|--------|------|------|------|------|------|---------|\n'
            '| before |  100 |  110 |  120 |  130 |  140 |   120.0 |\n'
            '| after  |   60 |   55 |   60 |   65 |   60 |    60.0 |\n'
            '| Diff.  |      |      |      |      |      | -50.00% |',
            tlb_table.format_table(tables[0]))

    def test_published_events_come_first_in_order(self) -> None:
        run = {'cycles': 1, 'l2d_tlb_refill': 4, 'dtlb_walk:u': 3,
               'dtlb_walk': 2}
        tables = self.compare([run], [run])
        self.assertEqual(['dtlb_walk', 'l2d_tlb_refill', 'dtlb_walk:u',
                          'cycles'], [t.event for t in tables])

    def test_not_counted_run_makes_the_event_missing(self) -> None:
        before: List[Dict[str, object]] = [{'l1d_tlb': v}
                                           for v in self.BEFORE]
        before[2] = {'l1d_tlb': '<not counted>'}
        tables = self.compare(before, [{'l1d_tlb': v} for v in self.AFTER])
        self.assertIsNone(tables[0].before_avg)
        self.assertIsNone(tables[0].diff)
        self.assertEqual(['l1d_tlb'], tlb_table.missing_events(tables))
        text = tlb_table.format_table(tables[0])
        self.assertIn('| before |  100 |  110 | <not counted> |', text)
        self.assertIn('n/a', text)
        self.assertNotIn('-100.00%', text)

    def test_event_missing_from_a_run_file(self) -> None:
        tables = self.compare([{'l1d_tlb': 1}, {}], [{'l1d_tlb': 1}] * 2)
        self.assertIsNone(tables[0].diff)
        self.assertIn('| missing |', tlb_table.format_table(tables[0]))

    def test_runs_are_read_in_numeric_order(self) -> None:
        before = [{'l1d_tlb': i} for i in range(1, 12)]
        tables = self.compare(before, before)
        self.assertEqual([float(i) for i in range(1, 12)],
                         [r.value for r in tables[0].before if r])

    def test_compare_command_fails_on_missing_events(self) -> None:
        dirs = self.phases([{'dtlb_walk': '<not supported>',
                             'l1d_tlb': 10}],
                           [{'dtlb_walk': '<not supported>',
                             'l1d_tlb': 5}])
        report, status = tlb_table.compare_dirs(*dirs)
        self.assertEqual(1, status)
        self.assertIn('missing (not counted in every run): dtlb_walk', report)
        self.assertIn('-50.00%', report)

    def test_compare_command_succeeds(self) -> None:
        dirs = self.phases([{'l1d_tlb': 10}], [{'l1d_tlb': 5}])
        self.assertEqual(0, tlb_table.compare_dirs(*dirs)[1])

    def test_phase_without_runs_is_an_error(self) -> None:
        empty = os.path.join(self.tmp.name, 'empty')
        os.mkdir(empty)
        with self.assertRaises(ValueError):
            tlb_table.load_phase('before', empty)


if __name__ == '__main__':
    unittest.main()
