# SPDX-License-Identifier: GPL-2.0
"""make run: one kernel of a base built, KUnit booted, the kselftests
booted, their results in out/results/<run>/ (with run.json) and
out/report.md.  Exit 0 when nothing failed and no console holds a kernel
report."""

import os
import shutil
from pathlib import Path
from typing import List, Optional

from . import kselftest, kunit, lib, tree
from .lib import Run
from .lib import status
from .shell import stage


def results(*args: str) -> int:
    return status(lib.perf_aux('results', *args))


def job(r: Run, check: str = '') -> int:
    """The run R, from its packages to its report."""
    shutil.rmtree(r.results, ignore_errors=True)
    os.makedirs(r.results)
    os.makedirs(f'{lib.out()}/logs', exist_ok=True)
    r.save()
    rc = stage('install packages', status, lib.perf_aux(
        'deps', r.target, *([] if r.src else [f'base-{r.base}'])))
    if rc:
        return rc
    rc = stage(f'kernel tree {lib.tree_name(r.kernel, r.base)}',
               tree.kernel_tree, r)
    if rc:
        return rc
    # What the run took the kernel to be, for the report.
    source = 'source: ' + Path(r.tree, '.perf_aux-source').read_text(
        errors='surrogateescape').rstrip('\n')
    print(source, flush=True)
    Path(r.results, 'source.txt').write_text(source + '\n')
    if kunit.kunit(r, r.log('kunit'), check) > 1:
        lib.die(f"kernel build failed, see {r.log('kunit')}.build")
    rc = results('kunit', r.log('kunit'), r.results) or \
        kselftest.kselftest(r, r.log('kselftest')) or \
        results('kselftest', r.log('kselftest'), r.results)
    if rc:
        return rc
    # A report outside every test's window fails the run too.
    reports = lib.run_reports(r.name)
    for line in reports[:20]:
        print(line)
    if reports:
        print(f'{r.name}: {len(reports)} kernel reports on its consoles',
              flush=True)
    return results('summary', r.results, '--report',
                   f'{lib.out()}/report.md') or int(bool(reports))


def main(argv: Optional[List[str]] = None) -> int:
    del argv
    return job(lib.env_run())
