# SPDX-License-Identifier: GPL-2.0
"""The kselftests' "<name> <pass|fail|skip>" lines that test-definitions'
kselftest.sh (parse-output.py, pinned in integrations/README.md) wrote and
scripts/initramfs/testdefs-init printed, against the direct run's cases
named the way that parser names them: a program "selftests: <collection>:
<program>" without "selftests:", a case "<program>_<description>", a skip's
reason appended, reduced to [A-Za-z0-9_-], a repeat "_dup<N>"."""

import os
import re
from collections import Counter
from typing import Dict, Iterable, List, Optional, Tuple

from . import ktap

BEGIN = 'PERF_AUX: test-definitions results'
END = 'PERF_AUX: test-definitions end'
COLLECTION = 'perf_aux'
RESULT_LINE = re.compile(r'^(?P<name>\S+) (?P<result>pass|fail|skip)$')
# A TAP result line: ok or not, its number, description and directive.
TAP_LINE = re.compile(r'^(?P<not>not )?ok \d+ ?(?P<desc>[^#]*?)\s*'
                      r'(?:#\s*(?P<directive>.*))?$')
PROGRAM = re.compile(r'^selftests: (?P<collection>[^:]+): (?P<program>\S+)$')

Results = Dict[str, str]


def slug(text: str) -> str:
    text = re.sub(r'\[\d{1,5}\]', '', text)
    text = re.sub(r'[^A-Za-z0-9_-]+', '_', text)
    text = re.sub(r'(^_|_$)', '', text)
    return text.replace('_-', '__')


def name_of(desc: str, directive: str, ok: bool) -> Tuple[str, str]:
    """A TAP line's name and result as test-definitions gives them."""
    skip = directive.lower().startswith('skip')
    if desc.startswith('selftests:'):
        desc = desc[len('selftests:'):]
    if ok and skip:
        desc = f'{desc} {directive[4:]}'
    result = ('skip' if skip else 'pass') if ok else 'fail'
    return slug(desc.strip()) or '<unknown>', result


def reported(log_lines: Iterable[str]) -> Optional[Results]:
    """{name: result} the guest printed; None without both markers."""
    out: Results = {}
    inside = False
    done = False
    for raw in log_lines:
        line = raw.strip()
        if line == BEGIN:
            inside = True
        elif line == END:
            done = True
            break
        elif inside:
            m = RESULT_LINE.match(line)
            if m:
                out[m['name']] = m['result']
    return out if inside and done else None


def _tap(line: str) -> Optional[Tuple[str, str, bool]]:
    m = TAP_LINE.match(line.rstrip())
    if not m:
        return None
    return m['desc'], m['directive'] or '', not m['not']


def program_results(kselftest_log: Iterable[str]) -> List[Tuple[str, str, bool]]:
    """(program, directive, ok) of run_kselftest.sh's outer TAP lines."""
    out = []
    for line in kselftest_log:
        t = _tap(line.strip())
        if not t:
            continue
        m = PROGRAM.match(t[0])
        if m and m['collection'] == COLLECTION:
            out.append((m['program'], t[1], t[2]))
    return out


def expected(results_dir: str, kselftest_log: Iterable[str]) -> Results:
    """The direct run's kselftest cases as test-definitions names them,
    with the collection's shard, which kselftest.sh reports passed."""
    suites = ktap.read_suites(results_dir)
    want: Results = {f'shardfile-{COLLECTION}': 'pass'}
    seen: Dict[str, int] = {}

    def add(name: str, result: str) -> None:
        seen[name] = seen.get(name, 0) + 1
        want[name if seen[name] == 1 else f'{name}_dup{seen[name]}'] = result

    for program, directive, ok in program_results(kselftest_log):
        parent, parent_result = name_of(
            f'selftests: {COLLECTION}: {program}', directive, ok)
        for line in suites.get(f'{COLLECTION}.{program}', '').splitlines():
            t = _tap(line)
            if t:
                child, result = name_of(*t)
                add(f'{parent}_{child}', result)
        add(parent, parent_result)
    return want


def compare(want: Results, got: Optional[Results]) -> Tuple[bool, List[str]]:
    """One check: the two agree on every case; the differences listed."""
    if got is None:
        return False, ['test-definitions: no results printed '
                       '(the run did not finish)']
    lines = []
    for name in sorted(set(want) | set(got)):
        w, g = want.get(name, 'absent'), got.get(name, 'absent')
        if w != g:
            lines.append(f'# {name}: direct run {w}, test-definitions {g}')
    counts = Counter(got.values())
    head = (f'test-definitions kselftest.sh on Debian: {len(got)} results '
            f'({counts["pass"]} pass, {counts["fail"]} fail, '
            f'{counts["skip"]} skip), {len(lines)} differing from the '
            f'direct run\'s {len(want)}')
    return not lines, [head] + lines


def check(log: str, results_dir: str, kselftest_log: str) -> Tuple[bool, List[str]]:
    with open(log, encoding='utf-8', errors='replace') as f:
        got = reported(f)
    with open(kselftest_log, encoding='utf-8', errors='replace') as f:
        want = expected(results_dir, f)
    if not os.path.isdir(results_dir):
        return False, [f'test-definitions: no direct run in {results_dir}']
    return compare(want, got)
