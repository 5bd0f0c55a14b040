# SPDX-License-Identifier: GPL-2.0
"""The perf_aux LAVA glue, on top of perf_aux_results (lava, lava_jobs):

  common     paths, perf_aux.lib's selectors, the one-line failures
  artifacts  what a QEMU job takes from a build: kernel options, ramdisk,
             this checkout's lava-jobs/ as a git repository
  client     the LAVA server's REST API (urllib): the token, the proxy
  submit     make submit: runs' jobs submitted, waited for, collected
  lab        a local lab: PostgreSQL, lava-server, lava-worker
  selftest   make lab-selftest: the lab's checks and fault cases
  checks     the LAVA checks: generated jobs, schemas, lava-run

Entry points: scripts/lava/submit.sh, lab.sh and check.sh, each
"python3 -m perf_aux_lava submit|lab|check ..." (Debian's python3:
lava_common needs python3-voluptuous).
"""
