# SPDX-License-Identifier: GPL-2.0
"""make repeat: the flake hunt (python3 -m perf_aux repeat).

Runs the suite ROUNDS times on one boot (the kselftests; perf_aux.repeat=
tells the initramfs) and on ROUNDS fresh boots (KUnit and the
kselftests), then lists every case whose result is not the same in every
round.  Same KERNEL/TARGET/VARIANT selectors as make run; the kernel must
have been built by make run before.

Usage: python3 -m perf_aux repeat [ROUNDS]    (default 5)
Exit: 0 when no case is flaky and no console holds a kernel report.
"""

import glob
import os
import re
import shutil
import subprocess
import sys
from typing import List, Optional

from . import lib, shell
from .files import collated
from .shell import tool

ROUND = re.compile(r'^PERF_AUX: round [0-9]+')


def results(*args: str) -> int:
    return tool(lib.perf_aux('results', *args))


def split_rounds(log: str, directory: str) -> None:
    """The one-boot log cut at its "PERF_AUX: round N" lines, a file a
    round; the serial console's "\\r\\n" made "\\n"."""
    out = None
    with open(log, 'rb') as f:
        for raw in f:
            line = raw.rstrip(b'\n')
            if line.endswith(b'\r'):
                line = line[:-1]
            text = line.decode('utf-8', 'surrogateescape')
            if ROUND.match(text):
                if out:
                    out.close()
                out = open(f'{directory}/round{text.split()[2]}.log', 'wb')
            if out:
                out.write(line + b'\n')
    if out:
        out.close()


def quietly(argv: List[str]) -> int:
    return tool(argv, stdout=subprocess.DEVNULL)


def repeat(rounds: int) -> int:
    target, kernel, variant, kargs = lib.selection()
    name = lib.kernel_name(kernel)
    run = lib.result_name(name, lib.run_base(), target, variant)
    d = f'{lib.out()}/repeat/{run}'
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(f'{d}/logs')

    # The boots' own lines go nowhere, as the results say it all.
    quietly(lib.perf_aux('kselftest', name, target, variant,
                         f'{d}/logs/one-boot.log', *kargs,
                         f'perf_aux.repeat={rounds}'))
    split_rounds(f'{d}/logs/one-boot.log', f'{d}/logs')
    for i in range(1, rounds + 1):
        results('kselftest', f'{d}/logs/round{i}.log', f'{d}/one-boot/{i}')
    for i in range(1, rounds + 1):
        quietly(lib.perf_aux('kunit', name, target, variant,
                             f'{d}/logs/kunit{i}.log', *kargs))
        results('kunit', f'{d}/logs/kunit{i}.log', f'{d}/fresh/{i}')
        quietly(lib.perf_aux('kselftest', name, target, variant,
                             f'{d}/logs/kselftest{i}.log', *kargs))
        results('kselftest', f'{d}/logs/kselftest{i}.log', f'{d}/fresh/{i}')
    # Every console whole: an oops that ends a boot early leaves fewer
    # rounds, which the flake lists alone would not show.
    reports = lib.console_reports(
        *collated(glob.glob(f'{glob.escape(d)}/logs/*.log')))
    for line in reports[:20]:
        print(line)
    print(f'kernel reports on the consoles: {len(reports)}', flush=True)
    rc = int(bool(reports))
    for what, sub in (('one boot:', 'one-boot'), ('fresh boots:', 'fresh')):
        print(what, flush=True)
        runs = collated(glob.glob(f'{glob.escape(d)}/{sub}/*')) or \
            [f'{d}/{sub}/*']
        if results('flakes', *runs):
            rc = 1
    return rc


def main(argv: Optional[List[str]] = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    return shell.entry(lambda: repeat(int(args[0]) if args and args[0] else 5))
