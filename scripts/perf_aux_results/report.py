# SPDX-License-Identifier: GPL-2.0
"""The report layer: out/report.md (results of every run so far, the mutation
matrix of scripts/mutants/<family>/[<base>/]<name>.patch run as
out/mutants/<name>-<base>-<target> beside baseline-<base>-<target>), the
vmap benchmark's ratios, and a check's measurements page from its log."""

import glob
import os
import platform
import re
import subprocess
from typing import Dict, List, NamedTuple, Optional, Set

from . import ktap
from .verdicts import SuiteVerdict, collect, run_verdicts

# Suites of other projects run on a mutant, counted apart from ours.
PEER_PREFIXES = ('peer.', 'perf_events.')

def md_table(head: List[str], rows: List[List[str]]) -> List[str]:
    return [f'| {" | ".join(head)} |', '|' + '---|' * len(head)] + [
        f'| {" | ".join(c.replace("|", chr(92) + "|") for c in row)} |'
        for row in rows]

def results_section(dirs: List[str]) -> List[str]:
    return ['## Results', ''] + md_table(
        ['run', 'suite', 'passed', 'failed', 'skipped'],
        [[ktap.name(d), r.name, str(r.passed), str(r.failures),
          str(r.skipped)] for d in dirs for r in collect(d)]) + [
        '', 'Raw KTAP: `out/results/<run>/<suite>.ktap`.']

def bench_lines(base: Dict[str, int], new: Dict[str, int]) -> List[str]:
    """One line per timing: base, new and base/new (>1: new is faster)."""
    lines = []
    for key in sorted(k for k in base if k in new and '_' in k):
        unit = key.rsplit('_', 1)[1]
        if unit in ('ns', 'usec'):
            ratio = base[key] / new[key] if new[key] else float('inf')
            lines.append(f'{key}: {base[key]} -> {new[key]} {unit}, '
                         f'{ratio:.2f}x')
    return lines

class MutantRow(NamedTuple):
    """One mutant patch on one target, with each suite's verdict."""
    group: str
    name: str
    description: str
    target: str = ''
    suites: Dict[str, SuiteVerdict] = {}

def is_peer(suite: str) -> bool:
    return suite.startswith(PEER_PREFIXES)

def mutant_patches(patches: str, base: str = '') -> List[MutantRow]:
    """A row a mutant of patches/<family>/, described by its patch's first
    line; <family>/<base>/<name>.patch is the base's own."""
    rows = []
    for family in sorted(glob.glob(os.path.join(patches, '*', ''))):
        found = {os.path.basename(p)[:-len('.patch')]: p
                 for d in [family] + ([os.path.join(family, base)]
                                      if base else [])
                 for p in sorted(glob.glob(os.path.join(d, '*.patch')))}
        for name, path in sorted(found.items()):
            first = ktap.read_text(path).split('\n', 1)[0].strip()
            rows.append(MutantRow(ktap.name(family), name,
                                  first.removeprefix('Mutant: ')))
    return rows

def beyond_baseline(suites: Dict[str, SuiteVerdict],
                    base: Dict[str, SuiteVerdict]) -> Dict[str, SuiteVerdict]:
    """Only what fails on the mutant and not on the unmutated kernel (the
    peers fail some cases on every kernel)."""
    new = {s: [c for c in v.cases if c not in base[s].cases]
           for s, v in suites.items() if s in base}
    return {s: SuiteVerdict(len(new[s]), new[s]) if s in new else v
            for s, v in suites.items()}

class Matrix(NamedTuple):
    """One base's matrix: a row a patch and target it ran on (a bare row
    if none)."""
    base: str
    rows: List[MutantRow]

    @property
    def mutants(self) -> int:
        return len({r.name for r in self.rows})

    def killed(self, peers: bool) -> Set[str]:
        """Mutant patches that a suite of ours (or a peer's) killed."""
        return {r.name for r in self.rows
                if any(v.killed for s, v in r.suites.items()
                       if is_peer(s) == peers)}

    @property
    def all_killed(self) -> bool:
        return len(self.killed(False)) == self.mutants

    def totals(self) -> List[str]:
        """The peers' line, then ours: 'K killed of N'."""
        peers = (f'{len(self.killed(True))} killed of {self.mutants} by the '
                 'peers' if any(is_peer(s) for r in self.rows
                                for s in r.suites) else 'peers not run')
        return [peers, f'{len(self.killed(False))} killed of {self.mutants}']

    def table(self) -> List[str]:
        """A row a mutant, a column a suite (ours, then the peers')."""
        suites = sorted({s for r in self.rows for s in r.suites},
                        key=lambda s: (is_peer(s), s))
        return md_table(
            ['group', 'mutant', 'description', 'target'] + suites,
            [[r.group, r.name, r.description, r.target or '—']
             + [cell(r.suites.get(s)) for s in suites] for r in self.rows])

def cell(v: Optional[SuiteVerdict]) -> str:
    if v is None or not v.killed:
        return 'not run' if v is None else 'survived'
    return f'killed ({v.failed} failed' + (
        f': {", ".join(v.cases[:2])})' if v.cases else ')')

def matrices(mutants: str, patches: str) -> List[Matrix]:
    """A matrix per base that mutants ran on (the newest first), or one."""
    found = []
    for base in [b for b in ktap.by_base(ktap.run_dirs(mutants)) if b] or ['']:
        rows = []
        for patch in mutant_patches(patches, base):
            ran = [(d, ktap.parts(d).target) for d in ktap.run_dirs(mutants)
                   if ktap.parts(d)[:2] == (patch.name, base)]
            rows += [patch._replace(target=t, suites=beyond_baseline(
                run_verdicts(d), run_verdicts(
                    os.path.join(mutants, f'baseline-{base}-{t}'))))
                for d, t in ran] or [patch]
        found.append(Matrix(base, rows))
    return found

def matrix_section(mutants: str, patches: str) -> List[str]:
    out = ['## Mutation matrix', '',
           'Each kernel mutant under `scripts/mutants/`: the suites run on '
           'it and whether they caught it (any failure or crash kills).']
    for m in matrices(mutants, patches):
        peers, ours = m.totals()
        out += (['', f'### base {m.base}'] if m.base else []) + [''] + \
            m.table() + ['', f'**{ours}**', '', peers]
    return out

def write_report(path: str, dirs: List[str], mutants: str, patches: str
                 ) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    sections = [['# perf_aux acceptance report'], results_section(dirs)]
    if os.path.isdir(mutants):
        sections.append(matrix_section(mutants, patches))
    with open(path, 'w') as f:
        f.write('\n\n'.join('\n'.join(s) for s in sections) + '\n')

# perf_aux's stage(): "<== NAME: N s[, exit RC]"; the stage table's rows
# "  1234 s  NAME".
STAGE_END = re.compile(r'^<== (.+): (\d+) s(?:, exit (\d+))?$')
STAGE_TIME = re.compile(r'^\s*(\d+) s  (.+)$')
COUNTS = re.compile(r'^\d+ passed, \d+ failed, \d+ skipped$')
REUSED = ' built earlier in this check, unchanged'

class Step(NamedTuple):
    name: str
    secs: int
    rc: Optional[int] = None
    ccache: Optional[str] = None

class Measured(NamedTuple):
    stages: List[Step]
    builds: List[Step]
    reused: List[str]
    boots: List[Step]
    suites: List[str]
    failures: List[str]
    counts: Optional[str]

def parse_log(lines: List[str]) -> Measured:
    """A check's log: its stage table, builds, boots, results lines."""
    m = Measured([], [], [], [], [], [], None)
    counts = ccache = None
    in_table = False
    for line in (raw.rstrip('\n') for raw in lines):
        end = STAGE_END.match(line)
        row = in_table and STAGE_TIME.match(line)
        in_table = bool(row) or line == 'stage times:'
        if line.startswith('ccache: '):
            ccache = line[len('ccache: '):]
        elif line.startswith('build ') and line.endswith(REUSED):
            m.reused.append(line[len('build '):-len(REUSED) - 1])
        elif end and end[1].startswith('build '):
            m.builds.append(Step(end[1][len('build '):], int(end[2]),
                                 end[3] and int(end[3]), ccache))
            ccache = None
        elif end and end[1].startswith(('boot ', 'KUnit ')):
            m.boots.append(Step(end[1], int(end[2]), end[3] and int(end[3])))
        elif row:
            m.stages.append(Step(row[2], int(row[1])))
        elif line.startswith(('suites: ', 'failed: ')):
            (m.suites if line[0] == 's' else m.failures).append(line[8:])
        elif COUNTS.match(line):
            counts = line
    return m._replace(counts=counts)

def duration(step: Step) -> str:
    """A step's time, and its exit status when it failed."""
    s = step.secs
    return f'{s} s' + (f' ({s // 60} min {s % 60} s)' if s >= 60 else '') + (
        '' if step.rc is None else f', exit {step.rc}')

def render_measurements(m: Measured, tier: str, header: Dict[str, str]
                        ) -> str:
    out = [f'# `make {tier}`: what it measured', '', f'Generated by make '
           f'{tier} from its log, out/logs/{tier}.log; rerun it to '
           'reproduce.', ''] + [f'- {k}: {v}' for k, v in header.items()]
    out += ['', '## Stages', ''] + md_table(['stage', 'time'], [
        [s.name, duration(s)] for s in m.stages])
    out += ['', '## Kernel builds', ''] + (md_table(
        ['build', 'time', 'ccache'],
        [[b.name, duration(b), b.ccache or '—'] for b in m.builds])
        if m.builds else ['None in this check.'])
    if m.reused:
        out += ['', f'Reused within the check, not rebuilt: {len(m.reused)} '
                '(' + ', '.join(sorted(set(m.reused))) + ').']
    out += ['', '## Boots', ''] + (md_table(['boot', 'time'], [
        [b.name, duration(b)] for b in m.boots]) if m.boots
        else ['None in this check.'])
    out += ['', '## Results', ''] + [f'- {s}' for s in m.suites]
    if m.failures:
        out += ['', 'Failed checks:', ''] + [f'- {f}' for f in m.failures]
    return '\n'.join(out + ['', m.counts or
                            'no closing line: the check did not finish', ''])

def write_measurements(log: str, tier: str, out: str, stages: str) -> None:
    with open(log, encoding='utf-8', errors='replace') as f:
        measured = parse_log(f.readlines())
    mem = os.sysconf('SC_PHYS_PAGES') * os.sysconf('SC_PAGE_SIZE') >> 30
    commit = subprocess.run(['git', '-C', ktap.ROOT, 'describe', '--always',
                             '--dirty'], capture_output=True, text=True)
    header = {'commit': commit.stdout.strip() or 'unknown',
              'stages': stages or 'all of the tier',
              'machine': f'{os.cpu_count()} CPUs, {mem} GiB, '
              f'{platform.machine()}'}
    os.makedirs(os.path.dirname(out) or '.', exist_ok=True)
    with open(out, 'w', encoding='utf-8') as f:
        f.write(render_measurements(measured, tier, header))
