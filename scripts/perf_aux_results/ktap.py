# SPDX-License-Identifier: GPL-2.0
"""The parse layer: the out/ tree's run directories, the KTAP lines the tests
print, console logs split into a document a suite, and the kernel's own
kunit_parser ($KUNIT_TOOL_DIR, else the newest cached source tree)."""

import functools
import glob
import inspect
import io
import os
import re
import sys
from typing import Any, Dict, Iterable, List, NamedTuple, Optional, Set, Tuple

from perf_aux.lib import read

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.environ.get('PERF_AUX_OUT', os.path.join(ROOT, 'out'))
PATCHES = os.path.join(ROOT, 'scripts', 'mutants')
_RUN_NAME = re.compile(r'^(.+?)-([0-9]+\.[0-9]+)-(arm64-[0-9]+k|x86_64)(?:-(.+))?$')
# The initramfs's line before the kselftests.
KERNEL = re.compile(r'PERF_AUX: kernel (\S+), page size (.+?)\s*$')
# "ok 3 name", "not ok 3 - name # SKIP reason": top level, nested, or
# quoted by the kselftest runner ('# ').
_RESULT = re.compile(r'^(?P<prefix>[\s#]*?)(?P<status>not ok|ok) '
                     r'(?P<number>[0-9]+) (?:- )?(?P<name>[^#]*?)\s*'
                     r'(?P<directive>#.*)?$')
_KSFT_NAME = re.compile(r'^selftests: (\S+): (\S+)$')
_TAP_HEADER = re.compile(r'^K?TAP version [0-9]+$')
_SUBTEST = re.compile(r'^\s*# Subtest: (\S+)')
_VMALLOC_SUMMARY = re.compile(r'Summary: (\S+) passed: ([0-9]+) failed: ([0-9]+) ')
_VMAP_BENCH = re.compile(
    r'Summary: vmap_contig_chunks_test passed: ([0-9]+) failed: ([0-9]+) '
    r'.*loops: ([0-9]+) avg: ([0-9]+) usec')
# pagesize_test's "entries 16 for 256 pages (PMD 0, cont 256, PTE 0)".
# A skip's reason that is a fact of one boot's free memory, not of the kernel.
MEMORY = re.compile(r'memory|free[ _]block')
_ENTRIES = re.compile(r'entries ([0-9]+) for ([0-9]+) pages(?: \(([^)]*)\))?')

class ToolMissing(Exception):
    """No kernel tree's kunit_parser.py to read KTAP with."""

class RunName(NamedTuple):
    kernel: str
    base: str
    target: str
    variant: str

def name(d: str) -> str:
    return os.path.basename(d.rstrip('/'))

def parts(d: str) -> RunName:
    """<kernel>-<base>-<target>[-<variant>]; another name is all kernel."""
    m = _RUN_NAME.match(name(d))
    return RunName(m[1], m[2], m[3], m[4] or 'default') if m else RunName(name(d), '', '', '')

def base_key(base: str) -> tuple:
    """Sort key putting the newest base first, anything else last."""
    if not base or not all(p.isdigit() for p in base.split('.')):
        return (1, base)
    return tuple(-int(p) for p in base.split('.'))

def run_dirs(parent: str) -> List[str]:
    return sorted(glob.glob(os.path.join(parent, '*/')), key=name)

def totals(passed: int, failed: int, skipped: int) -> str:
    return f'{passed} passed, {failed} failed, {skipped} skipped'

class Result(NamedTuple):
    prefix: str     # indentation and runner '#'s
    ok: bool
    name: str
    directive: str  # '# SKIP reason', '# exit=1', or ''

    @property
    def top(self) -> bool:
        return not self.prefix

    @property
    def own(self) -> bool:
        """Of this document's tree, not quoted by the runner."""
        return '#' not in self.prefix

    @property
    def comment(self) -> str:
        return self.directive[1:].lstrip()

    def skip_reason(self) -> Optional[str]:
        m = re.match(r'^#\s*SKIP ?(.*)$', self.directive)
        return m[1] if m and self.ok else None

    def line(self, number: int = 1) -> str:
        return f'{"ok" if self.ok else "not ok"} {number} {self.name}' + (
            f' {self.directive}' if self.directive else '')

def memory_skips(lines: Iterable[str]) -> Set[str]:
    """The names of the cases LINES skip for want of memory."""
    return {r.name for r in map(result, lines) if r and MEMORY.search(r.skip_reason() or '')}

def result(line: str) -> Optional[Result]:
    m = _RESULT.match(line)
    return m and Result(m['prefix'], m['status'] == 'ok', m['name'], m['directive'] or '')

def kselftest_binary(r: Result) -> Optional[Tuple[str, str]]:
    """(collection, binary) of a runner's result line, else None."""
    m = _KSFT_NAME.match(r.name) if r.top else None
    return (m[1], m[2]) if m else None

class Entries(NamedTuple):
    """Translation entries pagesize_test found for one buffer."""
    entries: int
    pages: int
    detail: str     # "PMD 0, cont 256, PTE 0"

    def granule_pages(self) -> Dict[str, int]:
        words = (p.strip().rpartition(' ') for p in self.detail.split(','))
        return {k: int(n) for k, _, n in words if k and n.isdigit()}

def entries(line: str) -> Optional[Entries]:
    m = line.lstrip().startswith('#') and _ENTRIES.search(line)
    return Entries(int(m[1]), int(m[2]), m[3] or '') if m else None

def bench(text: str) -> Dict[str, int]:
    """The numbers of a document's "vmap_bench: k=v ..." line."""
    m = re.search(r'vmap_bench: (.*)$', text, re.M)
    return {k: int(v) for k, v in (kv.split('=') for kv in m[1].split())} if m else {}

def _tool_dirs() -> List[str]:
    cache = os.environ.get('PERF_AUX_CACHE', '/var/cache/perf_aux')
    found = glob.glob(os.path.join(cache, 'src', '*', 'tools', 'testing', 'kunit'))
    return [os.environ.get('KUNIT_TOOL_DIR', '')] + sorted(
        found, key=lambda p: base_key(p.split(os.sep)[-4]))

@functools.lru_cache(maxsize=None)
def _kunit() -> Tuple[Any, Any]:
    for path in _tool_dirs():
        if path and os.path.isfile(os.path.join(path, 'kunit_parser.py')):
            sys.path.insert(0, path)
            import kunit_parser
            import kunit_printer
            quiet = kunit_printer.Printer(output=io.StringIO())
            kunit_parser.stdout = quiet
            return kunit_parser, quiet
    raise ToolMissing('perf_aux_results: no kunit_parser.py in '
                      '$KUNIT_TOOL_DIR or $PERF_AUX_CACHE/src/*/tools/'
                      'testing/kunit; set KUNIT_TOOL_DIR')

def kunit() -> Any:
    return _kunit()[0]

def parse(text: str) -> Any:
    """kunit_parser's tree of a document; one it gives up on is a crash."""
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

def document(block: List[str], *results: str) -> str:
    return '\n'.join(['KTAP version 1', f'1..{len(results)}', *block, *results]) + '\n'

def split_kunit(log: Iterable[str]) -> Dict[str, str]:
    """A KUnit console log as one KTAP document a suite."""
    suites: Dict[str, str] = {}
    block: List[str] = []
    for line in list(kunit().extract_tap_lines(log))[1:]:
        r = result(line)
        last = block[-1].lstrip() if block else ''
        if line.startswith((' ', '#')):
            block.append(line)
        elif r and r.top:
            suites[r.name] = document(block, r.line())
            block = []
        elif line.strip() and block and last != block[-1] and \
                not last.startswith('#') and not result(last):
            # An expectation's message at column 0 after its "Expected"
            # lines is the test's; other kernel messages are not.
            block.append('    # ' + line)
    # A suite the kernel died in has no result line: it failed.
    header = next(filter(None, map(_SUBTEST.match, block)), None)
    if header:
        suites[header[1]] = document(block, f'not ok 1 {header[1]}')
    return suites

def split_kselftest(log: Iterable[str]) -> Dict[str, str]:
    """run_kselftest.sh's output as each binary's own KTAP; a binary with
    none is one case, the runner's verdict."""
    suites: Dict[str, str] = {}
    body: List[str] = []
    for raw in log:
        line = raw.rstrip('\r\n')
        r = result(line)
        binary = r and kselftest_binary(r)
        if not binary:
            if line.startswith('# ') or line == '#':
                body.append(line[2:])
            continue
        start = next((i for i, b in enumerate(body) if _TAP_HEADER.match(b)), len(body))
        inner = body[start:]
        if not any(result(b) and result(b).top for b in inner):
            inner = document([], r._replace(name=binary[1], directive=(
                f'# {r.comment}' if r.comment else '')).line()).splitlines()
        suites['.'.join(binary)] = '\n'.join(inner) + '\n'
        body = []
    return suites

def split_kunit_boot(log: Iterable[str]) -> Dict[str, str]:
    """The KUnit boot's suites, and lib/test_vmalloc.c's vmap benchmark as
    the suite test_vmalloc (one case, the time a diagnostic)."""
    lines = list(log)
    suites = split_kunit(lines)
    m = next(filter(None, map(_VMAP_BENCH.search, lines)), None)
    if m:
        ok = int(m[1]) > 0 and int(m[2]) == 0
        suites['test_vmalloc'] = document(
            [f'# vmap_bench: vmap_contig_chunks_usec={m[4]} loops={m[3]}'],
            f'{"ok" if ok else "not ok"} 1 vmap_contig_chunks_test')
    return suites

def split_test_vmalloc(log: Iterable[str]) -> Dict[str, str]:
    """The peer lib/test_vmalloc.c as a suite: a case passes when it ran
    and nothing failed; no summary at all is one failed case."""
    found = [m for m in map(_VMALLOC_SUMMARY.search, log) if m]
    cases = [f'{"ok" if int(m[2]) > 0 and int(m[3]) == 0 else "not ok"} '
             f'{i} {m[1]}' for i, m in enumerate(found, 1)]
    return {'peer.test_vmalloc': document([], *(cases or ['not ok 1 test_vmalloc_finished']))}

def suite_files(d: str) -> List[Tuple[str, str]]:
    """(suite, path) of each KTAP document in a results directory."""
    return [(os.path.basename(p)[:-len('.ktap')], p)
            for p in sorted(glob.glob(os.path.join(d, '*.ktap')))]

def read_suites(d: str) -> Dict[str, str]:
    return {suite: read(path) for suite, path in suite_files(d)}

def suite_text(d: str, suite: str) -> str:
    return read(os.path.join(d, f'{suite}.ktap'))

def write_suites(suites: Dict[str, str], outdir: str) -> None:
    os.makedirs(outdir, exist_ok=True)
    for suite, text in suites.items():
        with open(os.path.join(outdir, f'{suite}.ktap'), 'w') as f:
            f.write(text)
