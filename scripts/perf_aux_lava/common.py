# SPDX-License-Identifier: GPL-2.0
"""What the LAVA glue shares: paths, scripts/lib.sh's selectors (one
definition of each: lib.sh's, asked through bash), one-line failures and
timed stages."""

import os
import subprocess
import sys
import time
from contextlib import contextmanager
from typing import Iterator, List

SCRIPTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, SCRIPTS)
from perf_aux_results.runs import ROOT  # noqa: E402

CACHE = os.environ.get('PERF_AUX_CACHE', '/var/cache/perf_aux')
LIB = os.path.join(SCRIPTS, 'lib.sh')
# Debian's python: lava_common, python3-yaml, python3-jinja2.
PYTHON = '/usr/bin/python3'


class Fatal(Exception):
    """A failure that ends the command, exit 2: its message, one line."""


def out_dir() -> str:
    """PERF_AUX_OUT as lib.sh has it (read when asked: the lab's selftest
    gives each submission its own)."""
    return os.path.abspath(os.environ.get('PERF_AUX_OUT',
                                          os.path.join(ROOT, 'out')))


def error(message: str) -> None:
    """lib.sh's die line."""
    print(f'perf_aux: error: {message}', file=sys.stderr, flush=True)


def lib(script: str, *args: str) -> List[str]:
    """The output lines of a few lines of bash run after sourcing
    scripts/lib.sh (its functions as "$1"...); its die is a Fatal."""
    p = subprocess.run(['bash', '-c', f'. "$0" && {script}', LIB, *args],
                       capture_output=True, text=True)
    if p.returncode:
        msg = p.stderr.strip().splitlines()[-1:] or [f'exit {p.returncode}']
        raise Fatal(msg[0].replace('perf_aux: error: ', '', 1))
    return p.stdout.splitlines()


def default_base() -> str:
    return lib('default_base')[0]


@contextmanager
def stage(name: str) -> Iterator[None]:
    """lib.sh's stage: a start line, an end line with its time."""
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
