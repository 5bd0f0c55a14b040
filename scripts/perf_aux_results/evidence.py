# SPDX-License-Identifier: GPL-2.0
"""Evidence for a cover letter or a Tested-by reply, in plain text of
WIDTH columns: of run directories, the kernels and their boots, results
per suite, translation entries per AUX buffer beside the minimum computed
here from the page size, skips by reason, and the base's mutation score."""

import os
import re
import textwrap
from typing import Dict, List, NamedTuple, Optional, Tuple

from . import ktap, report, runs
from .verdicts import collect, suite_verdict

WIDTH = 72
# Binds a number to its unit: textwrap breaks lines at ASCII spaces only.
NBSP = '\u00a0'
# arm64's CONT_PTES: the PTEs one contiguous-bit block spans, per page size
# (64 KiB at 4K, 2 MiB at 16K and 64K).
CONT_PTE_PAGES = {4096: 16, 16384: 128, 65536: 32}
# One letter a granule in the entries table.
GRANULE_LETTERS = (('PMD', 'P'), ('cont', 'C'), ('PTE', 'T'))


class Geometry(NamedTuple):
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
    for shift, unit in ((30, 'GiB'), (20, 'MiB'), (10, 'KiB'), (0, 'B')):
        if size >> shift and size % (1 << shift) == 0 or not shift:
            return f'{size >> shift}{NBSP}{unit}'
    return ''


def wrap(text: str, indent: str = '', more: Optional[str] = None
         ) -> List[str]:
    return textwrap.wrap(text, WIDTH, initial_indent=indent,
                         subsequent_indent=indent if more is None else more,
                         break_on_hyphens=False) or [indent.rstrip()]


def table(header: List[str], rows: List[List[str]], indent: str = '  ',
          fit: bool = False) -> List[str]:
    """Fixed-width columns, the first left-aligned and clipped ('~') to
    fit in WIDTH, the rest right-aligned; with fit, [] unless it fits
    unclipped."""
    widths = [max(len(c) for c in col) for col in zip(header, *rows)]
    rest = sum(widths[1:]) + 2 * (len(widths) - 1) + len(indent)
    if fit and rest + widths[0] > WIDTH:
        return []
    widths[0] = max(8, min(widths[0], WIDTH - rest))
    return [(indent + '  '.join(
        [(row[0] if len(row[0]) <= widths[0] else
          row[0][:widths[0] - 1] + '~').ljust(widths[0])]
        + [c.rjust(w) for c, w in zip(row[1:], widths[1:])])).rstrip()
        for row in [header] + rows]


class Run(NamedTuple):
    """What one run directory recorded."""
    path: str
    label: str
    exists: bool
    tree: str = 'unknown'
    version: str = 'unknown'
    boots: List[Tuple[str, str]] = []
    page_sources: Dict[str, int] = {}
    entries: Dict[str, ktap.Entries] = {}

    @property
    def name(self) -> str:
        return runs.name(self.path)

    @property
    def parts(self) -> runs.RunName:
        return runs.parts(self.path)

    @property
    def page(self) -> Optional[int]:
        """The page size as the run shows it, the kernel's own first."""
        return next(iter(self.page_sources.values()), None)

    @property
    def geometry(self) -> Optional[Geometry]:
        arm64 = self.parts.target.startswith('arm64-')
        return geometry(self.page, 'arm64' if arm64 else self.parts.target) \
            if self.page else None


def labels(dirs: List[str]) -> List[str]:
    """A short name a run: its kernel, with its variant or whole name
    where needed to tell the runs apart."""
    parts = [runs.parts(d) for d in dirs]
    for names in ([p.kernel for p in parts], [p.kernel + (
            '' if p.variant in ('', 'default') else f'-{p.variant}')
            for p in parts], [runs.name(d) for d in dirs]):
        if len(set(names)) == len(names):
            break
    return names


def target_page_size(target: str) -> Optional[int]:
    """The page size a target's name promises ("arm64-16k"), else None."""
    m = re.fullmatch(r'arm64-([0-9]+)k|x86_64', target)
    return (int(m[1]) * 1024 if m[1] else 4096) if m else None


def load(d: str, label: str, logs: str) -> Run:
    if not os.path.isdir(d):
        return Run(d, label, False)
    name = runs.name(d)
    tree, sep, version = runs.source(d).rpartition(', version ')
    tree, version = (tree, version) if sep else (version, '')
    kernel_version, page = runs.kernel_info(
        os.path.join(logs, f'{name}-kselftest.log'))
    boots = [(shown, found) for boot, shown in (('kunit', 'KUnit'),
                                                ('kselftest', 'kselftest'))
             if (found := runs.boot_params(os.path.join(
                 logs, f'{name}-{boot}.log'))) is not None]
    number, _, unit = page.partition(' ')
    sources = [('kernel log', int(number) * 1024 if number.isdigit()
                and unit == 'kB' else None),
               ('target name', target_page_size(runs.parts(d).target))]
    return Run(d, label, True, tree, version if kernel_version == 'unknown'
               else kernel_version, boots, {k: v for k, v in sources if v},
               report.entries_of(d))


def header(found: List[Run]) -> List[str]:
    out = ['perf_aux: AUX buffer mappings, evidence', '']
    for r in found:
        if not r.exists:
            out += wrap(f'{r.label}: no run directory {r.path}')
            continue
        p = r.parts
        page = size_text(r.page) if r.page else 'unknown size'
        out += wrap(f'{r.label}: kernel {r.version} ({r.name})')
        for line in [f'tree: {r.tree}', f'base {p.base or "unknown"}, target '
                     f'{p.target or "unknown"}, {page} pages, variant '
                     f'{p.variant or "unknown"}'] + [
                         f'{boot} boot: {params}' for boot, params in r.boots]:
            out += wrap(line, '  ', '    ')
    return out


def page_lines(found: List[Run]) -> List[str]:
    out: List[str] = []
    seen = set()
    for r in (r for r in found if r.exists):
        g = r.geometry
        if g is None:
            out += wrap(f'{r.label}: page size unknown (no kernel log or '
                        'known target)')
            continue
        if len(set(r.page_sources.values())) > 1:
            said = ', '.join(f'{k} {size_text(v)}'
                             for k, v in r.page_sources.items())
            out += wrap(f'! {r.label}: page sizes disagree: {said}', '', '  ')
        if g not in seen:
            seen.add(g)
            out += wrap(g.describe())
    return out


def results_lines(found: List[Run]) -> List[str]:
    out = ['Results (pass, fail, skip per suite)']
    for r in (r for r in found if r.exists):
        suites = collect(r.path)
        out += ['', f'  {r.label}:']
        if not suites:
            out += ['    no KTAP results']
            continue
        rows = [[s.name, str(s.passed), str(s.failures), str(s.skipped)]
                for s in suites]
        rows.append(['total'] + [str(sum(int(x[i]) for x in rows))
                                 for i in (1, 2, 3)])
        out += table(['suite', 'pass', 'fail', 'skip'], rows, '    ')
        for suite, text in ktap.read_suites(r.path).items():
            v = suite_verdict(suite, text)
            more = len(v.cases) - 3
            out += wrap(f'failed in {suite}: ' + ', '.join(v.cases[:3])
                        + (f' and {more} more' if more > 0 else ''),
                        '    ', '      ') if v.failed else []
    return out


def buffer_names(tests: List[str]) -> Dict[str, str]:
    """Test names without the first and last dotted parts they share."""
    names = report.short_names(tests)
    heads = {n.split('.', 1)[0] for n in names.values()}
    if len(heads) == 1 and all('.' in n for n in names.values()):
        names = {t: n.split('.', 1)[1] for t, n in names.items()}
    return names


def entries_group(group: List[Run], g: Geometry, fit: bool = False
                  ) -> List[str]:
    """The entries table of runs of one page size, and its checks; [] with
    fit when it does not fit in WIDTH unclipped."""
    values = {r.label: r.entries for r in group}
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
            used = e.granule_pages()
            row.append((f'{e.entries} ' + ''.join(
                letter for name, letter in GRANULE_LETTERS
                if used.get(name))).rstrip())
            at_least[k] += e.entries == least
            if e.entries < least:
                checks.append(f'! {k} {names[t]}: {e.entries} entries, '
                              f'below the minimum {least}')
        rows.append(row + [str(least)])
    out = table(['buffer', 'size'] + kernels + ['minimum'], rows, fit=fit)
    if not out:
        return []
    out += [''] + wrap('P PMD block, C cont-PTE block, T PTE: the '
                       'granules mapping the buffer.', '  ')
    out += wrap('At the minimum: ' + ', '.join(
        f'{k} {at_least[k]} of {sum(1 for t in tests if t in values[k])}'
        for k in kernels) + ' buffers.', '  ')
    none = [names[t] for t in tests if '.none_' in f'.{names[t]}']
    if none:
        out += wrap(f'{", ".join(none)}: no AUX capability, order-0 pages: '
                    'not expected at the minimum.', '  ', '    ')
    return out + [x for c in checks for x in wrap(c, '  ', '    ')]


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
            while n > 1 and not entries_group(group[start:start + n], g, True):
                n -= 1
            part = entries_group(group[start:start + n], g, n > 1)
            out += [''] + part if part else []
            start += n
    return out


def leaf_skips(text: str) -> List[Tuple[str, str]]:
    """(case, reason) of each skipped leaf case of a KTAP document's own
    tree (no deeper result before it)."""
    out = []
    depth = -1
    for r in filter(None, map(ktap.result, text.splitlines())):
        if r.own:
            if r.skip_reason() is not None and len(r.prefix) >= depth:
                out.append((r.name, r.skip_reason() or '(no reason given)'))
            depth = len(r.prefix)
    return out


def skip_lines(found: List[Run]) -> List[str]:
    reasons: Dict[str, Dict[str, Dict[str, List[str]]]] = {}
    for r in (r for r in found if r.exists):
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
            same.setdefault(repr(sorted(suites.items())),
                            ([], suites))[0].append(label)
        for run_labels, suites in same.values():
            total = sum(len(c) for c in suites.values())
            out += wrap(f'{", ".join(run_labels)}: {total}'
                        + (' each' if len(run_labels) > 1 else ''), '    ')
            for suite, cases in suites.items():
                out += wrap(f'{suite}: ' + (', '.join(cases) if len(cases) <= 2
                                            else f'{len(cases)} cases'),
                            '      ', '        ')
    return out


def mutation_lines(found: List[Run], mutants: str, patches: str
                   ) -> List[str]:
    rel = os.path.relpath(mutants)
    shown = mutants if rel.startswith('..') else rel
    if not (os.path.isdir(mutants) and runs.run_dirs(mutants)):
        return ['Mutation score', ''] + wrap(
            f'Not run: no kill matrix in {shown}.', '  ')
    out = ['Mutation score']
    matrices = {m.base: m for m in report.matrices(mutants, patches)}
    for base in dict.fromkeys(r.parts.base for r in found if r.exists):
        m = matrices.get(base)
        if m is None or not any(r.suites for r in m.rows):
            out += [''] + wrap(f'Base {base or "unknown"}: not run (no '
                               f'mutant runs of this base in {shown}).', '  ')
            continue
        peers, ours = m.totals()
        targets = sorted({r.target for r in m.rows if r.target})
        killed = m.killed(False)
        survived = [r.name for r in m.rows if r.suites and r.name not in killed]
        not_run = [r.name for r in m.rows if not r.suites]
        # A kill count over mutants that never ran would read as a weak
        # suite: say how many of the catalogue ran.
        out += [''] + wrap(f'Base {base} ({", ".join(targets)}): {ours} '
                           'mutant patches' + (f' ({len(not_run)} not run)'
                                               if not_run else '')
                           + '; ' + peers + '.', '  ')
        for what, names in (('Survived', survived), ('Not run', not_run)):
            out += wrap(f'{what}: ' + ', '.join(names) + '.', '  ', '    ') \
                if names else []
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
