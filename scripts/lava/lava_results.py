#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Host side of the perf_aux LAVA jobs (scripts/lava/check.sh).

  lava_results.py validate FILE...     validate jobs and test definitions with
                                       lava_common.schemas, a line each
  lava_results.py reject               each reject case (a job or test
                                       definition the schema must refuse)
  lava_results.py device JOB TEMPLATES OUT
                                       render the device dictionary of a job
                                       (qemu; fvp, n1sdp, ava stand-ins:
                                       scripts/lava/devices/) over the
                                       packaged device types
  lava_results.py compare RESULTS_DIR LAVA_LOG [--group G]...
                                       per group, the (name, result) pairs
                                       LAVA recorded against those of the
                                       direct run; a line each
  lava_results.py expected RESULTS_DIR  the direct run's cases as LAVA names
  lava_results.py console JOB_LOG KUNIT_LOG KSELFTEST_LOG
                                       a job log's console (its "target"
                                       lines) as the direct run's two console
                                       logs: the boot (KUnit), and from the
                                       ramdisk's init on (the kselftests)
  lava_results.py errors JOB_LOG       LAVA's reasons for a job that did not
                                       complete, a line each

Every verdict line is "ok - ..." or "not ok - ..."; the exit status is 1
when any is "not ok".  Uses Debian's /usr/bin/python3 (lava_common needs
python3-voluptuous).  The work is done by scripts/perf_aux_results (lava,
lava_jobs; KTAP through the kernel tree's kunit_parser); the reject cases
are perf_aux_results/lava_jobs.py's REJECTS.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from perf_aux_results.cli import lava_main  # noqa: E402

if __name__ == '__main__':
    sys.exit(lava_main())
