# SPDX-License-Identifier: GPL-2.0
"""A tier's check lines and counts, and the runs and programs it judges."""

import os
import time
from typing import Dict, List, Optional, Sequence, Tuple

from perf_aux_results.ktap import name

from . import lib, run
from .run import expectation
from .shell import stage

class Verdicts:
    """A tier's check lines, counts and stage times; res: its last run's."""
    root, bases, targets = lib.ROOT, list(lib.BASES), list(lib.TARGETS)
    default_base = bases[0]

    def __init__(self, full: bool) -> None:
        self.full, self.tier = full, 'check-full' if full else 'check'
        self.checks: List[List[str]] = []  # [pass|fail|skip, the line]
        self.stage_times: List[str] = []
        self.environ, self.res = dict(os.environ), ''
        self.out, self.cache = lib.out(), lib.cache()
        self.catalogue = self.environ.get('PERF_AUX_MUTANTS') or f'{self.root}/scripts/mutants'
        self.base = self.environ.get('BASE') or self.default_base
        # One build serves every boot of it in a check (perf_aux.kunit).
        self.check_id = self.environ.get('PERF_AUX_CHECK_ID', '')
        # Whether the mutant stages run the peers beside the suites.
        self.peers = self.environ.get('PERF_AUX_PEERS', '0') == '1'
        self.peers_default = True

    @property
    def counts(self) -> Tuple[int, int, int]:
        """How many check lines passed, failed and skipped."""
        kinds = [kind for kind, _ in self.checks]
        return kinds.count('pass'), kinds.count('fail'), kinds.count('skip')

    def verdict(self, rc: int, what: str) -> None:
        self.checks.append(['fail' if rc else 'pass', what])
        print(f"{'not ' if rc else ''}ok - {what}")

    def skip(self, line: str) -> None:
        self.checks.append(['skip', line])
        print(line)

    def expect(self, res: str, suite: str, failure: Optional[bool] = False,
               **floors) -> Tuple[bool, str]:
        """SUITE of the run RES as expected (run.expectation), one check."""
        ok, line = expectation(res, suite, failure, **floors)
        self.verdict(0 if ok else 1, f'{name(res)}: {line}')
        return ok, line

    def count_line(self, line: str) -> None:
        """An "ok - ..." / "not ok - ..." line counted; others shown."""
        if line.startswith('ok - ') and '# SKIP' in line[5:]:
            self.skip(line)
        elif line.startswith(('ok - ', 'not ok - ')):
            self.verdict(line[0] == 'n', line.split('ok - ', 1)[1])
        else:
            print(line)

    def line_checks(self, *argv: str, env: Optional[Dict[str, str]] = None) -> int:
        """ARGV's check lines counted; its failure is one if it had none."""
        rc, out = self.capture(argv, stderr=True, env=env)
        shown = argv[argv.index('-m') + 1:] if '-m' in argv else argv
        lines = [line.strip(' \t') for line in out.split('\n')]
        for line in lines:
            self.count_line(line)
        if rc and not any(line.startswith('not ok - ') for line in lines):
            self.verdict(1, f'{os.path.basename(shown[0])} '
                         f"{shown[1] if len(shown) > 1 else ''} exited {rc} "
                         'with no failed check')
        return 0

    def env(self) -> Dict[str, str]:
        """What the verbs this tier starts are told: its base, its id."""
        return {'BASE': self.base, 'PERF_AUX_CHECK_ID': self.check_id}

    def call(self, argv: Sequence[str], env: Optional[Dict[str, str]] = None,
             stdout=None, stderr=None, quiet: bool = False) -> int:
        """ARGV's status, its output where ours goes (QUIET: nowhere)."""
        if quiet:
            stdout = stderr = lib.DEVNULL
        return lib.status(argv, env={**self.env(), **(env or {})}, stdout=stdout, stderr=stderr)

    def capture(self, argv: Sequence[str], stderr: bool = False,
                cwd: Optional[str] = None,
                env: Optional[Dict[str, str]] = None) -> Tuple[int, str]:
        """ARGV's status and output (STDERR: 2>&1)."""
        proc = lib.run(argv, cwd=cwd, env={**self.env(), **(env or {})},
                       stdout=lib.PIPE, stderr=lib.STDOUT if stderr else None)
        return proc.returncode, proc.stdout.rstrip('\n')

    def results_shown(self, *args: str) -> int:
        return self.call(lib.perf_aux('results', *args))

    def result_name(self, kernel: str, target: str, variant: str) -> str:
        return lib.result_name(kernel, self.base, target, variant)

    def job(self, kernel: str, target: str, variant: str, *args: str,
            src: str = '', series: str = '') -> lib.Run:
        """make run of a kernel on this base; res its results."""
        r = lib.env_run({}, kernel=kernel, base=self.base, target=target,
                        variant=variant, kargs=args, src=src, series=series)
        try:
            run.job(r, self.check_id)
        except lib.Error:
            pass
        except OSError as e:
            lib.error(str(e))
        self.res = r.results
        return r

    def run_job(self, kernel: str, target: str, variant: str, *args: str) -> None:
        """make run; no kernel report on its consoles, in a test or not."""
        r = self.job(kernel, target, variant, *args)
        reports = lib.run_reports(r.name)
        self.verdict(1 if reports else 0, f'{r.name}: {len(reports)} kernel '
                     'reports on its consoles')

    def timed(self, title: str, func, *args) -> int:
        """A stage, its time kept for the table at the end."""
        start = int(time.time())
        rc = stage(title, lambda: func(*args) or 0)
        self.stage_times.append(f'{int(time.time()) - start:6d} s  {title}')
        return rc

def say_tail(text: str, n: int) -> None:
    print('\n'.join(text.split('\n')[-n:]))
