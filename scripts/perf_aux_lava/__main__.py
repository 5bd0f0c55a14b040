# SPDX-License-Identifier: GPL-2.0
"""python3 -m perf_aux_lava VERB ARGS...:
  submit [RUN|JOB.yaml]...   make submit (submit.py, docs/lava.md)
  lab start|status|stop      a local LAVA lab (lab.py)
  lab selftest [qemu]        make lab-selftest (selftest.py)
  lab submit RUN|JOB.yaml... submit to the local lab
  check [--schema] [BUILD_DIR [RESULTS_DIR]]  the LAVA checks (checks.py)
Under Debian's python3 (lava_common, python3-yaml, python3-jinja2): any
other re-executes it."""

import os
import sys
from typing import List

from . import common
from .common import PYTHON


def main(argv: List[str]) -> int:
    try:
        if argv[:1] == ['submit']:
            from . import submit
            return submit.main(argv[1:])
        if argv[:2] == ['lab', 'selftest']:
            from . import selftest
            return selftest.main(argv[2:])
        if argv[:2] == ['lab', 'submit'] and argv[2:]:
            from . import lab, submit
            os.environ['LAB'] = lab.URL
            return submit.main(argv[2:])
        if argv[:1] == ['lab']:
            from . import lab
            return lab.main(argv[1:])
        if argv[:1] == ['check']:
            from . import checks
            return checks.main(argv[1:])
        raise common.Fatal('usage: python3 -m perf_aux_lava '
                           'submit|lab|check ARGS... (see --help)')
    except common.Fatal as e:
        common.plib.error(str(e))
        return 2


if __name__ == '__main__':
    if sys.argv[1:2] in (['-h'], ['--help']):
        print(__doc__)
        sys.exit(0)
    if os.path.realpath(sys.executable) != os.path.realpath(PYTHON) and \
            os.path.exists(PYTHON):
        os.environ['PYTHONPATH'] = common.SCRIPTS
        os.execv(PYTHON, [PYTHON, '-m', 'perf_aux_lava', *sys.argv[1:]])
    if hasattr(sys.stdout, 'reconfigure'):
        sys.stdout.reconfigure(line_buffering=True)
    sys.exit(main(sys.argv[1:]))
