# SPDX-License-Identifier: GPL-2.0
"""Every line format the glue reads, defined once: what the suites, the
kselftest runner, the initramfs, lib/test_vmalloc.c and make run print,
and how result directories are named."""

import re
from dataclasses import dataclass
from typing import Dict, Optional, Tuple

# A KTAP result line, "ok 3 name", "not ok 3 - name # SKIP reason": at the
# top level, nested (indented), or inside the kselftest runner's output
# ('# ' prefixes).
_RESULT = re.compile(r'^(?P<prefix>[\s#]*?)(?P<status>not ok|ok) '
                     r'(?P<number>[0-9]+) (?:- )?(?P<name>[^#]*?)\s*'
                     r'(?P<directive>#.*)?$')
_SKIP = re.compile(r'^#\s*SKIP ?(.*)$')
# run_kselftest.sh's name for one test binary in its own result line.
_KSFT_NAME = re.compile(r'^selftests: (\S+): (\S+)$')
# The first lines of a KTAP document, and of a subtest.
TAP_HEADER = re.compile(r'^(K?TAP version [0-9]+)$')
SUBTEST = re.compile(r'^\s*# Subtest: (\S+)')

# lib/test_vmalloc.c's verdict per test case, printed when it finishes.
VMALLOC_SUMMARY = re.compile(
    r'Summary: (\S+) passed: ([0-9]+) failed: ([0-9]+) ')
# The vmap benchmark's diagnostic, "vmap_bench: k=v k=v ...", in the
# test_vmalloc suite results kunit writes from the line below.
_BENCH = re.compile(r'vmap_bench: (.*)$')
# lib/test_vmalloc.c's vmap benchmark, run in the KUnit boot.
VMAP_BENCH = re.compile(
    r'Summary: vmap_contig_chunks_test passed: ([0-9]+) failed: ([0-9]+) '
    r'.*loops: ([0-9]+) avg: ([0-9]+) usec')
# The initramfs, before the kselftests.
KERNEL = re.compile(r'PERF_AUX: kernel (\S+), page size (.+?)\s*$')
# The kernel's boot parameters, early in every console log.
CMDLINE = re.compile(r'Kernel command line: (.*?)\s*$')
# make run's source.txt: "source: Debian linux-source-7.3 ...".
SOURCE = re.compile(r'^source: (.+?)\s*$')
# pagesize_test: "entries 16 for 256 pages (PMD 0, cont 256, PTE 0), at
# least 1" in a diagnostic, before the result line of its test.
_ENTRIES = re.compile(r'entries ([0-9]+) for ([0-9]+) pages'
                      r'(?: \(([^)]*)\))?(?:, at least ([0-9]+))?')
# pagesize_test: "granule_map k=v ..." after a '# ', alone or after a
# "file:line:test:"; its map= field is runs like "P1024,C64,T3".
GRANULE_MAP = re.compile(r'^\s*#.*?[\s:]granule_map\s+(.*?)\s*$')
GRANULE_RUNS = re.compile(r'[PCT][0-9]+(?:,[PCT][0-9]+)*')
# A result directory: <kernel>-<base>-<target>[-<variant>]; a mutant's
# "kernel" is its patch name, the unmutated one's "baseline".
_RUN_NAME = re.compile(r'^(.+?)-([0-9]+\.[0-9]+)-(arm64-[0-9]+k|x86_64)'
                       r'(?:-(.+))?$')
# The first line of a mutant patch says what it breaks.
MUTANT_HEADER = re.compile(r'^Mutant: ')


@dataclass(frozen=True)
class Result:
    """One KTAP result line."""
    prefix: str     # indentation and runner '#'s before it
    ok: bool
    number: int
    name: str
    directive: str  # '# SKIP reason', '# exit=1', or ''

    @property
    def top(self) -> bool:
        """A result of the document itself, not of a nested test."""
        return not self.prefix

    @property
    def own(self) -> bool:
        """A result of this document's tree, not one the runner quotes."""
        return '#' not in self.prefix

    @property
    def comment(self) -> str:
        return self.directive[1:].lstrip()

    def skip_reason(self) -> Optional[str]:
        """The reason of an ok ... # SKIP, else None."""
        match = _SKIP.match(self.directive)
        return match.group(1) if match and self.ok else None

    def renumbered(self, name: str) -> str:
        """The line as test 1 of a document, named name."""
        return f'{"ok" if self.ok else "not ok"} 1 {name}' + (
            f' {self.directive}' if self.directive else '')


def result(line: str) -> Optional[Result]:
    m = _RESULT.match(line)
    return m and Result(m['prefix'], m['status'] == 'ok', int(m['number']),
                        m['name'], m['directive'] or '')


def kselftest_binary(r: Result) -> Optional[Tuple[str, str]]:
    """(collection, binary) of a runner's result line, else None."""
    m = _KSFT_NAME.match(r.name) if r.top else None
    return (m.group(1), m.group(2)) if m else None


def bench(line: str) -> Optional[Dict[str, int]]:
    """The key=value numbers of a vmap_bench line, else None."""
    m = _BENCH.search(line)
    return m and {k: int(v) for k, v in (kv.split('=')
                                         for kv in m.group(1).split())}


def source_parts(text: str) -> Tuple[str, str]:
    """A source's tree ("Debian linux-source-7.3 7.3~rc7-1~exp1", or a
    KERNEL_SRC path and its description) and kernel version."""
    tree, sep, version = text.rpartition(', version ')
    return (tree, version) if sep else (text, '')


def page_bytes(size: str) -> Optional[int]:
    """Bytes of the initramfs's page size ("4 kB"), else None."""
    number, _, unit = size.partition(' ')
    return int(number) * 1024 if number.isdigit() and unit == 'kB' else None


def target_arch(target: str) -> str:
    return 'arm64' if target.startswith('arm64-') else target


def target_page_size(target: str) -> Optional[int]:
    """The page size a target's name promises ("arm64-16k"), else None."""
    if target == 'x86_64':
        return 4096
    size = target[len('arm64-'):]
    if target_arch(target) == 'arm64' and size[:-1].isdigit() \
            and size.endswith('k'):
        return int(size[:-1]) * 1024
    return None


@dataclass
class Entries:
    """Translation entries pagesize_test found for one buffer."""
    entries: int
    pages: int
    detail: str
    minimum: str
    test: str = ''

    def granule_pages(self) -> Dict[str, int]:
        """{'PMD': a, 'cont': b, 'PTE': c} of the detail, if any."""
        out = {}
        for part in self.detail.split(','):
            name, _, number = part.strip().rpartition(' ')
            if name and number.isdigit():
                out[name] = int(number)
        return out


def entries(line: str) -> Optional[Entries]:
    """The entries diagnostic in line, else None."""
    m = line.lstrip().startswith('#') and _ENTRIES.search(line)
    return Entries(int(m.group(1)), int(m.group(2)), m.group(3) or '',
                   m.group(4) or '') if m else None


@dataclass(frozen=True)
class RunName:
    """The parts of a result directory's name."""
    kernel: str
    base: str
    target: str
    variant: str

    @property
    def setup(self) -> str:
        """Target and variant: what a comparison of kernels shares."""
        return self.target + ('' if self.variant == 'default'
                              else f'-{self.variant}')


def run_name(name: str) -> RunName:
    """The parts of name; a name of no known form is all kernel."""
    m = _RUN_NAME.match(name)
    return RunName(m.group(1), m.group(2), m.group(3),
                   m.group(4) or 'default') if m else RunName(name, '', '', '')


def base_key(base: str) -> tuple:
    """Sort key putting the newest base ("7.3") first, anything else last."""
    parts = base.split('.')
    if not base or not all(p.isdigit() for p in parts):
        return (1, base)
    return tuple(-int(p) for p in parts)


def totals(passed: int, failed: int, skipped: int) -> str:
    """The count line every summary and check ends with."""
    return f'{passed} passed, {failed} failed, {skipped} skipped'


def md_cell(text: str) -> str:
    return text.replace('|', '\\|')
