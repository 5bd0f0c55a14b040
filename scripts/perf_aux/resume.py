# SPDX-License-Identifier: GPL-2.0
"""make check[-full] RESUME=1: a stage's record in
out/state/<tier>/<stage>-<base>.json (passed, its check lines, a hash of
its inputs); a stage whose record passed with the same inputs is replayed.
The inputs: the clone's files its row names, the bases' Debian sources,
PERF_AUX_MUTANTS and SERIES file by file, the SELECTORS, and the tier,
stage, base and whether the peers run by default."""

import hashlib
import json
import os
import re
import time
from typing import Dict, List, Sequence

from . import lib

# The environment that changes what a stage runs (BASE is the key's).
SELECTORS = ('KERNEL_ARGS', 'KERNEL_SRC', 'SERIES', 'PERF_AUX_PEERS',
             'PERF_AUX_MUTANTS', 'PERF_AUX_LAB_RUNS', 'PERF_AUX_MIRRORS',
             'BOOT_EXTRA_SECONDS', 'KUNITPY_ARCHS', 'KUNITPY_KERNELCI',
             'MODULE_MUTANT_TESTS', 'KSELFTEST_TARGETS')


def wanted(environ: Dict[str, str]) -> bool:
    """RESUME=1."""
    return environ.get('RESUME', '') not in ('', '0')


def path(out: str, tier: str, stage: str, base: str) -> str:
    return f'{out}/state/{tier}/{stage}-{base}.json'


def clone_files(root: str, pathspecs: Sequence[str]) -> List[str]:
    """The files of the clone that PATHSPECS select, tracked or untracked
    and not ignored; outside git, all but the runs' and Python's."""
    listed = lib.run(['git', '-C', root, 'ls-files', '-z', '--cached',
                      '--others', '--exclude-standard', '--', *pathspecs],
                     stdout=lib.PIPE, stderr=lib.DEVNULL)
    if listed.returncode:
        return [f for f in (os.path.relpath(p, root) for p in below(root))
                if not re.match(r'(out|\.git)/|(.*/)?__pycache__/', f)]
    return sorted(set(listed.stdout.split('\0')) - {''})


def below(top: str) -> List[str]:
    """TOP, or the files below it; nothing where TOP is empty."""
    if not os.path.isdir(top):
        return [top] if top else []
    return sorted(os.path.join(d, f) for d, _, names in
                  os.walk(top, followlinks=True) for f in names)


def content(file: str) -> bytes:
    """What FILE holds (a link: where it points)."""
    if os.path.islink(file):
        return b'link ' + os.fsencode(os.readlink(file))
    try:
        with open(file, 'rb') as f:
            return f.read()
    except OSError:
        return b'missing'


def inputs(root: str, cache: str, pathspecs: Sequence[str],
           environ: Dict[str, str], key: str) -> str:
    """The hash of a stage's inputs; KEY names the tier, stage and base."""
    files = [(f, os.path.join(root, f)) for f in clone_files(root, pathspecs)]
    for name in ('PERF_AUX_MUTANTS', 'SERIES'):
        files += [(f, f) for f in below(environ.get(name, ''))]
    files += [(f, f) for f in (f'{cache}/src/{b}/.perf_aux-debian'
                               for b in lib.BASES)]
    h = hashlib.sha256(key.encode())
    for name in SELECTORS:
        h.update(f'\n{name}={environ.get(name, "")}'.encode())
    for label, file in files:
        h.update(f'\n{label} '.encode() +
                 hashlib.sha256(content(file)).hexdigest().encode())
    return h.hexdigest()


def load(record: str) -> Dict:
    """The record, or {} where there is none (or half a one)."""
    try:
        with open(record, encoding='utf-8') as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def save(record: str, digest: str, title: str, passed: bool,
         checks: List[List[str]]) -> None:
    os.makedirs(os.path.dirname(record), exist_ok=True)
    with open(f'{record}.tmp', 'w', encoding='utf-8') as f:
        json.dump({'inputs': digest, 'passed': passed, 'title': title,
                   'ended': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()),
                   'checks': checks}, f, indent=1)
    os.replace(f'{record}.tmp', record)
