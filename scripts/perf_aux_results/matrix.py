# SPDX-License-Identifier: GPL-2.0
"""The mutation matrix, per base: which suite killed which kernel mutant
(scripts/mutants/<family>/[<base>/]<name>.patch) in its run directory
out/mutants/<name>-<base>-<target>, beyond what fails on the unmutated
kernel, baseline-<base>-<target>."""

import glob
import os
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set

from . import formats, runs
from .ktap import read_text
from .verdicts import SuiteVerdict, run_verdicts

# Suites of other projects run on a mutant, counted apart from ours.
PEER_PREFIXES = ('peer.', 'perf_events.')


@dataclass
class MutantRow:
    """One mutant patch on one target, with each suite's verdict."""
    group: str
    name: str
    description: str
    target: str = ''
    suites: Dict[str, SuiteVerdict] = field(default_factory=dict)


def is_peer(suite: str) -> bool:
    return suite.startswith(PEER_PREFIXES)


def mutant_patches(patches: str, base: str = '') -> List[MutantRow]:
    """A row a mutant of patches/<family>/, described by its patch's first
    line; <family>/<base>/<name>.patch is the base's own."""
    rows = []
    for family in sorted(glob.glob(os.path.join(patches, '*', ''))):
        found: Dict[str, str] = {}
        for d in [family] + ([os.path.join(family, base)] if base else []):
            for path in glob.glob(os.path.join(d, '*.patch')):
                found[os.path.basename(path)[:-len('.patch')]] = path
        for name, path in sorted(found.items()):
            first = read_text(path).split('\n', 1)[0].strip()
            rows.append(MutantRow(runs.name(family), name,
                                  formats.MUTANT_HEADER.sub('', first)))
    return rows


def beyond_baseline(suites: Dict[str, SuiteVerdict],
                    base: Dict[str, SuiteVerdict]) -> Dict[str, SuiteVerdict]:
    """Only what fails on the mutant and not on the unmutated kernel (the
    peers fail some cases on every kernel)."""
    out = {}
    for suite, v in suites.items():
        b = base.get(suite)
        if b is None:
            out[suite] = v
            continue
        new = [c for c in v.cases if c not in b.cases]
        out[suite] = SuiteVerdict(len(new), new)
    return out


def matrix_rows(mutants: str, patches: str, base: str) -> List[MutantRow]:
    """A row a patch and target it ran on at base; a bare row if none."""
    rows = []
    dirs = [d for d in runs.run_dirs(mutants) if runs.parts(d).base == base]
    for patch in mutant_patches(patches, base):
        ran = [d for d in dirs if runs.parts(d).kernel == patch.name]
        for d in ran:
            target = runs.parts(d).target
            baseline = os.path.join(mutants, f'baseline-{base}-{target}')
            rows.append(MutantRow(patch.group, patch.name, patch.description,
                                  target, beyond_baseline(
                                      run_verdicts(d),
                                      run_verdicts(baseline))))
        if not ran:
            rows.append(patch)
    return rows


def cell(verdict: Optional[SuiteVerdict]) -> str:
    if verdict is None:
        return 'not run'
    if not verdict.killed:
        return 'survived'
    names = ', '.join(verdict.cases[:2])
    return f'killed ({verdict.failed} failed' + (f': {names})' if names
                                                  else ')')


def table(rows: List[MutantRow]) -> List[str]:
    """Markdown: a row a mutant, a column a suite (ours, then peers)."""
    suites = sorted({s for r in rows for s in r.suites},
                    key=lambda s: (is_peer(s), s))
    out = ['| group | mutant | description | target | '
           + ' | '.join(suites) + ' |',
           '|---|---|---|---|' + '---|' * len(suites)]
    for r in rows:
        out.append(f'| {r.group} | {r.name} | {formats.md_cell(r.description)}'
                   f' | {r.target or "—"} | '
                   + ' | '.join(cell(r.suites.get(s)) for s in suites) + ' |')
    return out


@dataclass
class Matrix:
    """One base's matrix and its kill counts."""
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
        """The peers' line, then ours last: 'K killed of N'."""
        if any(is_peer(s) for r in self.rows for s in r.suites):
            peers = (f'{len(self.killed(True))} killed of {self.mutants} by '
                     'the peers')
        else:
            peers = 'peers not run'
        return [peers, f'{len(self.killed(False))} killed of {self.mutants}']


def matrices(mutants: str, patches: str) -> List[Matrix]:
    """A matrix per base that mutants ran on (the newest first), or one."""
    bases = [b for b in runs.by_base(runs.run_dirs(mutants)) if b] or ['']
    return [Matrix(b, matrix_rows(mutants, patches, b)) for b in bases]


def section(mutants: str, patches: str) -> List[str]:
    """The report's section: a table and the kill counts per base."""
    out = ['## Mutation matrix', '',
           'Each kernel mutant under `scripts/mutants/`: the suites run on '
           'it and whether they caught it (any failure or crash kills).']
    for m in matrices(mutants, patches):
        peers, ours = m.totals()
        if m.base:
            out += ['', f'### base {m.base}']
        out += [''] + table(m.rows) + ['', f'**{ours}**', '', peers]
    return out
