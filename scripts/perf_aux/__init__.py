# SPDX-License-Identifier: GPL-2.0
"""The perf_aux orchestration, one module per concern."""
