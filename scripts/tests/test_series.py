#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host tests of perf_aux.series (python3 -m perf_aux series, make series): the
parts of scripts/series/parts, each prefix's kselftest Makefile, the
MAINTAINERS lines, the checks' figures and the lines they print.  The
series itself (git, checkpatch, the kselftest builds) is the series
stage's of make check."""

import contextlib
import io
import os
import subprocess
import sys
import tempfile
import unittest
from unittest import mock
from pathlib import Path
from typing import Optional

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.dirname(HERE)
ROOT = os.path.dirname(SCRIPTS)
sys.path.insert(0, SCRIPTS)
from perf_aux import lib, series, shell  # noqa: E402

MAKEFILE = """\
# a comment naming gone_test and gone.c stays
CFLAGS += -Wall

TEST_GEN_PROGS :=
TEST_GEN_PROGS += here_test
TEST_GEN_PROGS += gone_test
LOCAL_HDRS += here.h
LOCAL_HDRS += gone.h

include ../lib.mk

$(OUTPUT)/here_test: here.c
$(OUTPUT)/here_test: here.c gone.c
$(OUTPUT)/gone_test: LDLIBS += -lpthread

"""

def patch(*files: str, message: str = 'a patch\n') -> str:
    """A patch adding FILES, each "path:lines" (that many lines)."""
    out = ['From 0 Mon Sep 17 00:00:00 2001', 'Subject: [PATCH] x', '',
           message, '---']
    for spec in files:
        path, count = spec.split(':')
        out += [f'diff --git a/{path} b/{path}', 'new file mode 100644',
                '--- /dev/null', f'+++ b/{path}', f'@@ -0,0 +1,{count} @@']
        out += [f'+line {i}' for i in range(int(count))]
    return '\n'.join(out) + '\n'

class PartsTest(unittest.TestCase):
    def test_parse(self) -> None:
        text = ('# comment\n\n'
                '[fixes] fixes.txt\n'
                'fix.txt   reference/0004\n'
                '[perf]\tcover.txt fixes\n'
                'seam.txt\t0001\n'
                '  tests.txt  -   a/b.c \t a/b.h\n'
                'last.txt 0002 x.c')
        self.assertEqual(
            [series.Part('fix.txt', 'reference/0004', [], 'fixes'),
             series.Part('seam.txt', '0001', [], 'perf'),
             series.Part('tests.txt', '-', ['a/b.c', 'a/b.h'], 'perf'),
             series.Part('last.txt', '0002', ['x.c'], 'perf')],
            series.parse(text)[0])
        self.assertEqual([series.Group('fixes', 'fixes.txt'),
                          series.Group('perf', 'cover.txt', ['fixes'])],
                         series.parse(text)[1])

    def test_project_parts(self) -> None:
        with open(os.path.join(SCRIPTS, 'series', 'parts')) as f:
            text = f.read()
        parts, groups = series.parse(text)
        self.assertGreaterEqual(len(parts), series.SERIES_MIN_PATCHES)
        # The fixes come first, each a patch of the base's by path.
        self.assertIn('/', parts[0].hook)
        self.assertEqual('fixes', groups[0].name)
        for group in groups:
            self.assertTrue(os.path.isfile(
                os.path.join(SCRIPTS, 'series', group.cover)), group.cover)
        names = [g.name for g in groups]
        for part in parts:
            self.assertIn(part.group, names)
            self.assertTrue(os.path.isfile(
                os.path.join(SCRIPTS, 'series', part.message)), part.message)
            self.assertTrue(part.hook == '-' or part.hook[0].isdigit()
                            or '/' in part.hook, part.hook)
            for path in part.paths:
                self.assertTrue(os.path.exists(os.path.join(ROOT, path)),
                                path)
        # Every commit message is some part's or group's.
        used = {p.message for p in parts} | {g.cover for g in groups}
        for name in os.listdir(os.path.join(SCRIPTS, 'series')):
            if name.endswith('.txt') and name != 'fixes-cover.txt':
                self.assertIn(name, used)

class MakefileTest(unittest.TestCase):
    def test_names(self) -> None:
        self.assertEqual(['map_test.c', 'aux_common.c', 'aux_report.c'],
                         series.makefile_names(
                             '$(OUTPUT)/map_test: aux_common.c aux_report.c'))
        self.assertEqual(['aux_common.h'],
                         series.makefile_names('LOCAL_HDRS += aux_common.h'))
        self.assertEqual([], series.makefile_names('include ../lib.mk'))
        self.assertEqual([], series.makefile_names('x.cc y_tests'))

    def test_filter(self) -> None:
        present = {'here_test.c', 'here.c', 'here.h'}
        self.assertEqual(
            '# a comment naming gone_test and gone.c stays\n'
            'CFLAGS += -Wall\n\n'
            'TEST_GEN_PROGS :=\n'
            'TEST_GEN_PROGS += here_test\n'
            'LOCAL_HDRS += here.h\n\n'
            'include ../lib.mk\n\n'
            '$(OUTPUT)/here_test: here.c\n',
            series.filter_makefile(MAKEFILE, present.__contains__))

    def test_all_present(self) -> None:
        # Everything there: the Makefile less its blank lines at the end.
        self.assertEqual(MAKEFILE.rstrip('\n') + '\n',
                         series.filter_makefile(MAKEFILE, lambda name: True))

    def test_project_makefile(self) -> None:
        # All files there: the project's Makefile as it is.
        with open(os.path.join(ROOT, series.KSFT, 'Makefile')) as f:
            text = f.read()
        ksft = os.path.join(ROOT, series.KSFT)
        self.assertEqual(text, series.filter_makefile(
            text, lambda name: os.path.exists(os.path.join(ksft, name))))
        # The first kselftest part, the helpers alone: no program yet.
        first = series.filter_makefile(
            text, {'aux_common.c', 'aux_common.h'}.__contains__)
        self.assertNotIn('_test', first)
        self.assertIn('LOCAL_HDRS += aux_common.h\n', first)
        self.assertNotIn('aux_trace.h', first)

    def test_config(self) -> None:
        # The series' config: the project's up to the extended options.
        with open(os.path.join(ROOT, series.KSFT, 'config')) as f:
            text = f.read()
        ours = series.ksft_file('', f'{series.KSFT}/config')
        self.assertTrue(text.startswith(ours))
        self.assertIn('CONFIG_TEST_AUX_PMU=m\n', ours)
        self.assertNotIn('FAIL_PAGE_ALLOC', ours)
        self.assertIn('CONFIG_FAIL_PAGE_ALLOC=y\n', text)

class MaintainersTest(unittest.TestCase):
    MAINTAINERS = ('FOO\nM:\tA <a@b>\nF:\ta/foo.c\nF:\tz/zz.c\n\n'
                   'PERFORMANCE EVENTS SUBSYSTEM\nM:\tP <p@q>\n'
                   'F:\tkernel/events/*\nF:\ttools/perf/\n\nZED\nF:\tz\n')

    def test_line(self) -> None:
        with tempfile.TemporaryDirectory() as root:
            d = os.path.join(root, 'k')
            os.makedirs(d)
            for name in ('a.c', 'a.h', 'b.c'):
                open(os.path.join(d, name), 'w').close()

            def line(pattern: str, path: str) -> Optional[str]:
                return series.maintainers_line(pattern, path, root)

            # A .c and its .h: one line.
            self.assertEqual('k/a.[ch]', line('k/', 'k/a.c'))
            self.assertEqual('k/a.[ch]', line('k/', 'k/a.h'))
            self.assertEqual('k/b.c', line('k/', 'k/b.c'))
            # The directory itself: its own line.
            self.assertEqual('k/', line('k/', 'k'))
            self.assertEqual('x/y.c', line('x/y.c', 'x/y.c'))
            self.assertIsNone(line('x/y.c', 'x/z.c'))
            self.assertIsNone(line('k/', 'j/a.c'))
            self.assertIsNone(line('', 'k/a.c'))

    def test_insert(self) -> None:
        out = series.insert_f_line(self.MAINTAINERS,
                                   'PERFORMANCE EVENTS SUBSYSTEM',
                                   'lib/test_aux_pmu.c')
        self.assertEqual(self.MAINTAINERS.replace(
            'F:\ttools/perf/',
            'F:\tlib/test_aux_pmu.c\nF:\ttools/perf/'), out)
        # Last in its section: before the blank line that ends it.
        out = series.insert_f_line(self.MAINTAINERS,
                                   'PERFORMANCE EVENTS SUBSYSTEM', 'zz.c')
        self.assertEqual(self.MAINTAINERS.replace(
            'F:\ttools/perf/\n', 'F:\ttools/perf/\nF:\tzz.c\n'), out)
        # A line it has already: left as it is.
        self.assertEqual(out, series.insert_f_line(out, 'PERFORMANCE EVENTS SUBSYSTEM', 'zz.c'))
        # The last section of the file, without a blank line after it:
        # left as it is.
        self.assertEqual(self.MAINTAINERS, series.insert_f_line(
            self.MAINTAINERS, 'ZED', 'zz'))

class MessageTest(unittest.TestCase):
    def test_sign_off(self) -> None:
        self.assertEqual('subject\n\nbody\n\nSigned-off-by: A <a@b>\n',
                         series.commit_message('subject\n\nbody\n', 'A <a@b>'))
        # A trailer block (Fixes:) takes the sign-off in.
        self.assertEqual('s\n\nFixes: 0123 ("x")\nSigned-off-by: A <a@b>\n',
                         series.commit_message('s\n\nFixes: 0123 ("x")\n',
                                               'A <a@b>'))
        self.assertEqual('s\n\n\nSigned-off-by: A <a@b>\n',
                         series.commit_message('s\n\n', 'A <a@b>'))

    def test_author(self) -> None:
        with mock.patch.dict(os.environ, PERF_AUX_AUTHOR='A B <a@b>'):
            self.assertEqual('A B <a@b>', series.author())
        env = series.identity('A B <a@b>')
        self.assertEqual(('A B', 'a@b', 'A B', 'a@b'),
                         (env['GIT_AUTHOR_NAME'], env['GIT_AUTHOR_EMAIL'],
                          env['GIT_COMMITTER_NAME'], env['GIT_COMMITTER_EMAIL']))
        # The dates are the project HEAD's: the same commit, the same series.
        self.assertEqual(env['GIT_AUTHOR_DATE'], env['GIT_COMMITTER_DATE'])
        self.assertEqual(env, series.identity('A B <a@b>'))
        self.assertEqual('plain@x', series.identity('plain@x')['GIT_AUTHOR_NAME'])

class ChecksTest(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = self.enterContext(tempfile.TemporaryDirectory())

    def file(self, name: str, text: str) -> str:
        path = Path(self.dir, name)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return str(path)

    def test_numstat(self) -> None:
        p = self.file('p.patch', patch('a.c:3', 'b.c:2',
                                       message='+ not counted\n+++ nor this'))
        self.assertEqual([(3, 'a.c'), (2, 'b.c')], series.numstat(p))

    def test_line(self) -> None:
        self.assertEqual('ok - series: x', series.check_line(0, 'x'))
        self.assertEqual('not ok - series: x', series.check_line(128, 'x'))
        self.assertEqual('not ok - fixes: x', series.check_line(1, 'x', 'fixes'))

    def test_checkpatch(self) -> None:
        # A stand-in checkpatch.pl: its findings, then its totals.
        src = self.dir
        self.file('scripts/checkpatch.pl', 'print "a.patch:1: WARNING: x\\n";\nprint '
                  '"total: $ENV{TOTALS}\\n" unless grep { $_ eq "--terse" } @ARGV;\n')
        warned = '0 errors, 1 warnings, 0 checks, 12 lines checked'
        with mock.patch.dict(os.environ, TOTALS=warned), \
                contextlib.redirect_stdout(io.StringIO()) as shown:
            rc, line = series.checkpatch(src, '/o/0001-x.patch')
        self.assertEqual((1, 'checkpatch --strict 0001-x.patch: 0 errors, 1 warnings, 0 checks, '
                          '12 lines checked'), (rc, line))
        self.assertEqual('a.patch:1: WARNING: x\n', shown.getvalue())
        clean = '0 errors, 0 warnings, 0 checks, 5 lines checked'
        with mock.patch.dict(os.environ, TOTALS=clean), \
                contextlib.redirect_stdout(io.StringIO()) as shown:
            self.assertEqual(0, series.checkpatch(src, '/o/0001-x.patch')[0])
        self.assertEqual('', shown.getvalue())

    def test_size(self) -> None:
        ksft = series.KSFT
        names = [f'/o/000{i}-p.patch' for i in range(1, 4)]
        stats = [[(1200, 'kernel/a.c')], [(1001, f'{ksft}/a.c')], [(10, f'{ksft}/b.c')]]
        self.assertEqual(
            ['not ok - series: 3 patches, at least '
             f'{series.SERIES_MIN_PATCHES}',
             'ok - series: 0001-p.patch: 1200 added lines, more than 1000 '
             '# SKIP not a kselftest part: one suite, one file',
             'not ok - series: 0002-p.patch: 1001 added lines, more than 1000',
             'not ok - series: no kselftest patch adds more than 1000 lines '
             '(at most 1001)'],
            series.size_lines(names, stats))
        many = [f'/o/{i:04}-p.patch' for i in range(1, 10)]
        self.assertEqual(
            ['ok - series: 9 patches, at least 9',
             'ok - series: no kselftest patch adds more than 1000 lines '
             '(at most 10)'],
            series.size_lines(many, [[(10, f'{ksft}/b.c')]] * 9))

    def test_stock(self) -> None:
        self.assertEqual("ok - series: the stock tree holds the series' 17 "
                         'kernel files and, but for the fixes, 1 more: its '
                         "KUnit run is the series' own without the fixes",
                         series.stock_line(17, 1, 0))
        self.assertEqual("not ok - series: the stock tree holds the series' 3 "
                         "kernel files: its KUnit run is the series' own",
                         series.stock_line(3, 0, 1))

    def test_uapi(self) -> None:
        self.assertTrue(series.UAPI.match('include/uapi/linux/a.h'))
        self.assertTrue(series.UAPI.match('arch/arm64/include/uapi/a.h'))
        self.assertFalse(series.UAPI.match('include/linux/a.h'))

    def test_git_am(self) -> None:
        """A series that does not apply is given up before the next git am."""
        src = os.path.join(self.dir, 'src')
        self.file('src/a.c', 'a\n')
        s = mock.Mock(env=series.identity('A <a@b>'))
        s.git = lambda repo, *args, **kw: series.Series.git(s, repo, *args, **kw)
        repo = os.path.join(self.dir, 'repo')
        lib.base_repo(src, repo, 'base', 'a.c')
        good = self.file('good.patch', 'From: A <a@b>\nSubject: [PATCH] a\n\n---\n'
                         'diff --git a/a.c b/a.c\n--- a/a.c\n+++ b/a.c\n@@ -1 +1 @@\n-a\n+b\n')
        bad = self.file('bad.patch', series.read(good).replace('-a\n', '-x\n'))
        log = os.path.join(self.dir, 'am.log')
        with contextlib.redirect_stdout(io.StringIO()) as shown:
            self.assertNotEqual(0, series.git_am(s, repo, 'try', [bad], log))
            self.assertEqual(0, series.git_am(s, repo, 'try', [good], log))
        self.assertIn('patch failed', shown.getvalue().lower())
        with open(os.path.join(repo, 'a.c')) as f:
            self.assertEqual('b\n', f.read())

class ShellTest(unittest.TestCase):
    """perf_aux.shell: a script's status from what ended it."""

    def test_lib(self) -> None:
        self.assertEqual(os.path.join(ROOT, 'scripts/patches/7.3'),
                         lib.base_patches('7.3'))
        self.assertEqual(ROOT, lib.ROOT)
        self.assertEqual(lib.BASES[0], lib.default_base())
        self.assertEqual(['nohugevmalloc', 'perf_aux.strict'],
                         lib.variant_args('nohugevmalloc'))
        self.assertFalse(lib.granule_strict('stock', 'default'))
        self.assertTrue(lib.granule_strict('stock', 'strict'))

    def test_status(self) -> None:
        """A failed step raises the one error with its status; a program
        past its time is status 124, as timeout(1) says."""
        with mock.patch('sys.stderr'), self.assertRaises(lib.Error) as e:
            lib.check('BASE', '0.1', lib.BASES)
        self.assertEqual(2, e.exception.status)
        with self.assertRaises(lib.Error) as e:
            lib.run(['sh', '-c', 'exit 3'], check=True)
        self.assertEqual(3, e.exception.status)
        self.assertEqual(124, lib.status(['sleep', '5'], timeout=0.1))
        self.assertEqual('a', lib.text(['echo', 'a']))

    def test_stage_block(self) -> None:
        """The end line gives the time and the status the block put, or
        the exit status of what ended it."""
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            with shell.stage_block('a') as status:
                status[0] = 3
            with self.assertRaises(SystemExit):
                with shell.stage_block('b'):
                    raise SystemExit(7)
            self.assertEqual(0, shell.stage('c', lambda: 0))
        lines = out.getvalue().split('\n')
        self.assertRegex(lines[1], r'^<== a: [0-9]+ s, exit 3$')
        self.assertRegex(lines[3], r'^<== b: [0-9]+ s, exit 7$')
        self.assertRegex(lines[5], r'^<== c: [0-9]+ s$')

    def test_unknown_base(self) -> None:
        # The command, end to end, as far as it goes without a kernel source.
        proc = subprocess.run(lib.perf_aux('series'),
                              env={**os.environ, 'BASE': '0.1'},
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, check=False)
        self.assertEqual(2, proc.returncode)
        self.assertEqual('', proc.stdout)
        self.assertIn("perf_aux: error: unknown BASE='0.1'", proc.stderr)

if __name__ == '__main__':
    unittest.main()
