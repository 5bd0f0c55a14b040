# SPDX-License-Identifier: GPL-2.0
"""KTAP: the kernel's kunit_parser (from $KUNIT_TOOL_DIR, else the
newest $PERF_AUX_CACHE/src/<base>/tools/testing/kunit), and console logs
split per suite."""

import functools
import glob
import inspect
import io
import os
import sys
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple, \
    TypeVar

from . import formats

T = TypeVar('T')


def _tool_dirs() -> List[str]:
    cache = os.environ.get('PERF_AUX_CACHE', '/var/cache/perf_aux')
    found = glob.glob(os.path.join(cache, 'src', '*', 'tools', 'testing',
                                   'kunit'))
    # src/<base>/tools/testing/kunit, the newest base first.
    newest = sorted(found, key=lambda p: formats.base_key(
        p.split(os.sep)[-4]))
    return [os.environ.get('KUNIT_TOOL_DIR', '')] + newest


@functools.lru_cache(maxsize=None)
def _kunit() -> Tuple[Any, Any]:
    for path in _tool_dirs():
        if path and os.path.isfile(os.path.join(path, 'kunit_parser.py')):
            sys.path.insert(0, path)
            import kunit_parser
            import kunit_printer
            # The parser prints progress as it goes; keep our output ours.
            quiet = kunit_printer.Printer(output=io.StringIO())
            kunit_parser.stdout = quiet
            return kunit_parser, quiet
    sys.exit('perf_aux_results: no kunit_parser.py in $KUNIT_TOOL_DIR or '
             '$PERF_AUX_CACHE/src/*/tools/testing/kunit; set KUNIT_TOOL_DIR')


def kunit() -> Any:
    return _kunit()[0]


def parse(text: str) -> Any:
    """kunit_parser's tree of a KTAP document; one the parser gives up on
    (a kernel killed mid-line) is a crashed test."""
    parser, quiet = _kunit()
    lines = text.splitlines()
    try:
        # 6.12's parser prints through a module global, later ones take it.
        if 'printer' in inspect.signature(parser.parse_run_tests).parameters:
            return parser.parse_run_tests(lines, quiet)
        return parser.parse_run_tests(lines)
    except ValueError:
        test = parser.Test()
        test.name = 'unparsable'
        test.status = parser.TestStatus.TEST_CRASHED
        test.counts.crashed = 1
        return test


def document(block: List[str], last: str) -> str:
    """One suite's lines as a KTAP document with a plan of one."""
    return '\n'.join(['KTAP version 1', '1..1'] + block + [last]) + '\n'


def _assertion_line(line: str) -> bool:
    """A line of a failed expectation: indented, no diagnostic, no result."""
    body = line.lstrip()
    return (line != body and not body.startswith('#') and
            not formats.result(body))


def split_kunit(log: Iterable[str]) -> Dict[str, str]:
    """Splits a KUnit console log into one KTAP document per suite."""
    lines = list(kunit().extract_tap_lines(log))
    suites: Dict[str, str] = {}
    block: List[str] = []
    for line in lines[1:]:
        if line.startswith(' ') or line.startswith('#'):
            block.append(line)
            continue
        r = formats.result(line)
        if r and r.top:
            suites[r.name] = document(block, r.renumbered(r.name))
            block = []
        elif line.strip() and block and _assertion_line(block[-1]):
            # KUnit prints an expectation's message at column 0, right
            # after its "Expected ..." lines: kept, as a diagnostic.  Other
            # kernel messages there are not the test's, and are left out.
            block.append('    # ' + line)
    # A suite the kernel died in has no result line: it failed.
    header = next((formats.SUBTEST.match(b) for b in block
                   if formats.SUBTEST.match(b)), None)
    if header:
        name = header.group(1)
        suites[name] = document(block, f'not ok 1 {name}')
    return suites


def split_kselftest(log: Iterable[str]) -> Dict[str, str]:
    """Splits run_kselftest.sh output (a binary's lines prefixed '# ', then
    the runner's result line for it) into each binary's own KTAP; a binary
    with no result of its own is one case, the runner's verdict."""
    suites: Dict[str, str] = {}
    body: List[str] = []
    for raw in log:
        line = raw.rstrip('\r\n')
        r = formats.result(line)
        binary = r and formats.kselftest_binary(r)
        if not binary:
            if line.startswith('# ') or line == '#':
                body.append(line[2:])
            continue
        start = next((i for i, b in enumerate(body)
                      if formats.TAP_HEADER.match(b)), None)
        inner = body[start:] if start is not None else []
        if not any(formats.result(b) and formats.result(b).top
                   for b in inner):
            inner = ['KTAP version 1', '1..1', f'{"ok" if r.ok else "not ok"}'
                     f' 1 {binary[1]}' + (f' # {r.comment}' if r.comment
                                           else '')]
        suites['.'.join(binary)] = '\n'.join(inner) + '\n'
        body = []
    return suites


def split_kunit_boot(log: Iterable[str]) -> Dict[str, str]:
    """The KUnit boot's suites, and lib/test_vmalloc.c's vmap benchmark, if
    it ran, as the suite test_vmalloc: one case, the time a diagnostic."""
    lines = list(log)
    suites = split_kunit(lines)
    m = next(filter(None, map(formats.VMAP_BENCH.search, lines)), None)
    if m:
        ok = int(m.group(1)) > 0 and int(m.group(2)) == 0
        suites['test_vmalloc'] = document(
            [f'# vmap_bench: vmap_contig_chunks_usec={m.group(4)} '
             f'loops={m.group(3)}'],
            f'{"ok" if ok else "not ok"} 1 vmap_contig_chunks_test')
    return suites


def split_test_vmalloc(log: Iterable[str]) -> Dict[str, str]:
    """The peer lib/test_vmalloc.c as a KTAP suite: a case passes when it
    ran and nothing failed; no summary at all is one failed case."""
    cases = []
    for line in log:
        m = formats.VMALLOC_SUMMARY.search(line)
        if m:
            ok = int(m.group(2)) > 0 and int(m.group(3)) == 0
            cases.append(f'{"ok" if ok else "not ok"} {len(cases) + 1} '
                         f'{m.group(1)}')
    if not cases:
        cases = ['not ok 1 test_vmalloc_finished']
    return {'peer.test_vmalloc':
            '\n'.join(['KTAP version 1', f'1..{len(cases)}'] + cases) + '\n'}


def named_by_result(lines: Iterable[str], find: Callable[[str], Optional[T]]
                    ) -> Tuple[List[Tuple[str, List[T]]], List[T]]:
    """What find() sees in lines, grouped under the name of the result line
    of the document's own tree that follows; and what no result follows
    (the test died)."""
    named: List[Tuple[str, List[T]]] = []
    pending: List[T] = []
    for line in lines:
        item = find(line)
        if item is not None:
            pending.append(item)
            continue
        r = formats.result(line)
        if r and r.own and pending:
            named.append((r.name, pending))
            pending = []
    return named, pending


def read_text(path: str) -> str:
    with open(path, errors='replace') as f:
        return f.read()


def suite_files(d: str) -> List[Tuple[str, str]]:
    """(suite, path) of each KTAP document in a results directory."""
    return [(os.path.basename(p)[:-len('.ktap')], p)
            for p in sorted(glob.glob(os.path.join(d, '*.ktap')))]


def read_suites(d: str) -> Dict[str, str]:
    """Each suite's KTAP document in a results directory."""
    return {suite: read_text(path) for suite, path in suite_files(d)}


def write_suites(suites: Dict[str, str], outdir: str) -> None:
    os.makedirs(outdir, exist_ok=True)
    for name, text in suites.items():
        with open(os.path.join(outdir, f'{name}.ktap'), 'w') as f:
            f.write(text)
