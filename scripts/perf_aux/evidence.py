# SPDX-License-Identifier: GPL-2.0
"""make evidence (python3 -m perf_aux evidence).

The plain text (72 columns) a series author pastes into a cover letter
or a Tested-by reply: the run of KERNEL (or of the KERNEL_SRC tree)
beside the stock run of the same base, TARGET and VARIANT, from
out/results.  Written to out/evidence-<run>.txt and shown.
"""

import os
from typing import List, Optional

from . import lib
from .shell import tool


def main(argv: Optional[List[str]] = None) -> int:
    del argv
    env = os.environ
    target = env.get('TARGET') or 'arm64-4k'
    variant = env.get('VARIANT') or 'default'
    base = lib.run_base()
    run = lib.result_name(lib.kernel_name(env.get('KERNEL') or 'reference'),
                          base, target, variant)
    stock = lib.result_name('stock', base, target, variant)
    out = f'{lib.out()}/evidence-{run}.txt'
    rc = tool(lib.perf_aux('results', 'evidence', '--out', out,
                             f'{lib.out()}/results/{run}',
                             f'{lib.out()}/results/{stock}'))
    if rc:
        return rc
    return tool(['cat', out])
