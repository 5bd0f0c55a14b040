# SPDX-License-Identifier: GPL-2.0
"""What every script's module does the same way: begin and end (entry, die),
run the host's programs (tool, tool_output, git_in) and time a step
(stage, stage_block).  The settings and selectors are perf_aux.lib's.
"""

import os
import subprocess
import sys
import time
from contextlib import contextmanager
from typing import (Callable, Dict, Iterator, List, NoReturn, Optional,
                    Sequence)

from . import files, lib


class ShellError(Exception):
    """A tool failed where the script would have ended:
    the caller exits with its status."""

    def __init__(self, what: str, status: int) -> None:
        super().__init__(f'{what}: exit {status}')
        self.status = status


def begin() -> None:
    """A script's start: its lines out as they are printed (the tools' own
    come between), the locale's collation, ccache's settings
    (perf_aux.lib.exports) in the environment of the tools it runs."""
    sys.stdout.reconfigure(line_buffering=True, errors='surrogateescape')
    files.use_collation()
    lib.export()


def die(message: str) -> NoReturn:
    """"perf_aux: error: MESSAGE" and exit status 2."""
    try:
        lib.die(message)
    except lib.Died:
        raise SystemExit(lib.Died.status) from None


def entry(func: Callable[[], int]) -> int:
    """A script's main: begin(), then FUNC; its status, or a die's or a
    failed step's."""
    begin()
    try:
        return func()
    except lib.Died:
        return lib.Died.status
    except ShellError as e:
        return e.status
    except subprocess.CalledProcessError as e:
        return e.returncode


# The host's tools.

def tool(argv: Sequence[str], cwd: Optional[str] = None,
         log: Optional[str] = None, check: bool = False, stdout=None,
         stderr=None, what: str = '',
         env: Optional[Dict[str, str]] = None) -> int:
    """Runs ARGV (with ENV added to the environment); its stdout and
    stderr into LOG if given, else to STDOUT and STDERR (e.g.
    subprocess.DEVNULL).  A failure raises ShellError with check, as set -e
    would end the script, or dies with WHAT, as "|| die WHAT" did."""
    sys.stdout.flush()
    environ = None if env is None else {**os.environ, **env}
    if log is not None:
        with open(log, 'wb') as f:
            rc = subprocess.run(argv, cwd=cwd, stdout=f, env=environ,
                                stderr=subprocess.STDOUT).returncode
    else:
        rc = subprocess.run(argv, cwd=cwd, stdout=stdout, stderr=stderr,
                            env=environ).returncode
    if rc and what:
        die(what)
    if check and rc:
        raise ShellError(argv[0], rc)
    return rc


def tool_output(argv: Sequence[str], cwd: Optional[str] = None,
                stderr=None) -> 'subprocess.CompletedProcess[str]':
    """Runs ARGV for what it prints (stdout), as text."""
    sys.stdout.flush()
    proc = subprocess.run(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=stderr,
                          check=False)
    proc.stdout = proc.stdout.decode('utf-8', 'surrogateescape')
    return proc


def text(argv: Sequence[str], what: str = '') -> str:
    """What ARGV prints, as $(...) keeps it (its last newlines dropped); a
    failure dies with WHAT if given."""
    proc = tool_output(argv)
    if proc.returncode and what:
        die(what)
    return proc.stdout.rstrip('\n')


def git_in(repo: str, *args: str) -> List[str]:
    """git in REPO, with no setting of the machine's changing a byte."""
    return ['git', '-C', repo, '-c', 'core.autocrlf=false',
            '-c', 'commit.gpgsign=false', *args]


@contextmanager
def stage_block(name: str) -> Iterator[List[int]]:
    """A stage: the block between a start line and an end line that gives
    its time and its status, if not 0: what the block puts in the list it
    is given, or the exit status of what it raised (2 for an exception)."""
    start = int(time.time())
    print(f'==> {name}', flush=True)
    status = [0]
    try:
        yield status
    except BaseException as e:
        code = e.code if isinstance(e, SystemExit) else 2
        status[0] = code if isinstance(code, int) else 1
        raise
    finally:
        took = int(time.time()) - start
        print(f'<== {name}: {took} s' +
              (f', exit {status[0]}' if status[0] else ''), flush=True)


def stage(name: str, func: Callable[..., int], *args) -> int:
    """FUNC ARGS... as a stage_block; returns its status."""
    with stage_block(name) as status:
        status[0] = func(*args)
    return status[0]
