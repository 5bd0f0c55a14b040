# SPDX-License-Identifier: GPL-2.0
"""python3 -m perf_aux VERB [ARG...]: the one entry point of the Makefile."""

import argparse
import importlib
import locale
import os
import signal
import sys
from typing import List, Optional

from . import lib

# VERB: ('[MODULE][:FUNCTION]' (main() of perf_aux.MODULE by default), what
# it does, for --help).  check-full is check --full.
VERBS = {
    'run': ('.run', 'make run: build, boot, test one KERNEL on a TARGET'),
    'check': ('.check', 'make check: the quick tier [STAGE...]'),
    'check-full': ('.check', 'make check-full: the whole matrix [STAGE...]'),
    'series': ('.series', 'make series: the suite as a patch series'),
    'fixes': ('.series:fixes_main', "make fixes: the series' fixes, patches of their own"),
    'evidence': ('.run:evidence_main',
                 'make evidence: a run beside the stock run'),
    'repeat': ('.run:repeat_main', 'make repeat: the flake hunt [ROUNDS]'),
    'soak': ('.run:soak_main',
             'make soak: soak_test alone for DURATION seconds'),
    'results': ('perf_aux_results.cli:results_main',
                'KTAP from console logs, summaries, reports, expected'),
    'deps': ('.deps', 'installs what TARGET, lava, base-BASE... need'),
    'kernel-tree': ('.tree', 'prepares the kernel tree NAME'),
    'kunit': ('.kunit', 'the kernel build and the KUnit boot'),
    'kselftest': ('.kselftest', 'the kselftest boot'),
    'default-base': (':default_base', 'prints the default BASE'),
}

def default_base(argv: List[str]) -> int:
    print(lib.default_base())
    return 0

def main(argv: Optional[List[str]] = None) -> int:
    """The verb's main() with the rest of ARGV, options included."""
    args = sys.argv[1:] if argv is None else argv
    p = argparse.ArgumentParser(
        prog='python3 -m perf_aux', description="The pipeline's commands.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog='verbs:\n' + ''.join(f'  {verb:14}{what}\n'
                                      for verb, (_, what) in VERBS.items()))
    p.add_argument('verb', choices=VERBS, metavar='VERB',
                   help='one of the verbs below, then its own arguments')
    verb = p.parse_args(args[:1]).verb
    rest = ['--full', *args[1:]] if verb == 'check-full' else args[1:]
    module, _, function = VERBS[verb][0].partition(':')
    where = importlib.import_module(module or __name__, __package__)
    sys.stdout.reconfigure(line_buffering=True, errors='surrogateescape')
    try:  # Sort as sort and ls do: the environment's collation, else bytes.
        locale.setlocale(locale.LC_COLLATE, '')
    except locale.Error:
        locale.setlocale(locale.LC_COLLATE, 'C')
    os.environ.update(lib.exports())
    signal.signal(signal.SIGTERM, lib.stopped)
    try:
        return getattr(where, function or 'main')(rest)
    except lib.Error as e:
        return e.status

if __name__ == '__main__':
    sys.exit(main())
