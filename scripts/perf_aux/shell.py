# SPDX-License-Identifier: GPL-2.0
"""The shared definitions (perf_aux.lib) by name, and the host's tools,
for the modules.

run, output, lines and values ask perf_aux.lib for a function's result or
a setting by its name, as the shell library they replace was asked: the
result as the text it printed, a failure (die) as a ShellError with its
status, 2.  tool, tool_output and git_in run the host's programs; stage
times one step.
"""

import os
import subprocess
import sys
import time
from contextlib import contextmanager
from typing import (Callable, Dict, Iterator, List, Mapping, NoReturn,
                    Optional, Sequence)

from . import files, lib


class ShellError(Exception):
    """A definition or a tool failed where the script would have ended:
    the caller exits with its status."""

    def __init__(self, what: str, status: int) -> None:
        super().__init__(f'{what}: exit {status}')
        self.status = status


@contextmanager
def _environment(env: Optional[Mapping[str, str]]) -> Iterator[None]:
    """ENV on top of the environment, for the length of a call."""
    saved = {k: os.environ.get(k) for k in env or {}}
    os.environ.update(env or {})
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


# The functions whose list is words on one line (boot parameters), not
# lines.
_WORDS = ('variant_args', 'vmalloc_args')


def _text(value, func: str = '') -> str:
    """A result as the shell function printed it."""
    if value is None or isinstance(value, bool):
        return ''
    if isinstance(value, (list, tuple)):
        return (' ' if func in _WORDS else '\n').join(str(v) for v in value)
    return str(value)


def _call(func: str, args: Sequence[str], check: bool):
    try:
        return 0, getattr(lib, func)(*args)
    except lib.Died:
        status = lib.Died.status
    except subprocess.CalledProcessError as e:
        status = e.returncode
    if check:
        raise ShellError(func, status)
    return status, None


def run(func: str, *args: str, check: bool = True, stdout=None, stderr=None,
        cwd: Optional[str] = None,
        env: Optional[Mapping[str, str]] = None) -> int:
    """perf_aux.lib's FUNC ARGS..., for its status: a check (check_base,
    granule_strict, ...), a step (base_repo) or a program run
    (without_kvm CMD..., kunit_py DIR LOG ARG... in CWD, with CROSS from
    ENV), its output where the caller's goes or to STDOUT and STDERR.
    check: a failure raises ShellError."""
    sys.stdout.flush()
    with _environment(env):
        if func == 'without_kvm':
            status = subprocess.run(lib.without_kvm(args), stdout=stdout,
                                    stderr=stderr, cwd=cwd,
                                    check=False).returncode
        elif func == 'kunit_py':
            status = lib.kunit_py(args[0], args[1], args[2:],
                                  cwd or os.getcwd(),
                                  os.environ.get('CROSS', ''))
        else:
            status, value = _call(func, args, check)
            if func == 'granule_strict':
                status = 0 if value else 1
            elif _text(value, func):
                print(_text(value, func), flush=True)
    if check and status:
        raise ShellError(func, status)
    return status


def output(func: str, *args: str, check: bool = True,
           cwd: Optional[str] = None,
           env: Optional[Mapping[str, str]] = None) -> str:
    """What perf_aux.lib's FUNC ARGS... gives, as text (a list a line an
    item).  check: a failure raises ShellError; without, it gives ''.
    ENV: the environment the function reads (SERIES, KERNEL_SRC, BASE)."""
    del cwd
    with _environment(env):
        return _text(_call(func, args, check)[1], func)


def lines(func: str, *args: str, check: bool = True) -> List[str]:
    """output() one item a line, no empty ones."""
    return [line for line in output(func, *args, check=check).split('\n')
            if line]


def values(*names: str) -> Dict[str, str]:
    """The settings by name (PERF_AUX_ROOT, GUEST_MEMORY_MIB, ...), as
    text."""
    settings = {'PERF_AUX_ROOT': lib.ROOT, 'PERF_AUX_CACHE': lib.cache(),
                'PERF_AUX_OUT': lib.out(),
                'PERF_AUX_BASES': ' '.join(lib.BASES),
                'PERF_AUX_TARGETS': ' '.join(lib.TARGETS),
                'PERF_AUX_KERNELS': ' '.join(lib.KERNELS),
                'PERF_AUX_VARIANTS': ' '.join(lib.VARIANTS),
                'PERF_AUX_MIN_DEBIAN': lib.MIN_DEBIAN,
                'ARM64_QEMU_CPU': lib.ARM64_QEMU_CPU,
                'GUEST_MEMORY_MIB': str(lib.GUEST_MEMORY_MIB)}
    return {name: settings[name] for name in names}


def export() -> None:
    """ccache's settings (perf_aux.lib.exports) into this process's
    environment, for the tools it runs."""
    lib.export()


def die(message: str) -> NoReturn:
    """"perf_aux: error: MESSAGE" and exit status 2."""
    try:
        lib.die(message)
    except lib.Died:
        raise SystemExit(lib.Died.status) from None


def entry(func: Callable[[], int]) -> int:
    """A script's main: its lines out as they are printed (the tools' own
    come between), the locale's collation, ccache's settings; FUNC's
    status, or a die's or a failed step's."""
    sys.stdout.reconfigure(line_buffering=True, errors='surrogateescape')
    files.use_collation()
    lib.export()
    try:
        return func()
    except lib.Died:
        return lib.Died.status
    except ShellError as e:
        return e.status


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
    """A stage: FUNC ARGS... between a start line and an end line
    that gives its time (and its status, if not 0); returns the status."""
    start = int(time.time())
    print(f'==> {name}', flush=True)
    rc = func(*args)
    took = int(time.time()) - start
    print(f'<== {name}: {took} s' + (f', exit {rc}' if rc else ''),
          flush=True)
    return rc
