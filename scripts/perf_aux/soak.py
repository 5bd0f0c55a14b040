# SPDX-License-Identifier: GPL-2.0
"""make soak [DURATION=600]: soak_test alone for DURATION seconds (at most
soak_test's SOAK_MAX_SECONDS) on the sanitize kernel, four CPUs; prints
what it counted and the console's kernel reports.  SOAK_SUMMARY_ONLY=1:
the last soak's summary, not run again."""

import os
import re
from pathlib import Path
from typing import List

from . import lib, run
from .verdict import expectation


def soak(env) -> int:
    duration = env.get('DURATION') or '600'
    source = Path(lib.ROOT, 'tools/testing/selftests/perf_aux/soak_test.c')
    m = re.search(r'^#define SOAK_MAX_SECONDS ([0-9]*)$',
                  source.read_text(), re.M)
    most = m.group(1) if m else ''
    if not duration.isdigit() or int(duration) > int(most or 0):
        lib.die(f"DURATION={duration}: one soak is at most "
                f"{most or '?'} s (soak_test's harness timeout)")
    r = lib.env_run(env, target='arm64-4k', variant='soak')
    if env.get('SOAK_SUMMARY_ONLY', '0') != '1':
        rc = run.job(r)
        # A run failed by its kernel reports still gets its soak lines.
        if rc and not lib.run_reports(r.name):
            return rc
    log = r.log('kselftest')
    if not os.path.isfile(log):
        lib.die(f'no soak log {log}')
    for line in Path(log).read_text(errors='surrogateescape').split('\n'):
        m = re.match(r'^#.*:(soak: .*)', line)
        if m:
            print(m.group(1))
    reports = lib.run_reports(r.name)
    print(f'soak: {len(reports)} kernel reports', flush=True)
    if reports:
        print('\n'.join(reports[:20]), flush=True)
        return 1
    ok, line = expectation(r.results, 'perf_aux.soak_test', min_passed=1)
    print(line)
    return 0 if ok else 1


def main(argv: List[str]) -> int:
    del argv
    return soak(os.environ)
