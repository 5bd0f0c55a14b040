# SPDX-License-Identifier: GPL-2.0
"""Evidence for a cover letter or a Tested-by reply, in plain text of
WIDTH columns: of run directories, the kernels and their boots, results
per suite, translation entries per AUX buffer beside the minimum computed
here from the page size, skips by reason, and the base's mutation score."""

import os
import textwrap
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from . import formats, granule_svg, ktap, matrix, report, runs
from .verdicts import collect, suite_verdict

WIDTH = 72
# Binds a number to its unit: textwrap breaks lines at ASCII spaces only.
NBSP = '\u00a0'
KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB
# arm64's CONT_PTES: the PTEs one contiguous-bit block spans, per page size
# (64 KiB at 4K, 2 MiB at 16K and 64K).
CONT_PTE_PAGES = {4 * KIB: 16, 16 * KIB: 128, 64 * KIB: 32}
PAGESIZE_SUITE = 'perf_aux.pagesize_test'
# One letter a granule in the entries table (those of granule_svg's maps).
GRANULE_LETTERS = (('PMD', 'P'), ('cont', 'C'), ('PTE', 'T'))
# What a reader must know of a synthetic PMU (lib/test_aux_pmu.c) to read
# its buffers' entries.
PMU_NOTES = {'test_aux_none': 'no AUX capability, order-0 pages: not '
             'expected at the minimum'}


@dataclass(frozen=True)
class Geometry:
    """The translation granules of one page size, in bytes."""
    page: int
    pmd: int
    cont: int   # a cont-PTE block; page where the architecture has none

    def describe(self) -> str:
        cont = (f'cont-PTE block {size_text(self.cont)} '
                f'({self.cont // self.page}{NBSP}pages)'
                if self.cont > self.page else 'no cont-PTE blocks')
        return (f'Page size {size_text(self.page)}: PMD block '
                f'{size_text(self.pmd)} ({self.pmd // self.page}{NBSP}pages), '
                f'{cont}.')


def geometry(page: int, arch: str = 'arm64') -> Geometry:
    """A PMD maps a page-table page of page/8 entries, a cont-PTE block
    CONT_PTE_PAGES (arm64 only)."""
    cont = CONT_PTE_PAGES.get(page, 1) if arch == 'arm64' else 1
    return Geometry(page, page * (page // 8), page * cont)


def least_entries(size: int, g: Geometry) -> int:
    """The fewest translation entries that map a physically contiguous,
    naturally aligned buffer of size bytes: PMDs, cont-PTEs, PTEs."""
    pmds, rest = divmod(size, g.pmd)
    conts, rest = divmod(rest, g.cont)
    return pmds + conts + -(-rest // g.page)


def size_text(size: int) -> str:
    """1 MiB, 64 KiB, 4097 B: the largest unit that divides size."""
    for unit, name in ((GIB, 'GiB'), (MIB, 'MiB'), (KIB, 'KiB')):
        if size >= unit and size % unit == 0:
            return f'{size // unit}{NBSP}{name}'
    return f'{size}{NBSP}B'


def wrap(text: str, indent: str = '', more: Optional[str] = None
         ) -> List[str]:
    return textwrap.wrap(text, WIDTH, initial_indent=indent,
                         subsequent_indent=indent if more is None else more,
                         break_on_hyphens=False) or [indent.rstrip()]


def natural_width(header: List[str], rows: List[List[str]],
                  indent: str = '  ') -> int:
    """The width of table(header, rows) with nothing clipped."""
    widths = [max(len(c) for c in col) for col in zip(header, *rows)]
    return len(indent) + sum(widths) + 2 * (len(widths) - 1)


def table(header: List[str], rows: List[List[str]], indent: str = '  '
          ) -> List[str]:
    """Fixed-width columns, the first left-aligned and clipped ('~') to
    fit in WIDTH, the rest right-aligned."""
    widths = [max(len(c) for c in col) for col in zip(header, *rows)]
    rest = sum(widths[1:]) + 2 * (len(widths) - 1) + len(indent)
    widths[0] = max(8, min(widths[0], WIDTH - rest))
    out = []
    for row in [header] + rows:
        first = row[0] if len(row[0]) <= widths[0] else \
            row[0][:widths[0] - 1] + '~'
        cells = [first.ljust(widths[0])]
        cells += [c.rjust(w) for c, w in zip(row[1:], widths[1:])]
        out.append((indent + '  '.join(cells)).rstrip())
    return out


@dataclass
class Run:
    """What one run directory recorded."""
    path: str
    label: str = ''
    exists: bool = True
    tree: str = 'unknown'
    version: str = 'unknown'
    boots: List[Tuple[str, str]] = field(default_factory=list)
    page: Optional[int] = None
    page_sources: Dict[str, int] = field(default_factory=dict)
    entries: List[formats.Entries] = field(default_factory=list)
    maps: List[granule_svg.GranuleMap] = field(default_factory=list)

    @property
    def name(self) -> str:
        return runs.name(self.path)

    @property
    def parts(self) -> formats.RunName:
        return runs.parts(self.path)

    @property
    def geometry(self) -> Optional[Geometry]:
        if self.page is None:
            return None
        return geometry(self.page, formats.target_arch(self.parts.target))


def labels(dirs: List[str]) -> List[str]:
    """A short name a run: its kernel, with its variant or whole name
    where needed to tell the runs apart."""
    for name_of in (lambda p: p.kernel,
                    lambda p: p.kernel + ('' if p.variant in ('', 'default')
                                          else f'-{p.variant}')):
        names = [name_of(runs.parts(d)) for d in dirs]
        if len(set(names)) == len(names):
            return names
    return [runs.name(d) for d in dirs]


def load(d: str, label: str, logs: str) -> Run:
    run = Run(d, label, exists=os.path.isdir(d))
    if not run.exists:
        return run
    run.tree, run.version = formats.source_parts(runs.source(d))
    kernel_version, page = runs.kernel_info(
        os.path.join(logs, f'{run.name}-kselftest.log'))
    if kernel_version != 'unknown':
        run.version = kernel_version
    for boot in ('kunit', 'kselftest'):
        path = os.path.join(logs, f'{run.name}-{boot}.log')
        found = runs.boot_params(path)
        if found is not None:
            run.boots.append(('KUnit' if boot == 'kunit' else boot, found))
    text = report.suite_text(d, PAGESIZE_SUITE)
    run.entries = report.entries_values(text)
    run.maps = granule_svg.parse_ktap(text.splitlines())
    # The page size as the run shows it, the test's own first.
    sources = [('pagesize_test', next((m.page_size for m in run.maps), None)),
               ('kernel log', formats.page_bytes(page)),
               ('target name', formats.target_page_size(run.parts.target))]
    run.page_sources = {k: v for k, v in sources if v}
    run.page = next(iter(run.page_sources.values()), None)
    return run


def header(found: List[Run]) -> List[str]:
    out = ['perf_aux: AUX buffer mappings, evidence', '']
    for r in found:
        if not r.exists:
            out += wrap(f'{r.label}: no run directory {r.path}')
            continue
        p = r.parts
        page = size_text(r.page) if r.page else 'unknown size'
        out += wrap(f'{r.label}: kernel {r.version} ({r.name})')
        out += wrap(f'tree: {r.tree}', '  ', '    ')
        out += wrap(f'base {p.base or "unknown"}, target '
                    f'{p.target or "unknown"}, {page} pages, variant '
                    f'{p.variant or "unknown"}', '  ', '    ')
        for boot, params in r.boots:
            out += wrap(f'{boot} boot: {params}', '  ', '    ')
    return out


def page_lines(found: List[Run]) -> List[str]:
    out: List[str] = []
    seen = set()
    for r in found:
        g = r.geometry
        if not r.exists:
            continue
        if g is None:
            out += wrap(f'{r.label}: page size unknown (no pagesize_test '
                        'map, kernel log or known target)')
            continue
        if len(set(r.page_sources.values())) > 1:
            said = ', '.join(f'{k} {size_text(v)}'
                             for k, v in r.page_sources.items())
            out += wrap(f'! {r.label}: page sizes disagree: {said}', '',
                        '  ')
        if g not in seen:
            seen.add(g)
            out += wrap(g.describe())
        for m in r.maps:
            if (m.pmd_pages, max(m.cont_pages, 1)) != (
                    g.pmd // g.page, g.cont // g.page):
                out += wrap(f'! {r.label} {m.test}: the kernel reports '
                            f'{m.pmd_pages}-page PMDs and {m.cont_pages}-page '
                            'cont blocks, not those', '', '  ')
                break
    return out


def results_lines(found: List[Run]) -> List[str]:
    out = ['Results (pass, fail, skip per suite)']
    for r in found:
        if not r.exists:
            continue
        suites = collect(r.path)
        out += ['', f'  {r.label}:']
        if not suites:
            out += ['    no KTAP results']
            continue
        rows = [[s.name, str(s.passed), str(s.failures), str(s.skipped)]
                for s in suites]
        rows.append(['total', str(sum(s.passed for s in suites)),
                     str(sum(s.failures for s in suites)),
                     str(sum(s.skipped for s in suites))])
        out += table(['suite', 'pass', 'fail', 'skip'], rows, '    ')
        for suite, text in ktap.read_suites(r.path).items():
            v = suite_verdict(suite, text)
            if v.failed:
                more = len(v.cases) - 3
                out += wrap(f'failed in {suite}: ' + ', '.join(v.cases[:3])
                            + (f' and {more} more' if more > 0 else ''),
                            '    ', '      ')
    return out


def granules_used(e: formats.Entries) -> str:
    pages = e.granule_pages()
    return ''.join(letter for name, letter in GRANULE_LETTERS
                   if pages.get(name))


def buffer_names(tests: List[str]) -> Dict[str, str]:
    """Test names without the first and last dotted parts they share."""
    names = report.short_names(tests)
    heads = {n.split('.', 1)[0] for n in names.values()}
    if len(heads) == 1 and all('.' in n for n in names.values()):
        names = {t: n.split('.', 1)[1] for t, n in names.items()}
    return names


def entries_group(group: List[Run], g: Geometry, check_width: bool = False
                  ) -> List[str]:
    """The entries table of runs of one page size, and its checks; [] with
    check_width when it does not fit in WIDTH unclipped."""
    values = {r.label: {e.test: e for e in r.entries} for r in group}
    kernels, tests = report.shown(values)
    if not tests:
        return []
    names = buffer_names(tests)
    rows, checks = [], []
    at_least = {k: 0 for k in kernels}
    for t in tests:
        cells = {k: values[k].get(t) for k in kernels}
        first = next(e for e in cells.values() if e)
        least = least_entries(first.pages * g.page, g)
        row = [names[t], size_text(first.pages * g.page)]
        for k, e in cells.items():
            if e is None:
                row.append('-')
                continue
            row.append(f'{e.entries} {granules_used(e)}'.rstrip())
            at_least[k] += e.entries == least
            if e.minimum and e.minimum != str(least):
                checks.append(f'! {k} {names[t]}: the run says at least '
                              f'{e.minimum}, computed {least}')
            if e.entries < least:
                checks.append(f'! {k} {names[t]}: {e.entries} entries, '
                              f'below the minimum {least}')
        rows.append(row + [str(least)])
    head = ['buffer', 'size'] + kernels + ['minimum']
    if check_width and natural_width(head, rows) > WIDTH:
        return []
    out = table(head, rows)
    out += [''] + wrap('P PMD block, C cont-PTE block, T PTE: the '
                       'granules mapping the buffer.', '  ')
    out += wrap('At the minimum: ' + ', '.join(
        f'{k} {at_least[k]} of {sum(1 for t in tests if t in values[k])}'
        for k in kernels) + ' buffers.', '  ')
    for pmu, note in PMU_NOTES.items():
        mapped = [names[m.test] for r in group for m in r.maps
                  if m.pmu == pmu and m.test in names]
        if mapped:
            out += wrap(f'{", ".join(dict.fromkeys(mapped))}: {pmu}, '
                        f'{note}.', '  ', '    ')
    printed = any(e.minimum for k in kernels for e in values[k].values())
    if not printed:
        checks.append('The runs print no "at least" to check against.')
    elif not checks:
        checks.append('Each run\'s own "at least" agrees with the '
                      'computed minimum.')
    for c in checks:
        out += wrap(c, '  ', '    ')
    return out


def entries_lines(found: List[Run]) -> List[str]:
    out = ['Translation entries per AUX buffer (pagesize_test)', '']
    out += wrap('Minimum: a physically contiguous, naturally aligned buffer '
                'mapped with PMD blocks, then cont-PTE blocks, then PTEs, '
                'computed from the page size.', '  ')
    groups: Dict[Geometry, List[Run]] = {}
    for r in found:
        if r.exists and r.geometry and r.entries:
            groups.setdefault(r.geometry, []).append(r)
    if not groups:
        return out + ['', '  No pagesize_test entries in these runs.']
    for g, group in groups.items():
        if len(groups) > 1:
            out += ['', f'  {size_text(g.page)} pages:']
        # As many runs a table as fit in WIDTH; one, clipped, at worst.
        start = 0
        while start < len(group):
            n = len(group) - start
            part = entries_group(group[start:start + n], g, n > 1)
            while not part and n > 1:
                n -= 1
                part = entries_group(group[start:start + n], g, n > 1)
            if part:
                out += [''] + part
            start += n
    return out


def leaf_skips(text: str) -> List[Tuple[str, str]]:
    """(case, reason) of each skipped leaf case of a KTAP document's own
    tree (no deeper result before it)."""
    out = []
    depth = -1
    for line in text.splitlines():
        r = formats.result(line)
        if not r or not r.own:
            continue
        reason = r.skip_reason()
        if reason is not None and len(r.prefix) >= depth:
            out.append((r.name, reason or '(no reason given)'))
        depth = len(r.prefix)
    return out


def skip_lines(found: List[Run]) -> List[str]:
    reasons: Dict[str, Dict[str, Dict[str, List[str]]]] = {}
    for r in found:
        if not r.exists:
            continue
        for suite, text in ktap.read_suites(r.path).items():
            for case, reason in leaf_skips(text):
                reasons.setdefault(reason, {}).setdefault(
                    r.label, {}).setdefault(suite, []).append(case)
    out = ['Skipped, by reason']
    if not reasons:
        return out + ['', '  Nothing was skipped.']
    for reason, by_run in reasons.items():
        out += [''] + wrap(reason, '  ', '    ')
        # Runs that skipped the very same cases share a line.
        same: Dict[str, Tuple[List[str], Dict[str, List[str]]]] = {}
        for label, suites in by_run.items():
            key = repr(sorted(suites.items()))
            same.setdefault(key, ([], suites))[0].append(label)
        for run_labels, suites in same.values():
            total = sum(len(c) for c in suites.values())
            out += wrap(f'{", ".join(run_labels)}: {total}'
                        + (' each' if len(run_labels) > 1 else ''), '    ')
            for suite, cases in suites.items():
                out += wrap(f'{suite}: ' + (', '.join(cases)
                                            if len(cases) <= 2
                                            else f'{len(cases)} cases'),
                            '      ', '        ')
    return out


def shown_path(path: str) -> str:
    rel = os.path.relpath(path)
    return path if rel.startswith('..') else rel


def mutation_lines(found: List[Run], mutants: str, patches: str
                   ) -> List[str]:
    out = ['Mutation score']
    if not (os.path.isdir(mutants) and runs.run_dirs(mutants)):
        return out + [''] + wrap('Not run: no kill matrix in '
                                 f'{shown_path(mutants)}.', '  ')
    matrices = {m.base: m for m in matrix.matrices(mutants, patches)}
    for base in dict.fromkeys(r.parts.base for r in found if r.exists):
        m = matrices.get(base)
        if m is None or not any(r.suites for r in m.rows):
            out += [''] + wrap(f'Base {base or "unknown"}: not run (no '
                               'mutant runs of this base in '
                               f'{shown_path(mutants)}).',
                               '  ')
            continue
        peers, ours = m.totals()
        targets = sorted({r.target for r in m.rows if r.target})
        killed = m.killed(False)
        survived = [r.name for r in m.rows
                    if r.suites and r.name not in killed]
        not_run = [r.name for r in m.rows if not r.suites]
        # A kill count over mutants that never ran would read as a weak
        # suite: say how many of the catalogue ran.
        out += [''] + wrap(f'Base {base} ({", ".join(targets)}): {ours} '
                           'mutant patches'
                           + (f' ({len(not_run)} not run)' if not_run
                              else '')
                           + '; ' + peers + '.', '  ')
        if survived:
            out += wrap('Survived: ' + ', '.join(survived) + '.',
                        '  ', '    ')
        if not_run:
            out += wrap('Not run: ' + ', '.join(not_run) + '.',
                        '  ', '    ')
    return out


def evidence(dirs: List[str], mutants: Optional[str] = None,
             patches: str = runs.PATCHES, logs: Optional[str] = None
             ) -> List[str]:
    """The evidence of run directories dirs; logs and mutants default to
    those of the first run's out/ tree."""
    dirs = list(dict.fromkeys(dirs))
    out_dir = os.path.dirname(os.path.dirname(os.path.abspath(dirs[0])))
    logs = logs or os.path.join(out_dir, 'logs')
    mutants = mutants or os.path.join(out_dir, 'mutants')
    found = [load(d, label, logs) for d, label in zip(dirs, labels(dirs))]
    sections = [header(found), page_lines(found), results_lines(found),
                entries_lines(found), skip_lines(found),
                mutation_lines(found, mutants, patches)]
    lines = [x for s in sections if s for x in s + ['']][:-1]
    # A last guard: nothing wider than WIDTH, whatever a log held.
    return [part.replace(NBSP, ' ') for x in lines
            for part in (textwrap.wrap(x, WIDTH, subsequent_indent='  ')
                         if len(x) > WIDTH else [x])]
