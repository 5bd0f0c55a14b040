# SPDX-License-Identifier: GPL-2.0
"""The out/ tree: run directories <kernel>-<base>-<target>[-<variant>]
(out/results/, out/mutants/; a mutant's kernel is its patch, the unmutated
one's "baseline"), their source.txt, their console logs
out/logs/<run>-kunit.log and <run>-kselftest.log."""

import glob
import os
import re
from typing import Dict, List, NamedTuple, Optional

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
OUT = os.environ.get('PERF_AUX_OUT', os.path.join(ROOT, 'out'))
PATCHES = os.path.join(ROOT, 'scripts', 'mutants')

_RUN_NAME = re.compile(r'^(.+?)-([0-9]+\.[0-9]+)-(arm64-[0-9]+k|x86_64)'
                       r'(?:-(.+))?$')
# The initramfs, before the kselftests.
KERNEL = re.compile(r'PERF_AUX: kernel (\S+), page size (.+?)\s*$')
# The kernel's boot parameters, early in every console log.
_CMDLINE = re.compile(r'Kernel command line: (.*?)\s*$')
# make run's source.txt: "source: Debian linux-source-7.3 ...".
_SOURCE = re.compile(r'^source: (.+?)\s*$')


class RunName(NamedTuple):
    kernel: str
    base: str
    target: str
    variant: str

    @property
    def setup(self) -> str:
        """Target and variant: what a comparison of kernels shares."""
        return self.target + ('' if self.variant == 'default'
                              else f'-{self.variant}')


def name(d: str) -> str:
    return os.path.basename(d.rstrip('/'))


def parts(d: str) -> RunName:
    """The parts of a run's name; a name of no known form is all kernel."""
    m = _RUN_NAME.match(name(d))
    return RunName(m[1], m[2], m[3], m[4] or 'default') if m else \
        RunName(name(d), '', '', '')


def base_key(base: str) -> tuple:
    """Sort key putting the newest base ("7.3") first, anything else last."""
    if not base or not all(p.isdigit() for p in base.split('.')):
        return (1, base)
    return tuple(-int(p) for p in base.split('.'))


def run_dirs(parent: str) -> List[str]:
    """Every run directory under parent, sorted."""
    return sorted(glob.glob(os.path.join(parent, '*/')), key=name)


def by_base(dirs: List[str]) -> Dict[str, List[str]]:
    """Run directories by base, the newest base first."""
    groups: Dict[str, List[str]] = {}
    for d in sorted(dirs, key=lambda d: base_key(parts(d).base)):
        groups.setdefault(parts(d).base, []).append(d)
    return groups


def read_text(path: str) -> str:
    with open(path, errors='replace') as f:
        return f.read()


def first(path: str, regex: re.Pattern) -> Optional[re.Match]:
    """regex's first match with a first group, in the file at path."""
    if os.path.isfile(path):
        for m in map(regex.search, read_text(path).splitlines()):
            if m and m[1]:
                return m
    return None


def kernel_info(log: str) -> tuple:
    """Kernel version and page size that a kselftest boot log prints."""
    m = first(log, KERNEL)
    return m.groups() if m else ('unknown', 'unknown')


def boot_params(log: str) -> Optional[str]:
    """The kernel command line a console log shows, else None."""
    m = first(log, _CMDLINE)
    return m and m[1]


def source(d: str) -> str:
    """The kernel source a run says it built (its source.txt)."""
    m = first(os.path.join(d, 'source.txt'), _SOURCE)
    return m[1] if m else 'unknown'


def totals(passed: int, failed: int, skipped: int) -> str:
    """The count line every summary and check ends with."""
    return f'{passed} passed, {failed} failed, {skipped} skipped'
