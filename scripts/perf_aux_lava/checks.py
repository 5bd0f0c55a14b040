# SPDX-License-Identifier: GPL-2.0
"""The LAVA checks (stages lava_schema and lava), one "ok - lava: ..." or
"not ok - lava: ..." line each, exit 0 iff none is not ok: lava-jobs/jobs/
are generate.py's rendering of lab.example.yaml; lava_common's schemas
accept every job and reject each broken one; lava-run --validate builds
the jobs it cannot run here; the FVP device-tree overlay applies; lava-run
runs the QEMU jobs and LAVA records the direct runs' cases
(lava-jobs/README.md).  Installs what it needs (perf_aux deps lava).

python3 -m perf_aux_lava check [--schema] [BUILD_DIR [RESULTS_DIR]]
  --schema     no lava-run of a job (make check)
  BUILD_DIR    an arm64 build; default the reference arm64-4k and 16k of BASE
  RESULTS_DIR  its direct run's KTAP; default out/results/reference-<base>-arm64-4k
"""

import glob
import os
import re
import shutil
import subprocess
import tempfile
import time
from typing import List

from . import artifacts, common
from .common import ROOT, plib

# What lava-run may take, boot and both test runs included.
LAVA_TIMEOUT = 1500
# Each job's URLs (lab.example.yaml): the board jobs and the 16K job are
# checked with lava-run --validate, with stand-in files for them.
VALIDATE = {
    'qemu-arm64-16k': ('kernel', 'ramdisk'),
    'fvp-revc-spe-trbe': ('bl1', 'fip', 'kernel', 'dtb', 'ramdisk'),
    'n1sdp-spe': ('firmware', 'kernel', 'ramdisk'),
    'ava-spe': ('kselftest_url',),
}
LAVA_CACHE = os.path.join(plib.cache(), 'lava')
TEMPLATES = os.path.join(LAVA_CACHE, 'lava-server', 'usr', 'share',
                         'lava-server', 'device-types')


class Checks:
    def __init__(self) -> None:
        self.work = os.path.join(plib.out(), 'lava')
        self.bad = False

    def verdict(self, ok: bool, what: str, details: List[str] = ()) -> None:
        print(f'{"ok" if ok else "not ok"} - lava: {what}', flush=True)
        for line in details:
            print(f'# {line}', flush=True)
        self.bad |= not ok

    def emit(self, checks: list) -> None:
        """perf_aux_results.lava's check lines."""
        from perf_aux_results import lava
        self.bad |= bool(lava.emit(checks))

    def device(self, job: str, out: str) -> bool:
        from perf_aux_results import lava_jobs
        try:
            lava_jobs.render_device(job, TEMPLATES, out)
        except Exception as e:  # any failure to render is this check's
            print(f'# {job}: {e}', flush=True)
            return False
        return True

    def generated(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            rc = artifacts.generate(tmp)
            diff = subprocess.run(['diff', '-r', tmp, os.path.join(
                ROOT, 'lava-jobs', 'jobs')], capture_output=True, text=True)
        ok = not rc and not diff.returncode
        self.verdict(ok, "lava-jobs/jobs/ are generate.py's rendering of "
                     'lab.example.yaml',
                     [] if ok else diff.stdout.splitlines()[:20])

    def schemas(self) -> None:
        from perf_aux_results import lava_jobs
        self.emit(lava_jobs.validate_checks(
            sorted(glob.glob(os.path.join(ROOT, 'lava-jobs', 'jobs',
                                          '*.yaml'))) +
            [os.path.join(ROOT, 'lava-jobs', 'perf-aux.yaml')]))
        self.emit(lava_jobs.reject_checks())

    def validate_jobs(self) -> None:
        """lava-run --validate builds the dispatcher's whole pipeline for
        a job on a device of the type it names (the packaged template, a
        stand-in device), which the schema alone does not: device
        methods, connections, namespaces."""
        d = os.path.join(self.work, 'validate')
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(os.path.join(d, 'files'))
        try:
            repo = artifacts.testdefs(d)
        except (OSError, subprocess.CalledProcessError):
            self.verdict(False, 'lava-run --validate: test definition '
                         'repository')
            return
        for job, keys in VALIDATE.items():
            sets = [f'testdefs.repository=file://{repo}']
            for key in keys:
                path = os.path.join(d, 'files', f'{job}.{key}')
                with open(path, 'w') as f:
                    f.write('stand-in\n')
                sets.append(f'jobs.{job}.{key}=file://{path}')
            path = os.path.join(d, f'{job}.yaml')
            log = os.path.join(d, f'{job}.log')
            ok = (not artifacts.generate(d, job, sets) and
                  self.device(path, os.path.join(d, f'{job}.device.yaml')) and
                  not common.run(['lava-run', '--validate', '--job-id',
                                  f'validate-{job}', '--output-dir',
                                  os.path.join(d, f'{job}.out'), '--device',
                                  os.path.join(d, f'{job}.device.yaml'),
                                  path], log=log, timeout=300))
            kind = ''
            if os.path.isfile(path):
                with open(path) as f:
                    m = re.search(r'(?m)^device_type: "(.*)"$', f.read())
                kind = m.group(1) if m else ''
            details: List[str] = []
            if not ok and os.path.isfile(log):
                with open(log, errors='replace') as f:
                    details = [line.rstrip('\n') for line in f if re.search(
                        r'"lvl": "(error|results)"', line)][-3:]
            self.verdict(ok, f'lava-run --validate accepts {job} on a {kind} '
                         'device', details)
            # (--validate leaves its work directory behind)
            shutil.rmtree(f'/var/lib/lava/dispatcher/tmp/validate-{job}',
                          ignore_errors=True)

    def fvp_dt(self, build: str) -> None:
        """The FVP job's device tree: lava-jobs/fvp/perf-aux-trbe.dtso
        applied to the tree's own fvp-base-revc.dts gives one ETE node per
        CPU, the TRBE node and the SPE node.  (The kernel build's dtc and
        cpp only: no make.)"""
        tree = os.path.dirname(os.path.abspath(build))
        dtc = os.path.join(build, 'scripts', 'dtc')
        got = cpus = ''
        err: List[str] = []
        with tempfile.TemporaryDirectory() as tmp:
            t = lambda name: os.path.join(tmp, name)  # noqa: E731
            steps = [
                ['cpp', '-nostdinc', '-I', f'{tree}/include', '-I',
                 f'{tree}/arch/arm64/boot/dts', '-I',
                 f'{tree}/scripts/dtc/include-prefixes', '-undef',
                 '-D__DTS__', '-x', 'assembler-with-cpp',
                 f'{tree}/arch/arm64/boot/dts/arm/fvp-base-revc.dts', '-o',
                 t('base.dts')],
                [f'{dtc}/dtc', '-@', '-q', '-I', 'dts', '-O', 'dtb', '-o',
                 t('base.dtb'), t('base.dts')],
                [f'{dtc}/dtc', '-@', '-q', '-I', 'dts', '-O', 'dtb', '-o',
                 t('trbe.dtbo'),
                 os.path.join(ROOT, 'lava-jobs', 'fvp', 'perf-aux-trbe.dtso')],
                [f'{dtc}/fdtoverlay', '-i', t('base.dtb'), '-o',
                 t('out.dtb'), t('trbe.dtbo')],
                [f'{dtc}/dtc', '-q', '-I', 'dtb', '-O', 'dts', '-o',
                 t('out.dts'), t('out.dtb')]]
            ok = True
            for argv in steps:
                try:
                    p = subprocess.run(argv, capture_output=True, text=True)
                except OSError as e:
                    err.append(str(e))
                    ok = False
                    break
                err += p.stderr.splitlines()
                if p.returncode:
                    ok = False
                    break
            if ok:
                with open(t('out.dts')) as f:
                    dts = f.read()
                cpus = str(len(re.findall(
                    r'(?m)^\t\t([a-z0-9_]+: )?cpu@', dts)))
                got = ', '.join(f'{dts.count(chr(34) + c + chr(34))} {n}'
                                for c, n in (
                    ('arm,embedded-trace-extension', 'ETE'),
                    ('arm,trace-buffer-extension', 'TRBE'),
                    ('arm,statistical-profiling-extension-v1', 'SPE')))
                ok = got == f'{cpus} ETE, 1 TRBE, 1 SPE'
        self.verdict(ok, 'fvp-base-revc.dts + lava-jobs/fvp/perf-aux-trbe.'
                     f'dtso: {got or "no tree"} for {cpus or "?"} CPUs',
                     [] if ok else err[:5])

    def lava_run(self, pages: str, build: str, results: str) -> None:
        """The QEMU job of arm64-PAGES through lava-run, then its results
        against the direct run."""
        tag = f'lava-run qemu arm64-{pages}'
        d = os.path.join(self.work, f'qemu-arm64-{pages}')
        missing = artifacts.kernel_missing(build)
        if missing:
            print(f'ok - lava: {tag} # SKIP kernel has no {missing} '
                  f'(scripts/config/boot.config, rebuild arm64-{pages})',
                  flush=True)
            return
        ktaps = glob.glob(os.path.join(results, '*.ktap'))
        if not ktaps:
            self.verdict(False, f'{tag}: no direct-run results in {results} '
                         f'(make run TARGET=arm64-{pages})')
            return
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(os.path.join(d, 'direct'))
        # Copies, taken together: a make run meanwhile rebuilds the kernel
        # and empties the results directory.
        try:
            for f in ktaps:
                if os.path.basename(f)[:-len('.ktap')] in \
                        artifacts.DIRECT_ONLY:
                    continue
                shutil.copy(f, os.path.join(d, 'direct'))
            shutil.copyfile(os.path.join(build, 'arch', 'arm64', 'boot',
                                         'Image.gz'),
                            os.path.join(d, 'Image.gz'))
            initrd = artifacts.ramdisk(build, d)
            repo = artifacts.testdefs(d)
        except (OSError, subprocess.CalledProcessError):
            self.verdict(False, f'{tag}: ramdisk and test definition '
                         'repository')
            return
        job = f'qemu-arm64-{pages}'
        path = os.path.join(d, f'{job}.yaml')
        if artifacts.generate(d, job, [
                f'jobs.{job}.kernel=file://{d}/Image.gz',
                f'jobs.{job}.ramdisk=file://{initrd}',
                f'testdefs.repository=file://{repo}',
                'testdefs.revision=main']) or not self.device(
                    path, os.path.join(d, 'device.yaml')):
            self.verdict(False, f'{tag}: job and device dictionary')
            return
        # libguestfs builds the overlay disk in a small VM: with no kernel
        # in /boot (a container), give it Debian's, and TCG (no nested
        # KVM).
        env = dict(os.environ, LIBGUESTFS_BACKEND='direct',
                   LIBGUESTFS_BACKEND_SETTINGS='force_tcg',
                   LIBGUESTFS_CACHEDIR=os.path.join(LAVA_CACHE, 'guestfs'),
                   TMPDIR=d,
                   SUPERMIN_KERNEL=' '.join(glob.glob(os.path.join(
                       LAVA_CACHE, 'supermin', 'boot', 'vmlinuz-*'))),
                   SUPERMIN_MODULES=' '.join(glob.glob(os.path.join(
                       LAVA_CACHE, 'supermin', 'lib', 'modules', '*'))))
        start = time.time()
        with open(os.path.join(d, 'lava-run.out'), 'w') as out, \
                open(os.path.join(d, 'lava.log'), 'w') as log:
            rc = common.run(['lava-run', '--job-id', f'perf-aux-{pages}',
                             '--output-dir', os.path.join(d, 'run'),
                             '--device', os.path.join(d, 'device.yaml'),
                             path], timeout=LAVA_TIMEOUT, env=env,
                            stdout=out, stderr=log)
        print(f'# {tag}: exit {rc}, {time.time() - start:.0f} s, log '
              f'{d}/lava.log', flush=True)
        from perf_aux_results import lava
        self.emit(lava.compare(os.path.join(d, 'direct'),
                               os.path.join(d, 'lava.log'), tag, []))


def main(args: List[str]) -> int:
    schema_only = args[:1] == ['--schema']
    args = args[1:] if schema_only else args
    base = os.environ.get('BASE') or plib.default_base()
    trees = os.path.join(plib.cache(), 'trees', f'{base}-reference')
    results = os.path.join(plib.out(), 'results')
    build_4k = args[0] if args else os.path.join(trees, '.build-arm64-4k')
    results_4k = args[1] if len(args) > 1 else os.path.join(
        results, f'reference-{base}-arm64-4k')
    c = Checks()
    os.makedirs(os.path.join(LAVA_CACHE, 'guestfs'), exist_ok=True)
    os.makedirs(c.work, exist_ok=True)
    log = os.path.join(c.work, 'deps.log')
    if common.run(plib.perf_aux('deps', 'lava'), log=log):
        c.verdict(False, f'perf_aux deps lava (see {log})')
    c.generated()
    c.schemas()
    c.validate_jobs()
    c.fvp_dt(build_4k)
    if schema_only:
        pass
    elif not args:
        c.lava_run('4k', build_4k, results_4k)
        # The 16K job runs as soon as that kernel can mount the overlay.
        c.lava_run('16k', os.path.join(trees, '.build-arm64-16k'),
                   os.path.join(results, f'reference-{base}-arm64-16k'))
    else:
        # A given build: its page size from its name (.build-arm64-16k...).
        m = re.match(r'^\.build-arm64-([0-9]+k)',
                     os.path.basename(build_4k.rstrip('/')))
        c.lava_run(m.group(1) if m else '4k', build_4k, results_4k)
    return 1 if c.bad else 0
