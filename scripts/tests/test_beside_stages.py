# SPDX-License-Identifier: GPL-2.0
"""make check's stages that build no kernel run beside the mutant stage.

The series and LAVA schema stages run in the background while the mutants
boot; their check lines must then count exactly as if they had run in the
foreground, in stage order, with their times in the table.  check.sh is
sourced with run_stage replaced by stand-ins that print check lines and say
whether they ran in a subshell.
"""

import os
import subprocess
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.dirname(HERE)

# Stand-in stages: series passes two checks, lava_schema passes one, skips
# one and fails one; every stage says where it ran.
STUBS = r'''
. "$1"; shift
fake()
{
	if [ "$BASHPID" = "$TOP" ]; then echo "RAN $1 here"; else echo "RAN $1 beside"; fi
	case "$1" in
	series) sleep 1; echo "ok - series: a"; echo "ok - series: b" ;;
	lava_schema) echo "ok - lava: c"; echo "ok - lava: d # SKIP no fvp";
		echo "not ok - lava: e" ;;
	*) echo "ok - $1: f" ;;
	esac
}
run_stage() { timed "stage $1" fake "$1"; }
TOP=$BASHPID
'''


class BesideStagesTest(unittest.TestCase):

    def bash(self, script: str, *args: str) -> str:
        with tempfile.TemporaryDirectory() as out:
            env = dict(os.environ, PERF_AUX_OUT=out)
            os.makedirs(os.path.join(out, 'logs'))
            return subprocess.run(
                ['bash', '-c', STUBS + script, 'sh',
                 os.path.join(SCRIPTS, 'check.sh'), *args],
                env=env, capture_output=True, text=True).stdout

    def test_counted_in_order_as_if_run_here(self) -> None:
        out = self.bash('beside_start series lava_schema; '
                        'run_stage mutants; beside_end; '
                        'echo "COUNTS $passed $failed $skipped"; '
                        'printf "FAILED %s\\n" "${failures[@]}"; '
                        'printf "TIME %s\\n" "${stage_times[@]}"')
        lines = out.splitlines()
        # The stand-in mutant stage echoes its line, it counts nothing.
        self.assertIn('COUNTS 3 1 1', lines)
        self.assertIn('FAILED lava: e', lines)
        ran = [line for line in lines if line.startswith('RAN ')]
        self.assertEqual(['RAN mutants here', 'RAN series beside',
                          'RAN lava_schema beside'], ran)
        checks = [line for line in lines if 'ok - ' in line]
        self.assertEqual(['ok - mutants: f', 'ok - series: a',
                          'ok - series: b', 'ok - lava: c',
                          'ok - lava: d # SKIP no fvp', 'not ok - lava: e'],
                         checks)
        times = [line for line in lines if line.startswith('TIME ')]
        self.assertEqual(3, len(times))
        self.assertTrue(times[1].endswith('stage series (beside the mutants)'))
        self.assertTrue(times[2].endswith(
            'stage lava_schema (beside the mutants)'))

    def test_started_before_the_mutants_end(self) -> None:
        # beside_start returns at once: series sleeps, the caller does not.
        out = self.bash('s=$(date +%s%N); beside_start series; '
                        'echo "START $(( ($(date +%s%N) - s) / 1000000 ))"; '
                        'beside_end')
        start = [int(line.split()[1]) for line in out.splitlines()
                 if line.startswith('START ')]
        self.assertLess(start[0], 500)
        self.assertIn('RAN series beside', out.splitlines())

    def test_a_stage_that_dies_is_a_failed_check(self) -> None:
        out = self.bash('fake() { echo "ok - series: a"; exit 3; }; '
                        'beside_start series lava_schema; beside_end; '
                        'echo "COUNTS $passed $failed $skipped"')
        lines = out.splitlines()
        self.assertIn('COUNTS 1 1 0', lines)
        self.assertIn('not ok - the stages beside the mutants ended, exit 3',
                      lines)

    def main_runs(self, *stages: str) -> list:
        out = self.bash('timed() { shift; [ "$1" != "$PERF_AUX_ROOT/scripts/deps.sh" ] '
                        '|| return 0; stage x "$@"; }; RESULTS=true; '
                        'main "$@"', *stages)
        return [line for line in out.splitlines() if line.startswith('RAN ')]

    def test_make_check_runs_them_beside_the_mutants(self) -> None:
        self.assertEqual(['RAN mutants here', 'RAN series beside',
                          'RAN lava_schema beside'],
                         self.main_runs('mutants', 'series', 'lava_schema'))

    def test_without_the_mutant_stage_they_run_here(self) -> None:
        self.assertEqual(['RAN series here', 'RAN lava_schema here'],
                         self.main_runs('series', 'lava_schema'))


if __name__ == '__main__':
    unittest.main()
