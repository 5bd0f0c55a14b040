# SPDX-License-Identifier: GPL-2.0
"""LAVA jobs on the host: lava_common's schema on each job and the broken
variants it must refuse, and the device dictionaries of
scripts/lava/devices/ (the boards' are stand-ins for lava-run --validate)."""

import copy
import os
from typing import Any, Dict, List, Tuple

import yaml

from .ktap import ROOT
from .lava import Check

DEVICES = os.path.join(ROOT, 'scripts', 'lava', 'devices')
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

def validate_checks(paths: List[str]) -> List[Check]:
    """Whether lava_common accepts each job or test definition."""
    checks = []
    for path in paths:
        what = f'schema accepts {os.path.relpath(path, ROOT)}'
        try:
            _validate(_load(path))
            checks.append(Check(True, what, []))
        except Exception as e:  # noqa: BLE001 (the schema's finding)
            checks.append(Check(False, what, [f'  {line}' for line in
                                              str(e).splitlines()[:5]]))
    return checks

def reject_checks() -> List[Check]:
    checks = []
    for what, base, path, value in REJECTS:
        data = _load(os.path.join(ROOT, base))
        try:  # the unmutated file must pass, or a reject proves nothing
            _validate(copy.deepcopy(data))
        except Exception as e:  # noqa: BLE001
            checks.append(Check(False, f'rejects {what}: base {base} itself '
                                f'is invalid: {e}', []))
            continue
        node = data
        for key in path[:-1]:
            node = next(a[key[1:]] for a in node['actions'] if key[1:] in a) \
                if str(key).startswith('@') else node[key]
        if value is DELETE:
            del node[path[-1]]
        else:
            node[path[-1]] = value
        try:
            _validate(data)
            checks.append(Check(False, f'rejects {what} (accepted)', []))
        except Exception as e:  # noqa: BLE001
            msg = str(e).splitlines()[0][:100]
            checks.append(Check(True, f'rejects {what}: {msg}', []))
    return checks

def device_text(job: Dict[str, Any], templates: str) -> str:
    """A job's device dictionary as lava-server renders it:
    perf-aux-<type>01.jinja2 over the packaged device types, the job's
    context."""
    import jinja2
    from jinja2.sandbox import SandboxedEnvironment
    env = SandboxedEnvironment(
        loader=jinja2.FileSystemLoader([DEVICES, templates]),
        trim_blocks=True, autoescape=False)
    return env.get_template(f'perf-aux-{job["device_type"]}01.jinja2').render(
        **job.get('context', {}))

def render_device(job_path: str, templates: str, out: str) -> None:
    """Writes the validated device dictionary of the job at job_path."""
    from lava_common.schemas.device import validate as validate_device
    text = device_text(_load(job_path), templates)
    validate_device(yaml.safe_load(text))
    with open(out, 'w') as f:
        f.write(text)
