# SPDX-License-Identifier: GPL-2.0
"""lib.sh's functions and settings, and the host's tools, for the Python
modules.

scripts/lib.sh is where the paths, the bases and the helpers the shell
scripts share are defined; a module that needs one calls it here rather
than define it again.  Each call is a bash that sources lib.sh with
series.sh's "set -euo pipefail" and runs the one function, its arguments
passed as argv (never put into the script's text), so a function fails as
it would in a script of the suite.
"""

import os
import subprocess
import sys
import time
from typing import (Callable, Dict, List, Mapping, NoReturn, Optional,
                    Sequence)

LIB = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                   'lib.sh')
_CALL = 'set -euo pipefail; . "$1"; shift; "$@"'
# ${!name}: indirect expansion, the value of the variable named by name.
_VALUES = ('set -euo pipefail; . "$1"; shift; '
           'for v; do printf "%s\\0" "${!v}"; done')


# What bash itself sets in every environment it passes on.
_BASH_OWN = (b'SHLVL', b'_', b'PWD', b'OLDPWD')


class ShellError(Exception):
    """A lib.sh function or a tool failed where series.sh's set -e would
    have ended the script: the caller exits with its status."""

    def __init__(self, what: str, status: int) -> None:
        super().__init__(f'{what}: exit {status}')
        self.status = status


def _argv(script: str, *args: str) -> List[str]:
    return ['bash', '-c', script, 'bash', LIB, *args]


def _env(env: Optional[Mapping[str, str]]) -> Optional[Dict[str, str]]:
    return None if env is None else {**os.environ, **env}


def run(func: str, *args: str, check: bool = True, stdout=None, stderr=None,
        cwd: Optional[str] = None,
        env: Optional[Mapping[str, str]] = None) -> int:
    """Runs lib.sh's FUNC ARGS..., its output where the caller's goes (or
    to stdout and stderr, e.g. a log and subprocess.STDOUT); returns its
    status.  check: a failure raises ShellError."""
    sys.stdout.flush()
    status = subprocess.run(_argv(_CALL, func, *args), stdout=stdout,
                            stderr=stderr, cwd=cwd, env=_env(env),
                            check=False).returncode
    if check and status:
        raise ShellError(func, status)
    return status


def output(func: str, *args: str, check: bool = True,
           cwd: Optional[str] = None,
           env: Optional[Mapping[str, str]] = None) -> str:
    """What lib.sh's FUNC ARGS... prints, as $(FUNC ARGS...) has it: the
    trailing newlines dropped.  check: a failure raises ShellError (an
    assignment x=$(...) under set -e); without, the output is kept
    whatever the status (a $(...) among a command's arguments)."""
    sys.stdout.flush()
    proc = subprocess.run(_argv(_CALL, func, *args), stdout=subprocess.PIPE,
                          cwd=cwd, env=_env(env), check=False)
    if check and proc.returncode:
        raise ShellError(func, proc.returncode)
    return proc.stdout.decode('utf-8', 'surrogateescape').rstrip('\n')


def lines(func: str, *args: str, check: bool = True) -> List[str]:
    """output() one item a line, no empty ones."""
    return [line for line in output(func, *args, check=check).split('\n')
            if line]


def values(*names: str) -> Dict[str, str]:
    """lib.sh's settings by name (PERF_AUX_ROOT, GUEST_MEMORY_MIB, ...), as
    a script that sources it sees them."""
    proc = subprocess.run(_argv(_VALUES, *names), stdout=subprocess.PIPE,
                          check=True, text=True, errors='surrogateescape')
    return dict(zip(names, proc.stdout.split('\0')))


def export() -> None:
    """What lib.sh exports (ccache's directory and settings), into this
    process's environment, for the tools it runs, as a script that sources
    lib.sh has it whoever called it."""
    proc = subprocess.run(_argv('set -euo pipefail; . "$1"; env -0'),
                          stdout=subprocess.PIPE, check=True)
    for item in proc.stdout.split(b'\0'):
        name, sep, value = item.partition(b'=')
        if sep and name not in _BASH_OWN and os.environb.get(name) != value:
            os.environb[name] = value


def die(message: str) -> NoReturn:
    """lib.sh's die: "perf_aux: error: MESSAGE" and exit status 2."""
    status = run('die', message, check=False)
    raise SystemExit(status)


# The host's tools.

def tool(argv: Sequence[str], cwd: Optional[str] = None,
         log: Optional[str] = None, check: bool = False, stdout=None) -> int:
    """Runs ARGV; its stdout and stderr into LOG if given, else its stdout
    to STDOUT (e.g. subprocess.DEVNULL).  check: a failure raises
    ShellError, as set -e would end the script."""
    sys.stdout.flush()
    if log is not None:
        with open(log, 'wb') as f:
            rc = subprocess.run(argv, cwd=cwd, stdout=f,
                                stderr=subprocess.STDOUT).returncode
    else:
        rc = subprocess.run(argv, cwd=cwd, stdout=stdout).returncode
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


def git_in(repo: str, *args: str) -> List[str]:
    """git in REPO, with no setting of the machine's changing a byte."""
    return ['git', '-C', repo, '-c', 'core.autocrlf=false',
            '-c', 'commit.gpgsign=false', *args]


def stage(name: str, func: Callable[..., int], *args) -> int:
    """lib.sh's stage: FUNC ARGS... between a start line and an end line
    that gives its time (and its status, if not 0); returns the status."""
    start = int(time.time())
    print(f'==> {name}', flush=True)
    rc = func(*args)
    took = int(time.time()) - start
    print(f'<== {name}: {took} s' + (f', exit {rc}' if rc else ''),
          flush=True)
    return rc
