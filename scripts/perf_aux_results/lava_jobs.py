# SPDX-License-Identifier: GPL-2.0
"""LAVA jobs on the host: schema checks, the broken variants the schema must
refuse, and device dictionaries (scripts/lava/check.sh).

lava_common (Debian's python3-lava-common, with python3-voluptuous) is
imported only where needed.  The lab's per-device part of each device
dictionary is a template under scripts/lava/devices/: only the QEMU one is
used for a run; the boards' are stand-ins for lava-run --validate.
"""

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


def validate_file(path: str) -> None:
    """Raises what lava_common says is wrong with a job or test definition."""
    job, testdef = _validators()
    data = _load(path)
    if isinstance(data, dict) and 'metadata' in data and 'run' in data:
        testdef(data)
    else:
        job(data, strict=True)


def validate_checks(paths: List[str]) -> List[Check]:
    checks = []
    for path in paths:
        what = f'schema accepts {os.path.relpath(path, ROOT)}'
        try:
            validate_file(path)
            checks.append(Check(True, what, []))
        except Exception as e:  # noqa: BLE001
            checks.append(Check(False, what, [f'  {line}' for line in
                                              str(e).splitlines()[:5]]))
    return checks


def _first(job: Dict[str, Any], kind: str) -> Dict[str, Any]:
    return next(a[kind] for a in job['actions'] if kind in a)


def _set(path: List[Any], value: Any) -> Callable[[Any], None]:
    def apply(data: Any) -> None:
        for key in path[:-1]:
            data = data[key]
        data[path[-1]] = value
    return apply


def _delete(path: List[Any]) -> Callable[[Any], None]:
    def apply(data: Any) -> None:
        for key in path[:-1]:
            data = data[key]
        del data[path[-1]]
    return apply


# Each reject case: (what, base file, mutation).  A mutation that the
# schema accepts is a failed check: the validation would not catch it.
JOB = 'lava-jobs/jobs/qemu-arm64-4k.yaml'
FVP = 'lava-jobs/jobs/fvp-revc-spe-trbe.yaml'
TESTDEF = 'lava-jobs/perf-aux.yaml'
REJECTS: List[Tuple[str, str, Callable[[Any], None]]] = [
    ('job without visibility', JOB, _delete(['visibility'])),
    ('job without job_name', JOB, _delete(['job_name'])),
    ('job without a job timeout', JOB, _delete(['timeouts', 'job'])),
    ('unknown context key (has_spe)', JOB,
     _set(['context', 'has_spe'], True)),
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
     _set(['metadata', 'format'], 'Lava-Test Test Definition 2.0')),
    ('test definition without a name', TESTDEF,
     _delete(['metadata', 'name'])),
    ('test definition run without steps', TESTDEF,
     _set(['run'], {'commands': ['true']})),
    ('test definition with an unknown result in fixupdict', TESTDEF,
     _set(['parse'], {'fixupdict': {'PASS': 'passed'}})),
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
