# SPDX-License-Identifier: GPL-2.0
"""KernelCI's kselftest-perf-aux job on qemu-arm64 as integrations/check.py
renders it, run in the local lab with only what points off this machine
changed (docs/lava.md)."""

import glob
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Tuple

from . import PYTHON, ROOT, Error, commit_all, plib, read

PLATFORM = 'qemu-arm64'
BUILD = 'kbuild-gcc-14-arm64-kselftest'
TESTDEF = 'automated/linux/kselftest/kselftest.yaml'
SUITE = 'kselftest-perf-aux'
WAIT = 3000
RESULTS_FILE = r'(?m)^submit: job [0-9]+: [0-9]+ results in (\S+):$'

def rendered(out: str) -> Tuple[str, str]:
    """integrations/check.py's job for PLATFORM and BUILD, or '' and why."""
    jobs = os.path.join(out, 'rendered')
    shutil.rmtree(jobs, ignore_errors=True)
    p = plib.run([PYTHON, os.path.join(ROOT, 'integrations', 'check.py')],
                 env={'PERF_AUX_INTEGRATIONS_OUT': jobs}, stdout=plib.PIPE,
                 stderr=plib.DEVNULL)
    for text in map(read, sorted(glob.glob(f'{jobs}/*-{PLATFORM}.yaml'))):
        if f'/{BUILD}/' in text:
            return text, ''
    return '', ([line.split('# SKIP ', 1)[1] for line in p.stdout.splitlines()
                 if '# SKIP ' in line] + [
        f'integrations/check.py rendered no {PLATFORM} job of {BUILD} '
        f'(exit {p.returncode})'])[0]

def adapt(job: Dict[str, Any], urls: Dict[str, str]) -> List[str]:
    """The job made runnable here in place: what changed."""
    changes = []
    for action in job.get('actions', []):
        images = (action.get('deploy') or {}).get('images') or {}
        for label in ('kernel', 'ramdisk'):
            if label in images:
                images[label]['url'] = urls[label]
                changes.append(f'{label} URL: {urls[label]}')
        overlays = (images.get('ramdisk') or {}).get('overlays') or {}
        if 'modules' in overlays:
            overlays['modules']['url'] = urls['modules']
            changes.append(f"modules URL: {urls['modules']}")
        if (action.get('boot') or {}).pop('docker', None) is not None:
            changes.append("boot: docker dropped (the worker's own QEMU)")
        for d in (action.get('test') or {}).get('definitions', []):
            if d.get('from') == 'git' and d.get('path') == TESTDEF:
                d['repository'] = urls['testdefs']
                changes.append(f"{d['name']}: repository {urls['testdefs']}"
                               f" (revision {d.get('revision')})")
    if job.pop('notify', None) is not None:
        changes.append('notify dropped (no KernelCI API)')
    job['job_name'] = f'perf_aux KernelCI {SUITE} on {PLATFORM}'
    return changes

def results(lines: List[str]) -> Dict[str, str]:
    """{case: result} of the kselftest definition in submit's results.txt."""
    words = [line.split() for line in lines]
    return {w[0].split('.', 1)[1]: w[1] for w in words if len(w) > 1 and
            '.' in w[0] and w[0].split('.')[0].split('_', 1)[-1] == SUITE}

def judged(got: Dict[str, str], programs: List[str]) -> List[str]:
    """The shard not passed, a program without a result, a failed case."""
    from perf_aux_results import testdefs
    shard = f'shardfile-{testdefs.COLLECTION}'
    wrong = [] if got.get(shard) == 'pass' else [
        f'{shard} {got.get(shard, "absent")}']
    for program in programs:
        prefix = testdefs.slug(f'{testdefs.COLLECTION}: {program}')
        if not any(n == prefix or n.startswith(prefix + '_') for n in got):
            wrong.append(f'no result of {program}')
    return wrong + [f'{n} failed' for n, r in sorted(got.items())
                    if r == 'fail']

def stage(build: str, d: str) -> Dict[str, str]:
    """The job's files in d: their URLs.  Error or OSError on failure."""
    from perf_aux import kselftest
    shutil.copyfile(f'{build}/arch/arm64/boot/Image', f'{d}/Image')
    # The installed modules, or the release's empty module directory.
    with tempfile.TemporaryDirectory() as tmp:
        if os.path.isdir(f'{build}/modules_install'):
            shutil.copytree(f'{build}/modules_install', tmp,
                            dirs_exist_ok=True)
        release = read(f'{build}/include/config/kernel.release').strip()
        os.makedirs(f'{tmp}/lib/modules/{release}', exist_ok=True)
        plib.run(['tar', '-C', tmp, '-cJf', f'{d}/modules.tar.xz', 'lib'],
                 check=True)
    # KernelCI's /init (LAVA's "/ #" shell), in one archive: LAVA's modules
    # overlay repacks the first one only.
    rootfs = os.path.join(plib.cache(), 'rootfs', 'trixie-arm64')
    if kselftest.rootfs_initramfs(ROOT, rootfs, f'{build}/kselftest_install',
                                  '', f'{d}/rootfs.cpio.gz',
                                  init='kernelci-init'):
        raise OSError(f'cannot pack {rootfs}')
    for path in (f'{d}/export', f'{d}/test-definitions'):
        shutil.rmtree(path, ignore_errors=True)
    plib.run([PYTHON, os.path.join(ROOT, 'integrations', 'check.py'),
              '--export', 'test-definitions', f'{d}/export',
              'automated/linux/kselftest', 'automated/lib', 'automated/utils'],
             check=True, stdout=plib.DEVNULL)
    os.rename(f'{d}/export', f'{d}/test-definitions')
    commit_all(f'{d}/test-definitions', 'master',
               'test-definitions at the pin of integrations/README.md')
    return {'kernel': f'file://{d}/Image', 'ramdisk': f'file://{d}/'
            'rootfs.cpio.gz', 'modules': f'file://{d}/modules.tar.xz',
            'testdefs': f'file://{d}/test-definitions'}

def run(t: Any, base: str) -> None:
    """The job in the lab against the direct run, checked through t."""
    import yaml
    from perf_aux_results import testdefs
    what = f'KernelCI job {SUITE} on {PLATFORM} ({BUILD})'
    build = os.path.join(plib.cache(), 'trees', f'{base}-reference',
                         '.build-arm64-4k')
    name = plib.result_name('reference', base, 'arm64-4k', 'default')
    log = os.path.join(plib.out(), 'logs', f'{name}-kselftest.log')
    lines = read(log).splitlines()
    programs = [p for p, _, _ in testdefs.program_results(lines)]
    if not os.path.isdir(f'{build}/kselftest_install') or not programs:
        return t.skip(what, 'no direct reference arm64-4k run (make run)')
    if plib.status(plib.perf_aux('deps', 'testdefs'), stdout=plib.DEVNULL):
        return t.check(False, f'{what}: perf_aux deps testdefs')
    d = t.path('kernelci')
    os.makedirs(d, exist_ok=True)
    os.chmod(d, 0o755)
    text, why = rendered(d)
    if not text:
        return t.skip(what, why)
    try:
        urls = stage(build, d)
    except (OSError, Error) as e:
        return t.check(False, f'{what}: its files staged ({e})')
    job = yaml.safe_load(text)
    for change in adapt(job, urls):
        print(f'# {what}: {change}')
    Path(d, 'job.yaml').write_text(yaml.safe_dump(job, sort_keys=False))
    out = t.path('kernelci.out')
    rc = t.submit(out, [os.path.join(d, 'job.yaml')], {'LAVA_WAIT': str(WAIT)})
    found = re.findall(RESULTS_FILE, read(out))
    got = results(read(found[-1]).splitlines()) if found else {}
    wrong = judged(got, programs) if rc in (0, 1) else [f'submit exit {rc}']
    t.check(not wrong, f'{what} Complete in the lab: '
            f'{testdefs.counts(got)}, every program of the direct run '
            'reported, none failed' +
            ''.join(f'; {w}' for w in wrong[:5]))
