# SPDX-License-Identifier: GPL-2.0
"""What the LAVA glue shares: paths, the one-line failures and timed
stages; the selectors are perf_aux.lib's (one definition of each)."""

import os
import subprocess
import sys
import time
from contextlib import contextmanager
from typing import Iterator, List

SCRIPTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, SCRIPTS)
from perf_aux import lib as plib  # noqa: E402
from perf_aux_results.runs import ROOT  # noqa: E402

CACHE = os.environ.get('PERF_AUX_CACHE', '/var/cache/perf_aux')
# Debian's python: lava_common, python3-yaml, python3-jinja2.
PYTHON = '/usr/bin/python3'


class Fatal(Exception):
    """A failure that ends the command, exit 2: its message, one line."""


def out_dir() -> str:
    """PERF_AUX_OUT as perf_aux.lib has it (read when asked: the lab's selftest
    gives each submission its own)."""
    return os.path.abspath(os.environ.get('PERF_AUX_OUT',
                                          os.path.join(ROOT, 'out')))


def error(message: str) -> None:
    """perf_aux.lib's die line."""
    print(f'perf_aux: error: {message}', file=sys.stderr, flush=True)


def default_base() -> str:
    return plib.default_base()


@contextmanager
def stage(name: str) -> Iterator[None]:
    """A start line, an end line with its time, as perf_aux.shell.stage
    prints them."""
    start = time.time()
    print(f'==> {name}', flush=True)
    try:
        yield
    except BaseException as e:
        code = e.code if isinstance(e, SystemExit) else 2
        print(f'<== {name}: {time.time() - start:.0f} s, exit {code}',
              flush=True)
        raise
    print(f'<== {name}: {time.time() - start:.0f} s', flush=True)


def run(argv: List[str], log: str = '', timeout: float = 0,
        **kw) -> int:
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
