#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turns console logs into per-suite KTAP files and summarises them.

  results.py kunit LOG OUTDIR       split a KUnit boot log, one file a suite
  results.py kselftest LOG OUTDIR   split run_kselftest.sh output, one file
                                    a test binary (its own KTAP, un-nested)
  results.py summary DIR... [--report FILE]
                                    a line per suite and the totals; exit 1
                                    when anything failed or crashed
  results.py bench BASE_DIR NEW_DIR  vmap benchmark of two runs, as ratios
  results.py expect DIR SUITE [--min-passed N] [--min-skipped N]
                    [--skip-reason TEXT] (--no-failure | --failure)
                                    one verdict line on a suite's outcome;
                                    exit 0 when it is as expected

KTAP is parsed with the kernel tree's own tools/testing/kunit/kunit_parser.py
(found through $KUNIT_TOOL_DIR or the first source tree in the cache).
"""

import argparse
import glob
import io
import os
import re
import sys
from dataclasses import dataclass
from typing import Callable, Dict, Iterable, List, Optional


def _import_kunit_parser():  # type: ignore[no-untyped-def]
    cache = os.environ.get('PERF_AUX_CACHE', '/var/cache/perf_aux')
    candidates = [os.environ.get('KUNIT_TOOL_DIR', '')] + sorted(
        glob.glob(os.path.join(cache, 'src', '*', 'tools', 'testing', 'kunit')))
    for path in candidates:
        if path and os.path.isfile(os.path.join(path, 'kunit_parser.py')):
            sys.path.insert(0, path)
            import kunit_parser
            import kunit_printer
            # The parser prints progress as it goes; keep our output ours.
            kunit_parser.stdout = kunit_printer.Printer(io.StringIO())
            return kunit_parser
    sys.exit('results.py: no kunit_parser.py; set KUNIT_TOOL_DIR')


kunit_parser = _import_kunit_parser()

# Top-level result line of a KTAP document: "ok 3 name" / "not ok 3 name".
TOP_RESULT = re.compile(r'^(not ok|ok) [0-9]+ (- )?([^#]*?)\s*(#.*)?$')
# run_kselftest.sh's result line for one binary.
KSFT_RESULT = re.compile(
    r'^(not ok|ok) [0-9]+ selftests: (\S+): (\S+)(\s*#\s*(.*))?$')
SUBTEST = re.compile(r'^\s*# Subtest: (\S+)')
SKIP_LINE = re.compile(r'^\s*ok [0-9]+ .* # SKIP ?(.*)$')
TAP_HEADER = re.compile(r'^(K?TAP version [0-9]+)$')


@dataclass
class SuiteResult:
    """Counts of one suite's leaf test cases."""
    name: str
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    errors: int = 0

    @property
    def ok(self) -> bool:
        return not self.failed and not self.errors


def ktap_document(name: str, block: List[str], result: str) -> str:
    """Wraps one suite's lines as a KTAP document with a plan of one."""
    last = TOP_RESULT.sub(lambda m: f'{m.group(1)} 1 {name}'
                          + (f' {m.group(4)}' if m.group(4) else ''), result)
    return '\n'.join(['KTAP version 1', '1..1'] + block + [last]) + '\n'


def split_kunit(log: Iterable[str]) -> Dict[str, str]:
    """Splits a KUnit console log into one KTAP document per suite."""
    lines = list(kunit_parser.extract_tap_lines(log))
    suites: Dict[str, str] = {}
    block: List[str] = []
    for line in lines[1:]:
        if line.startswith(' ') or line.startswith('#'):
            block.append(line)
            continue
        match = TOP_RESULT.match(line)
        if match:
            name = match.group(3)
            suites[name] = ktap_document(name, block, line)
            block = []
    # A suite the kernel died in has no result line: it failed.
    header = next((SUBTEST.match(b) for b in block if SUBTEST.match(b)), None)
    if header:
        name = header.group(1)
        suites[name] = ktap_document(name, block, f'not ok 1 {name}')
    return suites


def split_kselftest(log: Iterable[str]) -> Dict[str, str]:
    """Splits run_kselftest.sh output into each binary's own KTAP.

    The runner prefixes every line a binary prints with '# ' and then prints
    one result line of its own for the binary.  A binary that is missing, or
    died before printing any result, becomes a one-case document with the
    runner's verdict, so it is counted and never dropped.
    """
    suites: Dict[str, str] = {}
    body: List[str] = []
    for raw in log:
        line = raw.rstrip('\r\n')
        match = KSFT_RESULT.match(line)
        if not match:
            if line.startswith('# ') or line == '#':
                body.append(line[2:])
            continue
        name = f'{match.group(2)}.{match.group(3)}'
        start = next((i for i, b in enumerate(body) if TAP_HEADER.match(b)),
                     None)
        inner = body[start:] if start is not None else []
        if any(TOP_RESULT.match(b) for b in inner):
            suites[name] = '\n'.join(inner) + '\n'
        else:
            reason = f' # {match.group(5)}' if match.group(5) else ''
            suites[name] = (f'KTAP version 1\n1..1\n{match.group(1)} 1 '
                            f'{match.group(3)}{reason}\n')
        body = []
    return suites


def count(name: str, ktap: str) -> SuiteResult:
    """Counts the leaf cases of one KTAP document."""
    test = kunit_parser.parse_run_tests(ktap.splitlines())
    counts = test.counts
    result = SuiteResult(name, counts.passed, counts.failed + counts.crashed,
                         counts.skipped, counts.errors)
    if test.status == kunit_parser.TestStatus.FAILURE_TO_PARSE_TESTS:
        result.errors += 1
    return result


def write_suites(suites: Dict[str, str], outdir: str) -> None:
    os.makedirs(outdir, exist_ok=True)
    for name, ktap in suites.items():
        with open(os.path.join(outdir, f'{name}.ktap'), 'w') as f:
            f.write(ktap)


def collect(dirs: List[str]) -> List[SuiteResult]:
    results = []
    for d in dirs:
        for path in sorted(glob.glob(os.path.join(d, '*.ktap'))):
            name = os.path.basename(path)[:-len('.ktap')]
            with open(path) as f:
                results.append(count(name, f.read()))
    return results


def summary_lines(dirs: List[str]) -> List[str]:
    lines = []
    total = SuiteResult('total')
    for d in dirs:
        for r in collect([d]):
            lines.append(f'{os.path.basename(d.rstrip("/"))} {r.name}: '
                         f'{r.passed} passed, {r.failed} failed, '
                         f'{r.skipped} skipped'
                         + (f', {r.errors} parse errors' if r.errors else ''))
            total.passed += r.passed
            total.failed += r.failed + r.errors
            total.skipped += r.skipped
    lines.append(f'{total.passed} passed, {total.failed} failed, '
                 f'{total.skipped} skipped')
    return lines


def report(dirs: List[str]) -> str:
    out = ['# perf_aux results', '',
           '| kernel-target | suite | passed | failed | skipped |',
           '|---|---|---:|---:|---:|']
    for d in dirs:
        for r in collect([d]):
            out.append(f'| {os.path.basename(d.rstrip("/"))} | {r.name} | '
                       f'{r.passed} | {r.failed + r.errors} | {r.skipped} |')
    out.append('')
    out.append('Raw KTAP: `out/results/<kernel>-<target>/<suite>.ktap`.')
    return '\n'.join(out) + '\n'


def cmd_kunit(args: argparse.Namespace) -> int:
    with open(args.log, errors='replace') as f:
        write_suites(split_kunit(f), args.outdir)
    return 0


def cmd_kselftest(args: argparse.Namespace) -> int:
    with open(args.log, errors='replace') as f:
        write_suites(split_kselftest(f), args.outdir)
    return 0


def cmd_summary(args: argparse.Namespace) -> int:
    lines = summary_lines(args.dirs)
    print('\n'.join(lines))
    if args.report:
        # The report covers every kernel-target run so far, not only these.
        parent = os.path.dirname(os.path.abspath(args.dirs[0]))
        with open(args.report, 'w') as f:
            f.write(report(sorted(glob.glob(os.path.join(parent, '*/')))))
    return 0 if lines[-1].split(', ')[1] == '0 failed' else 1


BENCH = re.compile(r'vmap_bench: (.*)$')


def bench_values(ktap: str) -> Dict[str, int]:
    """The key=value numbers of the vmap_bench diagnostic line."""
    for line in ktap.splitlines():
        match = BENCH.search(line)
        if match:
            return {k: int(v) for k, v in
                    (kv.split('=') for kv in match.group(1).split())}
    return {}


def bench_lines(base: Dict[str, int], new: Dict[str, int]) -> List[str]:
    """One line per timing: base, new and base/new (>1: new is faster)."""
    lines = []
    for key in sorted(k for k in base if k.endswith('_ns') and k in new):
        ratio = base[key] / new[key] if new[key] else float('inf')
        lines.append(f'{key}: {base[key]} -> {new[key]} ns, {ratio:.2f}x')
    return lines


def cmd_bench(args: argparse.Namespace) -> int:
    values = []
    for d in (args.base, args.new):
        path = os.path.join(d, 'vmap_granule.ktap')
        if not os.path.isfile(path):
            print(f'vmap bench: no vmap_granule results in {d}')
            return 1
        with open(path) as f:
            values.append(bench_values(f.read()))
    lines = bench_lines(values[0], values[1])
    for line in lines:
        print(f'vmap bench {os.path.basename(args.base.rstrip("/"))} -> '
              f'{os.path.basename(args.new.rstrip("/"))}: {line}')
    return 0 if lines else 1


def cmd_expect(args: argparse.Namespace) -> int:
    path = os.path.join(args.dir, f'{args.suite}.ktap')
    if not os.path.isfile(path):
        print(f'{args.suite}: no results in {args.dir}')
        return 1
    with open(path) as f:
        ktap = f.read()
    r = count(args.suite, ktap)
    failed = r.failed + r.errors
    if args.skip_reason:
        # Only skips for this reason count (kunit_parser drops reasons).
        r.skipped = sum(1 for line in ktap.splitlines()
                        if SKIP_LINE.match(line) and
                        args.skip_reason in SKIP_LINE.match(line).group(1))
    problems = []
    if r.passed < args.min_passed:
        problems.append(f'fewer than {args.min_passed} passed')
    if r.skipped < args.min_skipped:
        problems.append(f'fewer than {args.min_skipped} skipped')
    if args.failure and not failed:
        problems.append('no failure')
    if not args.failure and failed:
        problems.append('failures')
    print(f'{args.suite}: {r.passed} passed, {failed} failed, '
          f'{r.skipped} skipped' + (f' ({"; ".join(problems)})'
                                    if problems else ''))
    return 1 if problems else 0


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest='command', required=True)
    for name in ('kunit', 'kselftest'):
        p = sub.add_parser(name)
        p.add_argument('log')
        p.add_argument('outdir')
    p = sub.add_parser('summary')
    p.add_argument('dirs', nargs='+')
    p.add_argument('--report')
    p = sub.add_parser('bench')
    p.add_argument('base')
    p.add_argument('new')
    p = sub.add_parser('expect')
    p.add_argument('dir')
    p.add_argument('suite')
    p.add_argument('--min-passed', type=int, default=0)
    p.add_argument('--min-skipped', type=int, default=0)
    p.add_argument('--skip-reason')
    group = p.add_mutually_exclusive_group(required=True)
    group.add_argument('--no-failure', dest='failure', action='store_false')
    group.add_argument('--failure', dest='failure', action='store_true')
    args = parser.parse_args(argv)
    handlers: Dict[str, Callable[[argparse.Namespace], int]] = {
        'kunit': cmd_kunit, 'kselftest': cmd_kselftest,
        'summary': cmd_summary, 'expect': cmd_expect, 'bench': cmd_bench,
    }
    return handlers[args.command](args)


if __name__ == '__main__':
    sys.exit(main())
