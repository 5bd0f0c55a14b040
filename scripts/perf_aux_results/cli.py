# SPDX-License-Identifier: GPL-2.0
"""python3 -m perf_aux results: KTAP from console logs, summaries, reports,
expected results; each sub-command's exit status is its verdict."""

import argparse
import os
import sys
from typing import List, Optional

from . import expected, ktap, report, testdefs, verdicts

def split(args: argparse.Namespace, how) -> int:
    with open(args.log, errors='replace') as f:
        ktap.write_suites(how(f), args.outdir)
    return 0

def summary(args: argparse.Namespace) -> int:
    lines, total = verdicts.summary(args.dirs)
    print('\n'.join(lines))
    if args.report:
        # The report covers every run so far, not only these.
        out = os.path.dirname(os.path.abspath(args.report))
        report.write_report(args.report, ktap.run_dirs(os.path.dirname(
            os.path.abspath(args.dirs[0]))), os.path.join(out, 'mutants'),
            ktap.PATCHES)
    return 1 if total.failures else 0

def flakes(args: argparse.Namespace) -> int:
    flaky, lines = verdicts.flakes(args.dirs, tuple(args.exclude))
    print('\n'.join(lines))
    return 1 if flaky else 0

def bench(args: argparse.Namespace) -> int:
    lines = report.bench_lines(*(ktap.bench(ktap.suite_text(
        d, 'test_vmalloc')) for d in (args.base, args.new)))
    for line in lines or ['no test_vmalloc results in both']:
        print(f'vmap bench {ktap.name(args.base)} -> {ktap.name(args.new)}: '
              f'{line}')
    return 0 if lines else 1

def matrix(args: argparse.Namespace) -> int:
    found = report.matrices(args.mutants, args.patches)
    for m in found:
        print('\n'.join(([f'base {m.base}:'] if m.base else []) + m.table()
                        + m.totals()))
    return 0 if all(len(m.killed()) == len({r.name for r in m.rows})
                    for m in found) else 1

def evidence_text(args: argparse.Namespace) -> int:
    text = '\n'.join(report.evidence(args.dirs)) + '\n'
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, 'w') as f:
            f.write(text)
        print(f'evidence: {args.out}')
    else:
        print(text, end='')
    return 0 if any(os.path.isdir(d) for d in args.dirs) else 1

def testdefs_check(args: argparse.Namespace) -> int:
    ok, lines = testdefs.check(args.log, args.results_dir, args.kselftest_log)
    print(('ok - ' if ok else 'not ok - ') + lines[0])
    print('\n'.join(lines[1:41] + [f'# ... and {len(lines) - 41} more']
                    if len(lines) > 41 else lines[1:]))
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

    for name, how, what in (
            ('kunit', ktap.split_kunit_boot,
             'a KUnit boot log, a KTAP file a suite (and test_vmalloc)'),
            ('kselftest', ktap.split_kselftest,
             "run_kselftest.sh's output, a test binary's own KTAP a file"),
            ('peers', ktap.split_test_vmalloc,
             "lib/test_vmalloc.c's summaries, as peer.test_vmalloc")):
        add(name, lambda a, how=how: split(a, how), what, 'log', 'outdir')
    add('summary', summary, 'a line a suite and the totals; exit 1 on a '
        'failure; --report: the report of every run in the parent',
        'dirs+').add_argument('--report')
    add('flakes', flakes, 'cases whose result differs between runs',
        'dirs+').add_argument('--except', dest='exclude', action='append',
                              default=[], metavar='SUITE')
    s = add('matrix', matrix, 'which suite killed which mutant, per base; '
            'exit 0 when all are killed')
    s.add_argument('--mutants', default=os.path.join(ktap.OUT, 'mutants'))
    s.add_argument('--patches', default=ktap.PATCHES)
    add('evidence', evidence_text, 'plain text evidence (72 columns) for a '
        'cover letter or Tested-by reply', 'dirs+').add_argument('--out')
    add('bench', bench, 'vmap benchmark of two runs, as ratios', 'base', 'new')
    add('expected', lambda a: print('\n'.join(expected.write(a.dirs)) or
                                    'expected: no change') or 0,
        "rewrites the runs' expected results (make expected), prints the "
        'diff', 'dirs+').add_argument('--write', action='store_true',
                                      required=True)
    s = add('measurements', lambda a: report.write_measurements(
        a.log, a.tier, a.out, a.stages) or 0, "a check's LOG as Markdown",
        'log')
    s.add_argument('--tier', required=True)
    s.add_argument('--out', required=True)
    s.add_argument('--stages', default='')
    add('testdefs', testdefs_check, "test-definitions' results in LOG "
        "against the direct run's", 'log', 'results_dir', 'kselftest_log')
    return p

def results_main(argv: Optional[List[str]] = None) -> int:
    """python3 -m perf_aux results."""
    args = parser().parse_args(argv)
    try:
        return args.cmd(args)
    except ktap.ToolMissing as e:
        print(e, file=sys.stderr)
        return 1
