# SPDX-License-Identifier: GPL-2.0
"""The acceptance report of every run so far, in Markdown: kernels,
results, the kernels of each base side by side (translation entries, vmap
benchmark, granule maps in report/*.svg beside it), the mutation matrix."""

import glob
import os
import re
from typing import Callable, Dict, List, Optional, Tuple, TypeVar

from . import formats, granule_svg, ktap, matrix, runs
from .verdicts import collect

KERNEL_ORDER = {'stock': 0, 'reference': 1}
T = TypeVar('T')


def kernel_section(dirs: List[str], logs: str) -> List[str]:
    out = ['## Kernel', '',
           '| run | kernel | base | target | variant | source | version '
           '| page size |', '|---|---|---|---|---|---|---|---|']
    for d in dirs:
        name = runs.name(d)
        version, page = runs.kernel_info(os.path.join(
            logs, f'{name}-kselftest.log'))
        p = runs.parts(d)
        out.append(f'| {name} | {p.kernel} | {p.base or "—"} | {p.target} | '
                   f'{p.variant} | {formats.md_cell(runs.source(d))} | '
                   f'{version} | {page} |')
    return out + ['', 'The source from `<run>/source.txt` (what '
                  '`make run` built), the version and page size from '
                  f'`PERF_AUX: kernel` in `{runs.name(logs)}/'
                  '<run>-kselftest.log`; the variant names the boot '
                  'parameter or configuration (README, `VARIANT`).']


def results_section(dirs: List[str]) -> List[str]:
    out = ['## Results', '',
           '| run | suite | passed | failed | skipped |',
           '|---|---|---:|---:|---:|']
    for d in dirs:
        for r in collect(d):
            out.append(f'| {runs.name(d)} | {r.name} | '
                       f'{r.passed} | {r.failures} | {r.skipped} |')
    return out + ['', 'Raw KTAP: `out/results/<run>/<suite>.ktap`, a run '
                  'being `<kernel>-<base>-<target>[-<variant>]`.']


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


def suite_text(d: str, suite: str) -> str:
    path = os.path.join(d, f'{suite}.ktap')
    return ktap.read_text(path) if os.path.isfile(path) else ''


def short_names(names: List[str]) -> Dict[str, str]:
    """Names without a last dotted component they all share."""
    tails = {n.rsplit('.', 1)[-1] for n in names if '.' in n}
    if len(tails) != 1 or not all('.' in n for n in names):
        return {n: n for n in names}
    return {n: n.rsplit('.', 1)[0] for n in names}


def shown(columns: Dict[str, Dict[str, T]]) -> Tuple[List[str], List[str]]:
    """Of {kernel: {test: value}}: the kernels with any value, and every
    test in order of appearance."""
    kernels = [k for k in columns if columns[k]]
    return kernels, list(dict.fromkeys(t for k in kernels for t in columns[k]))


def comparison_tables(
        dirs: List[str], values_of: Callable[[str], Dict[str, T]],
        head: Callable[[List[str]], List[Tuple[str, str]]],
        row: Callable[[Dict[str, str], Dict[str, Optional[T]]], List[str]]
) -> List[str]:
    """A table a comparison: a row a test of values_of(run), a column a
    kernel; head(kernels) the (title, alignment) of the columns after the
    name, row(runs, {kernel: value or None}) their cells."""
    out: List[str] = []
    for heading, group in comparisons(dirs):
        values = {k: values_of(d) for k, d in group.items()}
        kernels, tests = shown(values)
        if not tests:
            continue
        cols = [('buffer', '---')] + head(kernels)
        out += ['', f'### {heading}', '',
                '| ' + ' | '.join(c[0] for c in cols) + ' |',
                '|' + ''.join(f'{c[1]}|' for c in cols)]
        names = short_names(tests)
        out += ['| ' + ' | '.join([names[t]] + row(
            group, {k: values[k].get(t) for k in kernels})) + ' |'
            for t in tests]
    return out


def entries_values(text: str) -> List[formats.Entries]:
    """The entries lines of a KTAP document, named by their test."""
    named, _ = ktap.named_by_result(text.splitlines(), formats.entries)
    for test, found in named:
        for e in found:
            e.test = test
    return [e for _, found in named for e in found]


def entries_section(dirs: List[str]) -> List[str]:
    out = ['## Translation entries', '',
           'Entries of each AUX buffer\'s vmap, from pagesize_test '
           '(one a PMD or cont-PTE block, one a PTE page), the kernels of '
           'each base side by side.']

    def row(_: Dict[str, str],
            cells: Dict[str, Optional[formats.Entries]]) -> List[str]:
        first = next(e for e in cells.values() if e)
        return [str(first.pages)] + [
            f'{e.entries} ({e.detail})' if e else '—'
            for e in cells.values()] + [first.minimum]

    out += comparison_tables(
        dirs, lambda d: {e.test: e for e in entries_values(
            suite_text(d, 'perf_aux.pagesize_test'))},
        lambda kernels: [('pages', '---:')] + [(k, '---:') for k in kernels]
        + [('at least', '---:')], row)
    if len(out) == 3:
        out += ['', 'No pagesize_test entries in these runs.']
    return out


def bench_values(text: str) -> Dict[str, int]:
    return next(filter(None, map(formats.bench, text.splitlines())), {})


def bench_lines(base: Dict[str, int], new: Dict[str, int]) -> List[str]:
    """One line per timing: base, new and base/new (>1: new is faster)."""
    lines = []
    for key in sorted(k for k in base if k in new and '_' in k):
        unit = key.rsplit('_', 1)[1]
        if unit not in ('ns', 'usec'):
            continue
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
        if 'stock' not in group or 'reference' not in group:
            continue
        lines = bench_lines(*(bench_values(suite_text(group[k],
                                                      'test_vmalloc'))
                              for k in ('stock', 'reference')))
        if lines:
            out += ['', f'### {heading}', ''] + [f'- `{x}`' for x in lines]
    if len(out) == 3:
        out += ['', 'No stock and reference runs with vmap benchmark '
                'results to compare.']
    return out


def svg_name(run: str, test: str, used: set) -> str:
    base = re.sub(r'[^A-Za-z0-9._-]', '_', f'{run}-{test}')
    name, n = f'{base}.svg', 1
    while name in used:
        n += 1
        name = f'{base}-{n}.svg'
    used.add(name)
    return name


def picture(svg_dir: str, run: str, m: Optional[granule_svg.GranuleMap],
            used: set) -> str:
    """A table cell: the picture of m, written into svg_dir, and its
    caption."""
    if m is None:
        return '—'
    name = svg_name(run, m.test, used)
    os.makedirs(svg_dir, exist_ok=True)
    with open(os.path.join(svg_dir, name), 'w') as f:
        f.write(granule_svg.render(m, f'{run}: {m.test}'))
    caption = formats.md_cell('; '.join(granule_svg.caption(m)))
    return f'![{run} {m.test}](report/{name})<br>{caption}.'


def granule_section(dirs: List[str], report_dir: str) -> List[str]:
    svg_dir = os.path.join(report_dir, 'report')
    for old in glob.glob(os.path.join(svg_dir, '*.svg')):
        os.remove(old)
    out = ['## Granule maps', '',
           'Each AUX buffer\'s pages in order, by the granule that maps '
           'them: PMD, cont-PTE, PTE; thin lines are block boundaries. '
           'The kernels of each base side by side.']
    used: set = set()
    out += comparison_tables(
        dirs, lambda d: {m.test: m for text in ktap.read_suites(d).values()
                         for m in granule_svg.parse_ktap(text.splitlines())},
        lambda kernels: [(k, '---') for k in kernels],
        lambda group, cells: [picture(svg_dir, runs.name(group[k]), m, used)
                              for k, m in cells.items()])
    if not used:
        out += ['', 'No `granule_map` lines in these runs.']
    return out


def write_report(path: str, dirs: List[str], mutants: str, patches: str,
                 logs: str) -> None:
    report_dir = os.path.dirname(os.path.abspath(path))
    os.makedirs(report_dir, exist_ok=True)
    sections = [['# perf_aux acceptance report'], kernel_section(dirs, logs),
                results_section(dirs), entries_section(dirs),
                bench_section(dirs)]
    if os.path.isdir(mutants):
        sections.append(matrix.section(mutants, patches))
    sections.append(granule_section(dirs, report_dir))
    with open(path, 'w') as f:
        f.write('\n\n'.join('\n'.join(s) for s in sections) + '\n')
