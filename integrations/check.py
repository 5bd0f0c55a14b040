#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks the KernelCI and tuxlava patches against the upstream commits they
were written for (integrations/README.md), a line a check, exit 0 iff no
"not ok"; --mirrors DIR: the fetched repositories as OWNER+NAME/repo."""

import argparse
import fnmatch
import json
import os
import subprocess
import sys
import tempfile
from types import SimpleNamespace
from typing import Any, Callable, Dict, List, Optional

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
# The upstream commits the patches were written for (as README.md says).
PINS = {key: (repo, commit) for key, repo, commit in (
    ('kernelci-pipeline', 'kernelci/kernelci-pipeline', 'e81bdeb60a9a15aa4575fc9b65fb7589373d39a7'),
    ('kernelci-core', 'kernelci/kernelci-core', '69a285e95cc5cfb66615875781298b56b66f02b7'),
    ('tuxlava', 'kernelci/tuxlava', 'f99d452cdc2f3306f1699b9c2ad337565589329e'),
    ('test-definitions', 'Linaro/test-definitions', '4212946b414ed0a3d305e054f973d423ef0e00b9'))}
# Each patch, the repository it applies to and the paths it needs.
PATCHES = {'kernelci-pipeline.patch': ('kernelci-pipeline', 'config'),
           'kernelci-core.patch': ('kernelci-core', 'config/runtime'),
           'tuxlava.patch': ('tuxlava', 'tuxlava')}
COLLECTION = 'perf_aux'
JOB = 'kselftest-perf-aux'
TUXLAVA_TEST = 'kselftest-perf_aux'
TESTDEF = 'automated/linux/kselftest/kselftest.yaml'
DEFAULT_MIRRORS = '/work/.mirror'
# Upstream's jobs beside ours: where Debian's old lava_common rejects a
# template the labs' LAVA accepts, it rejects the control alike.
CONTROL_JOB = 'kselftest-perf-events'
TUXLAVA_CONTROL = 'kselftest-perf_events'
# A job the core patch must leave alone: upstream's QEMU baseline.
UNCHANGED_JOB = 'baseline-arm64'

class Checks:
    bad = False

    def line(self, ok: bool, what: str, detail: str = '') -> bool:
        print(f'{"ok" if ok else "not ok"} - integrations: {what}' + ''.join(
            f'\n# {d}' for d in detail.splitlines()[:8] if not ok))
        self.bad |= not ok
        return ok

    def job(self, tag: str, render: Callable[[str], str], name: str,
            control: str, problems: Callable[[Any], List[str]],
            save: Optional[str] = None) -> None:
        """The job render(name) gives runs the suite and lava_common's
        schema accepts it, unless it rejects the upstream control alike."""
        try:
            text = render(name)
            job = yaml.safe_load(text)
        except Exception as exc:  # any failure to render is the finding
            self.line(False, f'{tag} renders', repr(exc))
            return
        if save:
            os.makedirs(os.path.dirname(save), exist_ok=True)
            with open(save, 'w', encoding='utf-8') as f:
                f.write(text)
        self.line(not problems(job), f'{tag} renders, runs {TESTDEF} on '
                  f'{COLLECTION}', '\n'.join(problems(job)))
        try:
            from lava_common.schemas import validate
        except ImportError:
            return self.line(True, f'{tag}: lava_common schema # SKIP no '
                             'lava_common (perf_aux deps lava)')

        def error(job: Dict[str, Any]) -> str:
            try:
                validate(job, strict=True)
            except Exception as exc:  # voluptuous': the message is the finding
                return str(exc)
            return ''
        err = error(job)
        if err and err == error(yaml.safe_load(render(control))):
            self.line(True, f'{tag}: lava_common schema # SKIP this lava_'
                      f'common rejects upstream {control} there too: {err}')
        else:
            self.line(not err, f'{tag}: lava_common schema accepts it', err)

def mirror_of(mirrors: str, key: str) -> Optional[str]:
    """The mirror's git directory if it holds the pinned commit."""
    gitdir = os.path.join(mirrors, PINS[key][0].replace('/', '+'), 'repo')
    res = subprocess.run(['git', '--git-dir', gitdir, 'cat-file', '-e',
                          PINS[key][1] + '^{commit}'], capture_output=True)
    return gitdir if res.returncode == 0 else None

def export(gitdir: str, commit: str, paths: List[str], dst: str) -> None:
    """The pinned files (or directories) into dst, as a checkout has them."""
    os.makedirs(dst, exist_ok=True)
    archive = subprocess.run(['git', '--git-dir', gitdir, 'archive', commit,
                              *paths], check=True, capture_output=True).stdout
    subprocess.run(['tar', '-x', '-C', dst], check=True, input=archive)

def pipeline(tree: str, core_templates: str) -> SimpleNamespace:
    """kernelci-pipeline's configuration, patched, and the template
    directories in the order kernelci-core's Runtime loads them."""
    config = {}
    for key in ('jobs', 'scheduler', 'platforms', 'rootfs', 'runtimes'):
        name = 'pipeline' if key == 'runtimes' else key
        with open(os.path.join(tree, 'config', f'{name}.yaml'),
                  encoding='utf-8') as f:
            config[key] = yaml.safe_load(f)[key]
    return SimpleNamespace(**config, templates=[
        os.path.join(tree, 'config', 'runtime'), core_templates])

def render(pipe: SimpleNamespace, entry: Dict[str, Any], platform: str,
           job_name: str = JOB) -> str:
    """The LAVA job KernelCI generates for a scheduler entry on a platform:
    kernelci-core's Runtime.get_params() and LAVA's for the node the API
    hands the runtime, the rootfs resolved, formatted, then the template."""
    import jinja2
    pconf = {'name': platform, **pipe.platforms[platform]}
    runtime = pipe.runtimes[entry['runtime']['name']]
    job = pipe.jobs[job_name]
    url = f'https://storage.example.org/{entry["event"]["name"]}/'
    node = {'id': '0123456789abcdef01234567', 'name': job_name, 'data': {
        'kernel_revision': {'describe': 'v7.3-rc7', 'version': {
            'version': 7, 'patchlevel': 3}}, 'kernel_type': 'image',
        'arch': 'arm64',
        'config_full': 'defconfig+arm64-chromebook+kselftest'},
        'artifacts': {k: url + v for k, v in (
            ('kernel', 'Image'), ('modules', 'modules.tar.xz'),
            ('kselftest_tar_xz', 'kselftest.tar.xz'))}}
    params: Dict[str, Any] = {
        'api_config': {'name': 'production'}, 'platform_config': pconf,
        'storage_config': {'name': 'kci-storage'}, 'instanceid': None,
        'instance_callback': 'https://api.example.org/latest',
        'name': job_name, 'node': node,
        'runtime': runtime.get('lab_type', 'lava'),
        'runtime_image': job.get('image'),
        'device_type': pconf.get('base_name') or platform,
        'notify': runtime.get('notify'), 'priority': 45,
        **(pconf.get('params') or {}), **job.get('params', {})}
    for k, v in pipe.rootfs.get(params.pop('rootfs_ref', None), {}).items():
        params.setdefault(k, v)
    # kernelci-core's format_params(): {debarch} and the like everywhere.
    text = json.dumps(params)
    for key in ('arch', 'debarch', 'brarch', 'karch', 'crosarch'):
        text = text.replace(f'{{{key}}}', pconf.get('arch', 'arm64'))
    params = json.loads(text.replace('{krev}', '7.3'))
    env = jinja2.Environment(
        loader=jinja2.ChoiceLoader([jinja2.FileSystemLoader(t)
                                    for t in pipe.templates]),
        extensions=['jinja2.ext.do'])
    env.globals.update({'kci_raise': lambda msg: (_ for _ in ()).throw(
        jinja2.TemplateRuntimeError(msg)),
        'kci_yaml_dump': lambda data: yaml.dump(data, indent=2)})
    return env.get_template(job['template']).render(params)

def testdef_problems(job: Dict[str, Any]) -> List[str]:
    """Unless the job runs kselftest.yaml, once, on the collection: why."""
    defs = [d for a in job.get('actions', []) if 'test' in a
            for d in a['test'].get('definitions', [])
            if d.get('path') == TESTDEF]
    return [] if len(defs) == 1 and defs[0].get('parameters', {}).get(
        'TST_CMDFILES') == COLLECTION else [f'no {TESTDEF} on {COLLECTION}']

def rendered_problems(job: Dict[str, Any]) -> List[str]:
    """The rendered job runs kselftest.yaml on the collection, with every
    image's URL; on QEMU (tmpfs) the kernel's modules in the ramdisk, since
    the tests modprobe test_aux_pmu."""
    deploys = [a['deploy'] for a in job.get('actions', []) if 'deploy' in a]
    images = [(k, v) for d in deploys for k, v in d.items()
              if isinstance(v, dict) and 'url' in v] + [
        (k, v) for d in deploys for k, v in (d.get('images') or {}).items()]
    problems = testdef_problems(job) + [
        f'deploy {k} has no URL' for k, v in images
        if not v.get('url') or 'None' in v['url']]
    kernel = next((v.get('url', '') for k, v in images if k == 'kernel'), '')
    if deploys and deploys[0].get('to') == 'tmpfs' and (
            deploys[0].get('images', {}).get('ramdisk', {}).get('overlays', {})
            .get('modules', {}).get('url')
            != kernel.rsplit('/', 1)[0] + '/modules.tar.xz'):
        problems.append('the modules are not an overlay of the ramdisk')
    return problems

def check_kernelci(chk: Checks, pipe: SimpleNamespace, pristine: str) -> None:
    """The job's KCIDB name, collection, rootfs and builds; its LAVA job on
    each platform; the QEMU baseline as without kernelci-core.patch."""
    job = pipe.jobs.get(JOB, {})
    params = job.get('params', {})
    entries = [e for e in pipe.scheduler if e.get('job') == JOB]
    bare = [e['event'].get('name') for e in entries
            if 'kselftest' not in pipe.jobs.get(e['event'].get('name'), {})
            .get('params', {}).get('fragments', [])]
    chk.line(job.get('kcidb_test_suite') == f'kselftest.{COLLECTION}' and
             params.get('collections') == COLLECTION and
             params.get('rootfs_ref') in pipe.rootfs and not bare,
             f'{JOB}: collections {COLLECTION}, kselftest.{COLLECTION}, '
             f'rootfs {params.get("rootfs_ref")} defined, scheduled after '
             'builds with the kselftest fragment', f'{job}\nbuilds {bare}')
    out = os.environ.get('PERF_AUX_INTEGRATIONS_OUT')
    for n, (entry, platform) in enumerate(
            [(e, p) for e in entries for p in e.get('platforms', [])], 1):
        chk.job(f'KernelCI job {JOB} on {platform} ({entry["event"]["name"]}, '
                f'{entry["runtime"]["name"]})',
                lambda name: render(pipe, entry, platform, name), JOB,
                CONTROL_JOB, rendered_problems,
                out and os.path.join(out, f'{n}-{platform}.yaml'))
    entry = next(e for e in pipe.scheduler if e.get('job') == UNCHANGED_JOB
                 and 'qemu-arm64' in e.get('platforms', []))
    patched = render(pipe, entry, 'qemu-arm64', UNCHANGED_JOB)
    pipe.templates[1] = pristine
    chk.line(render(pipe, entry, 'qemu-arm64', UNCHANGED_JOB) == patched,
             f'kernelci-core.patch leaves {UNCHANGED_JOB} on qemu-arm64 as '
             'it was')

def check_tuxlava(chk: Checks, tree: str) -> None:
    """The patched tuxlava's test, and the job it renders on each of the
    test's devices (the kernel's artifacts as placeholders)."""
    sys.path.insert(0, tree)
    try:
        from tuxlava.tests import Test  # type: ignore
        from tuxlava.devices import Device  # type: ignore
        from tuxlava.jobs import Job  # type: ignore
        test = Test.select(TUXLAVA_TEST)
        devices = [d.name for d in Device.list()]
    except Exception as exc:  # any failure to load is the finding
        chk.line(False, f'patched tuxlava knows {TUXLAVA_TEST}', repr(exc))
        return
    finally:
        sys.path.remove(tree)
    unmatched = [p for p in test.devices if not fnmatch.filter(devices, p)]
    chk.line(not unmatched and test.timeout > 0, f'tuxlava {TUXLAVA_TEST}: '
             f'{len(test.devices)} device patterns, each a tuxlava device; '
             f'timeout {test.timeout} min', f'unmatched: {unmatched}')

    def job_of(device: str, name: str) -> str:
        url = 'https://storage.example.org/lkft/'
        files = {'kernel': 'Image.gz', 'modules': 'modules.tar.xz'}
        if device.startswith('nfs-'):
            files['rootfs'] = 'rootfs.tar.xz'
        if device.startswith('fvp-'):
            files.update(bl1='bl1.bin', fip='fip.bin', dtb='fvp.dtb',
                         rootfs='rootfs.ext4.xz')
        job = Job(device=device, tests=[name], parameters={
            'KSELFTEST': url + 'kselftest.tar.xz'},
            **{k: url + v for k, v in files.items()})
        job.initialize()
        return job.render()
    for device in sorted(d for p in test.devices
                         for d in fnmatch.filter(devices, p)):
        chk.job(f'tuxlava job {TUXLAVA_TEST} on {device}',
                lambda name: job_of(device, name), TUXLAVA_TEST,
                TUXLAVA_CONTROL, testdef_problems)

def check_mirrors(chk: Checks, mirrors: str, tmp: str) -> None:
    """The patches applied to their pinned files, then what they give."""
    trees = {}
    for patch, (key, path) in PATCHES.items():
        repo, commit = PINS[key]
        gitdir = mirror_of(mirrors, key)
        if gitdir is None:
            chk.line(True, f'{patch} applies to {repo} # SKIP no mirror of '
                     f'{repo} at {commit[:12]}')
            continue
        tree = os.path.join(tmp, key)
        export(gitdir, commit, [path], tree)
        export(gitdir, commit, [path], tree + '.pristine')
        res = subprocess.run(['git', 'apply', os.path.join(HERE, patch)],
                             cwd=tree, capture_output=True, text=True)
        if chk.line(res.returncode == 0, f'{patch} applies to {repo} '
                    f'{commit[:12]}', res.stderr):
            trees[key] = tree
    if 'kernelci-pipeline' in trees and 'kernelci-core' in trees:
        check_kernelci(chk, pipeline(trees['kernelci-pipeline'], os.path.join(
            trees['kernelci-core'], 'config', 'runtime')), os.path.join(
                trees['kernelci-core'] + '.pristine', 'config', 'runtime'))
    if 'tuxlava' in trees:
        check_tuxlava(chk, trees['tuxlava'])

def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--mirrors', default=os.environ.get(
        'PERF_AUX_MIRRORS', DEFAULT_MIRRORS))
    # For the testdefs stage: KEY's pinned PATH... into DIR (3: no mirror).
    ap.add_argument('--export', nargs='+', metavar=('KEY DIR', 'PATH'))
    args = ap.parse_args()
    if args.export:
        repo, commit = PINS[args.export[0]]
        gitdir = mirror_of(args.mirrors, args.export[0])
        if gitdir is None:
            print(f'no mirror of {repo} at {commit[:12]}')
            return 3
        export(gitdir, commit, args.export[2:], args.export[1])
        return 0
    chk = Checks()
    with tempfile.TemporaryDirectory() as tmp:
        check_mirrors(chk, args.mirrors, tmp)
    return 1 if chk.bad else 0

if __name__ == '__main__':
    sys.exit(main())
