# SPDX-License-Identifier: GPL-2.0
"""Which synthetic PMU mutants the stage engine runs on which base.

A mutant of lib/test_aux_pmu.c, the project's own file and the same on
every base, proves on one base what it proves on all: it runs on the
default base only.  A mutant in the kernel's code (the perf leak restored
in kernel/events) runs on every base.  perf_aux.mutants' runner is
replaced by one that keeps the names it was given.
"""

import contextlib
import io
import os
import sys
import tempfile
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.dirname(HERE)
CATALOGUE = os.path.join(SCRIPTS, 'mutants', 'test_aux_pmu')
sys.path.insert(0, SCRIPTS)
from perf_aux import check, mutants  # noqa: E402

def catalogue() -> list:
    return sorted(n[:-len('.patch')] for n in os.listdir(CATALOGUE)
                  if n.endswith('.patch'))

def in_kernel_code(name: str) -> bool:
    """Whether the mutant changes a file the project does not ship."""
    with open(os.path.join(CATALOGUE, name + '.patch')) as f:
        paths = [line[6:].split('\t')[0].strip() for line in f
                 if line.startswith('+++ b/')]
    root = os.path.dirname(SCRIPTS)
    return any(not os.path.isfile(os.path.join(root, p)) for p in paths)

class ModuleMutantsTest(unittest.TestCase):

    def selected(self, base: str, *names: str):
        """The names each_mutant was given, None if it was not called."""
        runs = []
        c = check.Check(False)
        c.base = base
        with mock.patch.object(mutants, 'each_mutant',
                                  lambda c, d, w, f, n: runs.append(n)), \
                contextlib.redirect_stdout(io.StringIO()):
            mutants.run_module_mutants(c, CATALOGUE, list(names))
        return sorted(runs[0]) if runs else None

    def test_the_catalogue_has_both_kinds(self) -> None:
        kinds = {in_kernel_code(n) for n in catalogue()}
        self.assertEqual({True, False}, kinds)

    def test_default_base_runs_every_mutant(self) -> None:
        # No names: each_mutant takes the whole directory itself.
        self.assertEqual([], self.selected('7.3'))

    def test_other_base_runs_the_kernel_code_mutants(self) -> None:
        want = sorted(n for n in catalogue() if in_kernel_code(n))
        for base in ('7.2', '6.12'):
            self.assertEqual(want, self.selected(base))

    def test_named_mutants_run_on_any_base(self) -> None:
        self.assertEqual(['wrap_drops_byte'],
                         self.selected('7.2', 'wrap_drops_byte'))

class MutantTargetsTest(unittest.TestCase):
    """A kernel mutant is booted on the targets its patch names."""

    def test_targets_line_or_4k(self) -> None:
        d = os.path.join(SCRIPTS, 'mutants', 'vmap_granule')
        self.assertEqual(['arm64-16k', 'arm64-64k'], mutants.mutant_targets(
            os.path.join(d, 'cont_ptes_4k_constant.patch')))
        self.assertEqual(['arm64-4k'], mutants.mutant_targets(
            os.path.join(d, 'nohuge_ignored.patch')))

    def test_other_bases_keep_4k_only(self) -> None:
        d = os.path.join(SCRIPTS, 'mutants', 'vmap_granule')
        self.assertEqual([], mutants.mutant_targets(
            os.path.join(d, 'cont_ptes_4k_constant.patch'), False))
        self.assertEqual(['arm64-4k'], mutants.mutant_targets(
            os.path.join(d, 'set_ptes_without_cont.patch'), False))

    def test_result_names_carry_the_target(self) -> None:
        c = mock.Mock(base='7.3')
        self.assertEqual('m-7.3-arm64-4k', mutants.mutant_run(c, 'm'))
        self.assertEqual('m-7.3-arm64-16k',
                         mutants.mutant_run(c, 'm', 'arm64-16k'))

    def test_module_mutant_boots_each_target(self) -> None:
        patch = os.path.join(CATALOGUE, 'room_quartered.patch')
        c = mock.Mock(base='7.3', default_base='7.3', out='/o', peers=False,
                      environ={})
        built, booted = [], []
        with mock.patch.object(mutants, 'mutant_build',
                               lambda c, p, v, log, a, t: built.append(t)
                               or True), \
                mock.patch.object(mutants, 'expectation',
                                  return_value=(True, 'killed')), \
                mock.patch.object(mutants.lib, 'perf_aux',
                                  lambda *a: booted.append(a[2])):
            mutants.module_mutant(c, patch, 'room_quartered')
        targets = ['arm64-4k', 'arm64-16k', 'arm64-64k']
        self.assertEqual(targets, built)
        self.assertEqual(targets, booted)
        self.assertEqual([mock.call(0, f'room_quartered-7.3-{t}: killed')
                          for t in targets], c.verdict.call_args_list)

if __name__ == '__main__':
    unittest.main()

class KernelOopsTest(unittest.TestCase):
    """A kernel mutant whose kernel oopses before its suite ran is killed,
    whatever the boot wrote first (the vmap benchmark runs earlier); one
    whose suite ran is judged by the suite."""

    def judged(self, suites: list) -> list:
        patch = os.path.join(SCRIPTS, 'mutants', 'vmap_granule', 'vunmap_keeps_pmd.patch')
        expected = []
        with tempfile.TemporaryDirectory() as out:
            c = check.Check(False)
            c.out, c.base, c.peers = out, '6.12', False

            def build(c, patch, boot, log, *args) -> bool:
                os.makedirs(os.path.dirname(log), exist_ok=True)
                with open(log, 'w') as f:
                    f.write('kernel BUG at mm/vmalloc.c:144!\n'
                            'Internal error: Oops - BUG: 00000000f2000800 [#1] SMP\n')
                return True

            def shown(what, log, res) -> None:
                os.makedirs(res, exist_ok=True)
                for suite in suites:
                    with open(f'{res}/{suite}.ktap', 'w') as f:
                        f.write('KTAP version 1\n1..1\nok 1 x\n')
            with mock.patch.object(mutants, 'mutant_build', build), \
                    mock.patch.object(c, 'results_shown', shown), \
                    mock.patch.object(c, 'expect', lambda *a, **k: expected.append(a)), \
                    contextlib.redirect_stdout(io.StringIO()):
                mutants.run_mutants(c, os.path.dirname(patch), 'vmap_granule', 'strict',
                                    ['vunmap_keeps_pmd'])
            return c.checks + [['expect', a[1]] for a in expected]

    def test_oops_before_the_suite_kills(self) -> None:
        self.assertEqual([['pass', 'vunmap_keeps_pmd-6.12-arm64-4k: vmap_granule: not run, '
                           'the kernel reported Internal error: Oops - BUG: 00000000f2000800 '
                           '[#1] SMP']], self.judged(['test_vmalloc']))

    def test_a_suite_that_ran_is_judged(self) -> None:
        self.assertEqual([['expect', 'vmap_granule']],
                         self.judged(['test_vmalloc', 'vmap_granule']))
