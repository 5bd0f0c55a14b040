# SPDX-License-Identifier: GPL-2.0
"""Files and text as the shell tools see them, for the Python modules.

Each function is named for the command or the shell idiom it stands for
(cat, cp, rm -rf, head, "while read"), so a module ported from a script
reads as the script did and keeps its byte-for-byte behaviour: text is
read and written undecoded where it is not UTF-8 (surrogateescape) and
with its line ends untouched.
"""

import filecmp
import locale
import os
import shutil
from typing import Iterable, List

# How files and the tools' output are read and written: any byte goes
# through, "\r\n" too, as cat and grep pass them on.
ENCODING = dict(encoding='utf-8', errors='surrogateescape', newline='')


def read(path: str) -> str:
    with open(path, **ENCODING) as f:
        return f.read()


def write(path: str, text: str) -> None:
    with open(path, 'w', **ENCODING) as f:
        f.write(text)


def text_lines(text: str) -> List[str]:
    """TEXT's lines as a shell "while read" loop sees them: a last line
    without its newline is not one."""
    return text.split('\n')[:-1]


def records(text: str) -> List[str]:
    """TEXT's lines as awk and grep see them: a last line without its
    newline is one too."""
    if text.endswith('\n'):
        text = text[:-1]
    return text.split('\n') if text else []


def head(text: str, n: int) -> str:
    """head -N: the first N lines of TEXT."""
    parts = text.split('\n')
    return '\n'.join(parts[:n]) + '\n' if len(parts) > n else text


def tail(text: str, n: int) -> str:
    """tail -N: the last N lines of TEXT."""
    ends = text.endswith('\n')
    parts = (text[:-1] if ends else text).split('\n')
    if len(parts) <= n:
        return text
    return '\n'.join(parts[-n:]) + ('\n' if ends else '')


def relative(path: str, root: str) -> str:
    """${PATH#ROOT/}."""
    return path[len(root) + 1:] if path.startswith(root + '/') else path


def use_collation() -> None:
    """Sort as sort and ls do, in the environment's collation (LC_ALL,
    LC_COLLATE, LANG); where that locale is not installed, as they do
    then: in byte order."""
    try:
        locale.setlocale(locale.LC_COLLATE, '')
    except locale.Error:
        locale.setlocale(locale.LC_COLLATE, 'C')


def collated(names: Iterable[str]) -> List[str]:
    """NAMES sorted as ls and sort do, in the locale's collation."""
    return sorted(names, key=locale.strxfrm)


def cp(src: str, dst: str) -> None:
    """cp SRC DST: a new file gets SRC's mode, an existing one keeps its
    own (git records the executable bit)."""
    existed = os.path.exists(dst)
    shutil.copyfile(src, dst)
    if not existed:
        shutil.copymode(src, dst)


def same_file(a: str, b: str) -> bool:
    """cmp -s A B."""
    try:
        return filecmp.cmp(a, b, shallow=False)
    except OSError:
        return False


def cat(path: str) -> str:
    """$(cat PATH 2>/dev/null): the content less its trailing newlines,
    empty where there is no such file."""
    try:
        return read(path).rstrip('\n')
    except OSError:
        return ''


def remove(path: str) -> None:
    """rm -rf PATH."""
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.remove(path)


def write_line(path: str, line: str) -> None:
    """echo LINE > PATH."""
    with open(path, 'w', encoding='utf-8', errors='surrogateescape') as f:
        f.write(line + '\n')
