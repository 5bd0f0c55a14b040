# SPDX-License-Identifier: GPL-2.0
"""The out/ tree: where runs are, what they are called, what they recorded.

A run directory (out/results/, out/mutants/) is named
<kernel>-<base>-<target>[-<variant>] (formats.run_name); its console logs
are out/logs/<run>-kunit.log and <run>-kselftest.log, and make run
leaves the kernel source it used in <run>/source.txt.
"""

import glob
import os
from typing import Callable, Dict, List, Optional, Tuple, TypeVar

from . import formats
from .ktap import read_text

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
OUT = os.environ.get('PERF_AUX_OUT', os.path.join(ROOT, 'out'))
PATCHES = os.path.join(ROOT, 'scripts', 'mutants')
T = TypeVar('T')


def name(d: str) -> str:
    """A run directory's name."""
    return os.path.basename(d.rstrip('/'))


def parts(d: str) -> formats.RunName:
    """Kernel, base, target and variant of a run directory."""
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


def _first(path: str, parse: Callable[[str], Optional[T]]) -> Optional[T]:
    """What parse finds first in the lines of the file at path."""
    if os.path.isfile(path):
        for line in read_text(path).splitlines():
            found = parse(line)
            if found:
                return found
    return None


def kernel_info(log: str) -> Tuple[str, str]:
    """Kernel version and page size that a kselftest boot log prints."""
    return _first(log, formats.kernel) or ('unknown', 'unknown')


def boot_params(log: str) -> Optional[str]:
    """The kernel command line a console log shows, else None."""
    return _first(log, formats.cmdline)


def source(d: str) -> str:
    """The kernel source a run says it built (its source.txt)."""
    return _first(os.path.join(d, 'source.txt'), formats.source) or 'unknown'
