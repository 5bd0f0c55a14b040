#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turns console logs into per-suite KTAP files and summarises them.

  results.py kunit LOG OUTDIR       split a KUnit boot log, one file a suite
  results.py kselftest LOG OUTDIR   split run_kselftest.sh output, one file
                                    a test binary (its own KTAP, un-nested)
  results.py summary DIR... [--report FILE]
                                    a line per suite and the totals; exit 1
                                    when anything failed or crashed; FILE is
                                    the acceptance report of every run in
                                    DIR's parent (see report)
  results.py report [--results DIR] [--out FILE] [--mutants DIR]
                    [--patches DIR] [--logs DIR]
                                    the acceptance report alone: kernels,
                                    results, and per base translation
                                    entries, vmap benchmark, mutation
                                    matrix, and an SVG granule map a buffer
                                    under FILE's directory, in report/
  results.py matrix [--mutants DIR] [--patches DIR]
                                    which suite killed which kernel mutant,
                                    per base ("base B:", a table, the
                                    peers' line, "K killed of N"); exit 0
                                    when every mutant patch is killed on
                                    every base
  results.py evidence [--out FILE] [--mutants DIR] [--patches DIR]
                      [--logs DIR] RUN_DIR...
                                    plain text, 72 columns at most, for a
                                    cover letter or a Tested-by reply: the
                                    kernels, pass/fail/skip per suite,
                                    translation entries per AUX buffer
                                    beside the computed minimum, skips by
                                    reason, the mutation score; logs and
                                    mutants default to the runs' out/ tree
  results.py flakes DIR... [--except SUITE]...
                                    cases whose result differs between the
                                    round directories (make repeat),
                                    or two runs, but in the suites named
  results.py peers LOG OUTDIR       lib/test_vmalloc.c's summary lines in a
                                    boot log, as the suite peer.test_vmalloc
  results.py bench BASE_DIR NEW_DIR  vmap benchmark of two runs, as ratios
  results.py expected DIR... [--file FILE] [--suite SUITE]...
                                    each run against its committed expected
                                    results (scripts/expected/<base>/
                                    <target>[-<variant>].txt, or FILE), case
                                    by case, in the suites named or all;
                                    exit 1 on any difference
  results.py expected --write DIR...
                                    rewrites those files from the runs (runs
                                    of one configuration merged) and prints
                                    the difference for review
  results.py expect DIR SUITE [--min-passed N] [--min-skipped N]
                    [--skip-reason TEXT]
                    (--no-failure | --failure | --failure-allowed)
                                    one verdict line on a suite's outcome;
                                    exit 0 when it is as expected
  results.py testdefs LOG RESULTS_DIR KSELFTEST_LOG
                                    one check line: the results
                                    test-definitions' kselftest.sh printed
                                    in LOG (scripts/initramfs/testdefs-init)
                                    equal the direct run's, case by case
  results.py measurements LOG --tier TIER --out FILE [--stages TEXT]
                                    what a check's LOG measured (stage
                                    table, kernel builds and ccache, boots,
                                    results) as Markdown in FILE

Run directories are <kernel>-<base>-<target>[-<variant>].  The work is done
by the package perf_aux_results beside this file; KTAP is parsed with a
kernel tree's own tools/testing/kunit/kunit_parser.py (found through
$KUNIT_TOOL_DIR or the newest source tree in the cache).
"""

import sys

from perf_aux_results.cli import results_main

if __name__ == '__main__':
    sys.exit(results_main())
