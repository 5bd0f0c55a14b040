# SPDX-License-Identifier: GPL-2.0
"""What the LAVA glue shares: the one-line failure, running a program,
a private file; paths and selectors are perf_aux's (plib)."""

import os
import subprocess
import sys
from typing import List

SCRIPTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, SCRIPTS)
from perf_aux import lib as plib  # noqa: E402
from perf_aux import shell  # noqa: E402
from perf_aux.lib import ROOT  # noqa: E402

__all__ = ['Fatal', 'PYTHON', 'ROOT', 'plib', 'run', 'shell',
           'write_private']

# Debian's python: lava_common, python3-yaml, python3-jinja2.
PYTHON = '/usr/bin/python3'


class Fatal(Exception):
    """A failure that ends the command, exit 2: its message, one line."""


def run(argv: List[str], log: str = '', timeout: float = 0, **kw) -> int:
    """argv's exit status (124 when timeout passes), its output to the
    file log if given."""
    if log:
        with open(log, 'w') as f:
            return run(argv, timeout=timeout, stdout=f,
                       stderr=subprocess.STDOUT, **kw)
    try:
        return subprocess.run(argv, timeout=timeout or None, **kw).returncode
    except subprocess.TimeoutExpired:
        return 124


def write_private(path: str, text: str) -> None:
    """text in path, mode 0600 from the start."""
    fd = os.open(path + '.new', os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, 'w') as f:
        f.write(text)
    os.replace(path + '.new', path)
