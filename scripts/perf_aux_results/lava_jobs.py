# SPDX-License-Identifier: GPL-2.0
"""LAVA jobs on the host: schema checks (lava_common, imported where
needed), the broken variants the schema must refuse, and the device
dictionaries of scripts/lava/devices/ (the boards' are stand-ins for
lava-run --validate)."""

import copy
import os
from typing import Any, Callable, Dict, List, Tuple

import yaml

from .lava import Check
from .runs import ROOT

DEVICES = os.path.join(ROOT, 'scripts', 'lava', 'devices')


def _validators() -> Tuple[Callable[..., Any], Callable[..., Any]]:
    """lava_common's (job validator, test definition validator)."""
    from lava_common.schemas import validate
    from lava_common.schemas.test.testdef import validate as validate_testdef
    return validate, validate_testdef


def _load(path: str) -> Any:
    with open(path) as f:
        return yaml.safe_load(f)


def validate_checks(paths: List[str]) -> List[Check]:
    """Whether lava_common accepts each job or test definition."""
    checks = []
    for path in paths:
        what = f'schema accepts {os.path.relpath(path, ROOT)}'
        try:
            job, testdef = _validators()
            data = _load(path)
            if isinstance(data, dict) and 'metadata' in data and 'run' in data:
                testdef(data)
            else:
                job(data, strict=True)
            checks.append(Check(True, what, []))
        except Exception as e:  # noqa: BLE001
            checks.append(Check(False, what, [f'  {line}' for line in
                                              str(e).splitlines()[:5]]))
    return checks


def _edit(data: Any, path: List[Any], value: Any) -> None:
    """Sets the value at path in a job ("@kind": its first action of that
    kind), or deletes it (DELETE)."""
    for key in path[:-1]:
        data = next(a[key[1:]] for a in data['actions'] if key[1:] in a) \
            if str(key).startswith('@') else data[key]
    if value is DELETE:
        del data[path[-1]]
    else:
        data[path[-1]] = value


# Each reject case: what, base file, the path it changes, the value.  A
# change the schema accepts is a failed check: validation would miss it.
JOB = 'lava-jobs/jobs/qemu-arm64-4k.yaml'
FVP = 'lava-jobs/jobs/fvp-revc-spe-trbe.yaml'
TESTDEF = 'lava-jobs/perf-aux.yaml'
DELETE = object()
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


def reject_checks() -> List[Check]:
    job, testdef = _validators()
    checks = []
    for what, base, path, value in REJECTS:
        data = _load(os.path.join(ROOT, base))
        # The unmutated file must pass, or a reject proves nothing.
        check = testdef if base == TESTDEF else job
        try:
            check(copy.deepcopy(data))
        except Exception as e:  # noqa: BLE001
            checks.append(Check(False, f'rejects {what}: base {base} itself '
                                f'is invalid: {e}', []))
            continue
        _edit(data, path, value)
        try:
            check(data)
            checks.append(Check(False, f'rejects {what} (accepted)', []))
        except Exception as e:  # noqa: BLE001
            msg = str(e).splitlines()[0][:100]
            checks.append(Check(True, f'rejects {what}: {msg}', []))
    return checks


def device_text(job: Dict[str, Any], templates: str) -> str:
    """The device dictionary of a job's device type, as lava-server renders
    it: scripts/lava/devices/perf-aux-<type>01.jinja2 over the packaged
    device-type templates, with the job's context."""
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
