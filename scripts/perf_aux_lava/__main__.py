# SPDX-License-Identifier: GPL-2.0
"""python3 -m perf_aux_lava submit|lab|check ARGS..."""

import sys

from . import common
from .common import plib


def main(argv: list) -> int:
    if hasattr(sys.stdout, 'reconfigure'):
        sys.stdout.reconfigure(line_buffering=True)
    command = argv[0] if argv else ''
    try:
        if command == 'submit':
            from . import submit
            return submit.main(argv[1:])
        if command == 'lab':
            from . import lab
            return lab.main(argv[1:])
        if command == 'check':
            from . import checks
            return checks.main(argv[1:])
        raise common.Fatal('usage: python3 -m perf_aux_lava '
                           'submit|lab|check ARGS...')
    except common.Fatal as e:
        plib.error(str(e))
        return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
