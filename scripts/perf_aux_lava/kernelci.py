# SPDX-License-Identifier: GPL-2.0
"""KernelCI's own kselftest-perf-aux job on qemu-arm64, as
integrations/check.py renders it, run in the local lab (make
lab-selftest with qemu).  Only what points off this machine changes, each
change printed: the kernel, modules and ramdisk URLs (the reference
arm64-4k build; for KernelCI's trixie-kselftest ramdisk the Debian trixie
root of perf_aux deps testdefs with the kselftests and
scripts/initramfs/kernelci-init), the test-definitions repository (a
local copy at its pin), the boot's docker block and the notify callback.
Judged: Complete, the collection's shard passed, a result for every
program of the direct run, none failed; the differences from the direct
run are printed, not judged (KernelCI's guest memory differs).
"""

import os
import re
import shutil
import subprocess
import tempfile
from typing import Any, Dict, List, Optional, Tuple

from . import artifacts, common
from .common import ROOT, plib

# The scheduler entry whose job runs here: QEMU, the 4K kselftest build.
PLATFORM = 'qemu-arm64'
BUILD = 'kbuild-gcc-14-arm64-kselftest'
TESTDEF = 'automated/linux/kselftest/kselftest.yaml'
SUITE = 'kselftest-perf-aux'
# submit's line naming the file of a job file's cases.
RESULTS_FILE = re.compile(r'(?m)^submit: job [0-9]+: [0-9]+ results in '
                          r'(\S+/results\.txt):$')
# Seconds the job may take (its own job timeout is 45 minutes).
WAIT = 3000


def rendered(out: str) -> Tuple[Optional[str], str]:
    """The job integrations/check.py renders for PLATFORM and BUILD
    (its text), or None and why."""
    jobs = os.path.join(out, 'rendered')
    shutil.rmtree(jobs, ignore_errors=True)
    p = subprocess.run([common.PYTHON, os.path.join(ROOT, 'integrations',
                                                    'check.py')],
                       env=dict(os.environ, PERF_AUX_INTEGRATIONS_OUT=jobs),
                       capture_output=True, text=True)
    names = sorted(os.listdir(jobs)) if os.path.isdir(jobs) else []
    for name in names:
        if not name.endswith(f'-{PLATFORM}.yaml'):
            continue
        with open(os.path.join(jobs, name)) as f:
            text = f.read()
        if f'/{BUILD}/' in text:
            return text, ''
    skipped = [line for line in p.stdout.splitlines() if '# SKIP' in line]
    return None, (skipped[0].split('# SKIP ', 1)[1] if skipped else
                  f'integrations/check.py rendered no {PLATFORM} job of '
                  f'{BUILD} (exit {p.returncode})')


def adapt(job: Dict[str, Any], urls: Dict[str, str]) -> List[str]:
    """The rendered JOB made runnable here, in place: URLS' kernel,
    modules, ramdisk and testdefs; what was changed."""
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
        boot = action.get('boot') or {}
        if boot.pop('docker', None) is not None:
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
    """{case: result} of the kselftest definition in submit's results.txt
    lines ("<n>_<definition>.<case> <result>")."""
    out = {}
    for line in lines:
        words = line.split()
        if len(words) < 2 or '.' not in words[0]:
            continue
        suite, case = words[0].split('.', 1)
        if suite.split('_', 1)[-1] == SUITE:
            out[case] = words[1]
    return out


def judged(got: Dict[str, str], programs: List[str]) -> List[str]:
    """What is wrong with the job's results: the shard not passed, a
    program of the direct run without a result, a failed case."""
    from perf_aux_results import testdefs
    wrong = []
    shard = f'shardfile-{testdefs.COLLECTION}'
    if got.get(shard) != 'pass':
        wrong.append(f'{shard} {got.get(shard, "absent")}')
    for program in programs:
        prefix = testdefs.slug(f'{testdefs.COLLECTION}: {program}')
        if not any(name == prefix or name.startswith(prefix + '_')
                   for name in got):
            wrong.append(f'no result of {program}')
    wrong += [f'{name} failed' for name, r in sorted(got.items())
              if r == 'fail']
    return wrong


def modules_tar(build: str, out: str) -> None:
    """BUILD's installed modules (kselftest.py's modules_install), or the
    release's empty module directory, as a tar.xz at OUT."""
    with open(os.path.join(build, 'include', 'config',
                           'kernel.release')) as f:
        release = f.read().strip()
    tmp = tempfile.mkdtemp()
    try:
        installed = os.path.join(build, 'modules_install')
        if os.path.isdir(installed):
            shutil.copytree(installed, tmp, dirs_exist_ok=True)
        os.makedirs(os.path.join(tmp, 'lib', 'modules', release),
                    exist_ok=True)
        subprocess.run(['tar', '-C', tmp, '-cJf', out, 'lib'], check=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def stage(build: str, d: str) -> Dict[str, str]:
    """The job's files in D (a directory the worker reads): their URLs.
    CalledProcessError or OSError on failure."""
    from perf_aux import kselftest
    shutil.copyfile(os.path.join(build, 'arch', 'arm64', 'boot', 'Image'),
                    os.path.join(d, 'Image'))
    modules_tar(build, os.path.join(d, 'modules.tar.xz'))
    rootfs = os.path.join(plib.cache(), 'rootfs', 'trixie-arm64')
    # KernelCI's /init (LAVA's "/ #" shell), in one archive: LAVA's modules
    # overlay repacks the first one only.
    if kselftest.rootfs_initramfs(
            ROOT, rootfs, os.path.join(build, 'kselftest_install'), '',
            os.path.join(d, 'rootfs.cpio.gz'), init='kernelci-init'):
        raise OSError(f'cannot pack {rootfs}')
    export = os.path.join(d, 'export')
    shutil.rmtree(export, ignore_errors=True)
    subprocess.run([common.PYTHON, os.path.join(ROOT, 'integrations',
                                                'check.py'),
                    '--export', 'test-definitions', export,
                    'automated/linux/kselftest', 'automated/lib',
                    'automated/utils'], check=True, stdout=subprocess.DEVNULL)
    repo = os.path.join(d, 'test-definitions')
    shutil.rmtree(repo, ignore_errors=True)
    os.rename(export, repo)
    artifacts.commit_all(repo, 'master',
                         'test-definitions at the pin of integrations/README.md')
    url = 'file://' + d
    return {'kernel': f'{url}/Image', 'modules': f'{url}/modules.tar.xz',
            'ramdisk': f'{url}/rootfs.cpio.gz',
            'testdefs': f'{url}/test-definitions'}


def direct_programs(base: str) -> Tuple[Dict[str, str], List[str]]:
    """The direct run's cases as test-definitions names them, and its
    programs (make run's reference arm64-4k run); empty without one."""
    from perf_aux_results import testdefs
    run = plib.result_name('reference', base, 'arm64-4k', 'default')
    res = os.path.join(plib.out(), 'results', run)
    log = os.path.join(plib.out(), 'logs', f'{run}-kselftest.log')
    if not os.path.isfile(log):
        return {}, []
    with open(log, errors='replace') as f:
        lines = f.read().splitlines()
    return (testdefs.expected(res, lines),
            [p for p, _, _ in testdefs.program_results(lines)])


def run(t: Any, base: str) -> None:
    """The job in the lab, its check lines through T (the selftest)."""
    import yaml
    what = f'KernelCI job {SUITE} on {PLATFORM} ({BUILD})'
    build = os.path.join(plib.cache(), 'trees', f'{base}-reference',
                         '.build-arm64-4k')
    want, programs = direct_programs(base)
    if not os.path.isdir(os.path.join(build, 'kselftest_install')) or \
            not programs:
        print(f'ok - lava: lab: {what} # SKIP no direct reference arm64-4k '
              'run (make run)', flush=True)
        return
    if common.run(plib.perf_aux('deps', 'testdefs'),
                  stdout=subprocess.DEVNULL):
        t.check(False, f'{what}: perf_aux deps testdefs')
        return
    d = t.path('kernelci')
    os.makedirs(d, exist_ok=True)
    os.chmod(d, 0o755)
    text, why = rendered(d)
    if text is None:
        print(f'ok - lava: lab: {what} # SKIP {why}', flush=True)
        return
    try:
        urls = stage(build, d)
    except (OSError, subprocess.CalledProcessError) as e:
        t.check(False, f'{what}: its files staged ({e})')
        return
    job = yaml.safe_load(text)
    for change in adapt(job, urls):
        print(f'# {what}: {change}')
    path = os.path.join(d, 'job.yaml')
    with open(path, 'w') as f:
        f.write('# KernelCI\'s kselftest-perf-aux job as integrations/'
                'check.py renders it,\n# its URLs made local '
                '(scripts/perf_aux_lava/kernelci.py).\n')
        yaml.safe_dump(job, f, sort_keys=False)
    out = t.path('kernelci.out')
    rc = t.submit(out, [path], {'LAVA_WAIT': str(WAIT)})
    with open(out, errors='replace') as f:
        found = RESULTS_FILE.findall(f.read())
    got: Dict[str, str] = {}
    if found:
        with open(found[-1]) as f:
            got = results(f.read().splitlines())
    wrong = judged(got, programs) if rc in (0, 1) else [f'submit exit {rc}']
    counts = {r: sum(1 for v in got.values() if v == r)
              for r in ('pass', 'fail', 'skip')}
    faults = ''.join(f'; {w}' for w in wrong[:5])
    t.check(not wrong, f'{what} Complete in the lab: {len(got)} results '
            f"({counts['pass']} pass, {counts['fail']} fail, "
            f"{counts['skip']} skip), every program of the direct run "
            f'reported, none failed{faults}')
    differ = [f'{n}: direct run {want.get(n, "absent")}, KernelCI job '
              f'{got.get(n, "absent")}' for n in sorted(set(want) | set(got))
              if want.get(n) != got.get(n)]
    print(f'# {what}: {len(differ)} cases differ from the direct run '
          '(not judged)')
    for line in differ[:20]:
        print(f'#   {line}')
