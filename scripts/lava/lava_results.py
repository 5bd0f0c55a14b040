#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Host side of the perf_aux LAVA jobs (scripts/lava/check.sh).

  lava_results.py validate FILE...     validate jobs and test definitions with
                                       lava_common.schemas, a line each
  lava_results.py reject               each reject case (a job or test
                                       definition the schema must refuse)
  lava_results.py device JOB TEMPLATES OUT
                                       render the device dictionary of a job
                                       (qemu; fvp, n1sdp, ava stand-ins) from
                                       the packaged device types
  lava_results.py compare RESULTS_DIR LAVA_LOG [--group G]...
                                       per group, the (name, result) pairs
                                       LAVA recorded against those of the
                                       direct run; a line each
  lava_results.py expected RESULTS_DIR  the direct run's cases as LAVA names

Every verdict line is "ok - ..." or "not ok - ..."; the exit status is 1
when any is "not ok".  Uses Debian's /usr/bin/python3 (lava_common needs
python3-voluptuous), and scripts/results.py for KTAP (the kernel tree's
kunit_parser).
"""

import argparse
import copy
import glob
import os
import re
import sys
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..'))
import results  # noqa: E402  (scripts/results.py, after the path is set)

kunit_parser = results.kunit_parser
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, '..', '..'))

# As lava-jobs/perf-aux-ktap-to-lava.sh names them.
NAME_CHARS = re.compile(r'[^-_A-Za-z0-9.]')
# The LAVA server keeps at most this much of a test case name.
MAX_NAME = 100
Cases = Dict[str, str]


# ---------------------------------------------------------------------------
# The direct run's results, named as the converter on the device names them.

def _result(test: Any) -> str:
    status = kunit_parser.TestStatus
    if test.status == status.SUCCESS:
        return 'pass'
    if test.status == status.SKIPPED:
        return 'skip'
    return 'fail'


def expected_cases(group: str, ktap: str) -> Cases:
    """{LAVA name: result} of one KTAP document, group verdict included.

    The same rules as the converter, on kunit_parser's tree: every test
    below the group, named by its path; a document whose only top-level
    test is the group stands for the group; kunit_parser's stand-ins for
    missing subtests (no name) are not cases but fail their parent.
    """
    root = kunit_parser.parse_run_tests(ktap.splitlines())
    tops = root.subtests
    cases: Cases = {}
    seen: Dict[str, int] = {}

    def add(name: str, result: str) -> None:
        name = f'perf_aux.{group}.' + NAME_CHARS.sub('_', name)
        seen[name] = seen.get(name, 0) + 1
        if seen[name] > 1:
            name = f'{name}_dup{seen[name]}'
        cases[name] = result

    def walk(test: Any, prefix: str) -> None:
        for sub in test.subtests:
            if not sub.name:
                continue
            name = prefix + sub.name.strip()
            walk(sub, name + '.')
            add(name, _result(sub))

    if len(tops) == 1 and tops[0].name.strip() == group:
        walk(tops[0], '')
        suite = _result(tops[0])
    else:
        walk(root, '')
        results_ = [_result(t) if t.name else 'fail' for t in tops]
        if not results_ or 'fail' in results_ or (
                root.expected_count is not None and
                len(tops) < root.expected_count):
            suite = 'fail'
        elif all(r == 'skip' for r in results_):
            suite = 'skip'
        else:
            suite = 'pass'
    cases[f'perf_aux.{group}.suite'] = suite
    return cases


def direct_groups(results_dir: str) -> Dict[str, Cases]:
    """The direct run's groups: KUnit suites and kselftest binaries."""
    groups: Dict[str, Cases] = {}
    for path in sorted(glob.glob(os.path.join(results_dir, '*.ktap'))):
        stem = os.path.basename(path)[:-len('.ktap')]
        group = stem[len('perf_aux.'):] if stem.startswith('perf_aux.') \
            else stem
        with open(path) as f:
            groups[group] = expected_cases(group, f.read())
    if any(g.startswith('perf_aux.') for g in
           (os.path.basename(p) for p in
            glob.glob(os.path.join(results_dir, '*.ktap')))):
        groups['kselftest'] = {'perf_aux.kselftest.suite': 'pass'}
    return groups


# ---------------------------------------------------------------------------
# What LAVA recorded.

def lava_records(log_lines: Iterable[str]) -> List[Dict[str, Any]]:
    """The "results" records of a lava-run log (its stderr)."""
    loader = getattr(yaml, 'CSafeLoader', yaml.SafeLoader)
    records = []
    for line in log_lines:
        if 'lvl: results' not in line and '"lvl": "results"' not in line:
            continue
        try:
            entry = yaml.load(line, Loader=loader)
        except yaml.YAMLError:
            continue
        if isinstance(entry, list):
            entry = entry[0]
        if isinstance(entry, dict) and entry.get('lvl') == 'results':
            records.append(entry['msg'])
    return records


def lava_groups(records: List[Dict[str, Any]]) -> Tuple[Dict[str, Cases],
                                                        List[str]]:
    """perf_aux cases LAVA recorded, by group, and naming problems."""
    groups: Dict[str, Cases] = {}
    problems = []
    for r in records:
        name = str(r.get('case', ''))
        if not name.startswith('perf_aux.'):
            continue
        group = name.split('.')[1]
        if name in groups.get(group, {}):
            problems.append(f'{name} recorded twice')
        groups.setdefault(group, {})[name] = r.get('result')
        if r.get('set') != group:
            problems.append(f'{name} in test set {r.get("set")!r}, '
                            f'not {group!r}')
        if len(name) > MAX_NAME:
            problems.append(f'{name} longer than {MAX_NAME} characters')
    return groups, problems


def measured(records: List[Dict[str, Any]]) -> Dict[str, Tuple[float, str]]:
    return {r['case']: (r['measurement'], r.get('units', ''))
            for r in records if 'measurement' in r and
            str(r.get('case', '')).startswith('perf_aux.')}


def diff_lines(want: Cases, got: Cases) -> List[str]:
    lines = []
    for name in sorted(set(want) | set(got)):
        if want.get(name) != got.get(name):
            lines.append(f'  {name}: direct {want.get(name, "-")}, '
                         f'LAVA {got.get(name, "-")}')
    return lines


def counts(cases: Cases) -> str:
    n = {r: sum(1 for v in cases.values() if v == r)
         for r in ('pass', 'fail', 'skip')}
    return f'{len(cases)} cases ({n["pass"]} pass, {n["fail"]} fail, ' \
           f'{n["skip"]} skip)'


def compare(results_dir: str, log_path: str, tag: str,
            only: List[str]) -> List[Tuple[bool, str, List[str]]]:
    """(ok, what, details) for each group, measurements, and the job."""
    want = direct_groups(results_dir)
    with open(log_path, errors='replace') as f:
        records = lava_records(f)
    got, problems = lava_groups(records)
    verdicts = []
    job = [r for r in records if r.get('definition') == 'lava' and
           r.get('case') == 'job']
    job_ok = bool(job) and job[-1].get('result') == 'pass'
    verdicts.append((job_ok, f'{tag}: lava-run job finished correctly',
                     [] if job_ok else [f'  {job[-1] if job else "no job result"}']))
    for group in sorted(set(want) | set(got)):
        if only and group not in only:
            continue
        w, g = want.get(group, {}), got.get(group, {})
        diff = diff_lines(w, g)
        fails = [n for n, r in g.items() if r != 'pass' and r != 'skip']
        ok = not diff and not fails and bool(w)
        details = diff[:40] + ([f'  ... {len(diff) - 40} more'] if
                               len(diff) > 40 else [])
        if fails and not diff:
            details += [f'  {n}: fail in both runs' for n in sorted(fails)]
        verdicts.append((ok, f'{tag}: {group}: LAVA {counts(g)} == direct '
                         f'{counts(w)}' if ok else
                         f'{tag}: {group}: LAVA {counts(g)} != direct '
                         f'{counts(w)}', details))
    # Measurements: the cases whose direct run printed translation entries
    # must carry them in LAVA (values differ from boot to boot).
    with_entries = set()
    for path in glob.glob(os.path.join(results_dir, 'perf_aux.*.ktap')):
        group = os.path.basename(path)[len('perf_aux.'):-len('.ktap')]
        with open(path) as f:
            with_entries |= entries_cases(group, f.read())
    meas = measured(records)
    bad_units = sorted(n for n, (_, u) in meas.items() if u != 'entries')
    missing = sorted(with_entries - set(meas))
    extra = sorted(set(meas) - with_entries)
    ok = not missing and not extra and not bad_units
    verdicts.append((ok, f'{tag}: measurements: {len(meas)} cases carry '
                     f'translation entries, direct run {len(with_entries)}',
                     [f'  missing {n}' for n in missing] +
                     [f'  unexpected {n}' for n in extra] +
                     [f'  units of {n}' for n in bad_units]))
    if problems:
        verdicts.append((False, f'{tag}: names and test sets',
                         ['  ' + p for p in problems[:20]]))
    else:
        verdicts.append((True, f'{tag}: names and test sets: one set per '
                         f'group, names at most {MAX_NAME} characters, '
                         'no duplicates', []))
    return verdicts


ENTRIES = re.compile(r'^#.*entries [0-9]+ for [0-9]+ pages')
RESULT = re.compile(r'^(not ok|ok) [0-9]+ (- )?([^#]*?)\s*(#.*)?$')


def entries_cases(group: str, ktap: str) -> set:
    """kselftest cases whose output gave translation entries (flat KTAP:
    the diagnostic comes between the case's RUN line and its result)."""
    names = set()
    pending = False
    for line in ktap.splitlines():
        line = line.strip()
        if ENTRIES.match(line):
            pending = True
            continue
        m = RESULT.match(line)
        if m:
            if pending:
                names.add(f'perf_aux.{group}.' +
                          NAME_CHARS.sub('_', m.group(3)))
            pending = False
    return names


# ---------------------------------------------------------------------------
# Schema validation and the cases it must reject.

def validate_file(path: str) -> None:
    from lava_common.schemas import validate
    from lava_common.schemas.test.testdef import validate as validate_testdef
    with open(path) as f:
        data = yaml.safe_load(f)
    if isinstance(data, dict) and 'metadata' in data and 'run' in data:
        validate_testdef(data)
    else:
        validate(data, strict=True)


def _first_test(job: Dict[str, Any]) -> Dict[str, Any]:
    return next(a['test'] for a in job['actions'] if 'test' in a)


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
     lambda j: _first_test(j).__setitem__('timeout', {'minutes': 600})),
    ('test definition name with a space', JOB,
     lambda j: _first_test(j)['definitions'][0].__setitem__(
         'name', 'perf aux')),
    ('git test definition without path', JOB,
     lambda j: _first_test(j)['definitions'][0].pop('path')),
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


def reject_cases() -> List[Tuple[bool, str, List[str]]]:
    from lava_common.schemas import validate
    from lava_common.schemas.test.testdef import validate as validate_testdef
    verdicts = []
    for what, base, mutate in REJECTS:
        with open(os.path.join(ROOT, base)) as f:
            data = yaml.safe_load(f)
        # The unmutated file must pass, or a reject proves nothing.
        check = validate_testdef if base == TESTDEF else validate
        try:
            check(copy.deepcopy(data))
        except Exception as e:  # noqa: BLE001
            verdicts.append((False, f'rejects {what}: base {base} itself '
                             f'is invalid: {e}', []))
            continue
        mutate(data)
        try:
            check(data)
            verdicts.append((False, f'rejects {what} (accepted)', []))
        except Exception as e:  # noqa: BLE001
            msg = str(e).splitlines()[0][:100]
            verdicts.append((True, f'rejects {what}: {msg}', []))
    return verdicts


# ---------------------------------------------------------------------------
# The device dictionary of a QEMU job, as lava-server renders it.

# The lab's per-device part of each device dictionary.  Only the QEMU one
# is used for a run; the boards' are stand-ins for lava-run --validate
# (which checks that the commands exist, and runs none of them).
DEVICES = {
    'qemu': """{% extends 'qemu.jinja2' %}
{% set mac_addr = '52:54:00:12:34:59' %}
{% set netdevice = 'user' %}
""",
    'fvp': """{% extends 'fvp.jinja2' %}
""",
    'n1sdp': """{% extends 'n1sdp.jinja2' %}
{% set connection_list = ['uart0', 'uart1'] %}
{% set connection_commands = {'uart0': 'telnet localhost 10001',
                              'uart1': 'telnet localhost 10002'} %}
{% set connection_tags = {'uart0': ['primary', 'telnet'],
                          'uart1': ['telnet']} %}
{% set power_on_command = '/bin/true' %}
{% set power_off_command = '/bin/true' %}
{% set hard_reset_command = '/bin/true' %}
{% set flasher_deploy_commands = ['/bin/true'] %}
""",
    'ava': """{% extends 'ava.jinja2' %}
{% set connection_command = 'telnet localhost 10003' %}
{% set power_on_command = '/bin/true' %}
{% set power_off_command = '/bin/true' %}
{% set hard_reset_command = '/bin/true' %}
""",
}


def render_device(job_path: str, templates: str, out: str) -> None:
    import jinja2
    from jinja2.sandbox import SandboxedEnvironment
    from lava_common.schemas.device import validate as validate_device
    with open(job_path) as f:
        job = yaml.safe_load(f)
    kind = job['device_type']
    devices = os.path.join(os.path.dirname(os.path.abspath(out)), 'devices')
    os.makedirs(devices, exist_ok=True)
    with open(os.path.join(devices, f'perf-aux-{kind}01.jinja2'), 'w') as f:
        f.write(DEVICES[kind])
    # As lava-server renders a device dictionary, with the job's context.
    env = SandboxedEnvironment(
        loader=jinja2.FileSystemLoader([devices, templates]),
        trim_blocks=True, autoescape=False)
    text = env.get_template(f'perf-aux-{kind}01.jinja2').render(
        **job.get('context', {}))
    device = yaml.safe_load(text)
    validate_device(device)
    with open(out, 'w') as f:
        f.write(text)


def emit(verdicts: List[Tuple[bool, str, List[str]]]) -> int:
    bad = 0
    for ok, what, details in verdicts:
        print(f'{"ok" if ok else "not ok"} - lava: {what}')
        for line in details:
            print(f'#{line}')
        bad += not ok
    return 1 if bad else 0


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest='command', required=True)
    p = sub.add_parser('validate')
    p.add_argument('files', nargs='+')
    sub.add_parser('reject')
    p = sub.add_parser('device')
    p.add_argument('job')
    p.add_argument('templates')
    p.add_argument('out')
    p = sub.add_parser('compare')
    p.add_argument('results_dir')
    p.add_argument('log')
    p.add_argument('--tag', default='lava-run')
    p.add_argument('--group', action='append', default=[])
    p = sub.add_parser('expected')
    p.add_argument('results_dir')
    args = parser.parse_args(argv)

    if args.command == 'validate':
        verdicts = []
        for path in args.files:
            rel = os.path.relpath(path, ROOT)
            try:
                validate_file(path)
                verdicts.append((True, f'schema accepts {rel}', []))
            except Exception as e:  # noqa: BLE001
                verdicts.append((False, f'schema accepts {rel}',
                                 [f'  {line}' for line in
                                  str(e).splitlines()[:5]]))
        return emit(verdicts)
    if args.command == 'reject':
        return emit(reject_cases())
    if args.command == 'device':
        render_device(args.job, args.templates, args.out)
        return 0
    if args.command == 'compare':
        return emit(compare(args.results_dir, args.log, args.tag, args.group))
    for group, cases in direct_groups(args.results_dir).items():
        for name, result in cases.items():
            print(name, result)
    return 0


if __name__ == '__main__':
    sys.exit(main())
