# SPDX-License-Identifier: GPL-2.0
"""The perf_aux results glue, from console logs to verdicts and reports
(its modules: docs/architecture.md)."""
