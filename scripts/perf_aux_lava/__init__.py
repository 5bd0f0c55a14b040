# SPDX-License-Identifier: GPL-2.0
"""The perf_aux LAVA glue: python3 -m perf_aux_lava submit|lab|check
(__main__.py), over perf_aux_results' lava and lava_jobs."""
