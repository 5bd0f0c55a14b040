# SPDX-License-Identifier: GPL-2.0
"""python3 -m perf_aux results: each sub-command decides its exit status
from what it parsed and prints the lines perf_aux's check, run and repeat
read.  Run directories are <kernel>-<base>-<target>[-<variant>]; KTAP is
parsed with a kernel tree's kunit_parser.py ($KUNIT_TOOL_DIR, or the
newest source tree in the cache)."""

import argparse
import os
from typing import Callable, List, Optional

from . import (evidence, expected, ktap, matrix, measurements, report,
               runs, testdefs, verdicts)


def _split(split: Callable) -> Callable[[argparse.Namespace], int]:
    def cmd(args: argparse.Namespace) -> int:
        with open(args.log, errors='replace') as f:
            ktap.write_suites(split(f), args.outdir)
        return 0
    return cmd


def cmd_summary(args: argparse.Namespace) -> int:
    lines, total = verdicts.summary(args.dirs)
    print('\n'.join(lines))
    if args.report:
        # The report covers every run so far, not only these.
        parent = os.path.dirname(os.path.abspath(args.dirs[0]))
        out = os.path.dirname(os.path.abspath(args.report))
        report.write_report(args.report, runs.run_dirs(parent),
                            os.path.join(out, 'mutants'), runs.PATCHES,
                            os.path.join(out, 'logs'))
    return 0 if total.ok else 1


def cmd_flakes(args: argparse.Namespace) -> int:
    found = verdicts.flakes(args.dirs, tuple(args.exclude))
    print('\n'.join(found.lines()))
    return 1 if found.flaky else 0


def cmd_bench(args: argparse.Namespace) -> int:
    values = []
    for d in (args.base, args.new):
        path = os.path.join(d, 'test_vmalloc.ktap')
        if not os.path.isfile(path):
            print(f'vmap bench: no test_vmalloc results in {d}')
            return 1
        values.append(report.bench_values(ktap.read_text(path)))
    lines = report.bench_lines(values[0], values[1])
    for line in lines:
        print(f'vmap bench {runs.name(args.base)} -> {runs.name(args.new)}: '
              f'{line}')
    return 0 if lines else 1


def cmd_matrix(args: argparse.Namespace) -> int:
    found = matrix.matrices(args.mutants, args.patches)
    for m in found:
        if m.base:
            print(f'base {m.base}:')
        print('\n'.join(matrix.table(m.rows) + m.totals()))
    return 0 if all(m.all_killed for m in found) else 1


def cmd_evidence(args: argparse.Namespace) -> int:
    text = '\n'.join(evidence.evidence(args.dirs, args.mutants)) + '\n'
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, 'w') as f:
            f.write(text)
        print(f'evidence: {args.out}')
    else:
        print(text, end='')
    return 0 if any(os.path.isdir(d) for d in args.dirs) else 1


def cmd_expect(args: argparse.Namespace) -> int:
    ok, line = verdicts.expect(args.dir, args.suite, verdicts.Expectation(
        args.failure, args.min_passed, args.min_skipped, args.skip_reason,
        args.allow_failing))
    print(line)
    return 0 if ok else 1


def cmd_expected(args: argparse.Namespace) -> int:
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


def cmd_measurements(args: argparse.Namespace) -> int:
    measurements.write(args.log, args.tier, args.out, args.stages, runs.ROOT)
    return 0


def cmd_testdefs(args: argparse.Namespace) -> int:
    ok, lines = testdefs.check(args.log, args.results_dir, args.kselftest_log)
    print(('ok - ' if ok else 'not ok - ') + lines[0])
    print('\n'.join(lines[1:41]))
    if len(lines) > 41:
        print(f'# ... and {len(lines) - 41} more')
    return 0 if ok else 1


def results_main(argv: Optional[List[str]] = None) -> int:
    """python3 -m perf_aux results."""
    parser = argparse.ArgumentParser(prog='python3 -m perf_aux results',
                                     description=__doc__)
    sub = parser.add_subparsers(dest='command', required=True)

    def add(name: str, cmd: Callable[[argparse.Namespace], int], what: str,
            *positional: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=what, description=what)
        p.set_defaults(cmd=cmd)
        for a in positional:
            p.add_argument(a.rstrip('+'), nargs='+' if a[-1] == '+' else None)
        return p

    for name, split, what in (
            ('kunit', ktap.split_kunit_boot,
             'a KUnit boot log, a KTAP file a suite (and test_vmalloc)'),
            ('kselftest', ktap.split_kselftest,
             "run_kselftest.sh's output, a test binary's own KTAP a file"),
            ('peers', ktap.split_test_vmalloc,
             "lib/test_vmalloc.c's summaries, as peer.test_vmalloc")):
        add(name, _split(split), what, 'log', 'outdir')
    add('summary', cmd_summary, 'a line a suite and the totals; exit 1 on '
        'a failure; --report: the report of every run in the parent',
        'dirs+').add_argument('--report')
    p = add('flakes', cmd_flakes, 'cases whose result differs between runs',
            'dirs+')
    p.add_argument('--except', dest='exclude', action='append', default=[],
                   metavar='SUITE')
    p = add('matrix', cmd_matrix, 'which suite killed which mutant, per '
            'base; exit 0 when all are killed')
    p.add_argument('--mutants', default=os.path.join(runs.OUT, 'mutants'))
    p.add_argument('--patches', default=runs.PATCHES)
    p = add('evidence', cmd_evidence, 'plain text evidence (72 columns) '
            'for a cover letter or Tested-by reply', 'dirs+')
    p.add_argument('--out')
    p.add_argument('--mutants')
    add('bench', cmd_bench, 'vmap benchmark of two runs, as ratios', 'base',
        'new')
    p = add('expected', cmd_expected, 'each run against its committed '
            'expected results, case by case; --write rewrites them', 'dirs+')
    p.add_argument('--write', action='store_true')
    p.add_argument('--file')
    p.add_argument('--suite', action='append', default=[])
    p = add('measurements', cmd_measurements, "a check's LOG as Markdown",
            'log')
    p.add_argument('--tier', required=True)
    p.add_argument('--out', required=True)
    p.add_argument('--stages', default='')
    add('testdefs', cmd_testdefs, "test-definitions' results in LOG against "
        "the direct run's", 'log', 'results_dir', 'kselftest_log')
    p = add('expect', cmd_expect, "one verdict line on a suite's outcome",
            'dir', 'suite')
    p.add_argument('--min-passed', type=int, default=0)
    p.add_argument('--min-skipped', type=int, default=0)
    p.add_argument('--skip-reason')
    # A case the kernel fails by design (repeatable): its failure, and
    # only its, does not count.
    p.add_argument('--allow-failing', action='append', default=[],
                   metavar='CASE')
    group = p.add_mutually_exclusive_group(required=True)
    group.add_argument('--no-failure', dest='failure', action='store_false')
    group.add_argument('--failure', dest='failure', action='store_true')
    # What a peer fails by design differs from base to base.
    group.add_argument('--failure-allowed', dest='failure',
                       action='store_const', const=None)
    args = parser.parse_args(argv)
    return args.cmd(args)
