# SPDX-License-Identifier: GPL-2.0
"""A tier's check lines ("ok - ...", "not ok - ...", skips) and counts,
and the runs and programs its stages judge."""

import os
import re
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from perf_aux_results import expected

from . import lib, run
from .run import expectation
from .lib import DEVNULL, PIPE, STDOUT
from .shell import stage


class Verdicts:
    """The counts, the failures, the stage times and the results of the
    last run (res) of a tier on its base."""

    def __init__(self, full: bool) -> None:
        self.full = full
        self.tier = 'check-full' if full else 'check'
        self.passed = self.failed = self.skipped = 0
        self.failures: List[str] = []
        # Every check line: [pass|fail|skip, the line].
        self.checks: List[List[str]] = []
        # The selectors as the user gave them.
        self.environ = dict(os.environ)
        self.stage_times: List[str] = []
        self.res = ''
        self.root = lib.ROOT
        self.catalogue = self.environ.get('PERF_AUX_MUTANTS') or \
            f'{self.root}/scripts/mutants'
        self.out = lib.out()
        self.cache = lib.cache()
        self.bases = list(lib.BASES)
        self.targets = list(lib.TARGETS)
        self.default_base = self.bases[0]
        self.base = self.environ.get('BASE') or self.default_base
        # One build serves every boot of it in a check (perf_aux.kunit).
        self.check_id = self.environ.get('PERF_AUX_CHECK_ID', '')
        # Whether the mutant stages run the peers beside the suites.
        self.peers = self.environ.get('PERF_AUX_PEERS', '0') == '1'
        self.peers_default = True

    def verdict(self, rc: int, what: str) -> None:
        self.checks.append(['fail' if rc else 'pass', what])
        if rc == 0:
            self.passed += 1
            print(f'ok - {what}')
        else:
            self.failed += 1
            self.failures.append(what)
            print(f'not ok - {what}')

    def skip(self, line: str) -> None:
        """A check line that says what was not checked, and why."""
        self.skipped += 1
        self.checks.append(['skip', line])
        print(line)

    def expect(self, res: str, suite: str, failure: Optional[bool] = False,
               min_passed: int = 0, min_skipped: int = 0,
               skip_reason: Optional[str] = None,
               allow: Sequence[str] = ()) -> Tuple[bool, str]:
        """SUITE of the run RES as expected, as one check line."""
        ok, line = expectation(res, suite, failure, min_passed, min_skipped,
                               skip_reason, allow)
        self.verdict(0 if ok else 1, f'{name(res)}: {line}')
        return ok, line

    def expected(self, res: str, suites: Sequence[str] = (),
                 file: str = '') -> Tuple[bool, List[str]]:
        """RES case by case against its expected results (FILE)."""
        return expected.check_line(res, file or expected.path_for(res),
                                   set(suites) or None)

    def count_line(self, line: str) -> None:
        """An "ok - ..." / "not ok - ..." line counted; others shown."""
        if line.startswith('ok - ') and '# SKIP' in line[5:]:
            self.skip(line)
        elif line.startswith('ok - '):
            self.verdict(0, line[len('ok - '):])
        elif line.startswith('not ok - '):
            self.verdict(1, line[len('not ok - '):])
        else:
            print(line)

    def line_checks(self, *argv: str,
                    env: Optional[Dict[str, str]] = None) -> int:
        """A command's own check lines, counted; one that fails without a
        failed line of its own is a failed check too."""
        rc, out = self.capture(argv, stderr=True, env=env)
        shown = argv[argv.index('-m') + 1:] if '-m' in argv else argv
        saw_failure = False
        for line in out.split('\n'):
            line = line.strip(' \t')
            self.count_line(line)
            saw_failure |= line.startswith('not ok - ')
        if rc and not saw_failure:
            self.verdict(1, f'{os.path.basename(shown[0])} '
                         f"{shown[1] if len(shown) > 1 else ''} exited {rc} "
                         'with no failed check')
        return 0

    def env(self) -> Dict[str, str]:
        """What the verbs this tier starts are told: its base, its id."""
        return {'BASE': self.base,
                **({'PERF_AUX_CHECK_ID': self.check_id}
                   if self.check_id else {})}

    def call(self, argv: Sequence[str], env: Optional[Dict[str, str]] = None,
             stdout=None, stderr=None, quiet: bool = False) -> int:
        """ARGV's status, its output where ours goes (or STDOUT, STDERR,
        nowhere when QUIET)."""
        if quiet:
            stdout = stderr = DEVNULL
        return lib.run(argv, env={**self.env(), **(env or {})},
                       stdout=stdout, stderr=stderr).returncode

    def capture(self, argv: Sequence[str], stderr: bool = False,
                quiet: bool = False, cwd: Optional[str] = None,
                env: Optional[Dict[str, str]] = None) -> Tuple[int, str]:
        """ARGV's status and output (STDERR: 2>&1; QUIET: 2>/dev/null)."""
        proc = lib.run(argv, cwd=cwd, env={**self.env(), **(env or {})},
                       stdout=PIPE,
                       stderr=STDOUT if stderr else DEVNULL if quiet else None)
        return proc.returncode, proc.stdout.rstrip('\n')

    def results(self, *args: str, stderr: bool = False,
                quiet: bool = False) -> Tuple[int, str]:
        return self.capture(lib.perf_aux('results', *args), stderr=stderr,
                            quiet=quiet)

    def results_shown(self, *args: str) -> int:
        return self.call(lib.perf_aux('results', *args))

    def result_name(self, kernel: str, target: str, variant: str) -> str:
        return lib.result_name(kernel, self.base, target, variant)

    def job(self, kernel: str, target: str, variant: str, *args: str,
            src: str = '', series: str = '') -> lib.Run:
        """make run of a kernel on this base; res its results."""
        r = lib.Run(lib.kernel_name(kernel, series, src), self.base, target,
                    variant, args, src, series)
        try:
            r = lib.make_run(kernel, self.base, target, variant, args, src,
                             series)
            run.job(r, self.check_id)
        except (lib.Error, OSError) as e:
            if not isinstance(e, lib.Error):
                lib.error(str(e))
        self.res = r.results
        return r

    def run_job(self, kernel: str, target: str, variant: str,
                *args: str) -> None:
        """make run; its consoles hold no kernel report (one outside
        every test's window fails too)."""
        r = self.job(kernel, target, variant, *args)
        reports = lib.run_reports(r.name)
        self.verdict(1 if reports else 0, f'{r.name}: {len(reports)} kernel '
                     'reports on its consoles')

    def timed(self, name: str, func, *args) -> int:
        """A stage, its time kept for the table at the end."""
        start = int(time.time())
        rc = stage(name, lambda: func(*args) or 0)
        self.stage_times.append(f'{int(time.time()) - start:6d} s  {name}')
        return rc


def name(path: str) -> str:
    """The run whose results PATH holds."""
    return os.path.basename(path.rstrip('/'))


def say_tail(text: str, n: int) -> None:
    """The last N lines of TEXT."""
    print('\n'.join(text.split('\n')[-n:]))


def grep(pattern: str, path: str) -> List[str]:
    """Group 1 of each line of PATH that PATTERN matches."""
    try:
        text = Path(path).read_text(errors='surrogateescape')
    except OSError:
        return []
    return [m.group(1) for m in map(re.compile(pattern).match,
                                    text.split('\n')) if m]
