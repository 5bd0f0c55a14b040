# SPDX-License-Identifier: GPL-2.0
"""The acceptance report of every run so far, in Markdown: kernels,
results, the kernels of each base side by side (translation entries, vmap
benchmark), and the mutation matrix: per base, which suite killed which
kernel mutant (scripts/mutants/<family>/[<base>/]<name>.patch, run in
out/mutants/<name>-<base>-<target>) beyond what fails on the unmutated
kernel, baseline-<base>-<target>."""

import glob
import os
from typing import Callable, Dict, List, NamedTuple, Optional, Set, Tuple

from . import ktap, runs
from .verdicts import SuiteVerdict, collect, run_verdicts

KERNEL_ORDER = {'stock': 0, 'reference': 1}
# Suites of other projects run on a mutant, counted apart from ours.
PEER_PREFIXES = ('peer.', 'perf_events.')


def md_cell(text: str) -> str:
    return text.replace('|', '\\|')


def md_table(head: List[str], align: List[str], rows: List[List[str]]
             ) -> List[str]:
    return [f'| {" | ".join(head)} |', '|' + '|'.join(align) + '|'] + [
        f'| {" | ".join(row)} |' for row in rows]


def kernel_section(dirs: List[str], logs: str) -> List[str]:
    rows = []
    for d in dirs:
        version, page = runs.kernel_info(os.path.join(
            logs, f'{runs.name(d)}-kselftest.log'))
        p = runs.parts(d)
        rows.append([runs.name(d), p.kernel, p.base or '—', p.target,
                     p.variant, md_cell(runs.source(d)), version, page])
    return ['## Kernel', ''] + md_table(
        ['run', 'kernel', 'base', 'target', 'variant', 'source', 'version',
         'page size'], ['---'] * 8, rows) + [
        '', 'The source from `<run>/source.txt` (what `make run` built), '
        'the version and page size from `PERF_AUX: kernel` in '
        f'`{runs.name(logs)}/<run>-kselftest.log`; the variant names the '
        'boot parameter or configuration (README, `VARIANT`).']


def results_section(dirs: List[str]) -> List[str]:
    return ['## Results', ''] + md_table(
        ['run', 'suite', 'passed', 'failed', 'skipped'],
        ['---', '---', '---:', '---:', '---:'],
        [[runs.name(d), r.name, str(r.passed), str(r.failures),
          str(r.skipped)] for d in dirs for r in collect(d)]) + [
        '', 'Raw KTAP: `out/results/<run>/<suite>.ktap`, a run being '
        '`<kernel>-<base>-<target>[-<variant>]`.']


def comparisons(dirs: List[str]) -> List[Tuple[str, Dict[str, str]]]:
    """For each base (the newest first), the runs of each target and
    variant, {kernel: run}, stock first."""
    out = []
    for base, group in runs.by_base(dirs).items():
        setups: Dict[str, Dict[str, str]] = {}
        for d in group:
            p = runs.parts(d)
            setups.setdefault(p.setup or p.kernel, {})[p.kernel] = d
        for setup, kernels in sorted(setups.items()):
            order = sorted(kernels, key=lambda k: (KERNEL_ORDER.get(k, 2), k))
            out.append((f'base {base}: {setup}' if base else setup,
                        {k: kernels[k] for k in order}))
    return out


def short_names(names: List[str]) -> Dict[str, str]:
    """Names without a last dotted component they all share."""
    tails = {n.rsplit('.', 1)[-1] for n in names if '.' in n}
    if len(tails) != 1 or not all('.' in n for n in names):
        return {n: n for n in names}
    return {n: n.rsplit('.', 1)[0] for n in names}


def entries_of(d: str) -> Dict[str, ktap.Entries]:
    """The entries lines of a run's pagesize_test, by their test."""
    named, _ = ktap.named_by_result(ktap.suite_text(
        d, 'perf_aux.pagesize_test').splitlines(), ktap.entries)
    return {test: e for test, found in named for e in found}


def shown(columns: Dict[str, Dict[str, ktap.Entries]]
          ) -> Tuple[List[str], List[str]]:
    """Of {kernel: {test: value}}: the kernels with any value, and every
    test in order of appearance."""
    kernels = [k for k in columns if columns[k]]
    return kernels, list(dict.fromkeys(t for k in kernels for t in columns[k]))


def entries_section(dirs: List[str]) -> List[str]:
    out = ['## Translation entries', '',
           'Entries of each AUX buffer\'s vmap, from pagesize_test '
           '(one a PMD or cont-PTE block, one a PTE page), the kernels of '
           'each base side by side.']
    for heading, group in comparisons(dirs):
        values = {k: entries_of(d) for k, d in group.items()}
        kernels, tests = shown(values)
        names = short_names(tests)
        rows = []
        for t in tests:
            cells = [values[k].get(t) for k in kernels]
            first = next(e for e in cells if e)
            rows.append([names[t], str(first.pages)] + [
                f'{e.entries} ({e.detail})' if e else '—' for e in cells])
        if rows:
            out += ['', f'### {heading}', ''] + md_table(
                ['buffer', 'pages'] + kernels,
                ['---'] + ['---:'] * (len(kernels) + 1), rows)
    if len(out) == 3:
        out += ['', 'No pagesize_test entries in these runs.']
    return out


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


def bench_section(dirs: List[str]) -> List[str]:
    out = ['## vmap benchmark', '',
           'lib/test_vmalloc.c\'s vmap_contig_chunks_test, stock -> '
           'reference of each base; a ratio above 1: the reference kernel '
           'is faster.']
    for heading, group in comparisons(dirs):
        if 'stock' in group and 'reference' in group:
            lines = bench_lines(*(ktap.bench(ktap.suite_text(
                group[k], 'test_vmalloc')) for k in ('stock', 'reference')))
            if lines:
                out += ['', f'### {heading}', ''] + [f'- `{x}`' for x in lines]
    if len(out) == 3:
        out += ['', 'No stock and reference runs with vmap benchmark '
                'results to compare.']
    return out


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
    line ("Mutant: ..."); <family>/<base>/<name>.patch is the base's own."""
    rows = []
    for family in sorted(glob.glob(os.path.join(patches, '*', ''))):
        found = {os.path.basename(p)[:-len('.patch')]: p
                 for d in [family] + ([os.path.join(family, base)]
                                      if base else [])
                 for p in sorted(glob.glob(os.path.join(d, '*.patch')))}
        for name, path in sorted(found.items()):
            first = runs.read_text(path).split('\n', 1)[0].strip()
            rows.append(MutantRow(runs.name(family), name,
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
    if none), and its kill counts."""
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
        peers = (f'{len(self.killed(True))} killed of {self.mutants} by the '
                 'peers' if any(is_peer(s) for r in self.rows
                                for s in r.suites) else 'peers not run')
        return [peers, f'{len(self.killed(False))} killed of {self.mutants}']

    def table(self) -> List[str]:
        """Markdown: a row a mutant, a column a suite (ours, then peers)."""
        suites = sorted({s for r in self.rows for s in r.suites},
                        key=lambda s: (is_peer(s), s))
        return md_table(
            ['group', 'mutant', 'description', 'target'] + suites,
            ['---'] * (4 + len(suites)),
            [[r.group, r.name, md_cell(r.description), r.target or '—']
             + [cell(r.suites.get(s)) for s in suites] for r in self.rows])


def cell(v: Optional[SuiteVerdict]) -> str:
    if v is None or not v.killed:
        return 'not run' if v is None else 'survived'
    return f'killed ({v.failed} failed' + (
        f': {", ".join(v.cases[:2])})' if v.cases else ')')


def matrices(mutants: str, patches: str) -> List[Matrix]:
    """A matrix per base that mutants ran on (the newest first), or one."""
    found = []
    for base in [b for b in runs.by_base(runs.run_dirs(mutants)) if b] or ['']:
        dirs = [d for d in runs.run_dirs(mutants) if runs.parts(d).base == base]
        rows = []
        for patch in mutant_patches(patches, base):
            ran = [d for d in dirs if runs.parts(d).kernel == patch.name]
            rows += [patch._replace(
                target=runs.parts(d).target, suites=beyond_baseline(
                    run_verdicts(d), run_verdicts(os.path.join(
                        mutants,
                        f'baseline-{base}-{runs.parts(d).target}'))))
                     for d in ran] or [patch]
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


def write_report(path: str, dirs: List[str], mutants: str, patches: str,
                 logs: str) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    sections = [['# perf_aux acceptance report'], kernel_section(dirs, logs),
                results_section(dirs), entries_section(dirs),
                bench_section(dirs)]
    if os.path.isdir(mutants):
        sections.append(matrix_section(mutants, patches))
    with open(path, 'w') as f:
        f.write('\n\n'.join('\n'.join(s) for s in sections) + '\n')
