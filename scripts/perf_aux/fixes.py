# SPDX-License-Identifier: GPL-2.0
"""make fixes: perf_aux.series.fixes_main."""

from .series import fixes_main as main  # noqa: F401
