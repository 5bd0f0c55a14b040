# SPDX-License-Identifier: GPL-2.0
"""The report layer: out/report.md (results of every run so far, the mutation
matrix of scripts/mutants/<family>/[<base>/]<name>.patch run as
out/mutants/<name>-<base>-<target> beside baseline-<base>-<target>), the
vmap benchmark's ratios, a check's measurements page from its log, and
the evidence for a cover letter or a Tested-by reply (72 columns)."""

import glob
import os
import platform
import re
import subprocess
import textwrap
from typing import Dict, Iterable, List, NamedTuple, Optional, Set, Tuple

from perf_aux.lib import read

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
            first = read(path).split('\n', 1)[0].strip()
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

    def killed(self, peers: bool = False) -> Set[str]:
        """Mutant patches that a suite of ours (or a peer's) killed."""
        return {r.name for r in self.rows if any(
            v.killed for s, v in r.suites.items()
            if s.startswith(PEER_PREFIXES) == peers)}

    def totals(self) -> List[str]:
        """The peers' line, then ours: 'K killed of N'."""
        n = len({r.name for r in self.rows})
        peers = any(s.startswith(PEER_PREFIXES) for r in self.rows
                    for s in r.suites)
        return [f'{len(self.killed(True))} killed of {n} by the peers'
                if peers else 'peers not run',
                f'{len(self.killed())} killed of {n}']

    def table(self) -> List[str]:
        """A row a mutant, a column a suite (ours, then the peers')."""
        suites = sorted({s for r in self.rows for s in r.suites},
                        key=lambda s: (s.startswith(PEER_PREFIXES), s))
        return md_table(
            ['group', 'mutant', 'description', 'target'] + suites,
            [[r.group, r.name, r.description, r.target or '—'] + [
                'not run' if v is None else 'survived' if not v.killed else
                f'killed ({v.failed} failed' + (
                    f': {", ".join(v.cases[:2])})' if v.cases else ')')
                for v in map(r.suites.get, suites)] for r in self.rows])

def matrices(mutants: str, patches: str) -> List[Matrix]:
    """A matrix per base that mutants ran on (the newest first), or one."""
    found = []
    for base in sorted({ktap.parts(d).base for d in ktap.run_dirs(mutants)}
                       - {''}, key=ktap.base_key) or ['']:
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

def duration(secs: str, rc: Optional[str] = None) -> str:
    """A step's time, and its exit status when it failed."""
    s = int(secs)
    return f'{s} s' + (f' ({s // 60} min {s % 60} s)' if s >= 60 else '') + (
        f', exit {rc}' if rc else '')

def measurements(lines: Iterable[str], tier: str, header: Dict[str, str]
                 ) -> str:
    """A check's log as Markdown: its stage table, the kernel builds with
    ccache's share, the builds reused, the boots, the suites' lines and
    the closing line."""
    stages, builds, boots, reused, suites, failed = [], [], [], [], [], []
    counts = ccache = None
    in_table = False
    for line in (raw.rstrip('\n') for raw in lines):
        end = STAGE_END.match(line)
        row = in_table and STAGE_TIME.match(line)
        in_table = bool(row) or line == 'stage times:'
        if line.startswith('ccache: '):
            ccache = line[len('ccache: '):]
        elif line.startswith('build ') and line.endswith(REUSED):
            reused.append(line[len('build '):-len(REUSED) - 1])
        elif end and end[1].startswith('build '):
            builds.append([end[1][len('build '):], duration(end[2], end[3]),
                           ccache or '—'])
            ccache = None
        elif end and end[1].startswith(('boot ', 'KUnit ')):
            boots.append([end[1], duration(end[2], end[3])])
        elif row:
            stages.append([row[2], duration(row[1])])
        elif line.startswith(('suites: ', 'failed: ')):
            (suites if line[0] == 's' else failed).append(f'- {line[8:]}')
        elif COUNTS.match(line):
            counts = line
    out = [f'# `make {tier}`: what it measured', '', f'Generated by make '
           f'{tier} from its log, out/logs/{tier}.log; rerun it to '
           'reproduce.', ''] + [f'- {k}: {v}' for k, v in header.items()]
    out += ['', '## Stages', ''] + md_table(['stage', 'time'], stages)
    out += ['', '## Kernel builds', ''] + (md_table(
        ['build', 'time', 'ccache'], builds) if builds
        else ['None in this check.'])
    if reused:
        out += ['', f'Reused within the check, not rebuilt: {len(reused)} '
                '(' + ', '.join(sorted(set(reused))) + ').']
    out += ['', '## Boots', ''] + (md_table(['boot', 'time'], boots)
                                   if boots else ['None in this check.'])
    out += ['', '## Results', ''] + suites
    out += ['', 'Failed checks:', ''] + failed if failed else []
    return '\n'.join(out + ['', counts or
                            'no closing line: the check did not finish', ''])

def write_measurements(log: str, tier: str, out: str, stages: str) -> None:
    mem = os.sysconf('SC_PHYS_PAGES') * os.sysconf('SC_PAGE_SIZE') >> 30
    commit = subprocess.run(['git', '-C', ktap.ROOT, 'describe', '--always',
                             '--dirty'], capture_output=True, text=True)
    header = {'commit': commit.stdout.strip() or 'unknown',
              'stages': stages or 'all of the tier',
              'machine': f'{os.cpu_count()} CPUs, {mem} GiB, '
              f'{platform.machine()}'}
    os.makedirs(os.path.dirname(out) or '.', exist_ok=True)
    with open(log, encoding='utf-8', errors='replace') as f:
        page = measurements(f, tier, header)
    with open(out, 'w', encoding='utf-8') as f:
        f.write(page)

WIDTH = 72
# Binds a number to its unit: textwrap breaks lines at ASCII spaces only.
NBSP = '\u00a0'
# arm64's CONT_PTES per page size (64 KiB at 4K, 2 MiB at 16K and 64K).
CONT_PTE_PAGES = {4096: 16, 16384: 128, 65536: 32}
GRANULES = (('PMD', 'P'), ('cont', 'C'), ('PTE', 'T'))

class Geometry(NamedTuple):
    """The translation granules of one page size, in bytes."""
    page: int
    pmd: int
    cont: int   # a cont-PTE block; page where the architecture has none

def geometry(page: int, arch: str = 'arm64') -> Geometry:
    """A PMD maps a page-table page of page/8 entries."""
    cont = CONT_PTE_PAGES.get(page, 1) if arch == 'arm64' else 1
    return Geometry(page, page * (page // 8), page * cont)

def least_entries(size: int, g: Geometry) -> int:
    """The fewest entries mapping a physically contiguous, naturally
    aligned buffer: PMDs, then cont-PTEs, then PTEs."""
    pmds, rest = divmod(size, g.pmd)
    conts, rest = divmod(rest, g.cont)
    return pmds + conts + -(-rest // g.page)

def size_text(size: int) -> str:
    """1 MiB, 64 KiB, 4097 B: the largest unit that divides size."""
    shift, unit = next(x for x in ((30, 'GiB'), (20, 'MiB'), (10, 'KiB'),
                                   (0, 'B')) if size % (1 << x[0]) == 0)
    return f'{size >> shift}{NBSP}{unit}'

def target_page_size(target: str) -> Optional[int]:
    """The page size a target's name promises ("arm64-16k"), else None."""
    m = re.fullmatch(r'arm64-([0-9]+)k|x86_64', target)
    return (int(m[1]) * 1024 if m[1] else 4096) if m else None

def table(header: List[str], rows: List[List[str]], indent: str = '  '
          ) -> List[str]:
    """Fixed-width columns, the first left-aligned and clipped ('~') to
    fit WIDTH, the rest right-aligned."""
    widths = [max(len(c) for c in col) for col in zip(header, *rows)]
    first = max(8, min(widths[0], WIDTH - sum(widths[1:]) - 2 * len(widths)
                       + 2 - len(indent)))
    return [(indent + '  '.join(
        [(row[0] if len(row[0]) <= first else row[0][:first - 1] + '~')
         .ljust(first)] + [c.rjust(w) for c, w in zip(row[1:], widths[1:])])
             ).rstrip() for row in [header] + rows]

def first(path: str, regex: str) -> Optional[re.Match]:
    """regex's first match with a first group in the file at path."""
    lines = read(path).splitlines()
    return next((m for m in map(re.compile(regex).search, lines)
                 if m and m[1]), None)

def entries_of(d: str) -> Dict[str, ktap.Entries]:
    """pagesize_test's entries lines, by the result line that follows."""
    found: Dict[str, ktap.Entries] = {}
    pending: List[ktap.Entries] = []
    for line in ktap.suite_text(d, 'perf_aux.pagesize_test').splitlines():
        e = ktap.entries(line)
        r = ktap.result(line) if e is None else None
        if e:
            pending.append(e)
        elif r and r.own and pending:
            found.update((r.name, p) for p in pending)
            pending = []
    return found

def run_lines(d: str, label: str, logs: str
              ) -> Tuple[List[str], List[str], Optional[Geometry]]:
    """A run's kernel, tree, setup and boots; doubts on its page size; its
    geometry."""
    name, p = ktap.name(d), ktap.parts(d)
    m = first(os.path.join(d, 'source.txt'), r'^source: (.+?)\s*$')
    tree, sep, version = (m[1] if m else 'unknown').rpartition(', version ')
    tree, version = (tree, version) if sep else (version, '')
    m = first(f'{logs}/{name}-kselftest.log', ktap.KERNEL.pattern)
    kernel, page = m.groups() if m else ('unknown', 'unknown')
    number, _, unit = page.partition(' ')
    said = {k: v for k, v in (
        ('kernel log', int(number) * 1024 if number.isdigit() and unit == 'kB'
         else None), ('target name', target_page_size(p.target))) if v}
    size = next(iter(said.values()), None)
    head = [f'{label}: kernel '
            f'{kernel if kernel != "unknown" else version} ({name})',
            f'  tree: {tree}',
            f'  base {p.base or "unknown"}, target {p.target or "unknown"}, '
            f'{size_text(size) if size else "unknown size"} pages, '
            f'variant {p.variant or "unknown"}'] + [
        f'  {shown} boot: {m[1]}' for boot, shown in (
            ('kunit', 'KUnit'), ('kselftest', 'kselftest'))
        if (m := first(f'{logs}/{name}-{boot}.log',
                       r'Kernel command line: (.*?)\s*$'))]
    doubts = [f'{label}: page size unknown'] if not size else []
    if len(set(said.values())) > 1:
        doubts.append(f'! {label}: page sizes disagree: ' + ', '.join(
            f'{k} {size_text(v)}' for k, v in said.items()))
    return head, doubts, size and geometry(
        size, 'arm64' if p.target.startswith('arm64-') else p.target)

def entries_lines(runs: Dict[str, str], g: Geometry) -> List[str]:
    """The entries table of runs of one page size, and its totals."""
    values = {k: v for k, v in ((k, entries_of(d)) for k, d in runs.items())
              if v}
    tests = list(dict.fromkeys(t for v in values.values() for t in v))
    if not tests:
        return ['  No pagesize_test entries in these runs.']
    names = {t: t for t in tests}
    # A buffer's name: its test's without a first and last part all share.
    for cut in (lambda n: n.rsplit('.', 1), lambda n: n.split('.', 1)[::-1]):
        pieces = {t: cut(n) for t, n in names.items()}
        if all(len(x) == 2 for x in pieces.values()) and \
                len({x[1] for x in pieces.values()}) == 1:
            names = {t: x[0] for t, x in pieces.items()}
    rows = []
    at_least = dict.fromkeys(values, 0)
    for t in tests:
        size = next(v[t] for v in values.values() if t in v).pages * g.page
        least = least_entries(size, g)
        rows.append([names[t], size_text(size)] + [
            f'{v[t].entries} ' + ''.join(c for k, c in GRANULES
                                         if v[t].granule_pages().get(k))
            if t in v else '-' for v in values.values()] + [str(least)])
        for k, v in values.items():
            at_least[k] += t in v and v[t].entries == least
    return table(['buffer', 'size', *values, 'minimum'],
                 [[c.rstrip() for c in row] for row in rows]) + [
        '', '  P PMD block, C cont-PTE block, T PTE: the granules mapping the '
        'buffer.', '  At the minimum: ' + ', '.join(
            f'{k} {n} of {len(values[k])}' for k, n in at_least.items())
        + ' buffers.'] + [
        f'  {names[t]}: no AUX capability, order-0 pages: not expected at the'
        ' minimum.' for t in tests if '.none_' in f'.{names[t]}']

def skip_lines(runs: Dict[str, str]) -> List[str]:
    """Each leaf skip (no deeper result before it) by reason; runs that
    skipped the very same cases share a line."""
    reasons: Dict[str, Dict[str, Dict[str, List[str]]]] = {}
    for label, d in runs.items():
        for suite, text in ktap.read_suites(d).items():
            depth = -1
            for x in filter(None, map(ktap.result, text.splitlines())):
                reason = x.skip_reason() if x.own else None
                if reason is not None and len(x.prefix) >= depth:
                    reasons.setdefault(reason or '(no reason given)', {}) \
                        .setdefault(label, {}) \
                        .setdefault(suite, []).append(x.name)
                depth = len(x.prefix) if x.own else depth
    out = ['Skipped, by reason']
    for reason, by_run in reasons.items():
        same: Dict[str, List[str]] = {}
        for label, suites in by_run.items():
            same.setdefault(repr(suites), []).append(label)
        out += ['', f'  {reason}']
        for labels in same.values():
            suites = by_run[labels[0]]
            out += [f'    {", ".join(labels)}: '
                    f'{sum(map(len, suites.values()))}'
                    + (' each' if len(labels) > 1 else '')] + [
                f'      {s}: ' + (', '.join(c) if len(c) <= 2 else
                                  f'{len(c)} cases')
                for s, c in suites.items()]
    return out if reasons else out + ['', '  Nothing was skipped.']

def mutation_lines(bases: List[str], mutants: str, patches: str
                   ) -> List[str]:
    out = ['Mutation score', '']
    if not os.path.relpath(mutants).startswith('..'):
        mutants = os.path.relpath(mutants)
    if not ktap.run_dirs(mutants):
        return out + [f'  Not run: no kill matrix in {mutants}.']
    found = {m.base: m for m in matrices(mutants, patches)}
    for m in (found.get(base, Matrix(base, [])) for base in bases):
        not_run = [r.name for r in m.rows if not r.suites]
        if len(not_run) == len(m.rows):
            out += [f'  Base {m.base or "unknown"}: not run (no mutant runs '
                    f'of this base in {mutants}).', '']
            continue
        peers, ours = m.totals()
        survived = [r.name for r in m.rows
                    if r.suites and r.name not in m.killed()]
        targets = sorted({r.target for r in m.rows if r.target})
        out += [f'  Base {m.base} ({", ".join(targets)}): {ours} mutant '
                'patches' + (f' ({len(not_run)} not run)' if not_run else '')
                + f'; {peers}.'] + [f'  {what}: {", ".join(names)}.' for
                                    what, names in (('Survived', survived),
                                                    ('Not run', not_run))
                                    if names] + ['']
    return out[:-1]

def evidence(dirs: List[str], mutants: Optional[str] = None,
             patches: str = ktap.PATCHES, logs: Optional[str] = None
             ) -> List[str]:
    """The evidence of run directories; logs and mutants default to those
    of the first run's out/ tree."""
    dirs = list(dict.fromkeys(dirs))
    out_dir = os.path.dirname(os.path.dirname(os.path.abspath(dirs[0])))
    parts = list(map(ktap.parts, dirs))
    labels = next(n for n in ([p.kernel for p in parts], [p.kernel + (
        '' if p.variant in ('', 'default') else f'-{p.variant}')
        for p in parts], list(map(ktap.name, dirs))) if len(set(n)) == len(n))
    out = ['perf_aux: AUX buffer mappings, evidence', '']
    pages: List[str] = []
    runs: Dict[str, str] = {}
    groups: Dict[Geometry, Dict[str, str]] = {}
    for d, label in zip(dirs, labels):
        if not os.path.isdir(d):
            out.append(f'{label}: no run directory {d}')
            continue
        head, doubts, g = run_lines(d, label, logs or f'{out_dir}/logs')
        out += head
        pages += doubts
        runs[label] = d
        if g and g not in groups:
            pages.append(
                f'Page size {size_text(g.page)}: PMD block {size_text(g.pmd)} '
                f'({g.pmd // g.page}{NBSP}pages), ' + (
                    f'cont-PTE block {size_text(g.cont)} ({g.cont // g.page}'
                    f'{NBSP}pages).' if g.cont > g.page else 'no cont-PTE '
                    'blocks.'))
        if g:
            groups.setdefault(g, {})[label] = d
    out += ['', *pages] if pages else []
    out += ['', 'Results (pass, fail, skip per suite)']
    for label, d in runs.items():
        rows = [[s.name, str(s.passed), str(s.failures), str(s.skipped)]
                for s in collect(d)]
        out += ['', f'  {label}:'] + table(
            ['suite', 'pass', 'fail', 'skip'], rows + [['total'] + [
                str(sum(int(x[i]) for x in rows)) for i in (1, 2, 3)]], '    ')
    out += ['', 'Translation entries per AUX buffer (pagesize_test)', '',
            '  Minimum: a physically contiguous, naturally aligned buffer '
            'mapped with PMD blocks, then cont-PTE blocks, then PTEs, '
            'computed from the page size.']
    for g, group in groups.items():
        out += (['', f'  {size_text(g.page)} pages:'] if len(groups) > 1
                else []) + [''] + entries_lines(group, g)
    if not groups:
        out += ['', '  No pagesize_test entries in these runs.']
    out += ['', *skip_lines(runs), '', *mutation_lines(
        list(dict.fromkeys(ktap.parts(d).base for d in runs.values())),
        mutants or os.path.join(out_dir, 'mutants'), patches)]
    # Wider lines wrapped, their continuation indented two more.
    return [part.replace(NBSP, ' ') for x in out for part in (
        textwrap.wrap(x, WIDTH, subsequent_indent=' ' * (
            len(x) - len(x.lstrip()) + 2), break_on_hyphens=False)
        if len(x) > WIDTH else [x])]
