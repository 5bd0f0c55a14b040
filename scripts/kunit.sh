#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernel of tree NAME built for TARGET with the tree's own kunit.py,
# and its KUnit suites run at boot under QEMU; the console, KTAP included,
# in LOG.  --series: kunit.py as its users run it, in the series tree.  The
# work, its exit statuses and environment: scripts/perf_aux/kunit.py.
#
# Usage: scripts/kunit.sh NAME TARGET VARIANT LOG [KERNEL_ARG...]
#        scripts/kunit.sh --series [TREE]

PYTHONPATH="$(dirname "$0")" exec python3 -m perf_aux.kunit "$@"
