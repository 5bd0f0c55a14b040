#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks integrations/: the patches for KernelCI and LKFT against the
upstream commits they were written for, one line per check ("ok - ..." or
"not ok - ...", "# SKIP" where a check cannot run here), exit 0 iff no
"not ok".

  1. each patch is a well-formed unified diff and the YAML it adds parses
     (also in scripts/tests/test_integrations.py, which needs no mirror);
  2. each patch applies (git apply) to its pinned file;
  3. the patched kernelci-pipeline jobs.yaml and scheduler.yaml parse, the
     job is a kselftest on the perf_aux collection, its builds, runtimes,
     platforms and rootfs exist, and KernelCI's kselftest template runs
     test-definitions' kselftest.yaml, which exists at its pinned commit;
  4. for every platform the patch schedules, KernelCI's job template
     (kernelci-core config/runtime, through kernelci-pipeline's
     generic.jinja2) rendered with the entry validates with lava_common's
     schema and runs kselftest.yaml on the perf_aux collection;
  5. the patched tuxlava has a kselftest-perf_aux test on the perf_aux
     collection whose device patterns all match tuxlava devices.

Usage: integrations/check.py [--mirrors DIR]
  DIR holds the fetched upstream repositories as OWNER+NAME/repo (bare git
  directories); default /work/.mirror.  Run it with /usr/bin/python3: the
  schema check needs Debian's lava-common (perf_aux deps lava).
"""

import argparse
import ast
import os
import re
import subprocess
import sys
import tempfile
import textwrap
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# The upstream commits the patches were written against (README.md says
# the same; the host test keeps the two in step).
PINS = {
    'kernelci-pipeline': ('kernelci/kernelci-pipeline',
                          'e81bdeb60a9a15aa4575fc9b65fb7589373d39a7'),
    'kernelci-core': ('kernelci/kernelci-core',
                      '69a285e95cc5cfb66615875781298b56b66f02b7'),
    'tuxlava': ('kernelci/tuxlava',
                'f99d452cdc2f3306f1699b9c2ad337565589329e'),
    'test-definitions': ('Linaro/test-definitions',
                         '4212946b414ed0a3d305e054f973d423ef0e00b9'),
}
# Each patch and the upstream repository it applies to.
PATCHES = {
    'kernelci-pipeline.patch': 'kernelci-pipeline',
    'kernelci-core.patch': 'kernelci-core',
    'tuxlava.patch': 'tuxlava',
}
COLLECTION = 'perf_aux'
JOB = 'kselftest-perf-aux'
KCIDB_SUITE = 'kselftest.' + COLLECTION
TUXLAVA_TEST = 'kselftest-' + COLLECTION
TUXLAVA_CONTROL = 'kselftest-perf_events'
TESTDEF = 'automated/linux/kselftest/kselftest.yaml'
SELFTEST_DIR = os.path.join(ROOT, 'tools', 'testing', 'selftests', COLLECTION)
DEFAULT_MIRRORS = '/work/.mirror'


# --- the patches themselves (no mirror needed) ----------------------------

@dataclass
class Hunk:
    old_start: int
    old_len: int
    new_start: int
    new_len: int
    lines: List[str]

    def added(self) -> List[str]:
        return [line[1:] for line in self.lines if line.startswith('+')]


@dataclass
class FilePatch:
    path: str
    hunks: List[Hunk] = field(default_factory=list)

    def added(self) -> List[List[str]]:
        return [h.added() for h in self.hunks]


HUNK_RE = re.compile(r'^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@')


def parse_patch(text: str) -> List[FilePatch]:
    """The files and hunks of a git-style unified diff; ValueError where a
    hunk's line counts disagree with its header or a file has no hunk (what
    git apply would refuse as corrupt)."""
    files: List[FilePatch] = []
    lines = text.split('\n')
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith('diff --git '):
            files.append(FilePatch(path=''))
        elif line.startswith('+++ ') and files and not files[-1].path:
            if not line.startswith('+++ b/'):
                raise ValueError(f'line {i + 1}: +++ without b/ prefix')
            files[-1].path = line[len('+++ b/'):]
        elif line.startswith('@@'):
            m = HUNK_RE.match(line)
            if not m or not files or not files[-1].path:
                raise ValueError(f'line {i + 1}: hunk outside a file: {line}')
            old_len = int(m.group(2) if m.group(2) is not None else 1)
            new_len = int(m.group(4) if m.group(4) is not None else 1)
            hunk = Hunk(int(m.group(1)), old_len, int(m.group(3)), new_len, [])
            old = new = 0
            i += 1
            while i < len(lines) and (old < old_len or new < new_len):
                body = lines[i]
                tag = body[:1]
                if tag == ' ':
                    old += 1
                    new += 1
                elif tag == '-':
                    old += 1
                elif tag == '+':
                    new += 1
                elif tag != '\\':
                    raise ValueError(f'line {i + 1}: not a hunk line: '
                                     f'{body!r}')
                hunk.lines.append(body)
                i += 1
            if (old, new) != (old_len, new_len):
                raise ValueError(f'{files[-1].path}: hunk at -{hunk.old_start}'
                                 f' has {old}/{new} lines, header says '
                                 f'{old_len}/{new_len}')
            files[-1].hunks.append(hunk)
            continue
        i += 1
    if not files:
        raise ValueError('no diff --git in the patch')
    for f in files:
        if not f.path or not f.hunks:
            raise ValueError(f'a file without a path or hunks: {f.path!r}')
    return files


def yaml_fragment(lines: List[str]) -> Any:
    """The YAML block a hunk adds, parsed on its own: its aliases
    (*kselftest-job, ...) point into the rest of the upstream file, so
    each gets an empty stand-in anchor first."""
    import yaml
    block = '\n'.join(lines)
    aliases = sorted(set(re.findall(r'\*([A-Za-z0-9_-]+)', block)))
    stub = ''.join(f'  a{n}: &{a} {{}}\n' for n, a in enumerate(aliases))
    doc = yaml.safe_load(f'_stand_ins:\n{stub}fragment:\n{block}\n')
    return doc['fragment']


def python_fragment(lines: List[str]) -> ast.Module:
    """The Python a hunk adds, parsed (SyntaxError if it does not)."""
    return ast.parse(textwrap.dedent('\n'.join(lines)))


def class_attrs(module: ast.Module) -> Dict[str, Dict[str, Any]]:
    """Class name -> its literal class attributes."""
    out: Dict[str, Dict[str, Any]] = {}
    for node in module.body:
        if isinstance(node, ast.ClassDef):
            attrs: Dict[str, Any] = {}
            for stmt in node.body:
                if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                        and isinstance(stmt.targets[0], ast.Name)):
                    attrs[stmt.targets[0].id] = ast.literal_eval(stmt.value)
            out[node.name] = attrs
    return out


def read_patch(name: str) -> List[FilePatch]:
    with open(os.path.join(HERE, name), encoding='utf-8') as f:
        return parse_patch(f.read())


def fragment_problems(patch_name: str) -> List[str]:
    """What is wrong with what a patch adds, read from the patch alone;
    empty when it is right."""
    problems: List[str] = []
    for fp in read_patch(patch_name):
        for added in fp.added():
            if fp.path == 'config/jobs.yaml':
                problems += job_problems(yaml_fragment(added))
            elif fp.path == 'config/scheduler.yaml':
                for entry in yaml_fragment(added):
                    if entry.get('job') != JOB:
                        problems.append('scheduler entry for '
                                        f'{entry.get("job")}')
                    if not entry.get('platforms'):
                        problems.append('scheduler entry without platforms')
            elif fp.path.endswith('.jinja2'):
                problems += jinja_problems(fp)
            elif fp.path == 'tuxlava/tests/kselftest.py':
                problems += tuxlava_class_problems(
                    class_attrs(python_fragment(added)))
            else:
                problems.append(f'{fp.path}: not a file this check knows')
    return problems


def jinja_problems(fp: FilePatch) -> List[str]:
    """A template hunk: what it adds is a block of its own (every if it
    opens it closes) that parses as Jinja2, where jinja2 is installed."""
    problems = []
    for added in fp.added():
        block = '\n'.join(added)
        if len(re.findall(r'{%-? *if ', block)) != block.count('endif'):
            problems.append(f'{fp.path}: an if without its endif')
        try:
            import jinja2
        except ImportError:
            continue
        try:
            jinja2.Environment().parse(block)
        except jinja2.TemplateSyntaxError as exc:
            problems.append(f'{fp.path}: {exc}')
    return problems


def job_problems(jobs: Dict[str, Any]) -> List[str]:
    """The kselftest-perf-aux entry: the right collection, KCIDB name and
    a timeout; the collection is this tree's selftest directory."""
    problems = []
    job = jobs.get(JOB)
    if job is None:
        return [f'no {JOB} in the jobs added']
    params = job.get('params', {})
    if params.get('collections') != COLLECTION:
        problems.append(f'collections: {params.get("collections")}')
    if job.get('kcidb_test_suite') != KCIDB_SUITE:
        problems.append(f'kcidb_test_suite: {job.get("kcidb_test_suite")}')
    if not isinstance(params.get('job_timeout', 10), int):
        problems.append('job_timeout is not minutes')
    if not os.path.isdir(SELFTEST_DIR):
        problems.append(f'no {SELFTEST_DIR}')
    return problems


def tuxlava_class_problems(classes: Dict[str, Dict[str, Any]]) -> List[str]:
    tests = [a for a in classes.values() if a.get('name') == TUXLAVA_TEST]
    if len(tests) != 1:
        return [f'{len(tests)} classes named {TUXLAVA_TEST}']
    attrs = tests[0]
    problems = []
    # tuxlava's KSelfTest.render(): the collection is the name less
    # "kselftest-" unless a cmdfile is given.
    if attrs.get('cmdfile', attrs['name'][len('kselftest-'):]) != COLLECTION:
        problems.append('the collection is not ' + COLLECTION)
    if not isinstance(attrs.get('timeout'), int) or attrs['timeout'] <= 0:
        problems.append('no timeout in minutes')
    if not attrs.get('devices'):
        problems.append('no devices')
    return problems


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


def git(gitdir: str, *args: str) -> str:
    return subprocess.run(['git', '--git-dir', gitdir, *args], check=True,
                          capture_output=True, text=True).stdout


def mirror_of(mirrors: str, key: str) -> Optional[str]:
    """The mirror's git directory if it holds the pinned commit."""
    repo, commit = PINS[key]
    gitdir = os.path.join(mirrors, repo.replace('/', '+'), 'repo')
    if not os.path.isdir(gitdir):
        return None
    try:
        git(gitdir, 'cat-file', '-e', commit + '^{commit}')
    except (OSError, subprocess.CalledProcessError):
        return None
    return gitdir


def export(gitdir: str, commit: str, paths: List[str], dst: str) -> None:
    """The pinned files (or directories) into dst, as a checkout has them."""
    archive = subprocess.run(['git', '--git-dir', gitdir, 'archive', commit,
                              *paths], check=True, capture_output=True).stdout
    subprocess.run(['tar', '-x', '-C', dst], input=archive, check=True)


def apply(chk: Checks, patch: str, tree: str, key: str) -> bool:
    path = os.path.join(HERE, patch)
    res = subprocess.run(['git', 'apply', '--check', path], cwd=tree,
                         capture_output=True, text=True)
    if res.returncode == 0:
        res = subprocess.run(['git', 'apply', path], cwd=tree,
                             capture_output=True, text=True)
    files = len(read_patch(patch))
    return chk.line(res.returncode == 0,
                    f'{patch} applies to {PINS[key][0]} '
                    f'{PINS[key][1][:12]} ({files} files)', res.stderr)


def load_yaml(path: str) -> Any:
    import yaml
    with open(path, encoding='utf-8') as f:
        return yaml.safe_load(f)


@dataclass
class Pipeline:
    jobs: Dict[str, Any]
    scheduler: List[Dict[str, Any]]
    platforms: Dict[str, Any]
    rootfs: Dict[str, Any]
    runtimes: Dict[str, Any]
    templates: List[str]


def check_pipeline(chk: Checks, tree: str, core: str,
                   testdefs: Optional[str]) -> Optional[Pipeline]:
    import yaml
    cfg = os.path.join(tree, 'config')
    try:
        pipe = Pipeline(
            jobs=load_yaml(os.path.join(cfg, 'jobs.yaml'))['jobs'],
            scheduler=load_yaml(
                os.path.join(cfg, 'scheduler.yaml'))['scheduler'],
            platforms=load_yaml(
                os.path.join(cfg, 'platforms.yaml'))['platforms'],
            rootfs=load_yaml(os.path.join(cfg, 'rootfs.yaml'))['rootfs'],
            runtimes=load_yaml(os.path.join(cfg, 'pipeline.yaml'))['runtimes'],
            # The order kernelci-core's Runtime loads them: the pipeline's
            # config/runtime first (generic.jinja2), then kernelci-core's.
            templates=[os.path.join(cfg, 'runtime'),
                       os.path.join(core, 'config', 'runtime')])
    except Exception as exc:  # any parse error is the finding
        chk.line(False, 'patched jobs.yaml and scheduler.yaml parse', str(exc))
        return None
    chk.line(True, 'patched jobs.yaml and scheduler.yaml parse')
    job = pipe.jobs.get(JOB, {})
    params = job.get('params', {})
    want = {'template': 'generic.jinja2', 'kind': 'job'}
    got = {k: job.get(k) for k in want}
    want_p = {'test_method': 'kselftest', 'collections': COLLECTION,
              'rootfs_ref': 'trixie-kselftest'}
    got_p = {k: params.get(k) for k in want_p}
    chk.line(got == want and got_p == want_p
             and job.get('kcidb_test_suite') == KCIDB_SUITE
             and params.get('rootfs_ref') in pipe.rootfs,
             f'{JOB}: kselftest template, collections {COLLECTION}, '
             f'{KCIDB_SUITE}, rootfs {params.get("rootfs_ref")} defined',
             f'{got} {got_p} {job.get("kcidb_test_suite")}')
    entries = [e for e in pipe.scheduler if e.get('job') == JOB]
    problems = []
    for e in entries:
        build = pipe.jobs.get(e['event'].get('name'), {})
        if 'kselftest' not in build.get('params', {}).get('fragments', []):
            problems.append(f'{e["event"].get("name")}: no kselftest fragment')
        if e['runtime'].get('name') not in pipe.runtimes:
            problems.append(f'runtime {e["runtime"].get("name")} unknown')
        problems += [f'platform {p} unknown' for p in e.get('platforms', [])
                     if p not in pipe.platforms]
    chk.line(bool(entries) and not problems,
             f'scheduler: {len(entries)} {JOB} entries, '
             f'{sum(len(e.get("platforms", [])) for e in entries)} platforms'
             ', kselftest builds, known runtimes and platforms',
             '\n'.join(problems))
    tmpl = os.path.join(core, 'config', 'runtime', 'tests', 'kselftest.jinja2')
    with open(tmpl, encoding='utf-8') as f:
        text = f.read()
    chk.line(f'path: {TESTDEF}' in text and "TST_CMDFILES: '{{ collections }}'"
             in text, f'kernelci-core tests/kselftest.jinja2 runs {TESTDEF} '
             'with TST_CMDFILES from collections')
    if testdefs is None:
        chk.skip(f'{TESTDEF} at the pinned test-definitions',
                 'no mirror of Linaro/test-definitions')
    else:
        try:
            pin = PINS['test-definitions'][1]
            tdef = yaml.safe_load(git(testdefs, 'show', f'{pin}:{TESTDEF}'))
            ok = 'TST_CMDFILES' in tdef.get('params', {})
        except Exception:
            ok = False
        chk.line(ok, f'test-definitions {PINS["test-definitions"][1][:12]} '
                 f'has {TESTDEF} with a TST_CMDFILES parameter')
    return pipe


# A node as the KernelCI API hands a kbuild's job to the runtime: only what
# the templates read.
def fake_node(build: str, name: str) -> Dict[str, Any]:
    base = f'https://storage.example.org/{build}'
    return {
        'id': '0123456789abcdef01234567',
        'name': name,
        'data': {
            'kernel_revision': {'describe': 'v7.3-rc7',
                                'version': {'version': 7, 'patchlevel': 3}},
            'kernel_type': 'image',
            'config_full': 'defconfig+arm64-chromebook+kselftest',
            'arch': 'arm64',
        },
        'artifacts': {
            'kernel': f'{base}/Image',
            'modules': f'{base}/modules.tar.xz',
            'kselftest_tar_xz': f'{base}/kselftest.tar.xz',
        },
    }


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
    pconf = dict(pipe.platforms[platform])
    pconf.setdefault('name', platform)
    runtime = pipe.runtimes[entry['runtime']['name']]
    job = pipe.jobs[job_name]
    params: Dict[str, Any] = {
        'api_config': {'name': 'production'},
        'storage_config': {'name': 'kci-storage'},
        'platform_config': pconf,
        'instanceid': None,
        'instance_callback': 'https://api.example.org/latest',
        'name': job_name,
        'node': fake_node(entry['event']['name'], job_name),
        'runtime': runtime.get('lab_type', 'lava'),
        'runtime_image': job.get('image'),
        'device_type': pconf.get('base_name') or platform,
        'notify': runtime.get('notify'),
        'priority': 45,
    }
    params.update(pconf.get('params') or {})
    params.update(job.get('params', {}))
    ref = params.pop('rootfs_ref', None)
    for k, v in pipe.rootfs.get(ref, {}).items():
        params.setdefault(k, v)
    arch = pconf.get('arch', 'arm64')
    fmt = {'arch': arch, 'debarch': arch, 'brarch': arch, 'karch': arch,
           'crosarch': arch, 'krev': '7.3'}
    params = format_strings(params, fmt)
    env = jinja2.Environment(
        loader=jinja2.ChoiceLoader([jinja2.FileSystemLoader(t)
                                    for t in pipe.templates]),
        extensions=['jinja2.ext.do'])
    env.globals.update({'kci_raise': lambda msg: (_ for _ in ()).throw(
        jinja2.TemplateRuntimeError(msg)),
        'kci_yaml_dump': lambda data: yaml.dump(data, indent=2)})
    return env.get_template(job['template']).render(params)


def rendered_problems(job: Dict[str, Any]) -> List[str]:
    """What the rendered job must do for the suite: run kselftest.yaml on
    the collection, from a root filesystem that is there."""
    problems = []
    tests = [d for a in job.get('actions', []) if 'test' in a
             for d in a['test'].get('definitions', [])]
    ks = [d for d in tests if d.get('path') == TESTDEF]
    if len(ks) != 1:
        return [f'{len(ks)} definitions of {TESTDEF}']
    if ks[0].get('parameters', {}).get('TST_CMDFILES') != COLLECTION:
        problems.append(f'TST_CMDFILES {ks[0].get("parameters")}')
    deploy = [a['deploy'] for a in job.get('actions', []) if 'deploy' in a]
    if deploy and deploy[0].get('to') == 'tmpfs':
        # QEMU: the tests modprobe test_aux_pmu, so the kernel's modules
        # must reach the ramdisk (kernelci-core.patch).
        ramdisk = deploy[0].get('images', {}).get('ramdisk', {})
        overlay = ramdisk.get('overlays', {}).get('modules', {})
        if overlay.get('url') != job_modules_url(job):
            problems.append('the modules are not an overlay of the ramdisk')
    for a in job.get('actions', []):
        for label, image in (a.get('deploy') or {}).items():
            if isinstance(image, dict) and 'url' in image and (
                    not image['url'] or 'None' in image['url']):
                problems.append(f'deploy {label} has no URL')
        for label, image in (a.get('deploy', {}).get('images') or {}).items():
            if not image.get('url'):
                problems.append(f'deploy image {label} has no URL')
    return problems


# The upstream job rendered beside ours on the same platform: where Debian's
# lava_common (2023.01) rejects a boot template KernelCI's labs accept
# (their LAVA is newer), it rejects the control alike, and ours is judged
# by the control.
CONTROL_JOB = 'kselftest-perf-events'


def schema_error(validate: Any, job: Dict[str, Any]) -> str:
    try:
        validate(job, strict=True)
    except Exception as exc:  # voluptuous' errors: the message is the finding
        return str(exc)
    return ''


def job_modules_url(job: Dict[str, Any]) -> str:
    """fake_node()'s modules URL for the build the job's kernel is from."""
    for a in job.get('actions', []):
        kernel = (a.get('deploy', {}).get('images') or {}).get('kernel')
        if kernel:
            return kernel['url'].rsplit('/', 1)[0] + '/modules.tar.xz'
    return ''


def check_render(chk: Checks, pipe: Pipeline) -> None:
    import yaml
    try:
        from lava_common.schemas import validate
    except ImportError:
        validate = None
    out = os.environ.get('PERF_AUX_INTEGRATIONS_OUT')
    n = 0
    for entry in (e for e in pipe.scheduler if e.get('job') == JOB):
        for platform in entry.get('platforms', []):
            n += 1
            tag = (f'KernelCI job {JOB} on {platform} '
                   f'({entry["event"]["name"]}, {entry["runtime"]["name"]})')
            try:
                text = render(pipe, entry, platform)
                job = yaml.safe_load(text)
            except Exception as exc:
                chk.line(False, f'{tag} renders', repr(exc))
                continue
            if out:
                os.makedirs(out, exist_ok=True)
                with open(os.path.join(out, f'{n}-{platform}.yaml'), 'w',
                          encoding='utf-8') as f:
                    f.write(text)
            problems = rendered_problems(job)
            chk.line(not problems, f'{tag} renders, runs {TESTDEF} on '
                     f'{COLLECTION}', '\n'.join(problems))
            if validate is None:
                chk.skip(f'{tag}: lava_common schema',
                         'no lava_common (perf_aux deps lava)')
                continue
            err = schema_error(validate, job)
            if not err:
                chk.line(True, f'{tag}: lava_common schema accepts it')
                continue
            control = schema_error(validate, yaml.safe_load(
                render(pipe, entry, platform, CONTROL_JOB)))
            if control == err:
                chk.skip(f'{tag}: lava_common schema',
                         f'this lava_common rejects upstream {CONTROL_JOB} '
                         f'there too: {err}')
            else:
                chk.line(False, f'{tag}: lava_common schema accepts it', err)


# A job the core patch must leave alone: upstream's QEMU baseline.
UNCHANGED_JOB = 'baseline-arm64'


def check_unchanged(chk: Checks, pipe: Pipeline, pristine: str) -> None:
    """kernelci-core.patch changes no job that does not ask for it: the
    QEMU baseline renders the same with and without it."""
    entry = next((e for e in pipe.scheduler if e.get('job') == UNCHANGED_JOB
                  and 'qemu-arm64' in e.get('platforms', [])), None)
    if entry is None:
        chk.skip('kernelci-core.patch leaves other QEMU jobs alone',
                 f'no {UNCHANGED_JOB} on qemu-arm64 upstream')
        return
    before = Pipeline(**{**pipe.__dict__,
                         'templates': [pipe.templates[0], pristine]})
    same = (render(before, entry, 'qemu-arm64', UNCHANGED_JOB)
            == render(pipe, entry, 'qemu-arm64', UNCHANGED_JOB))
    chk.line(same, f'kernelci-core.patch leaves {UNCHANGED_JOB} on '
             'qemu-arm64 as it was')


# What tuxlava needs to render a job on each kind of device: the kernel's
# artifacts as LKFT passes them (placeholders: nothing is fetched).
def tuxlava_args(device: str, test: str) -> Dict[str, Any]:
    url = 'https://storage.example.org/lkft/'
    kw: Dict[str, Any] = dict(
        device=device, kernel=url + 'Image.gz', modules=url + 'modules.tar.xz',
        tests=[test], parameters={'KSELFTEST': url + 'kselftest.tar.xz'})
    if device.startswith('nfs-'):
        kw['rootfs'] = url + 'rootfs.tar.xz'
    if device.startswith('fvp-'):
        kw.update(bl1=url + 'bl1.bin', fip=url + 'fip.bin',
                  dtb=url + 'fvp.dtb', rootfs=url + 'rootfs.ext4.xz')
    return kw


def check_tuxlava(chk: Checks, tree: str) -> None:
    """Import the patched tuxlava, ask it what it knows of the test, and
    have it render the job on each of the test's devices."""
    import fnmatch
    import yaml
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
    try:
        from lava_common.schemas import validate
    except ImportError:
        validate = None

    def job_of(device: str, name: str) -> Dict[str, Any]:
        job = Job(**tuxlava_args(device, name))
        job.initialize()
        return yaml.safe_load(job.render())

    for device in sorted(d for p in test.devices
                         for d in fnmatch.filter(devices, p)):
        tag = f'tuxlava job {TUXLAVA_TEST} on {device}'
        try:
            job = job_of(device, TUXLAVA_TEST)
        except Exception as exc:
            chk.line(False, f'{tag} renders', repr(exc))
            continue
        defs = [d for a in job.get('actions', []) if 'test' in a
                for d in a['test'].get('definitions', [])
                if d.get('path') == TESTDEF]
        chk.line(len(defs) == 1 and defs[0].get('parameters', {}).get(
            'TST_CMDFILES') == COLLECTION,
            f'{tag} renders, runs {TESTDEF} on {COLLECTION}')
        if validate is None:
            chk.skip(f'{tag}: lava_common schema', 'no lava_common')
            continue
        err = schema_error(validate, job)
        if not err:
            chk.line(True, f'{tag}: lava_common schema accepts it')
        elif err == schema_error(validate, job_of(device, TUXLAVA_CONTROL)):
            chk.skip(f'{tag}: lava_common schema',
                     f'this lava_common rejects upstream {TUXLAVA_CONTROL} '
                     f'there too: {err}')
        else:
            chk.line(False, f'{tag}: lava_common schema accepts it', err)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--mirrors', default=os.environ.get(
        'PERF_AUX_MIRRORS', DEFAULT_MIRRORS))
    # scripts/testdefs.sh runs test-definitions at its pin: the files of
    # KEY's pinned commit under PATH... into DIR (exit 3: no mirror).
    ap.add_argument('--export', nargs='+', metavar=('KEY DIR', 'PATH'))
    args = ap.parse_args()
    if args.export:
        if len(args.export) < 3 or args.export[0] not in PINS:
            ap.error('--export KEY DIR PATH...: KEY one of ' + ', '.join(PINS))
        gitdir = mirror_of(args.mirrors, args.export[0])
        if gitdir is None:
            print(f'no mirror of {PINS[args.export[0]][0]} at '
                  f'{PINS[args.export[0]][1][:12]}')
            return 3
        os.makedirs(args.export[1], exist_ok=True)
        export(gitdir, PINS[args.export[0]][1], args.export[2:],
               args.export[1])
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
    gitdirs = {k: mirror_of(args.mirrors, k) for k in PINS}
    with tempfile.TemporaryDirectory() as tmp:
        trees = {}
        for key, gitdir in gitdirs.items():
            if gitdir is None:
                continue
            trees[key] = os.path.join(tmp, key)
            os.mkdir(trees[key])
        pipe_tree = trees.get('kernelci-pipeline')
        core_tree = trees.get('kernelci-core')
        if pipe_tree:
            export(gitdirs['kernelci-pipeline'], PINS['kernelci-pipeline'][1],
                   ['config'], pipe_tree)
        if core_tree:
            # Twice: one copy stays pristine, for check_unchanged().
            for dst in (core_tree, core_tree + '.pristine'):
                os.makedirs(dst, exist_ok=True)
                export(gitdirs['kernelci-core'], PINS['kernelci-core'][1],
                       ['config/runtime'], dst)
        if trees.get('tuxlava'):
            export(gitdirs['tuxlava'], PINS['tuxlava'][1], ['tuxlava'],
                   trees['tuxlava'])
        for patch, key in PATCHES.items():
            if key not in trees:
                chk.skip(f'{patch} applies to {PINS[key][0]}',
                         f'no mirror of {PINS[key][0]} at {PINS[key][1][:12]}')
                continue
            if not apply(chk, patch, trees[key], key):
                trees.pop(key)
        if pipe_tree in trees.values() and core_tree in trees.values():
            pipe = check_pipeline(chk, pipe_tree, core_tree,
                                  gitdirs['test-definitions'])
            if pipe:
                check_render(chk, pipe)
                check_unchanged(chk, pipe, os.path.join(
                    core_tree + '.pristine', 'config', 'runtime'))
        else:
            chk.skip('KernelCI job rendered and validated',
                     'no patched kernelci-pipeline or no kernelci-core mirror')
        if 'tuxlava' in trees:
            check_tuxlava(chk, trees['tuxlava'])
        else:
            chk.skip(f'tuxlava {TUXLAVA_TEST}', 'no patched tuxlava')
    return 1 if chk.bad else 0


if __name__ == '__main__':
    sys.exit(main())
