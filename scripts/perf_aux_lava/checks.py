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
from typing import Any, Dict, List, NamedTuple, Set, Tuple

import yaml

from . import DIRECT_ONLY, ROOT, Error, generate, guestfs_env, kernel_missing
from . import plib, read, stage_build, testdefs
from .submit import log_entries
from perf_aux_results import ktap
from perf_aux_results.testdefs import counts

# The board jobs lava-run --validates on stand-in files for their URLs.
VALIDATE = {
    'fvp-revc-spe-trbe': ('bl1', 'fip', 'kernel', 'dtb', 'ramdisk'),
    'n1sdp-spe': ('firmware', 'kernel', 'ramdisk'),
    'ava-spe': ('kselftest_url',),
}
TEMPLATES = os.path.join(plib.cache(), 'lava', 'lava-server', 'usr', 'share',
                         'lava-server', 'device-types')
DEVICES = os.path.join(ROOT, 'scripts', 'lava', 'devices')
CONVERTER = os.path.join(ROOT, 'lava-jobs', 'perf-aux-ktap-to-lava.sh')
# The LAVA server keeps at most this much of a test case name.
MAX_NAME = 100
JOB = 'lava-jobs/jobs/qemu-arm64-4k.yaml'
FVP = 'lava-jobs/jobs/fvp-revc-spe-trbe.yaml'
TESTDEF = 'lava-jobs/perf-aux.yaml'
DELETE = object()
# What, base file, the path it changes ("@kind": the job's first action of
# that kind), the value: a change the schema accepts fails the check.
REJECTS: List[Tuple[str, str, List[Any], Any]] = [
    ('job without visibility', JOB, ['visibility'], DELETE),
    ('job without job_name', JOB, ['job_name'], DELETE),
    ('job without a job timeout', JOB, ['timeouts', 'job'], DELETE),
    ('unknown context key (has_spe)', JOB, ['context', 'has_spe'], True),
    ('action timeout above the job timeout', JOB, ['@test', 'timeout'],
     {'minutes': 600}),
    ('test definition name with a space', JOB,
     ['@test', 'definitions', 0, 'name'], 'perf aux'),
    ('git test definition without path', JOB,
     ['@test', 'definitions', 0, 'path'], DELETE),
    ('qemu boot from nfs media', JOB, ['@boot', 'media'], 'nfs'),
    ('deploy image without url', JOB,
     ['@deploy', 'images', 'kernel', 'url'], DELETE),
    ('fvp boot without docker image', FVP, ['@boot', 'docker'], DELETE),
    ('fvp boot without console_string', FVP, ['@boot', 'console_string'],
     DELETE),
    ('fvp boot arguments not a list', FVP, ['@boot', 'arguments'], '-C x=1'),
    ('test definition of another format', TESTDEF, ['metadata', 'format'],
     'Lava-Test Test Definition 2.0'),
    ('test definition without a name', TESTDEF, ['metadata', 'name'], DELETE),
    ('test definition run without steps', TESTDEF, ['run'],
     {'commands': ['true']}),
    ('test definition with an unknown result in fixupdict', TESTDEF,
     ['parse'], {'fixupdict': {'PASS': 'passed'}}),
]

# The checks not ok.
BAD: List[str] = []

class Check(NamedTuple):
    ok: bool
    what: str
    details: List[str]

def verdict(ok: bool, what: str, details: List[str] = ()) -> None:
    print(f'{"ok" if ok else "not ok"} - lava: {what}', flush=True)
    print(''.join(f'# {line}\n' for line in details), end='', flush=True)
    if not ok:
        BAD.append(what)

def converted(results_dir: str) -> Dict[str, List[List[str]]]:
    """The converter's [name, result(, measurement)] of each direct group."""
    groups = {}
    for suite, path in ktap.suite_files(results_dir):
        group = suite.removeprefix('perf_aux.')
        # Outside LAVA (no lava-test-case on PATH) it prints its cases.
        out = plib.text(['sh', CONVERTER, 'ktap', group, path], check=True,
                        env={'PATH': os.defpath})
        groups[group] = [line.split() for line in out.splitlines()]
        if group != suite:  # a kselftest binary: the kselftests ran
            groups['kselftest'] = [['perf_aux.kselftest.suite', 'pass']]
    return groups

def group_check(want: Dict[str, str], got: Dict[str, str], what: str,
                memory: Set[str]) -> Check:
    """LAVA's cases of one group against the direct run's; a case one run
    passed and the other skipped for want of MEMORY is told, not failed."""
    diff, told = [], []
    for n in sorted(n for n in set(want) | set(got) if want.get(n) != got.get(n)):
        (told if {want.get(n), got.get(n)} == {'pass', 'skip'} and any(
            n.endswith(f'.{m}') for m in memory) else diff).append(
                f'{n}: direct {want.get(n, "-")}, LAVA {got.get(n, "-")}')
    fails = [n for n, r in got.items() if r not in ('pass', 'skip')]
    ok = not diff and not fails and bool(want)
    details = diff[:40] + [f'... {len(diff) - 40} more'] * (len(diff) > 40) + [
        f'{t} (a skip for want of memory)' for t in told]
    if fails and not diff:
        details += [f'{n}: fail in both runs' for n in sorted(fails)]
    rel = '!=' if not ok else 'agrees, memory skips aside, with' if told else '=='
    return Check(ok, f'{what}: LAVA {counts(got, "cases")} {rel} direct {counts(want, "cases")}',
                 details)

def compare(results_dir: str, log_path: str, tag: str) -> List[Check]:
    """lava-run's log against the direct run: the job, each group, the
    measurements, and the names."""
    converter = converted(results_dir)
    want = {g: dict(c[:2] for c in found) for g, found in converter.items()}
    with open(log_path, errors='replace') as f:
        entries = list(log_entries(f))
    records = [e['msg'] for e in entries
               if e.get('lvl') == 'results' and isinstance(e['msg'], dict)]
    # The cases either boot skipped for want of memory, by their KTAP names.
    lines = [str(e['msg']) for e in entries if e.get('lvl') == 'target']
    lines += '\n'.join(ktap.read_suites(results_dir).values()).splitlines()
    memory = ktap.memory_skips(lines)
    got: Dict[str, Dict[str, str]] = {}
    problems = []
    for r in records:
        name = str(r.get('case', ''))
        if not name.startswith('perf_aux.'):
            continue
        group = name.split('.')[1]
        if name in got.get(group, {}):
            problems.append(f'{name} recorded twice')
        got.setdefault(group, {})[name] = r.get('result')
        if r.get('set') != group:
            problems.append(f'{name} in test set {r.get("set")!r}, not {group!r}')
        if len(name) > MAX_NAME:
            problems.append(f'{name} longer than {MAX_NAME} characters')
    job = [r for r in records if r.get('definition') == 'lava' and r.get('case') == 'job']
    ok = bool(job) and job[-1].get('result') == 'pass'
    checks = [Check(ok, f'{tag}: lava-run job finished correctly', [] if ok
                    else [f'{job[-1] if job else "no job result"}'])]
    checks += [group_check(want.get(g, {}), got.get(g, {}), f'{tag}: {g}',
                           memory) for g in sorted(set(want) | set(got))]
    # The cases that print translation entries carry them (values differ
    # from boot to boot).
    measured = {c[0] for found in converter.values() for c in found if len(c) > 2}
    units = {r['case']: r.get('units', '') for r in records
             if 'measurement' in r and
             str(r.get('case', '')).startswith('perf_aux.')}
    wrong = [f'missing {n}' for n in sorted(measured - set(units))] + \
        [f'unexpected {n}' for n in sorted(set(units) - measured)] + \
        [f'units of {n}' for n, u in sorted(units.items()) if u != 'entries']
    checks.append(Check(not wrong, f'{tag}: measurements: {len(units)} cases '
                        f'carry translation entries, direct run '
                        f'{len(measured)}', wrong))
    return checks + [Check(not problems, f'{tag}: names and test sets' + (
        '' if problems else f': one set per group, names at most {MAX_NAME} '
        'characters, no duplicates'), problems[:20])]

def _load(path: str) -> Any:
    with open(path) as f:
        return yaml.safe_load(f)

def _validate(data: Any) -> None:
    """lava_common's validation of a job, or of a test definition."""
    from lava_common.schemas import validate
    from lava_common.schemas.test.testdef import validate as validate_testdef
    if isinstance(data, dict) and 'metadata' in data and 'run' in data:
        validate_testdef(data)
    else:
        validate(data, strict=True)

def schema() -> None:
    """lava_common accepts each job and perf-aux.yaml, rejects REJECTS."""
    for path in sorted(glob.glob(f'{ROOT}/lava-jobs/jobs/*.yaml')) + [
            f'{ROOT}/lava-jobs/perf-aux.yaml']:
        try:
            _validate(_load(path))
            verdict(True, f'schema accepts {os.path.relpath(path, ROOT)}')
        except Exception as e:  # noqa: BLE001 (the schema's finding)
            verdict(False, f'schema accepts {os.path.relpath(path, ROOT)}', str(e).splitlines()[:5])
    for what, base, path, value in REJECTS:
        node = data = _load(os.path.join(ROOT, base))
        for key in path[:-1]:
            node = next(a[key[1:]] for a in node['actions'] if key[1:] in a) \
                if str(key).startswith('@') else node[key]
        if value is DELETE:
            del node[path[-1]]
        else:
            node[path[-1]] = value
        try:
            _validate(data)
            verdict(False, f'rejects {what} (accepted)')
        except Exception as e:  # noqa: BLE001
            verdict(True, f'rejects {what}: {str(e).splitlines()[0][:100]}')

def device_text(job: Dict[str, Any], templates: str) -> str:
    """perf-aux-<type>01.jinja2 over templates in the job's context."""
    import jinja2
    from jinja2.sandbox import SandboxedEnvironment
    env = SandboxedEnvironment(
        loader=jinja2.FileSystemLoader([DEVICES, templates]),
        trim_blocks=True, autoescape=False)
    return env.get_template(f'perf-aux-{job["device_type"]}01.jinja2').render(
        **job.get('context', {}))

def job(d: str, name: str, sets: List[str]) -> bool:
    """d/name.yaml and its validated device dictionary d/name.device.yaml."""
    from lava_common.schemas.device import validate as validate_device
    if generate(d, name, sets):
        return False
    try:
        text = device_text(_load(f'{d}/{name}.yaml'), TEMPLATES)
        validate_device(yaml.safe_load(text))
        with open(f'{d}/{name}.device.yaml', 'w') as f:
            f.write(text)
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
        kind = re.findall(r'(?m)^device_type: "(.*)"$', read(os.path.join(d, f'{name}.yaml')))
        verdict(ok, f'lava-run --validate accepts {name} on a '
                f'{"".join(kind[:1])} device', [] if ok else [
                    line for line in read(log).splitlines()
                    if re.search(r'"lvl": "(error|results)"', line)][-3:])
        shutil.rmtree(f'/var/lib/lava/dispatcher/tmp/validate-{name}', ignore_errors=True)

def fvp_dt(build: str) -> None:
    """perf-aux-trbe.dtso over fvp-base-revc.dts: ETE per CPU, TRBE, SPE."""
    tree = os.path.dirname(os.path.abspath(build))
    dtc, dts = f'{build}/scripts/dtc', f'{tree}/arch/arm64/boot/dts'
    with tempfile.TemporaryDirectory() as t:
        try:
            for argv in (
                    ['cpp', '-nostdinc', '-I', f'{tree}/include', '-I', dts,
                     '-I', f'{tree}/scripts/dtc/include-prefixes', '-undef',
                     '-D__DTS__', '-x', 'assembler-with-cpp',
                     f'{dts}/arm/fvp-base-revc.dts', '-o', f'{t}/base.dts'],
                    [f'{dtc}/dtc', '-@', '-q', '-I', 'dts', '-O', 'dtb', '-o',
                     f'{t}/base.dtb', f'{t}/base.dts'],
                    [f'{dtc}/dtc', '-@', '-q', '-I', 'dts', '-O', 'dtb', '-o',
                     f'{t}/trbe.dtbo',
                     f'{ROOT}/lava-jobs/fvp/perf-aux-trbe.dtso'],
                    [f'{dtc}/fdtoverlay', '-i', f'{t}/base.dtb', '-o',
                     f'{t}/out.dtb', f'{t}/trbe.dtbo'],
                    [f'{dtc}/dtc', '-q', '-I', 'dtb', '-O', 'dts', '-o',
                     f'{t}/out.dts', f'{t}/out.dtb']):
                plib.run(argv, stdout=plib.DEVNULL, check=True)
        except (OSError, Error) as e:
            print(f'# {e}', flush=True)
        out = read(f'{t}/out.dts')
    cpus = len(re.findall(r'(?m)^\t\t([a-z0-9_]+: )?cpu@', out))
    got = ', '.join(f'{out.count(chr(34) + c + chr(34))} {n}' for c, n in (
        ('arm,embedded-trace-extension', 'ETE'),
        ('arm,trace-buffer-extension', 'TRBE'),
        ('arm,statistical-profiling-extension-v1', 'SPE')))
    verdict(bool(out) and got == f'{cpus} ETE, 1 TRBE, 1 SPE',
            'fvp-base-revc.dts + lava-jobs/fvp/perf-aux-trbe.dtso: '
            f'{got if out else "no tree"} for {cpus} CPUs')

def lava_run(work: str, pages: str, build: str, results: str) -> None:
    """The QEMU job through lava-run, its results against the direct run's."""
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
    for c in compare(os.path.join(d, 'direct'), os.path.join(d, 'lava.log'),
                     tag):
        verdict(*c)

def main(args: List[str]) -> int:
    if args not in ([], ['--schema']):
        raise Error('usage: python3 -m perf_aux_lava check [--schema]')
    base = os.environ.get('BASE') or plib.default_base()
    trees = os.path.join(plib.cache(), 'trees', f'{base}-reference')
    work = os.path.join(plib.out(), 'lava')
    os.makedirs(work, exist_ok=True)
    if plib.status(plib.perf_aux('deps', 'lava'), log=f'{work}/deps.log'):
        verdict(False, f'perf_aux deps lava (see {work}/deps.log)')
    schema()
    validate_jobs(work)
    fvp_dt(os.path.join(trees, '.build-arm64-4k'))
    for pages in ('4k', '16k') if not args else ():
        lava_run(work, pages, os.path.join(trees, f'.build-arm64-{pages}'),
                 os.path.join(plib.out(), 'results',
                              f'reference-{base}-arm64-{pages}'))
    return 1 if BAD else 0
