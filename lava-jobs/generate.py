#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Renders the perf_aux LAVA jobs from lava-jobs/templates/ with a lab's values.

  generate.py [--lab FILE] [--set KEY=VALUE]... [--out DIR] [JOB...]

FILE is a lab file like lava-jobs/lab.example.yaml (the default); --set
overrides one of its values by its dotted path, e.g.
--set jobs.qemu-arm64-4k.kernel=file:///srv/Image.gz.  Each JOB (default:
all of them) is written to DIR/JOB.yaml (default: lava-jobs/jobs/).
Needs python3-jinja2 and python3-yaml.
"""

import argparse
import json
import os
import sys
from typing import Any, Dict, List, Optional

import jinja2
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))

# Job name -> template.  The two QEMU jobs differ only in their values.
JOBS = {
    'qemu-arm64-4k': 'qemu-arm64.yaml.j2',
    'qemu-arm64-16k': 'qemu-arm64.yaml.j2',
    'fvp-revc-spe-trbe': 'fvp-revc.yaml.j2',
    'n1sdp-spe': 'n1sdp.yaml.j2',
    'ava-spe': 'ava.yaml.j2',
}


def quote(value: Any) -> str:
    """A lab's value as a YAML scalar that stays a string (JSON quoting)."""
    return json.dumps(str(value))


def set_value(lab: Dict[str, Any], assignment: str) -> None:
    key, sep, value = assignment.partition('=')
    if not sep or not key:
        raise SystemExit(f'generate.py: --set wants KEY=VALUE, not {assignment!r}')
    *parents, leaf = key.split('.')
    node = lab
    for p in parents:
        node = node.setdefault(p, {})
    node[leaf] = value


def render(lab: Dict[str, Any], name: str) -> str:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(os.path.join(HERE, 'templates')),
        undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    env.filters['q'] = quote
    job = lab.get('jobs', {}).get(name)
    if job is None:
        raise SystemExit(f'generate.py: the lab file has no jobs.{name}')
    text = env.get_template(JOBS[name]).render(
        job=job, testdefs=lab['testdefs'],
        visibility=lab.get('visibility', 'public'))
    yaml.safe_load(text)  # a template error shows here, not in the lab
    return text


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--lab', default=os.path.join(HERE, 'lab.example.yaml'))
    parser.add_argument('--set', action='append', default=[], dest='sets',
                        metavar='KEY=VALUE')
    parser.add_argument('--out', default=os.path.join(HERE, 'jobs'))
    parser.add_argument('jobs', nargs='*', metavar='JOB')
    args = parser.parse_args(argv)
    with open(args.lab) as f:
        lab = yaml.safe_load(f)
    for assignment in args.sets:
        set_value(lab, assignment)
    names = args.jobs or list(JOBS)
    unknown = [n for n in names if n not in JOBS]
    if unknown:
        raise SystemExit(f'generate.py: unknown job {" ".join(unknown)} '
                         f'(one of: {" ".join(JOBS)})')
    os.makedirs(args.out, exist_ok=True)
    for name in names:
        path = os.path.join(args.out, f'{name}.yaml')
        with open(path, 'w') as f:
            f.write(render(lab, name))
        print(path)
    return 0


if __name__ == '__main__':
    sys.exit(main())
