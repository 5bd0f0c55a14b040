# SPDX-License-Identifier: GPL-2.0
"""LAVA results: job logs read, and what lava-run recorded against the
direct run's cases as the on-board converter names them."""

import json
import os
import re
import subprocess
from collections import Counter
from typing import Any, Dict, Iterable, Iterator, List, NamedTuple, Tuple

import yaml

from . import ktap

CONVERTER = os.path.join(ktap.ROOT, 'lava-jobs', 'perf-aux-ktap-to-lava.sh')
# The LAVA server keeps at most this much of a test case name.
MAX_NAME = 100
# The dispatcher's "start: 3 lava-test-retry (timeout 00:20:00) [common]".
_TEST_ACTION = re.compile(r'start: [0-9]+ lava-test')

class Check(NamedTuple):
    ok: bool
    what: str
    details: List[str]

def converted(results_dir: str) -> Dict[str, List[List[str]]]:
    """The converter's [name, result(, measurement)] of each group of the
    direct run: a KUnit suite, a kselftest binary (perf_aux.<binary>)."""
    groups = {}
    for suite, path in ktap.suite_files(results_dir):
        group = suite.removeprefix('perf_aux.')
        # Outside LAVA (no lava-test-case on PATH) it prints its cases.
        out = subprocess.run(['sh', CONVERTER, 'ktap', group, path],
                             capture_output=True, text=True, check=True,
                             env={'PATH': os.defpath}).stdout
        groups[group] = [line.split() for line in out.splitlines()]
        if group != suite:  # a kselftest binary: the kselftests ran
            groups['kselftest'] = [['perf_aux.kselftest.suite', 'pass']]
    return groups

def log_entries(lines: Iterable[str]) -> Iterator[Dict[str, Any]]:
    """The entries of a job log, a line each: "- {...}" in the server's
    log.yaml, "{...}" in lava-run's stderr; JSON reads nearly all, far
    faster than YAML, which reads the rest ("! "1332"" tags)."""
    loader = getattr(yaml, 'CSafeLoader', yaml.SafeLoader)
    for line in lines:
        body = (line[2:] if line.startswith('- {') else line).rstrip('\r\n')
        if not body.startswith('{'):
            continue
        try:
            entry = json.loads(body)
        except ValueError:
            try:
                entry = yaml.load(body, Loader=loader)
            except yaml.YAMLError:
                continue
        if isinstance(entry, dict):
            yield entry

def console(entries: Iterable[Dict[str, Any]]) -> Tuple[List[str],
                                                         List[str]]:
    """A job's console as the direct run's two boots: the kernel's (KUnit)
    up to the ramdisk's "PERF_AUX: kernel" line or the first test action,
    the kselftests' from there."""
    boot: List[str] = []
    tests: List[str] = []
    part = boot
    for e in entries:
        msg = e.get('msg')
        if not isinstance(msg, str):
            continue
        if e.get('lvl') != 'target':
            part = tests if _TEST_ACTION.match(msg) else part
            continue
        for line in msg.splitlines() or ['']:
            if part is boot and ktap.KERNEL.search(line):
                part = tests
            part.append(line.rstrip('\r'))
    return boot, tests

def job_errors(entries: Iterable[Dict[str, Any]]) -> List[str]:
    """Each "<error_type> error: <error_msg>" of a failed result of the
    job's "lava" suite, once, in order."""
    found = [(msg.get('error_type'), ' '.join(str(msg['error_msg']).split()))
             for msg in (e.get('msg') for e in entries
                         if e.get('lvl') == 'results')
             if isinstance(msg, dict) and msg.get('definition') == 'lava'
             and msg.get('result') == 'fail' and msg.get('error_msg')]
    return list(dict.fromkeys(f'{kind} error: {text}' if kind else text
                              for kind, text in found))

def counts(cases: Dict[str, str]) -> str:
    n = Counter(cases.values())
    return f'{len(cases)} cases ({n["pass"]} pass, {n["fail"]} fail, ' \
           f'{n["skip"]} skip)'

def group_check(want: Dict[str, str], got: Dict[str, str], what: str
                ) -> Check:
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

def compare(results_dir: str, log_path: str, tag: str,
            only: List[str]) -> List[Check]:
    """lava-run's log against the direct run: the job, each group (those
    in only, if any), the measurements, and the names."""
    converter = converted(results_dir)
    want = {g: dict(c[:2] for c in found) for g, found in converter.items()}
    with open(log_path, errors='replace') as f:
        records = [e['msg'] for e in log_entries(f)
                   if e.get('lvl') == 'results' and isinstance(e['msg'], dict)]
    got: Dict[str, Dict[str, str]] = {}
    problems = []
    for r in records:
        name = str(r.get('case', ''))
        if not name.startswith('perf_aux.'):
            continue
        group = name.split('.')[1]
        if name in got.get(group, {}):
            problems.append(f'{name} recorded twice')
        got.setdefault(group, {})[name] = r.get('result')
        if r.get('set') != group:
            problems.append(f'{name} in test set {r.get("set")!r}, '
                            f'not {group!r}')
        if len(name) > MAX_NAME:
            problems.append(f'{name} longer than {MAX_NAME} characters')
    job = [r for r in records if r.get('definition') == 'lava' and
           r.get('case') == 'job']
    ok = bool(job) and job[-1].get('result') == 'pass'
    checks = [Check(ok, f'{tag}: lava-run job finished correctly', [] if ok
                    else [f'  {job[-1] if job else "no job result"}'])]
    checks += [group_check(want.get(g, {}), got.get(g, {}), f'{tag}: {g}')
               for g in sorted(set(want) | set(got)) if not only or g in only]
    # The cases that print translation entries carry them (values differ
    # from boot to boot).
    measured = {c[0] for found in converter.values() for c in found
                if len(c) > 2}
    units = {r['case']: r.get('units', '') for r in records
             if 'measurement' in r and
             str(r.get('case', '')).startswith('perf_aux.')}
    wrong = [f'  missing {n}' for n in sorted(measured - set(units))] + \
        [f'  unexpected {n}' for n in sorted(set(units) - measured)] + \
        [f'  units of {n}' for n, u in sorted(units.items()) if u != 'entries']
    checks.append(Check(not wrong, f'{tag}: measurements: {len(units)} cases '
                        f'carry translation entries, direct run '
                        f'{len(measured)}', wrong))
    return checks + [Check(not problems, f'{tag}: names and test sets' + (
        '' if problems else f': one set per group, names at most {MAX_NAME} '
        'characters, no duplicates'), ['  ' + p for p in problems[:20]])]

def emit(checks: List[Check]) -> int:
    """Prints the check lines; 1 if any is not ok."""
    for c in checks:
        print(f'{"ok" if c.ok else "not ok"} - lava: {c.what}')
        for line in c.details:
            print(f'#{line}')
    return 0 if all(c.ok for c in checks) else 1
