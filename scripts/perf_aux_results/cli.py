# SPDX-License-Identifier: GPL-2.0
"""python3 -m perf_aux results: each sub-command decides its exit status
from what it parsed and prints the lines perf_aux's check, run and repeat
read.  Run directories are <kernel>-<base>-<target>[-<variant>]; KTAP is
parsed with a kernel tree's kunit_parser.py ($KUNIT_TOOL_DIR, or the
newest source tree in the cache)."""

import argparse
import os
import sys
from typing import List, Optional

from . import evidence, expected, ktap, measurements, report, runs, \
    testdefs, verdicts


def summary(args: argparse.Namespace) -> int:
    lines, total = verdicts.summary(args.dirs)
    print('\n'.join(lines))
    if args.report:
        # The report covers every run so far, not only these.
        out = os.path.dirname(os.path.abspath(args.report))
        report.write_report(args.report, runs.run_dirs(os.path.dirname(
            os.path.abspath(args.dirs[0]))), os.path.join(out, 'mutants'),
            runs.PATCHES, os.path.join(out, 'logs'))
    return 1 if total.failures else 0


def flakes(args: argparse.Namespace) -> int:
    flaky, lines = verdicts.flakes(args.dirs, tuple(args.exclude))
    print('\n'.join(lines))
    return 1 if flaky else 0


def bench(args: argparse.Namespace) -> int:
    values = []
    for d in (args.base, args.new):
        if not os.path.isfile(os.path.join(d, 'test_vmalloc.ktap')):
            print(f'vmap bench: no test_vmalloc results in {d}')
            return 1
        values.append(ktap.bench(ktap.suite_text(d, 'test_vmalloc')))
    lines = report.bench_lines(*values)
    for line in lines:
        print(f'vmap bench {runs.name(args.base)} -> {runs.name(args.new)}: '
              f'{line}')
    return 0 if lines else 1


def matrix(args: argparse.Namespace) -> int:
    found = report.matrices(args.mutants, args.patches)
    for m in found:
        print('\n'.join(([f'base {m.base}:'] if m.base else []) + m.table()
                        + m.totals()))
    return 0 if all(m.all_killed for m in found) else 1


def evidence_text(args: argparse.Namespace) -> int:
    text = '\n'.join(evidence.evidence(args.dirs)) + '\n'
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, 'w') as f:
            f.write(text)
        print(f'evidence: {args.out}')
    else:
        print(text, end='')
    return 0 if any(os.path.isdir(d) for d in args.dirs) else 1


def expect(args: argparse.Namespace) -> int:
    ok, line = verdicts.expect(args.dir, args.suite, verdicts.Expectation(
        args.failure, args.min_passed, args.min_skipped, args.skip_reason,
        args.allow_failing))
    print(line)
    return 0 if ok else 1


def expected_results(args: argparse.Namespace) -> int:
    if args.write:
        print('\n'.join(expected.write(args.dirs)) or 'expected: no change')
        return 0
    ok = True
    for d in args.dirs:
        good, lines = expected.check_line(
            d, args.file or expected.path_for(d), set(args.suite) or None)
        print('\n'.join(lines))
        ok = ok and good
    return 0 if ok else 1


def testdefs_check(args: argparse.Namespace) -> int:
    ok, lines = testdefs.check(args.log, args.results_dir, args.kselftest_log)
    print(('ok - ' if ok else 'not ok - ') + lines[0])
    print('\n'.join(lines[1:41]))
    if len(lines) > 41:
        print(f'# ... and {len(lines) - 41} more')
    return 0 if ok else 1


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog='python3 -m perf_aux results',
                                description=__doc__)
    sub = p.add_subparsers(dest='command', required=True)

    def add(name: str, cmd, what: str, *args: str) -> argparse.ArgumentParser:
        s = sub.add_parser(name, help=what, description=what)
        s.set_defaults(cmd=cmd)
        for a in args:
            s.add_argument(a.rstrip('+'), nargs='+' if a[-1] == '+' else None)
        return s

    def split(name: str, how, what: str) -> None:
        def cmd(args: argparse.Namespace) -> int:
            with open(args.log, errors='replace') as f:
                ktap.write_suites(how(f), args.outdir)
            return 0
        add(name, cmd, what, 'log', 'outdir')

    split('kunit', ktap.split_kunit_boot,
          'a KUnit boot log, a KTAP file a suite (and test_vmalloc)')
    split('kselftest', ktap.split_kselftest,
          "run_kselftest.sh's output, a test binary's own KTAP a file")
    split('peers', ktap.split_test_vmalloc,
          "lib/test_vmalloc.c's summaries, as peer.test_vmalloc")
    add('summary', summary, 'a line a suite and the totals; exit 1 on a '
        'failure; --report: the report of every run in the parent',
        'dirs+').add_argument('--report')
    add('flakes', flakes, 'cases whose result differs between runs',
        'dirs+').add_argument('--except', dest='exclude', action='append',
                              default=[], metavar='SUITE')
    s = add('matrix', matrix, 'which suite killed which mutant, per base; '
            'exit 0 when all are killed')
    s.add_argument('--mutants', default=os.path.join(runs.OUT, 'mutants'))
    s.add_argument('--patches', default=runs.PATCHES)
    add('evidence', evidence_text, 'plain text evidence (72 columns) for a '
        'cover letter or Tested-by reply', 'dirs+').add_argument('--out')
    add('bench', bench, 'vmap benchmark of two runs, as ratios', 'base', 'new')
    s = add('expected', expected_results, 'each run against its committed '
            'expected results, case by case; --write rewrites them', 'dirs+')
    s.add_argument('--write', action='store_true')
    s.add_argument('--file')
    s.add_argument('--suite', action='append', default=[])
    s = add('measurements', lambda a: measurements.write(
        a.log, a.tier, a.out, a.stages, runs.ROOT) or 0,
        "a check's LOG as Markdown", 'log')
    s.add_argument('--tier', required=True)
    s.add_argument('--out', required=True)
    s.add_argument('--stages', default='')
    add('testdefs', testdefs_check, "test-definitions' results in LOG "
        "against the direct run's", 'log', 'results_dir', 'kselftest_log')
    s = add('expect', expect, "one verdict line on a suite's outcome", 'dir',
            'suite')
    s.add_argument('--min-passed', type=int, default=0)
    s.add_argument('--min-skipped', type=int, default=0)
    s.add_argument('--skip-reason')
    # A case the kernel fails by design (repeatable): its failure, and
    # only its, does not count.
    s.add_argument('--allow-failing', action='append', default=[],
                   metavar='CASE')
    group = s.add_mutually_exclusive_group(required=True)
    group.add_argument('--no-failure', dest='failure', action='store_false')
    group.add_argument('--failure', dest='failure', action='store_true')
    # What a peer fails by design differs from base to base.
    group.add_argument('--failure-allowed', dest='failure',
                       action='store_const', const=None)
    return p


def results_main(argv: Optional[List[str]] = None) -> int:
    """python3 -m perf_aux results."""
    args = parser().parse_args(argv)
    try:
        return args.cmd(args)
    except ktap.ToolMissing as e:
        print(e, file=sys.stderr)
        return 1
