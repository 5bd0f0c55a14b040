# SPDX-License-Identifier: GPL-2.0
"""scripts/kernel-tree.sh on a user's tree (KERNEL_SRC=): an edit is seen.

A run on a tree of the user's must never report an old kernel's results as
the new one's: the tree's recipe covers its content (a git tree's HEAD, diff
and untracked files; any other tree's sizes and times), and bringing the
cached copy up to date rewrites the edited file only, so that make rebuilds
that object and nothing else.  The functions are sourced from the script
and run on a small stand-in tree.
"""

import glob
import os
import re
import shutil
import subprocess
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(os.path.dirname(HERE), 'kernel-tree.sh')


class TreeTestCase(unittest.TestCase):
    """A stand-in kernel tree: kernelversion and two source files."""

    def setUp(self) -> None:
        self.dir = tempfile.mkdtemp(prefix='kernel-tree.')
        self.src = os.path.join(self.dir, 'linux')
        os.makedirs(os.path.join(self.src, 'mm'))
        self.write('Makefile', 'kernelversion:\n\t@echo 7.3.0\n')
        self.write('mm/vmalloc.c', 'int vmap;\n')
        self.write('mm/util.c', 'int util;\n')

    def tearDown(self) -> None:
        shutil.rmtree(self.dir)

    def write(self, path: str, text: str) -> None:
        with open(os.path.join(self.src, path), 'w') as f:
            f.write(text)

    def shell(self, command: str, *args: str) -> str:
        """COMMAND with kernel-tree.sh's functions, base 7.3."""
        env = dict(os.environ, PERF_AUX_CACHE=os.path.join(self.dir, 'cache'))
        out = subprocess.run(
            ['bash', '-c', f'. "{SCRIPT}"; base=7.3; {command}', 'sh', *args],
            env=env, check=True, capture_output=True, text=True)
        return out.stdout

    def recipe(self) -> str:
        return self.shell('recipe "$1" custom ""', self.src)

    def git(self, *args: str) -> None:
        subprocess.run(['git', '-C', self.src, '-c', 'user.name=t',
                        '-c', 'user.email=t@t', *args], check=True,
                       capture_output=True)


class PlainTreeTest(TreeTestCase):

    def test_same_tree_same_recipe(self) -> None:
        self.assertEqual(self.recipe(), self.recipe())

    def test_edited_file_changes_the_recipe(self) -> None:
        before = self.recipe()
        self.write('mm/vmalloc.c', 'int vmap = 1;\n')
        self.assertNotEqual(before, self.recipe())

    def test_touched_file_changes_the_recipe(self) -> None:
        before = self.recipe()
        path = os.path.join(self.src, 'mm/util.c')
        os.utime(path, (time.time() + 10, time.time() + 10))
        self.assertNotEqual(before, self.recipe())

    def test_described_as_not_git(self) -> None:
        self.assertIn('not a git tree',
                      self.shell('tree_describe "$1"', self.src))


class GitTreeTest(TreeTestCase):

    def setUp(self) -> None:
        super().setUp()
        self.git('init', '-q')
        self.git('add', '-A')
        self.git('commit', '-qm', 'base')

    def test_uncommitted_edit_changes_the_recipe_and_is_dirty(self) -> None:
        before = self.recipe()
        self.write('mm/vmalloc.c', 'int vmap = 1;\n')
        self.assertNotEqual(before, self.recipe())
        self.assertTrue(self.shell('tree_describe "$1"', self.src)
                        .strip().endswith('-dirty'))

    def test_commit_changes_the_recipe(self) -> None:
        self.write('mm/vmalloc.c', 'int vmap = 1;\n')
        dirty = self.recipe()
        self.git('commit', '-qam', 'edit')
        self.assertNotEqual(dirty, self.recipe())
        self.assertFalse(self.shell('tree_describe "$1"', self.src)
                         .strip().endswith('-dirty'))

    def test_untracked_file_changes_the_recipe(self) -> None:
        before = self.recipe()
        self.write('mm/new.c', 'int n;\n')
        self.assertNotEqual(before, self.recipe())


class SyncTest(TreeTestCase):
    """The cached copy: only the edited file gets a new time."""

    def sync(self, tree: str) -> None:
        staging = os.path.join(self.dir, 'staging')
        os.makedirs(staging, exist_ok=True)
        open(staging + '.files', 'w').close()
        self.shell(f'staging="{staging}"; sync_tree custom "$1" "$2"',
                   self.src, tree)

    def test_only_the_edited_file_is_rewritten(self) -> None:
        tree = os.path.join(self.dir, 'tree')
        shutil.copytree(self.src, tree)
        self.sync(tree)
        old = {p: os.stat(os.path.join(tree, p)).st_mtime_ns
               for p in ('mm/vmalloc.c', 'mm/util.c')}
        time.sleep(0.05)
        self.write('mm/vmalloc.c', 'int vmap = 1;\n')
        self.sync(tree)
        with open(os.path.join(tree, 'mm/vmalloc.c')) as f:
            self.assertEqual('int vmap = 1;\n', f.read())
        self.assertGreater(os.stat(os.path.join(tree, 'mm/vmalloc.c'))
                           .st_mtime_ns, old['mm/vmalloc.c'])
        self.assertEqual(os.stat(os.path.join(tree, 'mm/util.c'))
                         .st_mtime_ns, old['mm/util.c'])


class SeriesTest(TreeTestCase):
    """SERIES=: a series is git am'd onto the base's files; one that does
    not apply stops with the patch that failed; its subject names it."""

    def make_series(self, second: str) -> str:
        """Two mails as git format-patch writes them: one that changes
        mm/vmalloc.c, and SECOND's change to mm/util.c after it."""
        repo = os.path.join(self.dir, 'author')
        shutil.copytree(self.src, repo)
        run = lambda *a: subprocess.run(
            ['git', '-C', repo, '-c', 'user.name=a', '-c', 'user.email=a@a',
             *a], check=True, capture_output=True)
        run('init', '-q')
        run('add', '-A')
        run('commit', '-q', '-m', 'base')
        with open(os.path.join(repo, 'mm/vmalloc.c'), 'a') as f:
            f.write('int large;\n')
        run('commit', '-q', '-am', 'mm/vmalloc: map large runs')
        with open(os.path.join(repo, 'mm/util.c'), 'w') as f:
            f.write(second)
        run('commit', '-q', '-am', 'mm/util: follow up')
        out = os.path.join(self.dir, 'series')
        run('format-patch', '-q', '--cover-letter', '-v4', '-o', out,
            'HEAD~2')
        return out

    def series(self, command: str, series: str) -> subprocess.CompletedProcess:
        env = dict(os.environ, PERF_AUX_CACHE=os.path.join(self.dir, 'cache'),
                   SERIES=series)
        return subprocess.run(
            ['bash', '-c', f'. "{SCRIPT}"; base=7.3; {command}', 'sh',
             self.src], env=env, capture_output=True, text=True)

    def test_series_applies_with_git_am(self) -> None:
        series = self.make_series('int util2;\n')
        out = self.series('series_am "$1" && cat "$(series_diff)"', series)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn('series: 2 patches applied with git am', out.stdout)
        self.assertIn('+int large;', out.stdout)
        self.assertIn('+int util2;', out.stdout)

    def test_series_in_quilt_form_applies(self) -> None:
        # Andrew Morton's mm queue, where posted series wait for mainline,
        # keeps patches in quilt's form: no "diff --git", the old name
        # suffixed "~patch-name", the new one under a/.  git am takes them.
        series = self.make_series('int util2;\n')
        mails = glob.glob(os.path.join(series, 'v4-000[12]-*.patch'))
        self.assertEqual(len(mails), 2)
        for name in mails:
            with open(name) as f:
                text = f.read()
            text = re.sub(r'^diff --git .*\n(index .*\n)?', '', text,
                          flags=re.M)
            text = re.sub(r'^--- a/(\S+)', r'--- a/\1~the-patch', text,
                          flags=re.M)
            text = re.sub(r'^\+\+\+ b/', '+++ a/', text, flags=re.M)
            with open(name, 'w') as f:
                f.write(text)
        out = self.series('series_am "$1" && cat "$(series_diff)"', series)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn('series: 2 patches applied with git am', out.stdout)
        self.assertIn('+int large;', out.stdout)
        self.assertIn('+int util2;', out.stdout)

    def test_series_that_does_not_apply_names_the_patch(self) -> None:
        series = self.make_series('int util2;\n')
        # The base the author had is not ours: the second patch fails.
        self.write('mm/util.c', 'int other;\n')
        out = self.series('series_am "$1"', series)
        self.assertNotEqual(out.returncode, 0)
        self.assertIn('does not apply to 7.3: 0002 mm/util: follow up',
                      out.stderr)
        self.assertIn('error: patch failed: mm/util.c', out.stderr)

    def test_subject_and_version_name_the_run(self) -> None:
        series = self.make_series('int util2;\n')
        out = self.series('series_subject; series_version; '
                          'kernel_name reference; kernel_name stock', series)
        self.assertEqual(out.stdout.splitlines(), [
            '[PATCH v4 0/2] *** SUBJECT HERE ***', 'v4', 'series-v4',
            'stock'])

    def test_version_of_a_single_mbox(self) -> None:
        mbox = os.path.join(self.dir, 'one.mbox')
        with open(mbox, 'w') as f:
            f.write('From x\nSubject: [RFC PATCH v12 1/3] mm/vmalloc: a\n'
                    ' long subject\n\nbody\n')
        out = self.series('series_subject; series_version', mbox)
        self.assertEqual(out.stdout.splitlines(), [
            '[RFC PATCH v12 1/3] mm/vmalloc: a long subject', 'v12'])


if __name__ == '__main__':
    unittest.main()
