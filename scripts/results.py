#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turns console logs into per-suite KTAP files and summarises them.

  results.py kunit LOG OUTDIR       split a KUnit boot log, one file a suite
  results.py kselftest LOG OUTDIR   split run_kselftest.sh output, one file
                                    a test binary (its own KTAP, un-nested)
  results.py summary DIR... [--report FILE]
                                    a line per suite and the totals; exit 1
                                    when anything failed or crashed; FILE is
                                    the acceptance report of every run in
                                    DIR's parent (see report)
  results.py report [--results DIR] [--out FILE] [--mutants DIR]
                    [--patches DIR] [--logs DIR]
                                    the acceptance report alone: kernels,
                                    results, translation entries, vmap
                                    benchmark, mutation matrix, and an SVG
                                    granule map a buffer under FILE's
                                    directory, in report/
  results.py matrix [--mutants DIR] [--patches DIR]
                                    which suite killed which kernel mutant;
                                    ends with "K killed of N"; exit 0 when
                                    every mutant patch is killed
  results.py flakes DIR...         cases whose result differs between the
                                    round directories (scripts/repeat.sh)
  results.py peers LOG OUTDIR       lib/test_vmalloc.c's summary lines in a
                                    boot log, as the suite peer.test_vmalloc
  results.py bench BASE_DIR NEW_DIR  vmap benchmark of two runs, as ratios
  results.py expect DIR SUITE [--min-passed N] [--min-skipped N]
                    [--skip-reason TEXT] (--no-failure | --failure)
                                    one verdict line on a suite's outcome;
                                    exit 0 when it is as expected

KTAP is parsed with the kernel tree's own tools/testing/kunit/kunit_parser.py
(found through $KUNIT_TOOL_DIR or the first source tree in the cache).
"""

import argparse
import glob
import io
import os
import re
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

import granule_svg


def _import_kunit_parser():  # type: ignore[no-untyped-def]
    cache = os.environ.get('PERF_AUX_CACHE', '/var/cache/perf_aux')
    candidates = [os.environ.get('KUNIT_TOOL_DIR', '')] + sorted(
        glob.glob(os.path.join(cache, 'src', '*', 'tools', 'testing', 'kunit')))
    for path in candidates:
        if path and os.path.isfile(os.path.join(path, 'kunit_parser.py')):
            sys.path.insert(0, path)
            import kunit_parser
            import kunit_printer
            # The parser prints progress as it goes; keep our output ours.
            kunit_parser.stdout = kunit_printer.Printer(io.StringIO())
            return kunit_parser
    sys.exit('results.py: no kunit_parser.py; set KUNIT_TOOL_DIR')


kunit_parser = _import_kunit_parser()

# Top-level result line of a KTAP document: "ok 3 name" / "not ok 3 name".
TOP_RESULT = re.compile(r'^(not ok|ok) [0-9]+ (- )?([^#]*?)\s*(#.*)?$')
# run_kselftest.sh's result line for one binary.
KSFT_RESULT = re.compile(
    r'^(not ok|ok) [0-9]+ selftests: (\S+): (\S+)(\s*#\s*(.*))?$')
SUBTEST = re.compile(r'^\s*# Subtest: (\S+)')
SKIP_LINE = re.compile(r'^\s*ok [0-9]+ .* # SKIP ?(.*)$')
NOT_OK_LINE = re.compile(r'^[\s#]*not ok [0-9]+ ([^#]*?)\s*(?:#.*)?$')
TAP_HEADER = re.compile(r'^(K?TAP version [0-9]+)$')


@dataclass
class SuiteResult:
    """Counts of one suite's leaf test cases."""
    name: str
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    errors: int = 0

    @property
    def ok(self) -> bool:
        return not self.failed and not self.errors


def ktap_document(name: str, block: List[str], result: str) -> str:
    """Wraps one suite's lines as a KTAP document with a plan of one."""
    last = TOP_RESULT.sub(lambda m: f'{m.group(1)} 1 {name}'
                          + (f' {m.group(4)}' if m.group(4) else ''), result)
    return '\n'.join(['KTAP version 1', '1..1'] + block + [last]) + '\n'


def split_kunit(log: Iterable[str]) -> Dict[str, str]:
    """Splits a KUnit console log into one KTAP document per suite."""
    lines = list(kunit_parser.extract_tap_lines(log))
    suites: Dict[str, str] = {}
    block: List[str] = []
    for line in lines[1:]:
        if line.startswith(' ') or line.startswith('#'):
            block.append(line)
            continue
        match = TOP_RESULT.match(line)
        if match:
            name = match.group(3)
            suites[name] = ktap_document(name, block, line)
            block = []
    # A suite the kernel died in has no result line: it failed.
    header = next((SUBTEST.match(b) for b in block if SUBTEST.match(b)), None)
    if header:
        name = header.group(1)
        suites[name] = ktap_document(name, block, f'not ok 1 {name}')
    return suites


def split_kselftest(log: Iterable[str]) -> Dict[str, str]:
    """Splits run_kselftest.sh output into each binary's own KTAP.

    The runner prefixes every line a binary prints with '# ' and then prints
    one result line of its own for the binary.  A binary that is missing, or
    died before printing any result, becomes a one-case document with the
    runner's verdict, so it is counted and never dropped.
    """
    suites: Dict[str, str] = {}
    body: List[str] = []
    for raw in log:
        line = raw.rstrip('\r\n')
        match = KSFT_RESULT.match(line)
        if not match:
            if line.startswith('# ') or line == '#':
                body.append(line[2:])
            continue
        name = f'{match.group(2)}.{match.group(3)}'
        start = next((i for i, b in enumerate(body) if TAP_HEADER.match(b)),
                     None)
        inner = body[start:] if start is not None else []
        if any(TOP_RESULT.match(b) for b in inner):
            suites[name] = '\n'.join(inner) + '\n'
        else:
            reason = f' # {match.group(5)}' if match.group(5) else ''
            suites[name] = (f'KTAP version 1\n1..1\n{match.group(1)} 1 '
                            f'{match.group(3)}{reason}\n')
        body = []
    return suites


def parse_ktap(ktap: str):  # type: ignore[no-untyped-def]
    """kunit_parser's tree of a KTAP document; a document cut off where the
    parser gives up (a kernel killed mid-line) is a crashed test."""
    try:
        return kunit_parser.parse_run_tests(ktap.splitlines())
    except ValueError:
        test = kunit_parser.Test()
        test.name = 'unparsable'
        test.status = kunit_parser.TestStatus.TEST_CRASHED
        test.counts.crashed = 1
        return test


def count(name: str, ktap: str) -> SuiteResult:
    """Counts the leaf cases of one KTAP document."""
    test = parse_ktap(ktap)
    counts = test.counts
    result = SuiteResult(name, counts.passed, counts.failed + counts.crashed,
                         counts.skipped, counts.errors)
    if test.status == kunit_parser.TestStatus.FAILURE_TO_PARSE_TESTS:
        result.errors += 1
    return result


def write_suites(suites: Dict[str, str], outdir: str) -> None:
    os.makedirs(outdir, exist_ok=True)
    for name, ktap in suites.items():
        with open(os.path.join(outdir, f'{name}.ktap'), 'w') as f:
            f.write(ktap)


def collect(dirs: List[str]) -> List[SuiteResult]:
    results = []
    for d in dirs:
        for path in sorted(glob.glob(os.path.join(d, '*.ktap'))):
            name = os.path.basename(path)[:-len('.ktap')]
            with open(path) as f:
                results.append(count(name, f.read()))
    return results


def summary_lines(dirs: List[str]) -> List[str]:
    lines = []
    total = SuiteResult('total')
    for d in dirs:
        for r in collect([d]):
            lines.append(f'{os.path.basename(d.rstrip("/"))} {r.name}: '
                         f'{r.passed} passed, {r.failed} failed, '
                         f'{r.skipped} skipped'
                         + (f', {r.errors} parse errors' if r.errors else ''))
            total.passed += r.passed
            total.failed += r.failed + r.errors
            total.skipped += r.skipped
    lines.append(f'{total.passed} passed, {total.failed} failed, '
                 f'{total.skipped} skipped')
    return lines


def cmd_kunit(args: argparse.Namespace) -> int:
    with open(args.log, errors='replace') as f:
        write_suites(split_kunit(f), args.outdir)
    return 0


def cmd_kselftest(args: argparse.Namespace) -> int:
    with open(args.log, errors='replace') as f:
        write_suites(split_kselftest(f), args.outdir)
    return 0


# lib/test_vmalloc.c's verdict per test case, printed when it finishes.
VMALLOC_SUMMARY = re.compile(
    r'Summary: (\S+) passed: ([0-9]+) failed: ([0-9]+) ')


def split_test_vmalloc(log: Iterable[str]) -> Dict[str, str]:
    """The peer lib/test_vmalloc.c (built in, run at boot) as a KTAP suite.

    A case passes when it ran and nothing failed; no summary at all (the
    boot crashed or hung before test_vmalloc finished) is one failed case.
    """
    cases = []
    for line in log:
        m = VMALLOC_SUMMARY.search(line)
        if m:
            ok = int(m.group(2)) > 0 and int(m.group(3)) == 0
            cases.append(f'{"ok" if ok else "not ok"} {len(cases) + 1} '
                         f'{m.group(1)}')
    if not cases:
        cases = ['not ok 1 test_vmalloc_finished']
    return {'peer.test_vmalloc':
            '\n'.join(['KTAP version 1', f'1..{len(cases)}'] + cases) + '\n'}


def cmd_peers(args: argparse.Namespace) -> int:
    with open(args.log, errors='replace') as f:
        write_suites(split_test_vmalloc(f), args.outdir)
    return 0


def case_results(ktap: str) -> Dict[str, str]:
    """Each leaf case of a KTAP document by its dotted path: its status."""
    cases: Dict[str, str] = {}

    def walk(test, path: List[str]) -> None:  # type: ignore[no-untyped-def]
        if not test.subtests:
            cases['.'.join(path)] = test.status.name
        for sub in test.subtests:
            walk(sub, path + [sub.name])

    walk(parse_ktap(ktap), [])
    return cases


def flakes(rounds: List[str]) -> List[str]:
    """Cases whose result is not the same in every round directory."""
    seen: Dict[str, List[str]] = {}
    for i, rnd in enumerate(rounds):
        for path in sorted(glob.glob(os.path.join(rnd, '*.ktap'))):
            suite = os.path.basename(path)[:-len('.ktap')]
            with open(path) as f:
                for case, status in case_results(f.read()).items():
                    seen.setdefault(f'{suite}.{case}',
                                    ['MISSING'] * len(rounds))[i] = status
    lines = [f'flaky: {case}: {" ".join(s)}'
             for case, s in sorted(seen.items()) if len(set(s)) > 1]
    lines.append(f'{len(lines)} flaky of {len(seen)} cases over '
                 f'{len(rounds)} rounds')
    return lines


def cmd_flakes(args: argparse.Namespace) -> int:
    lines = flakes(args.dirs)
    print('\n'.join(lines))
    return 0 if lines[-1].startswith('0 flaky') else 1


def cmd_summary(args: argparse.Namespace) -> int:
    lines = summary_lines(args.dirs)
    print('\n'.join(lines))
    if args.report:
        # The report covers every kernel-target run so far, not only these.
        parent = os.path.dirname(os.path.abspath(args.dirs[0]))
        out = os.path.dirname(os.path.abspath(args.report))
        write_report(args.report, run_dirs(parent),
                     os.path.join(out, 'mutants'), PATCHES,
                     os.path.join(out, 'logs'))
    return 0 if lines[-1].split(', ')[1] == '0 failed' else 1


BENCH = re.compile(r'vmap_bench: (.*)$')


def bench_values(ktap: str) -> Dict[str, int]:
    """The key=value numbers of the vmap_bench diagnostic line."""
    for line in ktap.splitlines():
        match = BENCH.search(line)
        if match:
            return {k: int(v) for k, v in
                    (kv.split('=') for kv in match.group(1).split())}
    return {}


def bench_lines(base: Dict[str, int], new: Dict[str, int]) -> List[str]:
    """One line per timing: base, new and base/new (>1: new is faster)."""
    lines = []
    for key in sorted(k for k in base if k.endswith('_ns') and k in new):
        ratio = base[key] / new[key] if new[key] else float('inf')
        lines.append(f'{key}: {base[key]} -> {new[key]} ns, {ratio:.2f}x')
    return lines


def cmd_bench(args: argparse.Namespace) -> int:
    values = []
    for d in (args.base, args.new):
        path = os.path.join(d, 'vmap_granule.ktap')
        if not os.path.isfile(path):
            print(f'vmap bench: no vmap_granule results in {d}')
            return 1
        with open(path) as f:
            values.append(bench_values(f.read()))
    lines = bench_lines(values[0], values[1])
    for line in lines:
        print(f'vmap bench {os.path.basename(args.base.rstrip("/"))} -> '
              f'{os.path.basename(args.new.rstrip("/"))}: {line}')
    return 0 if lines else 1


# The acceptance report and the mutation matrix.

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.environ.get('PERF_AUX_OUT', os.path.join(ROOT, 'out'))
PATCHES = os.path.join(ROOT, 'scripts', 'mutants')
# A run directory: <kernel>-<target>[-<variant>].
RUN_NAME = re.compile(
    r'^(.+?)-(arm64-[0-9]+k|x86_64)(?:-(.+))?$')
KERNEL_LINE = re.compile(r'PERF_AUX: kernel (\S+), page size (.+?)\s*$')
# pagesize_test: "entries 16 for 256 pages (PMD 0, cont 256, PTE 0), at
# least 1", then the result line of the test it belongs to.
ENTRIES = re.compile(r'entries ([0-9]+) for ([0-9]+) pages'
                     r'(?: \(([^)]*)\))?(?:, at least ([0-9]+))?')
# Suites of other projects run on a mutant, counted apart from ours.
PEER_PREFIXES = ('peer.', 'perf_events.')
KERNEL_ORDER = {'stock': 0, 'reference': 1}


def run_name(d: str) -> str:
    return os.path.basename(d.rstrip('/'))


def run_dirs(parent: str) -> List[str]:
    """Every run directory under parent, sorted."""
    return sorted(glob.glob(os.path.join(parent, '*/')), key=run_name)


def split_run(name: str) -> Tuple[str, str, str]:
    """(kernel, target, variant) of a run name; variant 'default' if none."""
    match = RUN_NAME.match(name)
    if not match:
        return name, '', ''
    return match.group(1), match.group(2), match.group(3) or 'default'


def read_text(path: str) -> str:
    with open(path, errors='replace') as f:
        return f.read()


def kernel_info(log: str) -> Tuple[str, str]:
    """Kernel version and page size that a kselftest boot log prints."""
    if os.path.isfile(log):
        for line in read_text(log).splitlines():
            match = KERNEL_LINE.search(line)
            if match:
                return match.group(1), match.group(2)
    return 'unknown', 'unknown'


def kernel_section(dirs: List[str], logs: str) -> List[str]:
    out = ['## Kernel', '',
           '| run | kernel | target | variant | version | page size |',
           '|---|---|---|---|---|---|']
    for d in dirs:
        name = run_name(d)
        version, page = kernel_info(os.path.join(logs,
                                                 f'{name}-kselftest.log'))
        kernel, target, variant = split_run(name)
        out.append(f'| {name} | {kernel} | {target} | {variant} | '
                   f'{version} | {page} |')
    return out + ['', f'From `PERF_AUX: kernel` in `{run_name(logs)}/'
                  '<run>-kselftest.log`; the variant names the boot '
                  'parameter or configuration (README, `VARIANT`).']


def results_section(dirs: List[str]) -> List[str]:
    out = ['## Results', '',
           '| kernel-target | suite | passed | failed | skipped |',
           '|---|---|---:|---:|---:|']
    for d in dirs:
        for r in collect([d]):
            out.append(f'| {run_name(d)} | {r.name} | '
                       f'{r.passed} | {r.failed + r.errors} | {r.skipped} |')
    return out + ['', 'Raw KTAP: `out/results/<kernel>-<target>/'
                  '<suite>.ktap`.']


@dataclass
class Entries:
    """Translation entries pagesize_test found for one buffer."""
    test: str
    entries: int
    pages: int
    detail: str
    minimum: str


def entries_values(ktap: str) -> List[Entries]:
    """The entries lines of a KTAP document, each named by its test."""
    found: List[Entries] = []
    pending: List[Entries] = []
    for line in ktap.splitlines():
        match = ENTRIES.search(line)
        if match and line.lstrip().startswith('#'):
            pending.append(Entries('', int(match.group(1)),
                                   int(match.group(2)), match.group(3) or '',
                                   match.group(4) or ''))
            continue
        result = granule_svg.RESULT.match(line)
        if result and pending:
            for e in pending:
                e.test = result.group(1)
            found += pending
            pending = []
    return found


def run_groups(dirs: List[str]) -> Dict[str, Dict[str, str]]:
    """Runs by target[-variant], then by kernel: what to put side by side."""
    groups: Dict[str, Dict[str, str]] = {}
    for d in dirs:
        kernel, target, variant = split_run(run_name(d))
        key = target + ('' if variant == 'default' else f'-{variant}')
        groups.setdefault(key or kernel, {})[kernel] = d
    return groups


def ordered_kernels(runs: Dict[str, str]) -> List[str]:
    return sorted(runs, key=lambda k: (KERNEL_ORDER.get(k, 2), k))


def suite_text(d: str, suite: str) -> str:
    path = os.path.join(d, f'{suite}.ktap')
    return read_text(path) if os.path.isfile(path) else ''


def short_names(names: List[str]) -> Dict[str, str]:
    """Names without a last dotted component they all share."""
    tails = {n.rsplit('.', 1)[-1] for n in names if '.' in n}
    if len(tails) != 1 or not all('.' in n for n in names):
        return {n: n for n in names}
    return {n: n.rsplit('.', 1)[0] for n in names}


def entries_table(runs: Dict[str, str]) -> List[str]:
    """One group's buffers, a column of entries per kernel."""
    kernels = ordered_kernels(runs)
    values = {k: {e.test: e for e in entries_values(
        suite_text(runs[k], 'perf_aux.pagesize_test'))} for k in kernels}
    kernels = [k for k in kernels if values[k]]
    tests: List[str] = []
    for k in kernels:
        tests += [t for t in values[k] if t not in tests]
    if not tests:
        return []
    names = short_names(tests)
    out = ['| buffer | pages | ' + ' | '.join(kernels) + ' | at least |',
           '|---|---:|' + '---:|' * len(kernels) + '---:|']
    for t in tests:
        row = [values[k].get(t) for k in kernels]
        first = next(e for e in row if e)
        cells = [f'{e.entries} ({e.detail})' if e else '—' for e in row]
        out.append(f'| {names[t]} | {first.pages} | ' + ' | '.join(cells)
                   + f' | {first.minimum} |')
    return out


def entries_section(dirs: List[str]) -> List[str]:
    out = ['## Translation entries', '',
           'Entries of each AUX buffer\'s vmap, from pagesize_test '
           '(one a PMD or cont-PTE block, one a PTE page), stock and '
           'reference side by side.']
    for key, runs in sorted(run_groups(dirs).items()):
        table = entries_table(runs)
        if table:
            out += ['', f'### {key}', ''] + table
    if len(out) == 3:
        out += ['', 'No pagesize_test entries in these runs.']
    return out


def bench_section(dirs: List[str]) -> List[str]:
    out = ['## vmap benchmark', '',
           'vmap_granule\'s timings, stock -> reference; a ratio above 1: '
           'the reference kernel is faster.']
    for key, runs in sorted(run_groups(dirs).items()):
        if 'stock' not in runs or 'reference' not in runs:
            continue
        base, new = (bench_values(suite_text(runs[k], 'vmap_granule'))
                     for k in ('stock', 'reference'))
        lines = bench_lines(base, new)
        if lines:
            out += ['', f'### {key}', ''] + [f'- `{line}`' for line in lines]
    if len(out) == 3:
        out += ['', 'No stock and reference runs with vmap benchmark '
                'results to compare.']
    return out


def svg_name(run: str, test: str, used: set) -> str:
    """A file name for one picture, unique among used."""
    base = re.sub(r'[^A-Za-z0-9._-]', '_', f'{run}-{test}')
    name, n = f'{base}.svg', 1
    while name in used:
        n += 1
        name = f'{base}-{n}.svg'
    used.add(name)
    return name


def granule_section(dirs: List[str], report_dir: str) -> List[str]:
    """Writes an SVG a granule map into report_dir/report; links them."""
    svg_dir = os.path.join(report_dir, 'report')
    for old in glob.glob(os.path.join(svg_dir, '*.svg')):
        os.remove(old)
    out = ['## Granule maps', '',
           'Each AUX buffer\'s pages in order, by the granule that maps '
           'them: PMD, cont-PTE, PTE; thin lines are block boundaries.']
    used: set = set()
    for d in dirs:
        run = run_name(d)
        maps = [m for path in sorted(glob.glob(os.path.join(d, '*.ktap')))
                for m in granule_svg.parse_ktap(read_text(path).splitlines())]
        if maps:
            out += ['', f'### {run}']
        for m in maps:
            name = svg_name(run, m.test, used)
            os.makedirs(svg_dir, exist_ok=True)
            with open(os.path.join(svg_dir, name), 'w') as f:
                f.write(granule_svg.render(m, f'{run}: {m.test}'))
            out += ['', f'![{run} {m.test}](report/{name})', '',
                    '; '.join(granule_svg.caption(m)) + '.']
    if not used:
        out += ['', 'No `granule_map` lines in these runs.']
    return out


@dataclass
class SuiteVerdict:
    """How one suite of a mutant run ended."""
    failed: int
    cases: List[str]

    @property
    def killed(self) -> bool:
        return self.failed > 0


@dataclass
class MutantRow:
    """One mutant patch on one target, with each suite's verdict."""
    group: str
    name: str
    description: str
    target: str = ''
    suites: Dict[str, SuiteVerdict] = field(default_factory=dict)


def is_peer(suite: str) -> bool:
    return suite.startswith(PEER_PREFIXES)


def failing_cases(test: Any, skip: Tuple[str, ...]) -> List[str]:
    """Dotted names of the innermost failed or crashed tests under test.

    Tests in skip (the parser's root, the suite) add no name; a test the
    kernel died before reaching has none and is called 'crashed'.
    """
    bad = (kunit_parser.TestStatus.FAILURE,
           kunit_parser.TestStatus.TEST_CRASHED)
    if test.status not in bad:
        return []
    name = test.name or 'crashed'
    prefix = '' if name in skip else f'{name}.'
    inner = [prefix + c for s in test.subtests
             for c in failing_cases(s, skip)]
    return inner or ([name] if name not in skip else [])


def suite_verdict(suite: str, ktap: str) -> SuiteVerdict:
    r = count(suite, ktap)
    test = parse_ktap(ktap)
    cases = failing_cases(test, ('main', suite))
    return SuiteVerdict(r.failed + r.errors,
                        [c for i, c in enumerate(cases) if c not in cases[:i]])


def mutant_patches(patches: str) -> List[MutantRow]:
    """A row a patch under patches/<group>/, described by its first line."""
    rows = []
    for path in sorted(glob.glob(os.path.join(patches, '*', '*.patch'))):
        first = read_text(path).split('\n', 1)[0].strip()
        rows.append(MutantRow(run_name(os.path.dirname(path)),
                              os.path.basename(path)[:-len('.patch')],
                              re.sub(r'^Mutant: ', '', first)))
    return rows


def run_verdicts(run: str) -> Dict[str, SuiteVerdict]:
    """Each suite's verdict in one mutant run directory."""
    suites = {}
    for path in sorted(glob.glob(os.path.join(run, '*.ktap'))):
        suite = os.path.basename(path)[:-len('.ktap')]
        suites[suite] = suite_verdict(suite, read_text(path))
    return suites


def beyond_baseline(suites: Dict[str, SuiteVerdict],
                    base: Dict[str, SuiteVerdict]) -> Dict[str, SuiteVerdict]:
    """Only what fails on the mutant and not on the unmutated kernel.

    The peers fail some cases on every kernel here (test_vmalloc's
    align_shift_alloc_test is meant to fail; perf_events cases that need
    hardware breakpoints): those kill nothing.
    """
    out = {}
    for suite, v in suites.items():
        b = base.get(suite)
        if b is None:
            out[suite] = v
            continue
        new = [c for c in v.cases if c not in b.cases]
        out[suite] = SuiteVerdict(len(new), new)
    return out


def matrix_rows(mutants: str, patches: str) -> List[MutantRow]:
    """A row a patch and target it ran on; a bare row if it never ran.

    A run directory baseline-<target> (the unmutated mutant-tree kernel)
    sets what counts as a kill on that target.
    """
    rows = []
    for patch in mutant_patches(patches):
        runs = [d for d in run_dirs(mutants)
                if split_run(run_name(d))[0] == patch.name]
        for d in runs:
            target = split_run(run_name(d))[1]
            suites = beyond_baseline(run_verdicts(d), run_verdicts(
                os.path.join(mutants, f'baseline-{target}')))
            rows.append(MutantRow(patch.group, patch.name, patch.description,
                                  split_run(run_name(d))[1], suites))
        if not runs:
            rows.append(patch)
    return rows


def cell(verdict: Optional[SuiteVerdict]) -> str:
    if verdict is None:
        return 'not run'
    if not verdict.killed:
        return 'survived'
    names = ', '.join(verdict.cases[:2])
    return f'killed ({verdict.failed} failed' + (f': {names})' if names
                                                  else ')')


def matrix_table(rows: List[MutantRow]) -> List[str]:
    """Markdown: a row a mutant, a column a suite (ours, then peers)."""
    suites = sorted({s for r in rows for s in r.suites},
                    key=lambda s: (is_peer(s), s))
    out = ['| group | mutant | description | target | '
           + ' | '.join(suites) + ' |',
           '|---|---|---|---|' + '---|' * len(suites)]
    for r in rows:
        description = r.description.replace('|', '\\|')
        out.append(f'| {r.group} | {r.name} | {description} | '
                   f'{r.target or "—"} | '
                   + ' | '.join(cell(r.suites.get(s)) for s in suites) + ' |')
    return out


def killed(rows: List[MutantRow], peers: bool) -> int:
    """Mutant patches that a suite of ours (or a peer's) killed."""
    return len({r.name for r in rows
                if any(v.killed for s, v in r.suites.items()
                       if is_peer(s) == peers)})


def matrix_totals(rows: List[MutantRow]) -> List[str]:
    """The peers' line, then ours last: 'K killed of N'."""
    n = len({r.name for r in rows})
    if any(is_peer(s) for r in rows for s in r.suites):
        peers = f'{killed(rows, True)} killed of {n} by the peers'
    else:
        peers = 'peers not run'
    return [peers, f'{killed(rows, False)} killed of {n}']


def matrix_section(mutants: str, patches: str) -> List[str]:
    rows = matrix_rows(mutants, patches)
    peers, ours = matrix_totals(rows)
    return ['## Mutation matrix', '',
            'Each kernel mutant under `scripts/mutants/`: the suites run on '
            'it and whether they caught it (any failure or crash kills).',
            ''] + matrix_table(rows) + ['', f'**{ours}**', '', peers]


def write_report(path: str, dirs: List[str], mutants: str, patches: str,
                 logs: str) -> None:
    """The acceptance report at path, its pictures in report/ beside it."""
    report_dir = os.path.dirname(os.path.abspath(path))
    sections = [['# perf_aux acceptance report'], kernel_section(dirs, logs),
                results_section(dirs), entries_section(dirs),
                bench_section(dirs)]
    if os.path.isdir(mutants):
        sections.append(matrix_section(mutants, patches))
    sections.append(granule_section(dirs, report_dir))
    with open(path, 'w') as f:
        f.write('\n\n'.join('\n'.join(s) for s in sections) + '\n')


def cmd_report(args: argparse.Namespace) -> int:
    write_report(args.out, run_dirs(args.results), args.mutants,
                 args.patches, args.logs)
    print(f'report: {args.out}')
    return 0


def cmd_matrix(args: argparse.Namespace) -> int:
    rows = matrix_rows(args.mutants, args.patches)
    lines = matrix_table(rows) + matrix_totals(rows)
    print('\n'.join(lines))
    k, n = (int(x) for x in lines[-1].split(' killed of '))
    return 0 if k == n else 1


def cmd_expect(args: argparse.Namespace) -> int:
    path = os.path.join(args.dir, f'{args.suite}.ktap')
    if not os.path.isfile(path):
        print(f'{args.suite}: no results in {args.dir}')
        return 1
    with open(path) as f:
        ktap = f.read()
    r = count(args.suite, ktap)
    failed = r.failed + r.errors
    if args.skip_reason:
        # Only skips for this reason count (kunit_parser drops reasons).
        r.skipped = sum(1 for line in ktap.splitlines()
                        if SKIP_LINE.match(line) and
                        args.skip_reason in SKIP_LINE.match(line).group(1))
    problems = []
    if r.passed < args.min_passed:
        problems.append(f'fewer than {args.min_passed} passed')
    if r.skipped < args.min_skipped:
        problems.append(f'fewer than {args.min_skipped} skipped')
    if args.failure and not failed:
        problems.append('no failure')
    if not args.failure and failed:
        # Name a few, so that a CI log's last lines say what broke.
        names = [m.group(1) for m in map(NOT_OK_LINE.match, ktap.splitlines())
                 if m and m.group(1) != args.suite]
        problems.append('failures' + (': ' + ', '.join(names[:3])
                                      if names else ''))
    print(f'{args.suite}: {r.passed} passed, {failed} failed, '
          f'{r.skipped} skipped' + (f' ({"; ".join(problems)})'
                                    if problems else ''))
    return 1 if problems else 0


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest='command', required=True)
    for name in ('kunit', 'kselftest', 'peers'):
        p = sub.add_parser(name)
        p.add_argument('log')
        p.add_argument('outdir')
    p = sub.add_parser('summary')
    p.add_argument('dirs', nargs='+')
    p.add_argument('--report')
    p = sub.add_parser('flakes')
    p.add_argument('dirs', nargs='+')
    p = sub.add_parser('report')
    p.add_argument('--results', default=os.path.join(OUT, 'results'))
    p.add_argument('--out', default=os.path.join(OUT, 'report.md'))
    p.add_argument('--mutants', default=os.path.join(OUT, 'mutants'))
    p.add_argument('--patches', default=PATCHES)
    p.add_argument('--logs', default=os.path.join(OUT, 'logs'))
    p = sub.add_parser('matrix')
    p.add_argument('--mutants', default=os.path.join(OUT, 'mutants'))
    p.add_argument('--patches', default=PATCHES)
    p = sub.add_parser('bench')
    p.add_argument('base')
    p.add_argument('new')
    p = sub.add_parser('expect')
    p.add_argument('dir')
    p.add_argument('suite')
    p.add_argument('--min-passed', type=int, default=0)
    p.add_argument('--min-skipped', type=int, default=0)
    p.add_argument('--skip-reason')
    group = p.add_mutually_exclusive_group(required=True)
    group.add_argument('--no-failure', dest='failure', action='store_false')
    group.add_argument('--failure', dest='failure', action='store_true')
    args = parser.parse_args(argv)
    handlers: Dict[str, Callable[[argparse.Namespace], int]] = {
        'kunit': cmd_kunit, 'kselftest': cmd_kselftest,
        'summary': cmd_summary, 'expect': cmd_expect, 'bench': cmd_bench,
        'report': cmd_report, 'matrix': cmd_matrix, 'peers': cmd_peers,
        'flakes': cmd_flakes,
    }
    return handlers[args.command](args)


if __name__ == '__main__':
    sys.exit(main())
