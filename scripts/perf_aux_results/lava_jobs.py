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


def _first(job: Dict[str, Any], kind: str) -> Dict[str, Any]:
    return next(a[kind] for a in job['actions'] if kind in a)


def _edit(path: List[Any], value: Any = None) -> Callable[[Any], None]:
    """Sets the value at path in a job, or without a value deletes it."""
    def apply(data: Any) -> None:
        for key in path[:-1]:
            data = data[key]
        if value is None:
            del data[path[-1]]
        else:
            data[path[-1]] = value
    return apply


# Each reject case: (what, base file, mutation).  A mutation that the
# schema accepts is a failed check: the validation would not catch it.
JOB = 'lava-jobs/jobs/qemu-arm64-4k.yaml'
FVP = 'lava-jobs/jobs/fvp-revc-spe-trbe.yaml'
TESTDEF = 'lava-jobs/perf-aux.yaml'
REJECTS: List[Tuple[str, str, Callable[[Any], None]]] = [
    ('job without visibility', JOB, _edit(['visibility'])),
    ('job without job_name', JOB, _edit(['job_name'])),
    ('job without a job timeout', JOB, _edit(['timeouts', 'job'])),
    ('unknown context key (has_spe)', JOB,
     _edit(['context', 'has_spe'], True)),
    ('action timeout above the job timeout', JOB,
     lambda j: _first(j, 'test').__setitem__('timeout', {'minutes': 600})),
    ('test definition name with a space', JOB,
     lambda j: _first(j, 'test')['definitions'][0].__setitem__(
         'name', 'perf aux')),
    ('git test definition without path', JOB,
     lambda j: _first(j, 'test')['definitions'][0].pop('path')),
    ('qemu boot from nfs media', JOB,
     lambda j: _first(j, 'boot').__setitem__('media', 'nfs')),
    ('deploy image without url', JOB,
     lambda j: _first(j, 'deploy')['images']['kernel'].pop('url')),
    ('fvp boot without docker image', FVP,
     lambda j: _first(j, 'boot').pop('docker')),
    ('fvp boot without console_string', FVP,
     lambda j: _first(j, 'boot').pop('console_string')),
    ('fvp boot arguments not a list', FVP,
     lambda j: _first(j, 'boot').__setitem__('arguments', '-C x=1')),
    ('test definition of another format', TESTDEF,
     _edit(['metadata', 'format'], 'Lava-Test Test Definition 2.0')),
    ('test definition without a name', TESTDEF,
     _edit(['metadata', 'name'])),
    ('test definition run without steps', TESTDEF,
     _edit(['run'], {'commands': ['true']})),
    ('test definition with an unknown result in fixupdict', TESTDEF,
     _edit(['parse'], {'fixupdict': {'PASS': 'passed'}})),
]


def reject_checks() -> List[Check]:
    job, testdef = _validators()
    checks = []
    for what, base, mutate in REJECTS:
        data = _load(os.path.join(ROOT, base))
        # The unmutated file must pass, or a reject proves nothing.
        check = testdef if base == TESTDEF else job
        try:
            check(copy.deepcopy(data))
        except Exception as e:  # noqa: BLE001
            checks.append(Check(False, f'rejects {what}: base {base} itself '
                                f'is invalid: {e}', []))
            continue
        mutate(data)
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
