# SPDX-License-Identifier: GPL-2.0
"""Committed expected results, a run judged case by case:
scripts/expected/<base>/<target>[-<variant>].txt, a line a case,
"suite.case[.param] STATUS[|STATUS]"; a run matches when every case has one
of its statuses and none is missing or new."""

import difflib
import os
from typing import Dict, Iterable, List, Optional, Set, Tuple

from . import ktap, runs, verdicts

EXPECTED = os.path.join(runs.ROOT, 'scripts', 'expected')
HEADER = ('# Expected results of this run, case by case (make expected '
          'rewrites it).\n')


def path_for(run_dir: str, root: str = EXPECTED) -> str:
    p = runs.parts(run_dir)
    name = p.target + (f'-{p.variant}' if p.variant != 'default' else '')
    return os.path.join(root, p.base, f'{name}.txt')


def cases(run_dir: str, suites: Optional[Set[str]] = None) -> Dict[str, str]:
    """Each case of a run (of the suites given, or all) and its status."""
    found: Dict[str, str] = {}
    for suite, text in ktap.read_suites(run_dir).items():
        if suites and suite not in suites:
            continue
        for case, status in verdicts.case_results(text).items():
            # KUnit's cases are already under their suite's name.
            key = case if case.startswith(f'{suite}.') else f'{suite}.{case}'
            found[key] = status
    return found


def read(path: str) -> Dict[str, Set[str]]:
    want: Dict[str, Set[str]] = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith('#'):
                continue
            case, _, statuses = line.rpartition(' ')
            want[case] = set(statuses.split('|'))
    return want


def render(want: Dict[str, Set[str]]) -> str:
    return HEADER + ''.join(f'{c} {"|".join(sorted(s))}\n'
                            for c, s in sorted(want.items()))


def merge(run_dirs: Iterable[str],
          old: Optional[Dict[str, Set[str]]] = None) -> Dict[str, Set[str]]:
    """The statuses each case had over runs of one configuration, and the
    cases of old whose suite none of them ran (a strict boot runs one)."""
    want: Dict[str, Set[str]] = {}
    ran: Set[str] = set()
    for d in run_dirs:
        ran |= set(ktap.read_suites(d))
        for case, status in cases(d).items():
            want.setdefault(case, set()).add(status)
    for case, statuses in (old or {}).items():
        if not any(case.startswith(f'{s}.') for s in ran):
            want.setdefault(case, set(statuses))
    return want


def _in(case: str, suites: Optional[Set[str]]) -> bool:
    return not suites or any(case.startswith(f'{s}.') for s in suites)


def compare(run_dir: str, want: Dict[str, Set[str]],
            suites: Optional[Set[str]] = None) -> Tuple[List[str], int]:
    """What differs between a run and its expected results (of suites, if
    given), and how many expected cases it matched."""
    got = cases(run_dir, suites)
    if suites:
        want = {c: s for c, s in want.items() if _in(c, suites)}
    diffs = []
    for case in sorted(set(want) | set(got)):
        if case not in got:
            diffs.append(f'{case}: expected {"|".join(sorted(want[case]))}, '
                         'missing')
        elif case not in want:
            diffs.append(f'{case}: {got[case]}, not in the expected results')
        elif got[case] not in want[case]:
            diffs.append(f'{case}: expected {"|".join(sorted(want[case]))}, '
                         f'got {got[case]}')
    return diffs, sum(1 for c, s in want.items() if got.get(c) in s)


def check_line(run_dir: str, path: str,
               suites: Optional[Set[str]] = None) -> Tuple[bool, List[str]]:
    """One verdict line, and a few differences."""
    rel = os.path.relpath(path, runs.ROOT)
    if not os.path.isfile(path):
        return False, [f'{runs.name(run_dir)}: no expected results {rel}']
    want = read(path)
    diffs, matched = compare(run_dir, want, suites)
    total = sum(1 for c in want if _in(c, suites))
    what = f' ({", ".join(sorted(suites))})' if suites else ''
    line = (f'{runs.name(run_dir)}: {matched} of {total} cases{what} as '
            f'{rel} expects, {len(diffs)} differ')
    return not diffs, [line] + [f'  {d}' for d in diffs[:10]] + (
        [f'  and {len(diffs) - 10} more'] if len(diffs) > 10 else [])


def write(run_dirs: List[str], root: str = EXPECTED) -> List[str]:
    """Rewrites the expected results of each configuration of run_dirs
    (make expected); the unified diff."""
    groups: Dict[str, List[str]] = {}
    for d in run_dirs:
        groups.setdefault(path_for(d, root), []).append(d)
    out: List[str] = []
    for path, dirs in sorted(groups.items()):
        old = ''
        if os.path.isfile(path):
            with open(path) as f:
                old = f.read()
        new = render(merge(dirs, read(path) if old else None))
        rel = os.path.relpath(path, runs.ROOT)
        out += difflib.unified_diff(old.splitlines(), new.splitlines(),
                                    f'a/{rel}', f'b/{rel}', lineterm='')
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'w') as f:
            f.write(new)
    return out
