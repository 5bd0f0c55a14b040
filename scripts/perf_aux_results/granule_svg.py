# SPDX-License-Identifier: GPL-2.0
"""Granule maps of AUX buffers, from pagesize_test's diagnostic lines
"# [file:line:test:]granule_map pmu=test_aux_large pages=1024 snapshot=0
page_size=4096 pmd_pages=512 cont_pages=16 map=P1024,C64,T3" (runs of
pages mapped by PMD blocks, cont-PTE blocks, PTEs; named by the result line
after it) to SVG: a bar of segments a run, block boundaries, a caption."""

import math
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Tuple
from xml.sax.saxutils import escape, quoteattr

from . import formats, ktap

INT_FIELDS = ('pages', 'snapshot', 'page_size', 'pmd_pages', 'cont_pages')

NAMES = {'P': 'PMD', 'C': 'cont-PTE', 'T': 'PTE'}
CLASSES = {'P': 'seg-pmd', 'C': 'seg-cont', 'T': 'seg-pte'}
COLOURS = {'P': '#0072b2', 'C': '#e69f00', 'T': '#999999'}

# Picture geometry, in SVG user units (pixels).
WIDTH = 640
BAR_X = 20
BAR_WIDTH = 600
BAR_Y = 28
BAR_HEIGHT = 28
MIN_SEGMENT = 8       # a run of any length stays visible
MIN_BLOCK_GAP = 2     # block boundaries closer than this are not drawn
HEIGHT = 132


@dataclass
class GranuleMap:
    """One buffer's granules, as one granule_map line gives them."""
    pmu: str
    pages: int
    snapshot: int
    page_size: int
    pmd_pages: int
    cont_pages: int
    runs: List[Tuple[str, int]] = field(default_factory=list)
    test: str = ''

    @property
    def size(self) -> int:
        return self.pages * self.page_size

    def block_pages(self, granule: str) -> int:
        """Pages one translation entry of this granule maps."""
        pages = {'P': self.pmd_pages, 'C': self.cont_pages}.get(granule, 1)
        return pages if pages > 0 else 1


def parse_line(line: str) -> Optional[GranuleMap]:
    """The granule map of one diagnostic line, or None if it holds none."""
    match = formats.GRANULE_MAP.match(line)
    fields = dict(kv.split('=', 1) for kv in match.group(1).split()
                  if '=' in kv) if match else {}
    if not all(k in fields for k in INT_FIELDS + ('map',)) or \
            not formats.GRANULE_RUNS.fullmatch(fields['map']):
        return None
    try:
        ints = {k: int(fields[k]) for k in INT_FIELDS}
    except ValueError:
        return None
    return GranuleMap(pmu=fields.get('pmu', '?'), **ints, runs=[
        (run[0], int(run[1:])) for run in fields['map'].split(',')])


def parse_ktap(lines: Iterable[str]) -> List[GranuleMap]:
    """Every granule map of a KTAP document, named by the result after it
    (<test>, <test>-2, ...), else (the test died) by its PMU."""
    named, orphans = ktap.named_by_result(lines, parse_line)
    maps: List[GranuleMap] = []
    for test, found in named:
        for i, m in enumerate(found):
            m.test = test + (f'-{i + 1}' if i else '')
        maps += found
    for m in orphans:
        m.test = m.pmu
    return maps + orphans


def blocks(m: GranuleMap) -> Dict[str, Tuple[int, int]]:
    """Per granule letter: (pages, translation entries)."""
    totals: Dict[str, Tuple[int, int]] = {}
    for granule, pages in m.runs:
        entries = math.ceil(pages / m.block_pages(granule))
        old = totals.get(granule, (0, 0))
        totals[granule] = (old[0] + pages, old[1] + entries)
    return totals


def entries(m: GranuleMap) -> int:
    """Translation entries of the mapping: one a block, one a PTE page."""
    return sum(e for _, e in blocks(m).values())


def layout(pages: List[int], width: float = BAR_WIDTH,
           minimum: float = MIN_SEGMENT) -> List[float]:
    """Widths of segments of these page counts, filling width: in
    proportion, but none narrower than minimum."""
    if not pages:
        return []
    minimum = min(minimum, width / len(pages))
    fixed: set = set()
    while True:
        rest = width - minimum * len(fixed)
        free = [i for i in range(len(pages)) if i not in fixed]
        total = sum(pages[i] for i in free)
        widths = {i: rest * pages[i] / total if total else rest / len(free)
                  for i in free}
        narrow = {i for i, w in widths.items() if w < minimum}
        if not narrow:
            return [widths[i] if i in widths else minimum
                    for i in range(len(pages))]
        fixed |= narrow


def human(size: int) -> str:
    """A byte count in the largest binary unit that keeps it >= 1."""
    value, unit = float(size), 'bytes'
    for bigger in ('KiB', 'MiB', 'GiB'):
        if value < 1024:
            break
        value, unit = value / 1024, bigger
    return f'{value:.{0 if value.is_integer() else 1}f} {unit}'


def caption(m: GranuleMap) -> List[str]:
    """The buffer; its granules and entries."""
    parts = []
    for granule, (pages, count) in blocks(m).items():
        part = f'{NAMES[granule]} {pages} pages'
        if granule != 'T':
            part += f' ({count} block{"" if count == 1 else "s"})'
        parts.append(part)
    mapped = sum(p for _, p in m.runs)
    short = '' if mapped == m.pages else f' (map covers {mapped})'
    return [f'{m.pmu}: {m.pages} pages{short}, {m.size} bytes '
            f'({human(m.size)}), {m.page_size}-byte pages, '
            f'snapshot {m.snapshot}',
            ', '.join(parts) + f': {entries(m)} translation entries']


def _fmt(x: float) -> str:
    return f'{x:.2f}'.rstrip('0').rstrip('.')


def _text(x: float, y: float, text: str, size: int = 12) -> str:
    return (f'<text x="{_fmt(x)}" y="{_fmt(y)}" font-size="{size}">'
            f'{escape(text)}</text>')


def _segments(m: GranuleMap) -> List[str]:
    """The bar: a rect a run, then the block boundaries inside it."""
    out = []
    x = float(BAR_X)
    widths = layout([p for _, p in m.runs])
    for (granule, pages), w in zip(m.runs, widths):
        out.append(f'<rect class="{CLASSES[granule]}" x="{_fmt(x)}" '
                   f'y="{BAR_Y}" width="{_fmt(w)}" height="{BAR_HEIGHT}" '
                   f'fill="{COLOURS[granule]}"/>')
        per_block = m.block_pages(granule)
        step = w * per_block / pages if pages else w
        if granule != 'T' and step >= MIN_BLOCK_GAP:
            for k in range(1, math.ceil(pages / per_block)):
                bx = _fmt(x + k * step)
                out.append(f'<line class="block" x1="{bx}" x2="{bx}" '
                           f'y1="{BAR_Y}" y2="{BAR_Y + BAR_HEIGHT}" '
                           'stroke="#ffffff" stroke-width="1"/>')
        x += w
    return out


def _legend() -> List[str]:
    out = []
    x = BAR_X
    y = BAR_Y + BAR_HEIGHT + 14
    for granule in 'PCT':
        out.append(f'<rect class="legend" x="{x}" y="{y}" width="12" '
                   f'height="12" fill="{COLOURS[granule]}"/>')
        out.append(_text(x + 16, y + 10, NAMES[granule]))
        x += 110
    return out


def render(m: GranuleMap, title: str) -> str:
    lines = caption(m)
    y = BAR_Y + BAR_HEIGHT + 50
    body = ([f'<title>{escape(title)}</title>',
             f'<rect x="0" y="0" width="{WIDTH}" height="{HEIGHT}" '
             'fill="#ffffff"/>',
             _text(BAR_X, 18, title, 13)]
            + _segments(m) + _legend()
            + [_text(BAR_X, y + 18 * i, text, 11)
               for i, text in enumerate(lines)])
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" '
            f'height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" '
            f'font-family="sans-serif" aria-label={quoteattr(title)}>\n'
            + '\n'.join(body) + '\n</svg>\n')
