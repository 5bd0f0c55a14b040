# SPDX-License-Identifier: GPL-2.0
"""perf's own Arm SPE shell tests against the synthetic PMU, as reported.

scripts/initramfs/testdefs-init runs the Arm SPE scripts of perf's
tools/perf/tests/shell (from Debian's linux-perf) with bash while the
synthetic PMU also registers as arm_spe_0 (test_aux_pmu.spe_form), each
between "PERF_AUX: perf shell test NAME begin" and "... NAME exit N".
Those scripts judge what perf synthesises from SPE records (samples of
the workload, discard mode), which records carrying no operation or
event packets do not give: what they pass, skip or fail is reported here,
not judged.  The one check is that each script ran to its end (exit 0, 1
or 2, perf test's pass, fail and skip) within the guest's time limit.
"""

import re
from typing import Iterable, List, Tuple

MARK = re.compile(r'^PERF_AUX: perf shell test (?P<name>\S+) '
                  r'(?:(?P<begin>begin)|exit (?P<rc>\d+))$')
# The scripts' own result lines, e.g. "SPE snapshot testing: FAIL".
RESULT = re.compile(r'^(?P<what>.+): (?P<result>PASS|FAIL|SKIPPED)$')
# perf test's exit statuses for a shell test.
STATUS = {0: 'pass', 1: 'fail', 2: 'skip'}

Script = Tuple[str, int, List[str]]


def scripts(log_lines: Iterable[str]) -> Tuple[List[Script], List[str]]:
    """(name, exit status, its result lines) of each script that ran to
    its end; the names of those begun and never ended."""
    done: List[Script] = []
    running = None
    results: List[str] = []
    unfinished: List[str] = []
    for raw in log_lines:
        line = raw.strip()
        m = MARK.match(line)
        if m and m['begin']:
            if running:
                unfinished.append(running)
            running, results = m['name'], []
        elif m and m['name'] == running:
            done.append((running, int(m['rc']), results))
            running = None
        elif running:
            r = RESULT.match(line)
            if r:
                results.append(f"{r['what']}: {r['result']}")
    if running:
        unfinished.append(running)
    return done, unfinished


def report(log_lines: Iterable[str]) -> Tuple[bool, List[str]]:
    """One check line's text and the report below it."""
    done, unfinished = scripts(log_lines)
    ended = [s for s in done if s[1] in STATUS]
    text = ', '.join(f'{name} {STATUS.get(rc, f"exit {rc}")}'
                     for name, rc, _ in done)
    ok = bool(done) and len(ended) == len(done) and not unfinished
    if not done and not unfinished:
        head = "perf's Arm SPE shell tests: none ran (no bash, perf or " \
            'spe_form in the guest)'
    else:
        head = "perf's Arm SPE shell tests ran to their end on the " \
            f"synthetic arm_spe_0: {text or 'none'}"
        if unfinished:
            head += f"; not ended: {' '.join(unfinished)}"
    lines = [head]
    for name, _, results in done:
        lines += [f'# {name}: {r}' for r in results]
    return ok, lines
