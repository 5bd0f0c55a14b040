#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make repeat: the flake hunt.  Runs the suite ROUNDS times on one boot
# (the kselftests; perf_aux.repeat= tells the initramfs) and on ROUNDS fresh
# boots (KUnit and the kselftests), then lists every case whose result is
# not the same in every round.  Same KERNEL/TARGET/VARIANT selectors as
# make run; the kernel must have been built by make run before.
#
# Usage: scripts/repeat.sh [ROUNDS]    (default 5)
# Exit: 0 when no case is flaky.
#
# The work: scripts/perf_aux/repeat.py.

PYTHONPATH="$(dirname "$0")" exec python3 -m perf_aux.repeat "$@"
