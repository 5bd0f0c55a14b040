# SPDX-License-Identifier: GPL-2.0
"""The command line of python3 -m perf_aux results (RESULTS_USAGE).

Each subcommand parses, decides its exit status from what it parsed, and
prints; the lines printed are the ones perf_aux's check, run and repeat
have always read.
"""

import argparse
import os
from typing import Callable, Dict, List, Optional

from . import (evidence, expected, ktap, matrix, measurements, report,
               runs, testdefs, verdicts)

RESULTS_USAGE = """\
  results kunit LOG OUTDIR          split a KUnit boot log, one file a suite
  results kselftest LOG OUTDIR      split run_kselftest.sh output, one file
                                    a test binary (its own KTAP, un-nested)
  results summary DIR... [--report FILE]
                                    a line per suite and the totals; exit 1
                                    when anything failed or crashed; FILE is
                                    the acceptance report of every run in
                                    DIR's parent (see report)
  results report [--results DIR] [--out FILE] [--mutants DIR]
                 [--patches DIR] [--logs DIR]
                                    the acceptance report alone: kernels,
                                    results, and per base translation
                                    entries, vmap benchmark, mutation
                                    matrix, and an SVG granule map a buffer
                                    under FILE's directory, in report/
  results matrix [--mutants DIR] [--patches DIR]
                                    which suite killed which kernel mutant,
                                    per base ("base B:", a table, the
                                    peers' line, "K killed of N"); exit 0
                                    when every mutant patch is killed on
                                    every base
  results evidence [--out FILE] [--mutants DIR] [--patches DIR]
                   [--logs DIR] RUN_DIR...
                                    plain text, 72 columns at most, for a
                                    cover letter or a Tested-by reply: the
                                    kernels, pass/fail/skip per suite,
                                    translation entries per AUX buffer
                                    beside the computed minimum, skips by
                                    reason, the mutation score; logs and
                                    mutants default to the runs' out/ tree
  results flakes DIR... [--except SUITE]...
                                    cases whose result differs between the
                                    round directories (make repeat),
                                    or two runs, but in the suites named
  results peers LOG OUTDIR          lib/test_vmalloc.c's summary lines in a
                                    boot log, as the suite peer.test_vmalloc
  results bench BASE_DIR NEW_DIR    vmap benchmark of two runs, as ratios
  results expected DIR... [--file FILE] [--suite SUITE]...
                                    each run against its committed expected
                                    results (scripts/expected/<base>/
                                    <target>[-<variant>].txt, or FILE), case
                                    by case, in the suites named or all;
                                    exit 1 on any difference
  results expected --write DIR...
                                    rewrites those files from the runs (runs
                                    of one configuration merged) and prints
                                    the difference for review
  results expect DIR SUITE [--min-passed N] [--min-skipped N]
                 [--skip-reason TEXT]
                 (--no-failure | --failure | --failure-allowed)
                                    one verdict line on a suite's outcome;
                                    exit 0 when it is as expected
  results testdefs LOG RESULTS_DIR KSELFTEST_LOG
                                    one check line: the results
                                    test-definitions' kselftest.sh printed
                                    in LOG (scripts/initramfs/testdefs-init)
                                    equal the direct run's, case by case
  results measurements LOG --tier TIER --out FILE [--stages TEXT]
                                    what a check's LOG measured (stage
                                    table, kernel builds and ccache, boots,
                                    results) as Markdown in FILE

Run directories are <kernel>-<base>-<target>[-<variant>].  KTAP is parsed
with a kernel tree's own tools/testing/kunit/kunit_parser.py (found through
$KUNIT_TOOL_DIR or the newest source tree in the cache).
"""


def _split(split: Callable[..., Dict[str, str]]
           ) -> Callable[[argparse.Namespace], int]:
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


def cmd_report(args: argparse.Namespace) -> int:
    report.write_report(args.out, runs.run_dirs(args.results), args.mutants,
                        args.patches, args.logs)
    print(f'report: {args.out}')
    return 0


def cmd_matrix(args: argparse.Namespace) -> int:
    found = matrix.matrices(args.mutants, args.patches)
    for m in found:
        if m.base:
            print(f'base {m.base}:')
        print('\n'.join(matrix.table(m.rows) + m.totals()))
    return 0 if all(m.all_killed for m in found) else 1


def cmd_evidence(args: argparse.Namespace) -> int:
    text = '\n'.join(evidence.evidence(args.dirs, args.mutants, args.patches,
                                       args.logs)) + '\n'
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
    parser = argparse.ArgumentParser(
        prog='python3 -m perf_aux results',
        description='Turns console logs into per-suite KTAP files and '
        'summarises them.', epilog=RESULTS_USAGE,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest='command', required=True)
    for name in ('kunit', 'kselftest', 'peers'):
        p = sub.add_parser(name)
        p.add_argument('log')
        p.add_argument('outdir')
    p = sub.add_parser('summary')
    p.add_argument('dirs', nargs='+')
    p.add_argument('--report')
    p = sub.add_parser('flakes')
    p.add_argument('dirs', nargs='+')
    p.add_argument('--except', dest='exclude', action='append', default=[],
                   metavar='SUITE')
    p = sub.add_parser('report')
    p.add_argument('--results', default=os.path.join(runs.OUT, 'results'))
    p.add_argument('--out', default=os.path.join(runs.OUT, 'report.md'))
    p.add_argument('--logs', default=os.path.join(runs.OUT, 'logs'))
    for p in (p, sub.add_parser('matrix')):
        # Both: the mutants' run directories and their patches.
        p.add_argument('--mutants', default=os.path.join(runs.OUT, 'mutants'))
        p.add_argument('--patches', default=runs.PATCHES)
    p = sub.add_parser('evidence')
    p.add_argument('dirs', nargs='+')
    p.add_argument('--out')
    p.add_argument('--mutants')
    p.add_argument('--patches', default=runs.PATCHES)
    p.add_argument('--logs')
    p = sub.add_parser('bench')
    p.add_argument('base')
    p.add_argument('new')
    p = sub.add_parser('expected')
    p.add_argument('dirs', nargs='+')
    p.add_argument('--write', action='store_true')
    p.add_argument('--file')
    p.add_argument('--suite', action='append', default=[])
    p = sub.add_parser('measurements')
    p.add_argument('log')
    p.add_argument('--tier', required=True)
    p.add_argument('--out', required=True)
    p.add_argument('--stages', default='')
    p = sub.add_parser('testdefs')
    p.add_argument('log')
    p.add_argument('results_dir')
    p.add_argument('kselftest_log')
    p = sub.add_parser('expect')
    p.add_argument('dir')
    p.add_argument('suite')
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
    handlers: Dict[str, Callable[[argparse.Namespace], int]] = {
        'kunit': _split(ktap.split_kunit_boot),
        'kselftest': _split(ktap.split_kselftest),
        'peers': _split(ktap.split_test_vmalloc),
        'summary': cmd_summary, 'expect': cmd_expect, 'bench': cmd_bench,
        'report': cmd_report, 'matrix': cmd_matrix, 'flakes': cmd_flakes,
        'evidence': cmd_evidence, 'expected': cmd_expected,
        'measurements': cmd_measurements, 'testdefs': cmd_testdefs,
    }
    return handlers[args.command](args)
