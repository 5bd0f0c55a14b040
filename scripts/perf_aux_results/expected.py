# SPDX-License-Identifier: GPL-2.0
"""Committed expected results, scripts/expected/<base>/<setup>.txt, a line a
case "suite.case[.param] STATUS[|STATUS]": a run matches when every case
has one of its statuses and none is missing or new."""

import difflib
import os
from typing import Dict, List, Optional, Set, Tuple

from perf_aux import lib

from . import ktap, verdicts

EXPECTED = os.path.join(ktap.ROOT, 'scripts', 'expected')
HEADER = ('# Expected results of this run, case by case (make expected '
          'rewrites it).\n')

def path_for(run_dir: str, root: str = EXPECTED) -> str:
    p = ktap.parts(run_dir)
    return os.path.join(root, p.base, p.target + (
        '' if p.variant == 'default' else f'-{p.variant}') + '.txt')

def cases(run_dir: str, suites: Optional[Set[str]] = None) -> Dict[str, str]:
    """Each case of a run (of suites, if given) and its status; KUnit's
    cases are already under their suite's name."""
    return {case if case.startswith(f'{suite}.') else f'{suite}.{case}':
            status for suite, text in ktap.read_suites(run_dir).items()
            if not suites or suite in suites
            for case, status in verdicts.case_results(text).items()}

def read(path: str) -> Dict[str, Set[str]]:
    with open(path) as f:
        lines = [x.strip() for x in f]
    return {case: set(statuses.split('|')) for case, _, statuses in
            (x.rpartition(' ') for x in lines if x and not x.startswith('#'))}

def check_line(run_dir: str, path: str,
               suites: Optional[Set[str]] = None) -> Tuple[bool, List[str]]:
    """One verdict line on a run against its expected results (of suites,
    if given), and a few differences."""
    rel = os.path.relpath(path, ktap.ROOT)
    if not os.path.isfile(path):
        return False, [f'{ktap.name(run_dir)}: no expected results {rel}']
    want = {c: s for c, s in read(path).items()
            if not suites or any(c.startswith(f'{x}.') for x in suites)}
    got = cases(run_dir, suites)
    diffs = []
    for case in sorted(set(want) | set(got)):
        statuses = '|'.join(sorted(want.get(case, ())))
        if case not in got:
            diffs.append(f'{case}: expected {statuses}, missing')
        elif case not in want:
            diffs.append(f'{case}: {got[case]}, not in the expected results')
        elif got[case] not in want[case]:
            diffs.append(f'{case}: expected {statuses}, got {got[case]}')
    what = f' ({", ".join(sorted(suites))})' if suites else ''
    matched = sum(got.get(c) in s for c, s in want.items())
    line = (f'{ktap.name(run_dir)}: {matched} of {len(want)} cases{what} as '
            f'{rel} expects, {len(diffs)} differ')
    return not diffs, [line] + [f'  {d}' for d in diffs[:10]] + (
        [f'  and {len(diffs) - 10} more'] if len(diffs) > 10 else [])

def write(run_dirs: List[str], root: str = EXPECTED) -> List[str]:
    """make expected: each configuration's file rewritten with the statuses
    each case had over its runs, keeping the cases of suites none of them
    ran (a strict boot runs one); the unified diff."""
    groups: Dict[str, List[str]] = {}
    for d in run_dirs:
        groups.setdefault(path_for(d, root), []).append(d)
    out: List[str] = []
    for path, dirs in sorted(groups.items()):
        old = lib.read(path)
        ran = {s for d in dirs for s in ktap.read_suites(d)}
        want = {c: s for c, s in (read(path) if old else {}).items()
                if not any(c.startswith(f'{x}.') for x in ran)}
        for d in dirs:
            for case, status in cases(d).items():
                want.setdefault(case, set()).add(status)
        new = HEADER + ''.join(f'{c} {"|".join(sorted(s))}\n'
                               for c, s in sorted(want.items()))
        rel = os.path.relpath(path, ktap.ROOT)
        out += difflib.unified_diff(old.splitlines(), new.splitlines(),
                                    f'a/{rel}', f'b/{rel}', lineterm='')
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'w') as f:
            f.write(new)
    return out
