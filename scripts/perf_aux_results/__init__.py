# SPDX-License-Identifier: GPL-2.0
"""The perf_aux results glue: from console logs to verdicts and reports.

  formats      every line format the suites and the runner print, once
  ktap         kunit_parser (from a kernel tree), splitting logs per suite
  verdicts     counts, expectations, flakes, a mutant run's suite verdicts
  runs         the out/ tree: run names and what a run recorded
  report       the acceptance report (out/report.md)
  granule_svg  granule map pictures for the report
  matrix       the mutation kill matrix, per kernel base
  evidence     plain-text evidence for a cover letter or Tested-by reply
  lava         the direct run's cases as lava-jobs' converter names them,
               and lava-run's
  lava_jobs    LAVA schema checks, rejects, device dictionaries
  cli          python3 -m perf_aux results
"""
