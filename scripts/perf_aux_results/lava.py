# SPDX-License-Identifier: GPL-2.0
"""LAVA results: the direct run's cases as LAVA names them, what lava-run
recorded, and the checks that the two agree (scripts/lava/check.sh).

Names follow lava-jobs/perf-aux-ktap-to-lava.sh, the converter on the
device: perf_aux.<group>.<test path>, a group a KUnit suite or kselftest
binary.
"""

import json
import re
from typing import Any, Dict, Iterable, Iterator, List, NamedTuple, Tuple

import yaml

from . import formats, ktap

# The LAVA server keeps at most this much of a test case name.
MAX_NAME = 100
Cases = Dict[str, str]


class Check(NamedTuple):
    """One check line: ok or not, what, and detail lines."""
    ok: bool
    what: str
    details: List[str]


def lava_name(group: str, test: str) -> str:
    return f'perf_aux.{group}.' + formats.LAVA_NAME_CHARS.sub('_', test)


def _result(test: Any) -> str:
    status = ktap.kunit().TestStatus
    if test.status == status.SUCCESS:
        return 'pass'
    if test.status == status.SKIPPED:
        return 'skip'
    return 'fail'


def _group_result(root: Any) -> str:
    """The group verdict of a document whose tests are the group's."""
    results = [_result(t) if t.name else 'fail' for t in root.subtests]
    if not results or 'fail' in results or (
            root.expected_count is not None and
            len(root.subtests) < root.expected_count):
        return 'fail'
    return 'skip' if all(r == 'skip' for r in results) else 'pass'


def expected_cases(group: str, text: str) -> Cases:
    """{LAVA name: result} of one KTAP document, group verdict included.

    The same rules as the converter, on kunit_parser's tree: every test
    below the group, named by its path; a document whose only top-level
    test is the group stands for the group; kunit_parser's stand-ins for
    missing subtests (no name) are not cases but fail their parent.
    """
    root = ktap.parse(text)
    tops = root.subtests
    cases: Cases = {}
    seen: Dict[str, int] = {}

    def walk(test: Any, prefix: str) -> None:
        for sub in test.subtests:
            if not sub.name:
                continue
            path = prefix + sub.name.strip()
            walk(sub, path + '.')
            name = lava_name(group, path)
            seen[name] = seen.get(name, 0) + 1
            cases[name if seen[name] == 1 else
                  f'{name}_dup{seen[name]}'] = _result(sub)

    if len(tops) == 1 and tops[0].name.strip() == group:
        walk(tops[0], '')
        suite = _result(tops[0])
    else:
        walk(root, '')
        suite = _group_result(root)
    cases[f'perf_aux.{group}.suite'] = suite
    return cases


def _groups(results_dir: str) -> Dict[str, str]:
    """{group: KTAP document} of the direct run: KUnit suites and
    kselftest binaries (perf_aux.<binary>.ktap)."""
    return {s[len('perf_aux.'):] if s.startswith('perf_aux.') else s: text
            for s, text in ktap.read_suites(results_dir).items()}


def direct_groups(results_dir: str) -> Dict[str, Cases]:
    """The direct run's cases, by group."""
    groups = {g: expected_cases(g, text)
              for g, text in _groups(results_dir).items()}
    if any(s.startswith('perf_aux.') for s, _ in
           ktap.suite_files(results_dir)):
        groups['kselftest'] = {'perf_aux.kselftest.suite': 'pass'}
    return groups


def entries_cases(group: str, text: str) -> set:
    """The cases whose output gave translation entries (the diagnostic
    comes before the case's result line)."""
    named, _ = ktap.named_by_result(text.splitlines(), formats.entries)
    return {lava_name(group, test) for test, _ in named}


def lava_records(log_lines: Iterable[str]) -> List[Dict[str, Any]]:
    """The "results" records of a lava-run log (its stderr)."""
    loader = getattr(yaml, 'CSafeLoader', yaml.SafeLoader)
    records = []
    for line in log_lines:
        if 'lvl: results' not in line and '"lvl": "results"' not in line:
            continue
        try:
            entry = yaml.load(line, Loader=loader)
        except yaml.YAMLError:
            continue
        if isinstance(entry, list):
            entry = entry[0]
        if isinstance(entry, dict) and entry.get('lvl') == 'results':
            records.append(entry['msg'])
    return records


def log_entries(lines: Iterable[str]) -> Iterator[Dict[str, Any]]:
    """The entries of a LAVA job log: the server's log.yaml (what the API
    gives at jobs/ID/logs/) or lava-run's stderr, one "- {...}" line each.
    LAVA writes them as YAML flow mappings of double-quoted strings; JSON
    reads nearly all of them, far faster, and YAML the rest (tags such as
    "! "1332"")."""
    loader = getattr(yaml, 'CSafeLoader', yaml.SafeLoader)
    for line in lines:
        if not line.startswith('- {'):
            continue
        body = line[2:].rstrip('\r\n')
        try:
            entry = json.loads(body)
        except ValueError:
            try:
                entry = yaml.load(body, Loader=loader)
            except yaml.YAMLError:
                continue
        if isinstance(entry, dict):
            yield entry


# The dispatcher's line when a top-level test action starts, e.g.
# "start: 3 lava-test-retry (timeout 00:20:00) [common]".
_TEST_ACTION = re.compile(r'start: [0-9]+ lava-test')


def console(entries: Iterable[Dict[str, Any]]) -> Tuple[List[str],
                                                         List[str]]:
    """A job's console (its "target" lines) in the two parts the direct
    run has as two boots: the kernel's boot, KUnit's KTAP included (the
    suites run at boot), and from the ramdisk's "PERF_AUX: kernel" line on
    (scripts/initramfs/init), LAVA's test shell running the kselftests.
    Where no such line comes (a board booting its own OS), the second part
    starts with the first test action."""
    boot: List[str] = []
    tests: List[str] = []
    part = boot
    for e in entries:
        msg = e.get('msg')
        if not isinstance(msg, str):
            continue
        if e.get('lvl') != 'target':
            if _TEST_ACTION.match(msg):
                part = tests
            continue
        for line in msg.splitlines() or ['']:
            if part is boot and formats.kernel(line):
                part = tests
            part.append(line.rstrip('\r'))
    return boot, tests


def job_errors(entries: Iterable[Dict[str, Any]]) -> List[str]:
    """LAVA's reasons for a job that did not complete: the error messages
    of the failed results of its "lava" suite ("<error_type> error:
    <error_msg>"), each once, in order."""
    found: List[str] = []
    for e in entries:
        msg = e.get('msg')
        if (e.get('lvl') != 'results' or not isinstance(msg, dict) or
                msg.get('definition') != 'lava' or
                msg.get('result') != 'fail' or not msg.get('error_msg')):
            continue
        text = ' '.join(str(msg['error_msg']).split())
        kind = msg.get('error_type')
        line = f'{kind} error: {text}' if kind else text
        if line not in found:
            found.append(line)
    return found


def lava_groups(records: List[Dict[str, Any]]) -> Tuple[Dict[str, Cases],
                                                        List[str]]:
    """perf_aux cases LAVA recorded, by group, and naming problems."""
    groups: Dict[str, Cases] = {}
    problems = []
    for r in records:
        name = str(r.get('case', ''))
        if not name.startswith('perf_aux.'):
            continue
        group = name.split('.')[1]
        if name in groups.get(group, {}):
            problems.append(f'{name} recorded twice')
        groups.setdefault(group, {})[name] = r.get('result')
        if r.get('set') != group:
            problems.append(f'{name} in test set {r.get("set")!r}, '
                            f'not {group!r}')
        if len(name) > MAX_NAME:
            problems.append(f'{name} longer than {MAX_NAME} characters')
    return groups, problems


def counts(cases: Cases) -> str:
    n = {r: sum(1 for v in cases.values() if v == r)
         for r in ('pass', 'fail', 'skip')}
    return f'{len(cases)} cases ({n["pass"]} pass, {n["fail"]} fail, ' \
           f'{n["skip"]} skip)'


def job_check(records: List[Dict[str, Any]], tag: str) -> Check:
    job = [r for r in records if r.get('definition') == 'lava' and
           r.get('case') == 'job']
    ok = bool(job) and job[-1].get('result') == 'pass'
    return Check(ok, f'{tag}: lava-run job finished correctly',
                 [] if ok else [f'  {job[-1] if job else "no job result"}'])


def group_check(want: Cases, got: Cases, what: str) -> Check:
    """LAVA's cases of one group against the direct run's."""
    diff = [f'  {n}: direct {want.get(n, "-")}, LAVA {got.get(n, "-")}'
            for n in sorted(set(want) | set(got)) if want.get(n) != got.get(n)]
    fails = [n for n, r in got.items() if r not in ('pass', 'skip')]
    ok = not diff and not fails and bool(want)
    details = diff[:40] + ([f'  ... {len(diff) - 40} more']
                           if len(diff) > 40 else [])
    if fails and not diff:
        details += [f'  {n}: fail in both runs' for n in sorted(fails)]
    return Check(ok, f'{what}: LAVA {counts(got)} {"==" if ok else "!="} '
                 f'direct {counts(want)}', details)


def measurement_check(results_dir: str, records: List[Dict[str, Any]],
                      tag: str) -> Check:
    """The cases whose direct run printed translation entries carry them
    in LAVA (values differ from boot to boot)."""
    want = set()
    for suite, text in ktap.read_suites(results_dir).items():
        if suite.startswith('perf_aux.'):
            want |= entries_cases(suite[len('perf_aux.'):], text)
    got = {r['case']: r.get('units', '') for r in records
           if 'measurement' in r and
           str(r.get('case', '')).startswith('perf_aux.')}
    bad_units = sorted(n for n, u in got.items() if u != 'entries')
    missing, extra = sorted(want - set(got)), sorted(set(got) - want)
    return Check(not missing and not extra and not bad_units,
                 f'{tag}: measurements: {len(got)} cases carry translation '
                 f'entries, direct run {len(want)}',
                 [f'  missing {n}' for n in missing] +
                 [f'  unexpected {n}' for n in extra] +
                 [f'  units of {n}' for n in bad_units])


def compare(results_dir: str, log_path: str, tag: str,
            only: List[str]) -> List[Check]:
    """A check for the job, each group (those in only, if any), the
    measurements, and the names."""
    want = direct_groups(results_dir)
    with open(log_path, errors='replace') as f:
        records = lava_records(f)
    got, problems = lava_groups(records)
    checks = [job_check(records, tag)]
    checks += [group_check(want.get(g, {}), got.get(g, {}), f'{tag}: {g}')
               for g in sorted(set(want) | set(got)) if not only or g in only]
    checks.append(measurement_check(results_dir, records, tag))
    if problems:
        checks.append(Check(False, f'{tag}: names and test sets',
                            ['  ' + p for p in problems[:20]]))
    else:
        checks.append(Check(True, f'{tag}: names and test sets: one set '
                            f'per group, names at most {MAX_NAME} '
                            'characters, no duplicates', []))
    return checks


def emit(checks: List[Check]) -> int:
    """Prints the check lines; 1 if any is not ok."""
    for c in checks:
        print(f'{"ok" if c.ok else "not ok"} - lava: {c.what}')
        for line in c.details:
            print(f'#{line}')
    return 0 if all(c.ok for c in checks) else 1
