#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The main job (make run): for one KERNEL and TARGET, install what is
# missing, prepare the kernel tree, build it once, run the KUnit suites at
# boot and the perf_aux kselftests from an initramfs under QEMU, then write
# out/results/<kernel>-<base>-<target>[-<variant>]/<suite>.ktap and
# out/report.md.
#
# Environment: BASE (7.3), TARGET (arm64-4k), KERNEL (reference), VARIANT (default),
# KERNEL_SRC (a tree of your own instead of Debian's), KERNEL_ARGS (extra
# boot parameters).
# Exit: 0 when nothing failed.
#
# The work: scripts/perf_aux/run.py.

PYTHONPATH="$(dirname "$0")" exec python3 -m perf_aux.run "$@"
