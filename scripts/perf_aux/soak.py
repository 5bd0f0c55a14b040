# SPDX-License-Identifier: GPL-2.0
"""make soak [DURATION=600] (python3 -m perf_aux soak).

soak_test alone for DURATION seconds (at most an hour) on the sanitize
kernel (KASAN, lockdep, DEBUG_VM, kmemleak, fault injection; four CPUs)
of BASE, KERNEL: trace at the generators' highest rate on every CPU with
wraps, map/unmap churn under fault injection.  Prints what the soak
counted and the kernel's reports in the console; exit 1 on a failure or
a report.  SOAK_SUMMARY_ONLY=1: the summary of the last soak, not run
again.  soak_test's harness timeout bounds one soak (SOAK_MAX_SECONDS).
"""

import os
import re
from typing import List, Optional

from . import lib, run, shell
from .files import read
from .shell import tool


def soak() -> int:
    env = os.environ
    env['DURATION'] = env.get('DURATION') or '600'
    env['VARIANT'] = 'soak'
    env['TARGET'] = 'arm64-4k'
    source = read(f'{lib.ROOT}/tools/testing/selftests/perf_aux/soak_test.c')
    m = re.search(r'^#define SOAK_MAX_SECONDS ([0-9]*)$', source, re.M)
    most = m.group(1) if m else ''
    if not env['DURATION'].isdigit() or int(env['DURATION']) > int(most or 0):
        lib.die(f"DURATION={env['DURATION']}: one soak is at most "
                f"{most or '?'} s (soak_test's harness timeout)")
    env['BASE'] = env.get('BASE') or lib.default_base()
    name = lib.result_name(lib.kernel_name(env.get('KERNEL') or 'reference'),
                           lib.run_base(), 'arm64-4k', 'soak')
    if env.get('SOAK_SUMMARY_ONLY', '0') != '1':
        rc = run.main([])
        # A run failed by its kernel reports still gets its soak lines.
        if rc and not lib.run_reports(name):
            return rc
    log = f'{lib.out()}/logs/{name}-kselftest.log'
    if not os.path.isfile(log):
        lib.die(f'no soak log {log}')
    for line in read(log).split('\n'):
        m = re.match(r'^#.*:(soak: .*)', line)
        if m:
            print(m.group(1))
    reports = lib.run_reports(name)
    print(f'soak: {len([r for r in reports if r])} kernel reports', flush=True)
    if reports:
        print('\n'.join(reports[:20]), flush=True)
        return 1
    return tool(lib.perf_aux('results', 'expect', f'{lib.out()}/results/{name}',
                             'perf_aux.soak_test', '--min-passed', '1',
                             '--no-failure'))


def main(argv: Optional[List[str]] = None) -> int:
    del argv
    return shell.entry(soak)
