#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The kselftest boot: the perf_aux kselftests built with the tree's own
# selftests build, packed into an initramfs (or into the Debian root
# filesystem of KSELFTEST_ROOTFS, the way KernelCI and LKFT run them) and
# booted on the kernel scripts/kunit.sh built; the console in LOG.  The
# work and its environment: scripts/perf_aux/kselftest.py.
#
# Usage: scripts/kselftest.sh NAME TARGET VARIANT LOG [KERNEL_ARG...]

PYTHONPATH="$(dirname "$0")" exec python3 -m perf_aux.kselftest "$@"
