# SPDX-License-Identifier: GPL-2.0
"""Verdicts from kunit_parser's tree of KTAP (skip reasons, which 6.12's
parser drops, from the result lines): counts, expectations, flakes, kills."""

import os
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Optional, Tuple

from . import formats, ktap, runs


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

    @property
    def ok(self) -> bool:
        return not self.failures


def count(name: str, text: str) -> SuiteResult:
    test = ktap.parse(text)
    c = test.counts
    result = SuiteResult(name, c.passed, c.failed + c.crashed, c.skipped,
                         c.errors)
    if test.status == ktap.kunit().TestStatus.FAILURE_TO_PARSE_TESTS:
        result.errors += 1
    return result


def collect(d: str) -> List[SuiteResult]:
    return [count(s, text) for s, text in ktap.read_suites(d).items()]


def summary(dirs: List[str]) -> Tuple[List[str], SuiteResult]:
    """A line a suite of each directory, the totals line; and the totals."""
    lines = []
    total = SuiteResult('total')
    for d in dirs:
        for r in collect(d):
            lines.append(f'{runs.name(d)} {r.name}: '
                         + formats.totals(r.passed, r.failed, r.skipped)
                         + (f', {r.errors} parse errors' if r.errors else ''))
            total.passed += r.passed
            total.failed += r.failures
            total.skipped += r.skipped
    lines.append(formats.totals(total.passed, total.failed, total.skipped))
    return lines, total


@dataclass
class Expectation:
    """What a suite's outcome must be (make check)."""
    failure: Optional[bool]  # some case must fail; none may; None: either
    min_passed: int = 0
    min_skipped: int = 0
    skip_reason: Optional[str] = None
    # Leaf cases (a name, or a dotted path's tail) that may fail where
    # none may: what a stock kernel fails by design.
    allowed_failures: List[str] = field(default_factory=list)


def _allowed(path: str, names: List[str]) -> bool:
    return any(path == n or path.endswith('.' + n) for n in names)


def expect(d: str, suite: str, want: Expectation) -> Tuple[bool, str]:
    """Whether suite in results directory d is as wanted; one line why."""
    path = os.path.join(d, f'{suite}.ktap')
    if not os.path.isfile(path):
        return False, f'{suite}: no results in {d}'
    text = ktap.read_text(path)
    r = count(suite, text)
    lines = [x for x in map(formats.result, text.splitlines()) if x]
    if want.skip_reason:
        # Only skips for this reason count.
        reasons = [x.skip_reason() for x in lines if x.own]
        r.skipped = sum(1 for reason in reasons
                        if reason is not None and want.skip_reason in reason)
    problems = []
    allowed: List[str] = []
    if want.allowed_failures and r.failures:
        failing = [p for p, status in case_results(text).items()
                   if status not in ('SUCCESS', 'SKIPPED')]
        allowed = [p for p in failing if _allowed(p, want.allowed_failures)]
        # Only the named cases are forgiven; a crash or parse error
        # elsewhere still counts.
        r.failed -= len(allowed)
    if r.passed < want.min_passed:
        problems.append(f'fewer than {want.min_passed} passed')
    if r.skipped < want.min_skipped:
        problems.append(f'fewer than {want.min_skipped} skipped')
    if want.failure and not r.failures:
        problems.append('no failure')
    if want.failure is False and r.failures:
        # Name a few, so that a CI log's last lines say what broke.
        names = [x.name for x in lines if not x.ok and x.name != suite
                 and not _allowed(x.name, want.allowed_failures)]
        problems.append('failures' + (': ' + ', '.join(names[:3])
                                      if names else ''))
    if allowed:
        problems_ok = f'{len(allowed)} failing by design: ' + ', '.join(
            p.rsplit('.', 1)[-1] for p in allowed)
    return not problems, (f'{suite}: '
                          + formats.totals(r.passed, r.failures, r.skipped)
                          + (f' ({"; ".join(problems)})' if problems else '')
                          + (f' [{problems_ok}]' if allowed else ''))


def case_results(text: str) -> Dict[str, str]:
    """Each leaf case of a KTAP document by its dotted path: its status."""
    def walk(test: Any, path: List[str]) -> Iterator[Tuple[str, str]]:
        if not test.subtests:
            yield '.'.join(path), test.status.name
        for sub in test.subtests:
            yield from walk(sub, path + [sub.name])
    return dict(walk(ktap.parse(text), []))


@dataclass
class Flakes:
    """Each case's status per round, and those not the same in all."""
    rounds: int
    cases: Dict[str, List[str]] = field(default_factory=dict)

    @property
    def flaky(self) -> Dict[str, List[str]]:
        return {c: s for c, s in sorted(self.cases.items())
                if len(set(s)) > 1}

    def lines(self) -> List[str]:
        return [f'flaky: {c}: {" ".join(s)}' for c, s in self.flaky.items()
                ] + [f'{len(self.flaky)} flaky of {len(self.cases)} cases '
                     f'over {self.rounds} rounds']


def flakes(rounds: List[str], exclude: Tuple[str, ...] = ()) -> Flakes:
    """Cases whose result is not the same in every round directory, but
    in the suites of exclude (one of the runs has a reason to differ)."""
    found = Flakes(len(rounds))
    for i, rnd in enumerate(rounds):
        for suite, text in ktap.read_suites(rnd).items():
            if suite in exclude:
                continue
            for case, status in case_results(text).items():
                found.cases.setdefault(f'{suite}.{case}',
                                       ['MISSING'] * len(rounds))[i] = status
    return found


@dataclass
class SuiteVerdict:
    """How one suite of a mutant run ended."""
    failed: int
    cases: List[str]

    @property
    def killed(self) -> bool:
        return self.failed > 0


def failing_cases(test: Any, skip: Tuple[str, ...]) -> List[str]:
    """Dotted names of the innermost failed or crashed tests under test;
    those in skip (the parser's root, the suite) add no name, one with no
    name (the kernel died before it) is 'crashed'."""
    status = ktap.kunit().TestStatus
    if test.status not in (status.FAILURE, status.TEST_CRASHED):
        return []
    name = test.name or 'crashed'
    prefix = '' if name in skip else f'{name}.'
    inner = [prefix + c for s in test.subtests
             for c in failing_cases(s, skip)]
    return inner or ([name] if name not in skip else [])


def suite_verdict(suite: str, text: str) -> SuiteVerdict:
    cases = failing_cases(ktap.parse(text), ('main', suite))
    return SuiteVerdict(count(suite, text).failures,
                        list(dict.fromkeys(cases)))


def run_verdicts(d: str) -> Dict[str, SuiteVerdict]:
    return {s: suite_verdict(s, text)
            for s, text in ktap.read_suites(d).items()}
