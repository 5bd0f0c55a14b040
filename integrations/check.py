#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks the KernelCI and LKFT patches against the upstream commits they
were written for (what each check proves: integrations/README.md), a line a
check, exit 0 iff no "not ok".  --mirrors DIR: the fetched repositories as
OWNER+NAME/repo; Debian's python3 has the lava_common the schema needs."""

import argparse
import ast
import fnmatch
import os
import re
import subprocess
import sys
import tempfile
import textwrap
from typing import Any, Callable, Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# The upstream commits the patches were written against (README.md says
# the same; the host test keeps the two in step).
PINS = {key: (repo, commit) for key, repo, commit in (
    ('kernelci-pipeline', 'kernelci/kernelci-pipeline', 'e81bdeb60a9a15aa4575fc9b65fb7589373d39a7'),
    ('kernelci-core', 'kernelci/kernelci-core', '69a285e95cc5cfb66615875781298b56b66f02b7'),
    ('tuxlava', 'kernelci/tuxlava', 'f99d452cdc2f3306f1699b9c2ad337565589329e'),
    ('test-definitions', 'Linaro/test-definitions', '4212946b414ed0a3d305e054f973d423ef0e00b9'))}
# Each patch and the upstream repository it applies to.
PATCHES = {'kernelci-pipeline.patch': 'kernelci-pipeline',
           'kernelci-core.patch': 'kernelci-core', 'tuxlava.patch': 'tuxlava'}
COLLECTION = 'perf_aux'
JOB = 'kselftest-perf-aux'
KCIDB_SUITE = 'kselftest.' + COLLECTION
TUXLAVA_TEST = 'kselftest-' + COLLECTION
TESTDEF = 'automated/linux/kselftest/kselftest.yaml'
SELFTEST_DIR = os.path.join(ROOT, 'tools', 'testing', 'selftests', COLLECTION)
DEFAULT_MIRRORS = '/work/.mirror'
# The upstream jobs rendered beside ours on the same platform: where
# Debian's lava_common (2023.01) rejects a template the labs' newer LAVA
# accepts, it rejects the control alike, and ours is judged by it.
CONTROL_JOB = 'kselftest-perf-events'
TUXLAVA_CONTROL = 'kselftest-perf_events'
# A job the core patch must leave alone: upstream's QEMU baseline.
UNCHANGED_JOB = 'baseline-arm64'
Problems = List[str]


# --- the patches themselves (no mirror needed) ----------------------------

def added_blocks(text: str) -> List[Tuple[str, List[str]]]:
    """(file, lines added) of each hunk of a patch; ValueError where git
    apply calls it corrupt."""
    res = subprocess.run(['git', 'apply', '--numstat', '-'], input=text,
                         capture_output=True, text=True)
    if res.returncode:
        raise ValueError(res.stderr.strip())
    blocks: List[Tuple[str, List[str]]] = []
    path = ''
    for line in text.split('\n'):
        if line.startswith('+++ b/'):
            path = line[len('+++ b/'):]
        elif line.startswith('@@'):
            blocks.append((path, []))
        elif line.startswith('+') and blocks:
            blocks[-1][1].append(line[1:])
    return blocks


def read_patch(name: str) -> str:
    with open(os.path.join(HERE, name), encoding='utf-8') as f:
        return f.read()


def yaml_fragment(lines: List[str]) -> Any:
    """The YAML block a hunk adds, parsed on its own: its aliases
    (*kselftest-job, ...) point into the rest of the upstream file, so
    each gets an empty stand-in anchor first."""
    import yaml
    block = '\n'.join(lines)
    aliases = sorted(set(re.findall(r'\*([A-Za-z0-9_-]+)', block)))
    stub = ''.join(f'  a{n}: &{a} {{}}\n' for n, a in enumerate(aliases))
    return yaml.safe_load(f'_stand_ins:\n{stub}fragment:\n{block}\n')[
        'fragment']


def class_attrs(lines: List[str]) -> Dict[str, Dict[str, Any]]:
    """Class name -> its literal class attributes, of Python a hunk adds."""
    module = ast.parse(textwrap.dedent('\n'.join(lines)))
    return {node.name: {s.targets[0].id: ast.literal_eval(s.value)
                        for s in node.body if isinstance(s, ast.Assign)
                        and isinstance(s.targets[0], ast.Name)}
            for node in module.body if isinstance(node, ast.ClassDef)}


def fragment_problems(patch_name: str) -> Problems:
    """What is wrong with what a patch adds, read from the patch alone."""
    problems: Problems = []
    for path, added in added_blocks(read_patch(patch_name)):
        if path == 'config/jobs.yaml':
            problems += job_problems(yaml_fragment(added))
        elif path == 'config/scheduler.yaml':
            for entry in yaml_fragment(added):
                if entry.get('job') != JOB:
                    problems.append(f'scheduler entry for {entry.get("job")}')
                if not entry.get('platforms'):
                    problems.append('scheduler entry without platforms')
        elif path.endswith('.jinja2'):
            problems += jinja_problems(path, added)
        elif path == 'tuxlava/tests/kselftest.py':
            problems += tuxlava_class_problems(class_attrs(added))
        else:
            problems.append(f'{path}: not a file this check knows')
    return problems


def jinja_problems(path: str, added: List[str]) -> Problems:
    """A template hunk: a block of its own (every if it opens it closes)
    that parses as Jinja2, where jinja2 is installed."""
    block = '\n'.join(added)
    problems = []
    if len(re.findall(r'{%-? *if ', block)) != block.count('endif'):
        problems.append(f'{path}: an if without its endif')
    try:
        import jinja2
        jinja2.Environment().parse(block)
    except ImportError:
        pass
    except jinja2.TemplateSyntaxError as exc:
        problems.append(f'{path}: {exc}')
    return problems


def job_problems(jobs: Dict[str, Any]) -> Problems:
    """The kselftest-perf-aux entry: the right collection, KCIDB name and
    a timeout; the collection is this tree's selftest directory."""
    job = jobs.get(JOB)
    if job is None:
        return [f'no {JOB} in the jobs added']
    params = job.get('params', {})
    return [what for bad, what in (
        (params.get('collections') != COLLECTION,
         f'collections: {params.get("collections")}'),
        (job.get('kcidb_test_suite') != KCIDB_SUITE,
         f'kcidb_test_suite: {job.get("kcidb_test_suite")}'),
        (not isinstance(params.get('job_timeout', 10), int),
         'job_timeout is not minutes'),
        (not os.path.isdir(SELFTEST_DIR), f'no {SELFTEST_DIR}')) if bad]


def tuxlava_class_problems(classes: Dict[str, Dict[str, Any]]) -> Problems:
    tests = [a for a in classes.values() if a.get('name') == TUXLAVA_TEST]
    if len(tests) != 1:
        return [f'{len(tests)} classes named {TUXLAVA_TEST}']
    attrs = tests[0]
    # tuxlava's KSelfTest.render(): the collection is the name less
    # "kselftest-" unless a cmdfile is given.
    return [what for bad, what in (
        (attrs.get('cmdfile', attrs['name'][len('kselftest-'):])
         != COLLECTION, 'the collection is not ' + COLLECTION),
        (not isinstance(attrs.get('timeout'), int) or attrs['timeout'] <= 0,
         'no timeout in minutes'),
        (not attrs.get('devices'), 'no devices')) if bad]


# --- against the mirrors --------------------------------------------------

class Checks:
    def __init__(self) -> None:
        self.bad = False

    def line(self, ok: bool, what: str, detail: str = '') -> bool:
        print(f'{"ok" if ok else "not ok"} - integrations: {what}')
        if not ok:
            self.bad = True
            for d in detail.splitlines()[:8]:
                print(f'# {d}')
        return ok

    def skip(self, what: str, why: str) -> None:
        print(f'ok - integrations: {what} # SKIP {why}')

    def job(self, tag: str, render: Callable[[str], str], name: str,
            control: str, problems: Callable[[Any], Problems],
            save: Optional[str] = None) -> None:
        """The job render(name) gives runs the suite (problems() finds
        nothing), and lava_common's schema accepts it; where the schema
        rejects the upstream control job alike, a skip."""
        import yaml
        try:
            text = render(name)
            job = yaml.safe_load(text)
        except Exception as exc:
            self.line(False, f'{tag} renders', repr(exc))
            return
        if save:
            os.makedirs(os.path.dirname(save), exist_ok=True)
            with open(save, 'w', encoding='utf-8') as f:
                f.write(text)
        found = problems(job)
        self.line(not found, f'{tag} renders, runs {TESTDEF} on {COLLECTION}',
                  '\n'.join(found))
        try:
            from lava_common.schemas import validate
        except ImportError:
            self.skip(f'{tag}: lava_common schema',
                      'no lava_common (perf_aux deps lava)')
            return
        err = schema_error(validate, job)
        if err and err == schema_error(validate, yaml.safe_load(
                render(control))):
            self.skip(f'{tag}: lava_common schema', 'this lava_common '
                      f'rejects upstream {control} there too: {err}')
        else:
            self.line(not err, f'{tag}: lava_common schema accepts it', err)


def schema_error(validate: Any, job: Dict[str, Any]) -> str:
    try:
        validate(job, strict=True)
    except Exception as exc:  # voluptuous' errors: the message is the finding
        return str(exc)
    return ''


def git(gitdir: str, *args: str, text: bool = True) -> Any:
    return subprocess.run(['git', '--git-dir', gitdir, *args], check=True,
                          capture_output=True, text=text).stdout


def mirror_of(mirrors: str, key: str) -> Optional[str]:
    """The mirror's git directory if it holds the pinned commit."""
    repo, commit = PINS[key]
    gitdir = os.path.join(mirrors, repo.replace('/', '+'), 'repo')
    try:
        git(gitdir, 'cat-file', '-e', commit + '^{commit}')
    except (OSError, subprocess.CalledProcessError):
        return None
    return gitdir


def export(gitdir: str, commit: str, paths: List[str], dst: str) -> None:
    """The pinned files (or directories) into dst, as a checkout has them."""
    os.makedirs(dst, exist_ok=True)
    subprocess.run(['tar', '-x', '-C', dst], check=True, input=git(
        gitdir, 'archive', commit, *paths, text=False))


def apply(chk: Checks, patch: str, tree: str, key: str) -> bool:
    path = os.path.join(HERE, patch)
    res = subprocess.run(['git', 'apply', path], cwd=tree,
                         capture_output=True, text=True)
    files = len({p for p, _ in added_blocks(read_patch(patch))})
    return chk.line(res.returncode == 0, f'{patch} applies to {PINS[key][0]} '
                    f'{PINS[key][1][:12]} ({files} files)', res.stderr)


class Pipeline:
    """kernelci-pipeline's configuration, patched, and the template
    directories in the order kernelci-core's Runtime loads them."""

    def __init__(self, tree: str, core_templates: str) -> None:
        import yaml
        cfg = os.path.join(tree, 'config')
        for name, key in (('jobs', 'jobs'), ('scheduler', 'scheduler'),
                          ('platforms', 'platforms'), ('rootfs', 'rootfs'),
                          ('pipeline', 'runtimes')):
            with open(os.path.join(cfg, f'{name}.yaml'), encoding='utf-8') as f:
                setattr(self, key, yaml.safe_load(f)[key])
        self.templates = [os.path.join(cfg, 'runtime'), core_templates]

    def entries(self, job: str = JOB) -> List[Dict[str, Any]]:
        return [e for e in self.scheduler if e.get('job') == job]


def check_pipeline(chk: Checks, tree: str, core: str,
                   testdefs: Optional[str]) -> Optional[Pipeline]:
    import yaml
    try:
        pipe = Pipeline(tree, os.path.join(core, 'config', 'runtime'))
    except Exception as exc:  # any parse error is the finding
        chk.line(False, 'patched jobs.yaml and scheduler.yaml parse', str(exc))
        return None
    chk.line(True, 'patched jobs.yaml and scheduler.yaml parse')
    job = pipe.jobs.get(JOB, {})
    params = job.get('params', {})
    got = {k: job.get(k) for k in ('template', 'kind', 'kcidb_test_suite')}
    got_p = {k: params.get(k)
             for k in ('test_method', 'collections', 'rootfs_ref')}
    chk.line(got == {'template': 'generic.jinja2', 'kind': 'job',
                     'kcidb_test_suite': KCIDB_SUITE}
             and got_p == {'test_method': 'kselftest',
                           'collections': COLLECTION,
                           'rootfs_ref': 'trixie-kselftest'}
             and params.get('rootfs_ref') in pipe.rootfs,
             f'{JOB}: kselftest template, collections {COLLECTION}, '
             f'{KCIDB_SUITE}, rootfs {params.get("rootfs_ref")} defined',
             f'{got} {got_p}')
    problems = []
    for e in pipe.entries():
        build = pipe.jobs.get(e['event'].get('name'), {})
        if 'kselftest' not in build.get('params', {}).get('fragments', []):
            problems.append(f'{e["event"].get("name")}: no kselftest fragment')
        if e['runtime'].get('name') not in pipe.runtimes:
            problems.append(f'runtime {e["runtime"].get("name")} unknown')
        problems += [f'platform {p} unknown' for p in e.get('platforms', [])
                     if p not in pipe.platforms]
    chk.line(bool(pipe.entries()) and not problems,
             f'scheduler: {len(pipe.entries())} {JOB} entries, '
             f'{sum(len(e.get("platforms", [])) for e in pipe.entries())} '
             'platforms, kselftest builds, known runtimes and platforms',
             '\n'.join(problems))
    with open(os.path.join(core, 'config', 'runtime', 'tests',
                           'kselftest.jinja2'), encoding='utf-8') as f:
        text = f.read()
    chk.line(f'path: {TESTDEF}' in text and "TST_CMDFILES: '{{ collections }}'"
             in text, f'kernelci-core tests/kselftest.jinja2 runs {TESTDEF} '
             'with TST_CMDFILES from collections')
    pin = PINS['test-definitions'][1]
    if testdefs is None:
        chk.skip(f'{TESTDEF} at the pinned test-definitions',
                 'no mirror of Linaro/test-definitions')
        return pipe
    try:
        tdef = yaml.safe_load(git(testdefs, 'show', f'{pin}:{TESTDEF}'))
        ok = 'TST_CMDFILES' in tdef.get('params', {})
    except Exception:
        ok = False
    chk.line(ok, f'test-definitions {pin[:12]} has {TESTDEF} with a '
             'TST_CMDFILES parameter')
    return pipe


def fake_node(build: str, name: str) -> Dict[str, Any]:
    """A node as the KernelCI API hands a kbuild's job to the runtime:
    only what the templates read."""
    base = f'https://storage.example.org/{build}'
    return {'id': '0123456789abcdef01234567', 'name': name, 'data': {
        'kernel_revision': {'describe': 'v7.3-rc7',
                            'version': {'version': 7, 'patchlevel': 3}},
        'kernel_type': 'image', 'arch': 'arm64',
        'config_full': 'defconfig+arm64-chromebook+kselftest'},
        'artifacts': {'kernel': f'{base}/Image',
                      'modules': f'{base}/modules.tar.xz',
                      'kselftest_tar_xz': f'{base}/kselftest.tar.xz'}}


def format_strings(value: Any, fmt: Dict[str, str]) -> Any:
    """kernelci-core's format_params(): {debarch} and the like in every
    string of the params."""
    if isinstance(value, str):
        try:
            return value.format_map(fmt)
        except (KeyError, IndexError, ValueError):
            return value
    if isinstance(value, dict):
        return {k: format_strings(v, fmt) for k, v in value.items()}
    if isinstance(value, list):
        return [format_strings(v, fmt) for v in value]
    return value


def render(pipe: Pipeline, entry: Dict[str, Any], platform: str,
           job_name: str = JOB) -> str:
    """The LAVA job KernelCI generates for this scheduler entry on this
    platform: kernelci-core's Runtime.get_params() and LAVA's, the rootfs
    resolved (resolve_rootfs_params) and formatted, then the template."""
    import jinja2
    import yaml
    pconf = {'name': platform, **pipe.platforms[platform]}
    runtime = pipe.runtimes[entry['runtime']['name']]
    job = pipe.jobs[job_name]
    params: Dict[str, Any] = {
        'api_config': {'name': 'production'},
        'storage_config': {'name': 'kci-storage'},
        'platform_config': pconf, 'instanceid': None,
        'instance_callback': 'https://api.example.org/latest',
        'name': job_name, 'node': fake_node(entry['event']['name'], job_name),
        'runtime': runtime.get('lab_type', 'lava'),
        'runtime_image': job.get('image'),
        'device_type': pconf.get('base_name') or platform,
        'notify': runtime.get('notify'), 'priority': 45,
        **(pconf.get('params') or {}), **job.get('params', {})}
    for k, v in pipe.rootfs.get(params.pop('rootfs_ref', None), {}).items():
        params.setdefault(k, v)
    arch = pconf.get('arch', 'arm64')
    params = format_strings(params, {
        'arch': arch, 'debarch': arch, 'brarch': arch, 'karch': arch,
        'crosarch': arch, 'krev': '7.3'})
    env = jinja2.Environment(
        loader=jinja2.ChoiceLoader([jinja2.FileSystemLoader(t)
                                    for t in pipe.templates]),
        extensions=['jinja2.ext.do'])
    env.globals.update({'kci_raise': lambda msg: (_ for _ in ()).throw(
        jinja2.TemplateRuntimeError(msg)),
        'kci_yaml_dump': lambda data: yaml.dump(data, indent=2)})
    return env.get_template(job['template']).render(params)


def testdef_problems(job: Dict[str, Any]) -> Problems:
    """Unless the job runs kselftest.yaml, once, on the collection: why."""
    defs = [d for a in job.get('actions', []) if 'test' in a
            for d in a['test'].get('definitions', [])
            if d.get('path') == TESTDEF]
    return [] if len(defs) == 1 and defs[0].get('parameters', {}).get(
        'TST_CMDFILES') == COLLECTION else [f'no {TESTDEF} on {COLLECTION}']


def rendered_problems(job: Dict[str, Any]) -> Problems:
    """What the rendered job must do for the suite: run kselftest.yaml on
    the collection, with every image's URL; on QEMU (tmpfs) the kernel's
    modules in the ramdisk, since the tests modprobe test_aux_pmu."""
    problems = testdef_problems(job)
    deploys = [a['deploy'] for a in job.get('actions', []) if 'deploy' in a]
    images = [(k, v) for d in deploys for k, v in d.items()
              if isinstance(v, dict) and 'url' in v] + [
        (k, v) for d in deploys for k, v in (d.get('images') or {}).items()]
    problems += [f'deploy {k} has no URL' for k, v in images
                 if not v.get('url') or 'None' in v['url']]
    kernel = next((v.get('url', '') for k, v in images if k == 'kernel'), '')
    if deploys and deploys[0].get('to') == 'tmpfs' and (
            deploys[0].get('images', {}).get('ramdisk', {}).get('overlays', {})
            .get('modules', {}).get('url')
            != kernel.rsplit('/', 1)[0] + '/modules.tar.xz'):
        problems.append('the modules are not an overlay of the ramdisk')
    return problems


def check_render(chk: Checks, pipe: Pipeline) -> None:
    out = os.environ.get('PERF_AUX_INTEGRATIONS_OUT')
    n = 0
    for entry in pipe.entries():
        for platform in entry.get('platforms', []):
            n += 1
            chk.job(f'KernelCI job {JOB} on {platform} ({entry["event"]["name"]}'
                    f', {entry["runtime"]["name"]})',
                    lambda name: render(pipe, entry, platform, name), JOB,
                    CONTROL_JOB, rendered_problems,
                    out and os.path.join(out, f'{n}-{platform}.yaml'))


def check_unchanged(chk: Checks, pipe: Pipeline, pristine: str) -> None:
    """kernelci-core.patch changes no job that does not ask for it: the
    QEMU baseline renders the same with and without it."""
    entry = next((e for e in pipe.entries(UNCHANGED_JOB)
                  if 'qemu-arm64' in e.get('platforms', [])), None)
    if entry is None:
        chk.skip('kernelci-core.patch leaves other QEMU jobs alone',
                 f'no {UNCHANGED_JOB} on qemu-arm64 upstream')
        return
    patched = render(pipe, entry, 'qemu-arm64', UNCHANGED_JOB)
    pipe.templates[1] = pristine
    chk.line(render(pipe, entry, 'qemu-arm64', UNCHANGED_JOB) == patched,
             f'kernelci-core.patch leaves {UNCHANGED_JOB} on qemu-arm64 as '
             'it was')


def tuxlava_args(device: str, test: str) -> Dict[str, Any]:
    """What tuxlava needs to render a job on each kind of device: the
    kernel's artifacts as LKFT passes them (placeholders)."""
    url = 'https://storage.example.org/lkft/'
    files = {'kernel': 'Image.gz', 'modules': 'modules.tar.xz',
             **({'rootfs': 'rootfs.tar.xz'} if device.startswith('nfs-')
                else {}),
             **({'bl1': 'bl1.bin', 'fip': 'fip.bin', 'dtb': 'fvp.dtb',
                 'rootfs': 'rootfs.ext4.xz'} if device.startswith('fvp-')
                else {})}
    return {'device': device, 'tests': [test],
            'parameters': {'KSELFTEST': url + 'kselftest.tar.xz'},
            **{k: url + v for k, v in files.items()}}


def check_tuxlava(chk: Checks, tree: str) -> None:
    """Import the patched tuxlava, ask it what it knows of the test, and
    have it render the job on each of the test's devices."""
    sys.path.insert(0, tree)
    try:
        from tuxlava.tests import Test  # type: ignore
        from tuxlava.devices import Device  # type: ignore
        from tuxlava.jobs import Job  # type: ignore
        test = Test.select(TUXLAVA_TEST)
        devices = [d.name for d in Device.list()]
    except Exception as exc:
        chk.line(False, f'patched tuxlava knows {TUXLAVA_TEST}', repr(exc))
        return
    finally:
        sys.path.remove(tree)
    unmatched = [p for p in test.devices if not fnmatch.filter(devices, p)]
    chk.line(not unmatched and test.timeout > 0,
             f'tuxlava {TUXLAVA_TEST}: {len(test.devices)} device patterns, '
             f'each a tuxlava device; timeout {test.timeout} min',
             f'unmatched: {unmatched}')
    chk.line(test.name.replace('kselftest-', '') == COLLECTION
             and not test.cmdfile,
             f'tuxlava {TUXLAVA_TEST} runs the {COLLECTION} collection')

    def job_of(device: str, name: str) -> str:
        job = Job(**tuxlava_args(device, name))
        job.initialize()
        return job.render()

    for device in sorted(d for p in test.devices
                         for d in fnmatch.filter(devices, p)):
        chk.job(f'tuxlava job {TUXLAVA_TEST} on {device}',
                lambda name: job_of(device, name), TUXLAVA_TEST,
                TUXLAVA_CONTROL, testdef_problems)


def check_mirrors(chk: Checks, mirrors: str, tmp: str) -> None:
    """The patches applied to their pinned files, then what they give."""
    gitdirs = {k: mirror_of(mirrors, k) for k in PINS}
    trees = {}
    for patch, key in PATCHES.items():
        repo, commit = PINS[key]
        if gitdirs[key] is None:
            chk.skip(f'{patch} applies to {repo}',
                     f'no mirror of {repo} at {commit[:12]}')
            continue
        tree = os.path.join(tmp, key)
        paths = {'kernelci-pipeline': ['config'], 'tuxlava': ['tuxlava'],
                 'kernelci-core': ['config/runtime']}[key]
        export(gitdirs[key], commit, paths, tree)
        if key == 'kernelci-core':  # one copy stays as it was
            export(gitdirs[key], commit, paths, tree + '.pristine')
        if apply(chk, patch, tree, key):
            trees[key] = tree
    if 'kernelci-pipeline' in trees and 'kernelci-core' in trees:
        pipe = check_pipeline(chk, trees['kernelci-pipeline'],
                              trees['kernelci-core'],
                              gitdirs['test-definitions'])
        if pipe:
            check_render(chk, pipe)
            check_unchanged(chk, pipe, os.path.join(
                trees['kernelci-core'] + '.pristine', 'config', 'runtime'))
    else:
        chk.skip('KernelCI job rendered and validated',
                 'no patched kernelci-pipeline or no kernelci-core mirror')
    if 'tuxlava' in trees:
        check_tuxlava(chk, trees['tuxlava'])
    else:
        chk.skip(f'tuxlava {TUXLAVA_TEST}', 'no patched tuxlava')


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--mirrors', default=os.environ.get(
        'PERF_AUX_MIRRORS', DEFAULT_MIRRORS))
    # The testdefs stage runs test-definitions at its pin: the files of
    # KEY's pinned commit under PATH... into DIR (exit 3: no mirror).
    ap.add_argument('--export', nargs='+', metavar=('KEY DIR', 'PATH'))
    args = ap.parse_args()
    if args.export:
        if len(args.export) < 3 or args.export[0] not in PINS:
            ap.error('--export KEY DIR PATH...: KEY one of ' + ', '.join(PINS))
        repo, commit = PINS[args.export[0]]
        gitdir = mirror_of(args.mirrors, args.export[0])
        if gitdir is None:
            print(f'no mirror of {repo} at {commit[:12]}')
            return 3
        export(gitdir, commit, args.export[2:], args.export[1])
        return 0
    chk = Checks()
    for patch in PATCHES:
        try:
            problems = fragment_problems(patch)
            chk.line(not problems, f'{patch}: a unified diff; what it adds '
                     'parses and names the perf_aux collection',
                     '\n'.join(problems))
        except Exception as exc:
            chk.line(False, f'{patch}: a unified diff', repr(exc))
    with tempfile.TemporaryDirectory() as tmp:
        check_mirrors(chk, args.mirrors, tmp)
    return 1 if chk.bad else 0


if __name__ == '__main__':
    sys.exit(main())
