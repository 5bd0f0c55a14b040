#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The Debian packages the pipeline needs for the given targets, installed
# where missing, and what it fetches into the cache without installing it:
# the arm64 busybox, the bases' kernel sources (base-BASE), the LAVA files
# (lava, lab), test-definitions' arm64 root filesystem (testdefs).  The
# work and what each name brings: scripts/perf_aux/deps.py.
#
# Usage: scripts/deps.sh TARGET|lava|lab|base-BASE|testdefs...

PYTHONPATH="$(dirname "$0")" exec python3 -m perf_aux.deps "$@"
