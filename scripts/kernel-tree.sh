#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Prepares the kernel source tree $PERF_AUX_CACHE/trees/<base>-NAME
# (reference, stock, custom, mutant, series-vN): the Debian source or
# KERNEL_SRC, the project's overlay and patches, rewritten only where the
# recipe changed.  The work: scripts/perf_aux/tree.py.
#
# Usage: BASE=7.3 [SERIES=PATH] scripts/kernel-tree.sh NAME [MUTANT.patch]

PYTHONPATH="$(dirname "$0")" exec python3 -m perf_aux.tree "$@"
