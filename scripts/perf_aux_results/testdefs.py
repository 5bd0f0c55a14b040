# SPDX-License-Identifier: GPL-2.0
"""The "<name> <pass|fail|skip>" lines test-definitions' kselftest.sh wrote
(printed by scripts/initramfs/testdefs-init) against the direct run's cases
named as its parse-output.py names them: "selftests:" dropped, a case
"<program>_<description>", a skip's reason appended, reduced to
[A-Za-z0-9_-], a repeat "_dup<N>"."""

import re
from collections import Counter
from typing import Dict, Iterable, List, Optional, Tuple

from . import ktap

BEGIN = 'PERF_AUX: test-definitions results'
END = 'PERF_AUX: test-definitions end'
COLLECTION = 'perf_aux'

def slug(text: str) -> str:
    text = re.sub(r'\[\d{1,5}\]', '', text)
    text = re.sub(r'[^A-Za-z0-9_-]+', '_', text)
    return re.sub(r'(^_|_$)', '', text).replace('_-', '__')

def name_of(desc: str, directive: str, ok: bool) -> Tuple[str, str]:
    """A TAP line's name and result as test-definitions gives them."""
    skip = directive.lower().startswith('skip')
    desc = desc.removeprefix('selftests:')
    if ok and skip:
        desc = f'{desc} {directive[4:]}'
    return slug(desc.strip()) or '<unknown>', ('skip' if skip else 'pass') if ok else 'fail'

def reported(log_lines: Iterable[str]) -> Optional[Dict[str, str]]:
    """{name: result} the guest printed; None without both markers."""
    lines = [raw.strip() for raw in log_lines]
    if BEGIN not in lines or END not in lines[lines.index(BEGIN):]:
        return None
    inside = lines[lines.index(BEGIN) + 1:lines.index(END, lines.index(BEGIN))]
    return {m[1]: m[2] for m in (re.match(r'^(\S+) (pass|fail|skip)$', x) for x in inside) if m}

def program_results(kselftest_log: Iterable[str]
                    ) -> List[Tuple[str, str, bool]]:
    """(program, directive, ok) of run_kselftest.sh's outer TAP lines."""
    return [(b[1], r.comment, r.ok) for r in map(
        ktap.result, (x.strip() for x in kselftest_log))
        if r and (b := ktap.kselftest_binary(r)) and b[0] == COLLECTION]

def expected(results_dir: str, kselftest_log: Iterable[str]
             ) -> Dict[str, str]:
    """The direct run's kselftest cases as test-definitions names them,
    with the collection's shard, which kselftest.sh reports passed."""
    suites = ktap.read_suites(results_dir)
    want = {f'shardfile-{COLLECTION}': 'pass'}
    seen: Counter = Counter()

    def add(name: str, result: str) -> None:
        seen[name] += 1
        want[name if seen[name] == 1 else f'{name}_dup{seen[name]}'] = result
    for program, directive, ok in program_results(kselftest_log):
        parent, parent_result = name_of(f'selftests: {COLLECTION}: {program}', directive, ok)
        for r in map(ktap.result, suites.get(
                f'{COLLECTION}.{program}', '').splitlines()):
            if r and r.top:
                child, result = name_of(r.name, r.comment, r.ok)
                add(f'{parent}_{child}', result)
        add(parent, parent_result)
    return want

def check(log: str, results_dir: str, kselftest_log: str
          ) -> Tuple[bool, List[str]]:
    with open(log, encoding='utf-8', errors='replace') as f:
        got = reported(f)
    with open(kselftest_log, encoding='utf-8', errors='replace') as f:
        return compare(expected(results_dir, f), got)

def counts(got: Dict[str, str], what: str = 'results') -> str:
    n = Counter(got.values())
    return f'{len(got)} {what} ({n["pass"]} pass, {n["fail"]} fail, {n["skip"]} skip)'

def compare(want: Dict[str, str], got: Optional[Dict[str, str]]
            ) -> Tuple[bool, List[str]]:
    """One check: the two agree on every case, but a pass in one beside a
    skip for want of memory in the other (its reason in its name), which is
    told; the differences listed."""
    if got is None:
        return False, ['test-definitions: no results printed (the run did not finish)']
    told = {(p, s) for a, b in ((want, got), (got, want)) for s, r in a.items()
            if r == 'skip' and s not in b for p in b if b[p] == 'pass' and p not in a
            and s.startswith(f'{p}_') and ktap.MEMORY.search(s[len(p):])}
    lines = [f'# {name}: direct run {want.get(name, "absent")}, '
             f'test-definitions {got.get(name, "absent")}'
             for name in sorted((set(want) | set(got)) - {n for t in told for n in t})
             if want.get(name, 'absent') != got.get(name, 'absent')]
    return not lines, [
        f'test-definitions kselftest.sh on Debian: {counts(got)}, '
        f'{len(lines)} differing from the direct run\'s {len(want)}'] + lines + [
        f'# {p}: a pass, and {s} (a skip for want of memory)' for p, s in sorted(told)]
