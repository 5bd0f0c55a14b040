#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make evidence: the plain text (72 columns) a series author pastes into a
# cover letter or a Tested-by reply: the run of KERNEL (or of the
# KERNEL_SRC tree) beside the stock run of the same base, TARGET and
# VARIANT, from out/results.  Written to out/evidence-<run>.txt and shown.
#
# The work: scripts/perf_aux/evidence.py.

PYTHONPATH="$(dirname "$0")" exec python3 -m perf_aux.evidence "$@"
