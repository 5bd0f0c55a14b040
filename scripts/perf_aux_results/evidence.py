# SPDX-License-Identifier: GPL-2.0
"""Evidence for a cover letter or a Tested-by reply, plain text of WIDTH
columns: the runs' kernels and boots, results per suite, translation
entries per buffer beside the architectural minimum, skips by reason, the
mutation score."""

import os
import re
import textwrap
from typing import Dict, List, NamedTuple, Optional, Tuple

from . import ktap, report
from .verdicts import collect

WIDTH = 72
# Binds a number to its unit: textwrap breaks lines at ASCII spaces only.
NBSP = '\u00a0'
# arm64's CONT_PTES per page size (64 KiB at 4K, 2 MiB at 16K and 64K).
CONT_PTE_PAGES = {4096: 16, 16384: 128, 65536: 32}

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

def wrap(text: str, indent: str = '  ', more: str = '    ') -> List[str]:
    return textwrap.wrap(text, WIDTH, initial_indent=indent,
                         subsequent_indent=more, break_on_hyphens=False)

def table(header: List[str], rows: List[List[str]], indent: str = '  '
          ) -> List[str]:
    """Fixed-width columns, the first left-aligned and clipped ('~') to
    fit WIDTH, the rest right-aligned."""
    widths = [max(len(c) for c in col) for col in zip(header, *rows)]
    rest = sum(widths[1:]) + 2 * (len(widths) - 1) + len(indent)
    widths[0] = max(8, min(widths[0], WIDTH - rest))
    return [(indent + '  '.join(
        [(row[0] if len(row[0]) <= widths[0] else
          row[0][:widths[0] - 1] + '~').ljust(widths[0])]
        + [c.rjust(w) for c, w in zip(row[1:], widths[1:])])).rstrip()
        for row in [header] + rows]

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

def first(path: str, regex: str) -> Optional[re.Match]:
    """regex's first match with a first group in the file at path."""
    lines = ktap.read_text(path).splitlines() if os.path.isfile(path) else []
    return next((m for m in map(re.compile(regex).search, lines)
                 if m and m[1]), None)

def run_lines(d: str, label: str, logs: str
              ) -> Tuple[List[str], List[str], Optional[Geometry]]:
    """A run's kernel, tree, setup and boots; its page size lines; its
    geometry."""
    name, p = ktap.name(d), ktap.parts(d)
    m = first(os.path.join(d, 'source.txt'), r'^source: (.+?)\s*$')
    tree, sep, version = (m[1] if m else 'unknown').rpartition(', version ')
    m = first(f'{logs}/{name}-kselftest.log', ktap.KERNEL.pattern)
    kernel, page = m.groups() if m else ('unknown', 'unknown')
    number, _, unit = page.partition(' ')
    pages = {k: v for k, v in (
        ('kernel log', int(number) * 1024 if number.isdigit() and unit == 'kB'
         else None), ('target name', target_page_size(p.target))) if v}
    size = next(iter(pages.values()), None)
    g = size and geometry(size, 'arm64' if p.target.startswith('arm64-')
                          else p.target)
    out = wrap(f'{label}: kernel '
               f'{kernel if kernel != "unknown" else version * bool(sep)} '
               f'({name})', '', '  ')
    for line in [f'tree: {tree if sep else version}',
                 f'base {p.base or "unknown"}, target {p.target or "unknown"}, '
                 f'{size_text(size) if size else "unknown size"} pages, '
                 f'variant {p.variant or "unknown"}'] + [
            f'{shown} boot: {params[1]}' for boot, shown in (
                ('kunit', 'KUnit'), ('kselftest', 'kselftest'))
            if (params := first(f'{logs}/{name}-{boot}.log',
                                r'Kernel command line: (.*?)\s*$'))]:
        out += wrap(line)
    said = ', '.join(f'{k} {size_text(v)}' for k, v in pages.items())
    return out, (wrap(f'! {label}: page sizes disagree: {said}', '', '  ')
                 if len(set(pages.values())) > 1 else []) + (
        [] if g else [f'{label}: page size unknown']), g

def results_lines(runs: Dict[str, str]) -> List[str]:
    out = ['Results (pass, fail, skip per suite)']
    for label, d in runs.items():
        rows = [[s.name, str(s.passed), str(s.failures), str(s.skipped)]
                for s in collect(d)]
        rows.append(['total'] + [str(sum(int(x[i]) for x in rows))
                                 for i in (1, 2, 3)])
        out += ['', f'  {label}:'] + table(['suite', 'pass', 'fail', 'skip'],
                                          rows, '    ')
    return out

def entries_lines(runs: Dict[str, str], g: Geometry) -> List[str]:
    """The entries table of runs of one page size, and its totals."""
    values = {k: entries_of(d) for k, d in runs.items()}
    values = {k: v for k, v in values.items() if v}
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
        first = next(v[t] for v in values.values() if t in v)
        least = least_entries(first.pages * g.page, g)
        row = [names[t], size_text(first.pages * g.page)]
        for k, v in values.items():
            used = v[t].granule_pages() if t in v else {}
            row.append(f'{v[t].entries} ' + ''.join(
                c for k, c in (('PMD', 'P'), ('cont', 'C'), ('PTE', 'T'))
                if used.get(k)) if t in v else '-')
            at_least[k] += t in v and v[t].entries == least
        rows.append([x.rstrip() for x in row] + [str(least)])
    return table(['buffer', 'size'] + list(values) + ['minimum'], rows) + [
        ''] + wrap('P PMD block, C cont-PTE block, T PTE: the granules '
                   'mapping the buffer.') + wrap('At the minimum: ' + ', '.join(
                       f'{k} {n} of {len(values[k])}'
                       for k, n in at_least.items()) + ' buffers.') + [
        x for t in tests if '.none_' in f'.{names[t]}' for x in wrap(
            f'{names[t]}: no AUX capability, order-0 pages: not expected at '
            'the minimum.')]

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
        out += [''] + wrap(reason)
        same: Dict[str, Tuple[List[str], Dict[str, List[str]]]] = {}
        for label, suites in by_run.items():
            same.setdefault(repr(suites), ([], suites))[0].append(label)
        for labels, suites in same.values():
            out += wrap(f'{", ".join(labels)}: '
                        f'{sum(len(c) for c in suites.values())}'
                        + (' each' if len(labels) > 1 else ''), '    ')
            for suite, cases in suites.items():
                out += wrap(f'{suite}: ' + (', '.join(cases) if len(cases) <= 2
                                            else f'{len(cases)} cases'),
                            '      ', '        ')
    return out if reasons else out + ['', '  Nothing was skipped.']

def mutation_lines(bases: List[str], mutants: str, patches: str
                   ) -> List[str]:
    out = ['Mutation score', '']
    if not os.path.relpath(mutants).startswith('..'):
        mutants = os.path.relpath(mutants)
    if not ktap.run_dirs(mutants):
        return out + wrap(f'Not run: no kill matrix in {mutants}.')
    matrices = {m.base: m for m in report.matrices(mutants, patches)}
    for base in bases:
        m = matrices.get(base)
        if m is None or not any(r.suites for r in m.rows):
            out += wrap(f'Base {base or "unknown"}: not run (no mutant runs '
                        f'of this base in {mutants}).') + ['']
            continue
        peers, ours = m.totals()
        not_run = [r.name for r in m.rows if not r.suites]
        survived = [r.name for r in m.rows
                    if r.suites and r.name not in m.killed(False)]
        targets = sorted({r.target for r in m.rows if r.target})
        out += wrap(f'Base {base} ({", ".join(targets)}): {ours} mutant '
                    'patches' + (f' ({len(not_run)} not run)' if not_run
                                 else '') + f'; {peers}.') + [
                        x for what, names in (
                        ('Survived', survived), ('Not run', not_run)) if names
                        for x in wrap(f'{what}: {", ".join(names)}.')] + ['']
    return out[:-1]

def evidence(dirs: List[str], mutants: Optional[str] = None,
             patches: str = ktap.PATCHES, logs: Optional[str] = None
             ) -> List[str]:
    """The evidence of run directories; logs and mutants default to those
    of the first run's out/ tree."""
    dirs = list(dict.fromkeys(dirs))
    out_dir = os.path.dirname(os.path.dirname(os.path.abspath(dirs[0])))
    variants = [p.kernel + ('' if p.variant in ('', 'default') else
                            f'-{p.variant}') for p in map(ktap.parts, dirs)]
    labels = next(n for n in ([ktap.parts(d).kernel for d in dirs], variants,
                              [ktap.name(d) for d in dirs])
                  if len(set(n)) == len(n))
    out = ['perf_aux: AUX buffer mappings, evidence', '']
    pages: List[str] = []
    runs: Dict[str, str] = {}
    groups: Dict[Geometry, Dict[str, str]] = {}
    for d, label in zip(dirs, labels):
        if not os.path.isdir(d):
            out += wrap(f'{label}: no run directory {d}', '', '  ')
            continue
        head, page, g = run_lines(d, label, logs or f'{out_dir}/logs')
        out += head
        pages += page + (wrap(
            f'Page size {size_text(g.page)}: PMD block {size_text(g.pmd)} '
            f'({g.pmd // g.page}{NBSP}pages), ' + (
                f'cont-PTE block {size_text(g.cont)} ({g.cont // g.page}'
                f'{NBSP}pages).' if g.cont > g.page else 'no cont-PTE '
                'blocks.'), '', '') if g and g not in groups else [])
        runs[label] = d
        if g:
            groups.setdefault(g, {})[label] = d
    out += ['', *pages, ''] if pages else ['']
    out += results_lines(runs) + ['', 'Translation entries per AUX buffer '
                                  '(pagesize_test)', ''] + wrap(
        'Minimum: a physically contiguous, naturally aligned buffer mapped '
        'with PMD blocks, then cont-PTE blocks, then PTEs, computed from the '
        'page size.', '  ', '  ')
    for g, group in groups.items():
        out += (['', f'  {size_text(g.page)} pages:'] if len(groups) > 1
                else []) + [''] + entries_lines(group, g)
    out += ['', *skip_lines(runs), '', *mutation_lines(
        list(dict.fromkeys(ktap.parts(d).base for d in runs.values())),
        mutants or os.path.join(out_dir, 'mutants'), patches)]
    # Nothing wider than WIDTH, whatever a log held.
    return [part.replace(NBSP, ' ') for x in out
            for part in (textwrap.wrap(x, WIDTH, subsequent_indent='  ')
                         if len(x) > WIDTH else [x])]
