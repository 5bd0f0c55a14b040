# SPDX-License-Identifier: GPL-2.0
"""The perf_aux results glue: KTAP parsed (ktap), judged (verdicts,
expected), reported (report)."""
