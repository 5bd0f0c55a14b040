# SPDX-License-Identifier: GPL-2.0
"""The out/ tree: run directories <kernel>-<base>-<target>[-<variant>]
(out/results/, out/mutants/), their source.txt, their console logs
out/logs/<run>-kunit.log and <run>-kselftest.log."""

import glob
import os
import re
from typing import Dict, List, Optional, Tuple

from . import formats
from .ktap import read_text

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
OUT = os.environ.get('PERF_AUX_OUT', os.path.join(ROOT, 'out'))
PATCHES = os.path.join(ROOT, 'scripts', 'mutants')


def name(d: str) -> str:
    return os.path.basename(d.rstrip('/'))


def parts(d: str) -> formats.RunName:
    return formats.run_name(name(d))


def run_dirs(parent: str) -> List[str]:
    """Every run directory under parent, sorted."""
    return sorted(glob.glob(os.path.join(parent, '*/')), key=name)


def by_base(dirs: List[str]) -> Dict[str, List[str]]:
    """Run directories by base, the newest base first."""
    groups: Dict[str, List[str]] = {}
    for d in sorted(dirs, key=lambda d: formats.base_key(parts(d).base)):
        groups.setdefault(parts(d).base, []).append(d)
    return groups


def _first(path: str, regex: re.Pattern) -> Optional[Tuple[str, ...]]:
    """The groups of regex's first match, its first group not empty, in
    the lines of the file at path."""
    if os.path.isfile(path):
        for m in map(regex.search, read_text(path).splitlines()):
            if m and m.group(1):
                return m.groups()
    return None


def kernel_info(log: str) -> Tuple[str, ...]:
    """Kernel version and page size that a kselftest boot log prints."""
    return _first(log, formats.KERNEL) or ('unknown', 'unknown')


def boot_params(log: str) -> Optional[str]:
    """The kernel command line a console log shows, else None."""
    return (_first(log, formats.CMDLINE) or [None])[0]


def source(d: str) -> str:
    """The kernel source a run says it built (its source.txt)."""
    return (_first(os.path.join(d, 'source.txt'), formats.SOURCE) or
            ['unknown'])[0]
