# SPDX-License-Identifier: GPL-2.0
"""python3 -m perf_aux_lava VERB ARGS...:
  submit [RUN|JOB.yaml]...   make submit (docs/lava.md)
  lab start|stop             a local LAVA lab
  lab selftest [qemu]        make lab-selftest
  check [--schema]           the LAVA checks
Under Debian's python3 (lava_common, python3-yaml, python3-jinja2): any
other re-executes it."""

import importlib
import os
import sys
from typing import List

from . import PYTHON, SCRIPTS, Error, plib

def main(argv: List[str]) -> int:
    verbs = {'submit': 'submit', 'lab': 'lab', 'check': 'checks'}
    try:
        if argv[:1] and argv[0] in verbs:
            return importlib.import_module(f'perf_aux_lava.{verbs[argv[0]]}'
                                           ).main(argv[1:])
        raise Error('usage: python3 -m perf_aux_lava submit|lab|check ARGS... '
                    '(see --help)')
    except Error as e:
        plib.error(str(e))
        return 2

if __name__ == '__main__':
    if sys.argv[1:2] in (['-h'], ['--help']):
        print(__doc__)
        sys.exit(0)
    if os.path.realpath(sys.executable) != os.path.realpath(PYTHON) and \
            os.path.exists(PYTHON):
        os.environ['PYTHONPATH'] = SCRIPTS
        os.execv(PYTHON, [PYTHON, '-m', 'perf_aux_lava', *sys.argv[1:]])
    sys.stdout.reconfigure(line_buffering=True, errors='surrogateescape')
    sys.exit(main(sys.argv[1:]))
