# SPDX-License-Identifier: GPL-2.0
"""make evidence: the run of KERNEL (or of KERNEL_SRC) beside the stock
run of the same base, target and variant, as the plain text a series
author pastes into a cover letter: out/evidence-<run>.txt, shown."""

from pathlib import Path
from typing import List

from . import lib


def main(argv: List[str]) -> int:
    del argv
    r = lib.env_run()
    stock = lib.result_name('stock', r.base, r.target, r.variant)
    out = f'{lib.out()}/evidence-{r.name}.txt'
    rc = lib.status(lib.perf_aux('results', 'evidence', '--out', out,
                                 r.results, f'{lib.out()}/results/{stock}'))
    if rc == 0:
        lib.show(Path(out).read_bytes())
    return rc
