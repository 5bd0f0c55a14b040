#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make fixes: the fixes the series carries first (the parts of
# scripts/series/parts whose patch is one of the base's by path), each as
# a patch of its own against the pristine source of BASE, for the
# maintainer of the code it fixes to take without the tests.  The patches
# go to out/fixes/<base>/, each checked as that maintainer would: "ok -"/
# "not ok -" lines for checkpatch.pl --strict (the base's own) and git am
# onto the pristine base.
#
# Usage: BASE=7.3 scripts/fixes.sh
#
# The work: scripts/perf_aux/fixes.py.

PYTHONPATH="$(dirname "$0")" exec python3 -m perf_aux.fixes "$@"
