# SPDX-License-Identifier: GPL-2.0
"""make repeat: the flake hunt.  The suite ROUNDS times on one boot (the
kselftests) and on ROUNDS fresh boots of the kernel make run built, then
every case whose result is not the same in every round."""

import os
import re
import shutil
from pathlib import Path
from typing import List

from . import lib
from .lib import DEVNULL, Run, status

ROUND = re.compile(rb'^PERF_AUX: round ([0-9]+)')


def results(*args: str) -> int:
    return status(lib.perf_aux('results', *args))


def split_rounds(log: str, directory: str) -> None:
    """The one-boot log cut at its "PERF_AUX: round N" lines, a file a
    round, "\\r\\n" made "\\n"."""
    out = None
    data = Path(log).read_bytes()
    for line in (data[:-1] if data.endswith(b'\n') else data).split(b'\n'):
        line = line[:-1] if line.endswith(b'\r') else line
        m = ROUND.match(line)
        if m:
            if out:
                out.close()
            out = open(f'{directory}/round{m.group(1).decode()}.log', 'wb')
        if out:
            out.write(line + b'\n')
    if out:
        out.close()


def quietly(verb: str, r: Run, log: str, *args: str) -> None:
    """perf_aux VERB of R, its lines nowhere: the results say it all."""
    status(lib.perf_aux(verb, r.kernel, r.target, r.variant, log, *r.kargs,
                        *args), stdout=DEVNULL, env=r.env())


def repeat(r: Run, rounds: int) -> int:
    d = f'{lib.out()}/repeat/{r.name}'
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(f'{d}/logs')
    quietly('kselftest', r, f'{d}/logs/one-boot.log',
            f'perf_aux.repeat={rounds}')
    split_rounds(f'{d}/logs/one-boot.log', f'{d}/logs')
    for i in range(1, rounds + 1):
        results('kselftest', f'{d}/logs/round{i}.log', f'{d}/one-boot/{i}')
    for i in range(1, rounds + 1):
        quietly('kunit', r, f'{d}/logs/kunit{i}.log')
        results('kunit', f'{d}/logs/kunit{i}.log', f'{d}/fresh/{i}')
        quietly('kselftest', r, f'{d}/logs/kselftest{i}.log')
        results('kselftest', f'{d}/logs/kselftest{i}.log', f'{d}/fresh/{i}')
    # Every console whole: an oops that ends a boot early leaves fewer rounds.
    reports = lib.console_reports(*lib.collated(
        str(p) for p in Path(d, 'logs').glob('*.log')))
    for line in reports[:20]:
        print(line)
    print(f'kernel reports on the consoles: {len(reports)}', flush=True)
    rc = int(bool(reports))
    for what, sub in (('one boot:', 'one-boot'), ('fresh boots:', 'fresh')):
        print(what, flush=True)
        runs = lib.collated(str(p) for p in Path(d, sub).glob('*')) or \
            [f'{d}/{sub}/*']
        rc |= results('flakes', *runs) != 0
    return rc


def main(argv: List[str]) -> int:
    """repeat [ROUNDS], the run's selectors from make's."""
    return repeat(lib.env_run(), int(argv[0]) if argv and argv[0] else 5)
