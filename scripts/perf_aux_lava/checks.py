# SPDX-License-Identifier: GPL-2.0
"""python3 -m perf_aux_lava check [--schema] (stages lava_schema and lava):
an "ok - lava: ..." line a check of lava-jobs/ (lava-jobs/README.md); exit 1
if any is not ok."""

import glob
import os
import re
import shutil
import tempfile
import time
from typing import List

from . import DIRECT_ONLY, ROOT, Error, generate, guestfs_env, kernel_missing
from . import plib, read, stage_build, testdefs

# The jobs lava-run --validates on stand-in files for their URLs.
VALIDATE = {
    'qemu-arm64-16k': ('kernel', 'ramdisk'),
    'fvp-revc-spe-trbe': ('bl1', 'fip', 'kernel', 'dtb', 'ramdisk'),
    'n1sdp-spe': ('firmware', 'kernel', 'ramdisk'),
    'ava-spe': ('kselftest_url',),
}
TEMPLATES = os.path.join(plib.cache(), 'lava', 'lava-server', 'usr', 'share',
                         'lava-server', 'device-types')
# The checks not ok.
BAD: List[str] = []

def verdict(ok: bool, what: str, details: List[str] = ()) -> None:
    print(f'{"ok" if ok else "not ok"} - lava: {what}', flush=True)
    print(''.join(f'# {line}\n' for line in details), end='', flush=True)
    if not ok:
        BAD.append(what)

def job(d: str, name: str, sets: List[str]) -> bool:
    """d/name.yaml and its device dictionary d/name.device.yaml."""
    from perf_aux_results import lava_jobs
    if generate(d, name, sets):
        return False
    try:
        lava_jobs.render_device(f'{d}/{name}.yaml', TEMPLATES,
                                f'{d}/{name}.device.yaml')
        return True
    except Exception as e:  # any failure to render is this check's
        print(f'# {name}: {e}', flush=True)
        return False

def validate_jobs(work: str) -> None:
    """lava-run --validate builds the pipeline on a device of its type."""
    d = os.path.join(work, 'validate')
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, 'files'))
    repo = testdefs(d)
    for name, keys in VALIDATE.items():
        for key in keys:
            with open(f'{d}/files/{name}.{key}', 'w') as f:
                f.write('stand-in\n')
        log = os.path.join(d, f'{name}.log')
        ok = job(d, name, [f'testdefs.repository=file://{repo}'] + [
            f'jobs.{name}.{key}=file://{d}/files/{name}.{key}'
            for key in keys]) and not plib.status(
            ['lava-run', '--validate', '--job-id', f'validate-{name}',
             '--output-dir', os.path.join(d, f'{name}.out'), '--device',
             os.path.join(d, f'{name}.device.yaml'),
             os.path.join(d, f'{name}.yaml')], log=log, timeout=300)
        kind = re.findall(r'(?m)^device_type: "(.*)"$',
                          read(os.path.join(d, f'{name}.yaml')))
        verdict(ok, f'lava-run --validate accepts {name} on a '
                f'{"".join(kind[:1])} device', [] if ok else [
                    line for line in read(log).splitlines()
                    if re.search(r'"lvl": "(error|results)"', line)][-3:])
        shutil.rmtree(f'/var/lib/lava/dispatcher/tmp/validate-{name}',
                      ignore_errors=True)

def fvp_dt(build: str) -> None:
    """perf-aux-trbe.dtso over fvp-base-revc.dts: ETE per CPU, TRBE, SPE."""
    tree = os.path.dirname(os.path.abspath(build))
    dtc, dts = f'{build}/scripts/dtc', f'{tree}/arch/arm64/boot/dts'
    got = cpus = ''
    err: List[str] = []
    with tempfile.TemporaryDirectory() as t:
        for argv in (
                ['cpp', '-nostdinc', '-I', f'{tree}/include', '-I', dts,
                 '-I', f'{tree}/scripts/dtc/include-prefixes', '-undef',
                 '-D__DTS__', '-x', 'assembler-with-cpp',
                 f'{dts}/arm/fvp-base-revc.dts', '-o', f'{t}/base.dts'],
                [f'{dtc}/dtc', '-@', '-q', '-I', 'dts', '-O', 'dtb', '-o',
                 f'{t}/base.dtb', f'{t}/base.dts'],
                [f'{dtc}/dtc', '-@', '-q', '-I', 'dts', '-O', 'dtb', '-o',
                 f'{t}/trbe.dtbo', f'{ROOT}/lava-jobs/fvp/perf-aux-trbe.dtso'],
                [f'{dtc}/fdtoverlay', '-i', f'{t}/base.dtb', '-o',
                 f'{t}/out.dtb', f'{t}/trbe.dtbo'],
                [f'{dtc}/dtc', '-q', '-I', 'dtb', '-O', 'dts', '-o',
                 f'{t}/out.dts', f'{t}/out.dtb']):
            try:
                p = plib.run(argv, stdout=plib.DEVNULL, stderr=plib.PIPE)
            except OSError as e:
                err.append(str(e))
                break
            err += p.stderr.decode(errors='replace').splitlines()
            if p.returncode:
                break
        else:
            out = read(f'{t}/out.dts')
            cpus = str(len(re.findall(r'(?m)^\t\t([a-z0-9_]+: )?cpu@', out)))
            got = ', '.join(f'{out.count(chr(34) + c + chr(34))} {n}' for c, n
                            in (('arm,embedded-trace-extension', 'ETE'),
                                ('arm,trace-buffer-extension', 'TRBE'),
                                ('arm,statistical-profiling-extension-v1',
                                 'SPE')))
    ok = got == f'{cpus} ETE, 1 TRBE, 1 SPE'
    verdict(ok, 'fvp-base-revc.dts + lava-jobs/fvp/perf-aux-trbe.dtso: '
            f'{got or "no tree"} for {cpus or "?"} CPUs',
            [] if ok else err[:5])

def lava_run(work: str, pages: str, build: str, results: str) -> None:
    """The QEMU job through lava-run, its results against the direct run's."""
    from perf_aux_results import lava
    tag, name = f'lava-run qemu arm64-{pages}', f'qemu-arm64-{pages}'
    d = os.path.join(work, name)
    if kernel_missing(build):
        print(f'ok - lava: {tag} # SKIP kernel has no {kernel_missing(build)}'
              f' (scripts/config/boot.config, rebuild arm64-{pages})',
              flush=True)
        return
    ktaps = [f for f in glob.glob(os.path.join(results, '*.ktap'))
             if os.path.basename(f)[:-len('.ktap')] not in DIRECT_ONLY]
    if not ktaps:
        return verdict(False, f'{tag}: no direct-run results in {results} '
                       f'(make run TARGET=arm64-{pages})')
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, 'direct'))
    try:  # copies, taken together: a make run meanwhile rebuilds them
        for f in ktaps:
            shutil.copy(f, os.path.join(d, 'direct'))
        image, initrd = stage_build(build, d)
        repo = testdefs(d)
    except (OSError, Error):
        return verdict(False, f'{tag}: ramdisk and test definition repository')
    if not job(d, name, [f'jobs.{name}.kernel=file://{image}',
                         f'jobs.{name}.ramdisk=file://{initrd}',
                         f'testdefs.repository=file://{repo}',
                         'testdefs.revision=main']):
        return verdict(False, f'{tag}: job and device dictionary')
    start = time.time()
    with open(os.path.join(d, 'lava-run.out'), 'w') as out, \
            open(os.path.join(d, 'lava.log'), 'w') as log:
        rc = plib.status(['lava-run', '--job-id', f'perf-aux-{pages}',
                          '--output-dir', os.path.join(d, 'run'), '--device',
                          os.path.join(d, f'{name}.device.yaml'),
                          os.path.join(d, f'{name}.yaml')], timeout=1500,
                         env=guestfs_env(d), stdout=out, stderr=log)
    print(f'# {tag}: exit {rc}, {time.time() - start:.0f} s, log '
          f'{d}/lava.log', flush=True)
    if lava.emit(lava.compare(os.path.join(d, 'direct'),
                              os.path.join(d, 'lava.log'), tag, [])):
        BAD.append(tag)

def main(args: List[str]) -> int:
    from perf_aux_results import lava, lava_jobs
    if args not in ([], ['--schema']):
        raise Error('usage: python3 -m perf_aux_lava check [--schema]')
    base = os.environ.get('BASE') or plib.default_base()
    trees = os.path.join(plib.cache(), 'trees', f'{base}-reference')
    work = os.path.join(plib.out(), 'lava')
    os.makedirs(work, exist_ok=True)
    if plib.status(plib.perf_aux('deps', 'lava'), log=f'{work}/deps.log'):
        verdict(False, f'perf_aux deps lava (see {work}/deps.log)')
    if lava.emit(lava_jobs.validate_checks(sorted(glob.glob(
            f'{ROOT}/lava-jobs/jobs/*.yaml')) + [
                f'{ROOT}/lava-jobs/perf-aux.yaml']) +
                 lava_jobs.reject_checks()):
        BAD.append('schema')
    validate_jobs(work)
    fvp_dt(os.path.join(trees, '.build-arm64-4k'))
    for pages in ('4k', '16k') if not args else ():
        lava_run(work, pages, os.path.join(trees, f'.build-arm64-{pages}'),
                 os.path.join(plib.out(), 'results',
                              f'reference-{base}-arm64-{pages}'))
    return 1 if BAD else 0
