# SPDX-License-Identifier: GPL-2.0
"""The main job, make run (python3 -m perf_aux run).

For one KERNEL and TARGET: install what is missing, prepare the kernel
tree, build it once, run the KUnit suites at boot and the perf_aux
kselftests from an initramfs under QEMU, then write
out/results/<kernel>-<base>-<target>[-<variant>]/<suite>.ktap and
out/report.md.

Environment: BASE (7.3), TARGET (arm64-4k), KERNEL (reference), VARIANT
(default), KERNEL_SRC (a tree of your own instead of Debian's),
KERNEL_ARGS (extra boot parameters), SERIES (the reference kernel is BASE
with that series, an mbox or a directory of patches, git am'd).
Exit: 0 when nothing failed and no console holds a kernel report.
"""

import os
import shutil
from typing import List, Optional

from . import lib, shell
from .files import cat
from .shell import stage, tool


def results(*args: str) -> int:
    return tool(lib.perf_aux('results', *args))


def job() -> int:
    env = os.environ
    target, kernel, variant, kargs = lib.selection()
    if env.get('SERIES') and env.get('KERNEL_SRC'):
        lib.die('SERIES and KERNEL_SRC: one or the other')
    if not env.get('KERNEL_SRC'):
        lib.check_kernel(kernel)
        env['BASE'] = env.get('BASE') or lib.default_base()
        lib.check_base(env['BASE'])
    name = lib.kernel_name(kernel)
    base = lib.run_base()
    run = lib.result_name(name, base, target, variant)
    res = f'{lib.out()}/results/{run}'
    logs = f'{lib.out()}/logs'
    shutil.rmtree(res, ignore_errors=True)
    os.makedirs(res)
    os.makedirs(logs, exist_ok=True)

    rc = stage('install packages', tool,
               lib.perf_aux('deps', target,
                            *([] if env.get('KERNEL_SRC') else
                              [f'base-{base}'])))
    if rc:
        return rc
    rc = stage(f'kernel tree {lib.tree_name(name, base)}', tool,
               lib.perf_aux('kernel-tree', name))
    if rc:
        return rc
    tree = lib.tree_dir(name)
    # What the run took the kernel to be, for the report.
    source = f"source: {cat(f'{tree}/.perf_aux-source')}"
    print(source, flush=True)
    with open(f'{res}/source.txt', 'w', encoding='utf-8') as f:
        f.write(source + '\n')
    rc = tool(lib.perf_aux('kunit', name, target, variant,
                           f'{logs}/{run}-kunit.log', *kargs))
    if rc > 1:
        lib.die(f'kernel build failed, see {logs}/{run}-kunit.log.build')
    rc = results('kunit', f'{logs}/{run}-kunit.log', res)
    if rc:
        return rc
    rc = tool(lib.perf_aux('kselftest', name, target, variant,
                           f'{logs}/{run}-kselftest.log', *kargs))
    if rc:
        return rc
    rc = results('kselftest', f'{logs}/{run}-kselftest.log', res)
    if rc:
        return rc
    # A report outside every test's window (an initcall's, one between
    # programs, an oops that ends the boot early) fails the run too.
    reports = lib.run_reports(run)
    for line in reports[:20]:
        print(line)
    if reports:
        print(f'{run}: {len(reports)} kernel reports on its consoles',
              flush=True)
    return results('summary', res, '--report',
                   f'{lib.out()}/report.md') or int(bool(reports))


def main(argv: Optional[List[str]] = None) -> int:
    del argv
    return shell.entry(job)
