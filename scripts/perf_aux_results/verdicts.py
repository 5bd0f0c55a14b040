# SPDX-License-Identifier: GPL-2.0
"""The judge layer: counts, expectations, flakes and a mutant's failing
cases, from kunit_parser's trees (skip reasons from the result lines)."""

import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, NamedTuple, Optional, Set, Tuple

from perf_aux.lib import read

from . import ktap

@dataclass
class SuiteResult:
    """Counts of one suite's leaf test cases."""
    name: str
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    errors: int = 0

    @property
    def failures(self) -> int:
        return self.failed + self.errors

def count(name: str, text: str) -> SuiteResult:
    test = ktap.parse(text)
    c = test.counts
    parse_error = test.status == ktap.kunit().TestStatus.FAILURE_TO_PARSE_TESTS
    return SuiteResult(name, c.passed, c.failed + c.crashed, c.skipped, c.errors + parse_error)

def collect(d: str) -> List[SuiteResult]:
    return [count(s, text) for s, text in ktap.read_suites(d).items()]

def summary(dirs: List[str]) -> Tuple[List[str], SuiteResult]:
    """A line a suite of each directory, the totals line; the totals."""
    lines = []
    total = SuiteResult('total')
    for d in dirs:
        for r in collect(d):
            lines.append(f'{ktap.name(d)} {r.name}: '
                         + ktap.totals(r.passed, r.failed, r.skipped)
                         + (f', {r.errors} parse errors' if r.errors else ''))
            total.passed += r.passed
            total.failed += r.failures
            total.skipped += r.skipped
    lines.append(ktap.totals(total.passed, total.failed, total.skipped))
    return lines, total

@dataclass
class Expectation:
    """What a suite's outcome must be (make check)."""
    failure: Optional[bool]  # some case must fail; none may; None: either
    min_passed: int = 0
    min_skipped: int = 0
    skip_reason: Optional[str] = None
    # Leaf cases (a name or a dotted path's tail) a stock kernel fails by
    # design: their failures, and only theirs, do not count.
    allowed_failures: List[str] = field(default_factory=list)

    def allows(self, path: str) -> bool:
        return any(path == n or path.endswith('.' + n) for n in self.allowed_failures)

def expect(d: str, suite: str, want: Expectation) -> Tuple[bool, str]:
    """Whether suite in results directory d is as wanted; one line why."""
    path = os.path.join(d, f'{suite}.ktap')
    if not os.path.isfile(path):
        return False, f'{suite}: no results in {d}'
    text = read(path)
    r = count(suite, text)
    lines = [x for x in map(ktap.result, text.splitlines()) if x]
    if want.skip_reason:
        r.skipped = sum(want.skip_reason in x.skip_reason() for x in lines
                        if x.own and x.skip_reason() is not None)
    allowed = [p for p, status in case_results(text).items()
               if status not in ('SUCCESS', 'SKIPPED') and want.allows(p)] \
        if want.allowed_failures and r.failures else []
    r.failed -= len(allowed)
    # A few failures named, so that a CI log's last lines say what broke.
    names = [x.name for x in lines if not x.ok and x.name != suite and not want.allows(x.name)]
    problems = [what for bad, what in (
        (r.passed < want.min_passed, f'fewer than {want.min_passed} passed'),
        (r.skipped < want.min_skipped,
         f'fewer than {want.min_skipped} skipped'),
        (want.failure and not r.failures, 'no failure'),
        (want.failure is False and r.failures, 'failures' + (
            ': ' + ', '.join(names[:3]) if names else ''))) if bad]
    return not problems, (
        f'{suite}: ' + ktap.totals(r.passed, r.failures, r.skipped)
        + (f' ({"; ".join(problems)})' if problems else '')
        + (f' [{len(allowed)} failing by design: ' + ', '.join(
            p.rsplit('.', 1)[-1] for p in allowed) + ']' if allowed else ''))

def case_results(text: str) -> Dict[str, str]:
    """Each leaf case of a KTAP document by its dotted path: its status."""
    out = {}

    def walk(test: Any, path: List[str]) -> None:
        if not test.subtests:
            out['.'.join(path)] = test.status.name
        for sub in test.subtests:
            walk(sub, path + [sub.name])
    walk(ktap.parse(text), [])
    return out

def flakes(rounds: List[str], exclude: Tuple[str, ...] = ()
           ) -> Tuple[Dict[str, List[str]], List[str]]:
    """Cases whose result differs between round directories (but in the
    suites of exclude, and a pass beside a skip for want of memory, which
    is told); and the lines that say so."""
    cases: Dict[str, List[str]] = {}
    memory: Set[str] = set()
    for i, rnd in enumerate(rounds):
        for suite, text in ktap.read_suites(rnd).items():
            if suite in exclude:
                continue
            memory |= ktap.memory_skips(text.splitlines())
            for case, status in case_results(text).items():
                cases.setdefault(f'{suite}.{case}', ['MISSING'] * len(rounds))[i] = status
    differ = {c: s for c, s in sorted(cases.items()) if len(set(s)) > 1}
    told = {c for c, s in differ.items() if set(s) == {'SUCCESS', 'SKIPPED'}
            and any(c.endswith(f'.{m}') for m in memory)}
    flaky = {c: s for c, s in differ.items() if c not in told}
    return flaky, [f'flaky: {c}: {" ".join(s)}' for c, s in flaky.items()] + [
        f'told: {c}: {" ".join(differ[c])} (a skip for want of memory)' for c in sorted(told)] + [
        f'{len(flaky)} flaky of {len(cases)} cases over {len(rounds)} rounds']

class SuiteVerdict(NamedTuple):
    """How one suite of a mutant run ended: failures, the failing cases."""
    failed: int
    cases: List[str]

    @property
    def killed(self) -> bool:
        return self.failed > 0

def suite_verdict(suite: str, text: str) -> SuiteVerdict:
    """The failures, and the failed or crashed cases (unnamed: the kernel
    died first) under the suite."""
    return SuiteVerdict(count(suite, text).failures, list(dict.fromkeys(
        c.removeprefix(f'{suite}.').rstrip('.') or 'crashed'
        for c, status in case_results(text).items()
        if status in ('FAILURE', 'TEST_CRASHED'))))

def run_verdicts(d: str) -> Dict[str, SuiteVerdict]:
    return {s: suite_verdict(s, text) for s, text in ktap.read_suites(d).items()}
