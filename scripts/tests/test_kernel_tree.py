# SPDX-License-Identifier: GPL-2.0
"""perf_aux.tree (the kernel-tree verb): the recipe and the staging.

A run on a tree of the user's (KERNEL_SRC=) must never report an old
kernel's results as the new one's: the tree's recipe covers its content (a
git tree's HEAD, diff and untracked files; any other tree's sizes and
times), and bringing the cached copy up to date rewrites the edited file
only, so that make rebuilds that object and nothing else.  The functions
run on a small stand-in tree; the pure parts (the recipe's composition,
what changed since the last staging, the listings the shell version made
with find and sha256sum) are checked against what the tools print.
"""

import contextlib
import glob
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path
from typing import List
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.dirname(HERE)
ROOT = os.path.dirname(SCRIPTS)
sys.path.insert(0, SCRIPTS)
from perf_aux import lib, tree  # noqa: E402

class TreeTestCase(unittest.TestCase):
    """A stand-in kernel tree: kernelversion and two source files."""

    def setUp(self) -> None:
        self.dir = tempfile.mkdtemp(prefix='kernel-tree.')
        self.cache = os.path.join(self.dir, 'cache')
        self.src = os.path.join(self.dir, 'linux')
        os.makedirs(os.path.join(self.src, 'mm'))
        self.write('Makefile', 'kernelversion:\n\t@echo 7.3.0\n')
        self.write('mm/vmalloc.c', 'int vmap;\n')
        self.write('mm/util.c', 'int util;\n')
        env = mock.patch.dict(os.environ, PERF_AUX_CACHE=self.cache)
        env.start()
        self.addCleanup(env.stop)

    def tearDown(self) -> None:
        shutil.rmtree(self.dir)

    def write(self, path: str, text: str) -> None:
        with open(os.path.join(self.src, path), 'w') as f:
            f.write(text)

    def recipe(self) -> str:
        """The custom tree's recipe, base 7.3."""
        patches = tree.patch_list('custom', '', self.cache, '7.3')
        return tree.recipe(ROOT, self.src, lib.tree_version(self.src),
                           'custom', patches)

    def git(self, *args: str) -> None:
        subprocess.run(['git', '-C', self.src, '-c', 'user.name=t',
                        '-c', 'user.email=t@t', *args], check=True,
                       capture_output=True)

class PlainTreeTest(TreeTestCase):

    def test_same_tree_same_recipe(self) -> None:
        self.assertEqual(self.recipe(), self.recipe())

    def test_clones_share_the_recipe(self) -> None:
        """A second clone of the project names its patches as the first
        does: the recipe hashes their paths in the project, not where the
        clone is."""
        clone = os.path.join(self.dir, 'clone')
        shutil.copytree(ROOT, clone, symlinks=True,
                        ignore=shutil.ignore_patterns('out', '.git'))
        version = lib.tree_version(self.src)
        patches = tree.patch_list('custom', '', self.cache, '7.3')
        moved = [os.path.join(clone, os.path.relpath(p, ROOT))
                 for p in patches]
        self.assertTrue(moved)
        self.assertEqual(
            tree.recipe(ROOT, self.src, version, 'custom', patches),
            tree.recipe(clone, self.src, version, 'custom', moved))

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
        self.assertIn('not a git tree', tree.tree_describe(self.src))

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
        self.assertTrue(tree.tree_describe(self.src).endswith('-dirty'))

    def test_commit_changes_the_recipe(self) -> None:
        self.write('mm/vmalloc.c', 'int vmap = 1;\n')
        dirty = self.recipe()
        self.git('commit', '-qam', 'edit')
        self.assertNotEqual(dirty, self.recipe())
        self.assertFalse(tree.tree_describe(self.src).endswith('-dirty'))

    def test_untracked_file_changes_the_recipe(self) -> None:
        before = self.recipe()
        self.write('mm/new.c', 'int n;\n')
        self.assertNotEqual(before, self.recipe())

    def test_state_as_git_and_sha256sum_print_it(self) -> None:
        self.write('mm/vmalloc.c', 'int vmap = 1;\n')
        self.write('mm/new.c', 'int n;\n')
        self.write('mm/back\\slash.c', 'int b;\n')
        shell_state = subprocess.run(
            ['bash', '-c', 'cd "$1" && git rev-parse HEAD && git diff HEAD '
             '&& git ls-files --others --exclude-standard -z | '
             'xargs -0r sha256sum', 'sh', self.src],
            check=True, capture_output=True).stdout
        self.assertEqual(shell_state, tree.tree_state(self.src))

class ListingTest(TreeTestCase):
    """The listings find and sort made in the shell version."""

    def setUp(self) -> None:
        super().setUp()
        os.makedirs(os.path.join(self.src, 'mm/tests/deep'))
        os.makedirs(os.path.join(self.src, '.git'))
        self.write('.git/HEAD', 'x\n')
        self.write('mm/tests/deep/a.c', 'a\n')
        self.write('mm/tests/B.h', 'b\n')
        os.symlink('B.h', os.path.join(self.src, 'mm/tests/link.h'))
        os.utime(os.path.join(self.src, 'mm/util.c'), ns=(0, 1234567890123))

    def sh(self, command: str) -> str:
        return subprocess.run(['bash', '-c', command, 'sh', self.src],
                              check=True, capture_output=True,
                              text=True).stdout

    def test_state_of_a_plain_tree_as_find_prints_it(self) -> None:
        self.assertEqual(
            self.sh("cd \"$1\" && find . -path ./.git -prune -o -type f "
                    "-printf '%P %s %T@\\n' | LC_ALL=C sort"),
            tree.tree_state(self.src).decode())

    def test_walk_as_find(self) -> None:
        self.assertEqual(
            sorted(self.sh("cd \"$1\" && find . -path ./.git -prune -o -type f -print "
                           "-o -type l -print | sed 's#^\\./##'").splitlines()),
            sorted(tree.walk(self.src)))

class RecipeTest(TreeTestCase):
    """What the recipe is made of: an edit of any part is a new tree."""

    def setUp(self) -> None:
        super().setUp()
        self.root = os.path.join(self.dir, 'root')
        self.patch = os.path.join(self.dir, 'one.patch')
        with open(self.patch, 'w') as f:
            f.write('a patch\n')
        for path in tree.OVERLAY:
            name = os.path.join(self.root, path)
            if path in ('mm/tests', 'tools/testing/selftests/perf_aux'):
                name = os.path.join(name, 'file.c')
            os.makedirs(os.path.dirname(name), exist_ok=True)
            with open(name, 'w') as f:
                f.write(path + '\n')

    def recipe_of(self, version: str = '7.3.0', name: str = 'stock',
                  patches: List[str] = None) -> str:
        return tree.recipe(self.root, self.src, version, name,
                           [self.patch] if patches is None else patches)

    def test_as_the_shell_composed_it(self) -> None:
        """Links in the overlay left out, a patch outside the project by its own path."""
        os.symlink('file.c', os.path.join(self.root, 'mm/tests/link.c'))
        self.patch = os.path.join(self.dir, 'elsewhere', 'm.patch')
        os.makedirs(os.path.dirname(self.patch))
        with open(self.patch, 'w') as f:
            f.write('a mutant\n')
        overlay = ' '.join(tree.OVERLAY)
        expected = subprocess.run(
            ['bash', '-c', f'{{ echo "$2 7.3.0"; echo "$3"; cat "$3"; '
             f'cd "$1" && for f in $(find {overlay} -type f | sort); do '
             'echo "$f"; cat "$f"; done; } | sha256sum | cut -d" " -f1',
             'sh', self.root, self.src, self.patch],
            check=True, capture_output=True, text=True).stdout.strip()
        self.assertEqual(expected, self.recipe_of())

    def test_every_part_counts(self) -> None:
        before = self.recipe_of()
        self.assertEqual(before, self.recipe_of())
        self.assertNotEqual(before, self.recipe_of(version='7.3.1'))
        self.assertNotEqual(before, self.recipe_of(patches=[]))
        with open(self.patch, 'a') as f:
            f.write('more\n')
        self.assertNotEqual(before, self.recipe_of())

    def test_overlay_edit_counts(self) -> None:
        before = self.recipe_of()
        with open(os.path.join(self.root, 'mm/tests/file.c'), 'a') as f:
            f.write('more\n')
        self.assertNotEqual(before, self.recipe_of())

    def test_user_tree_state_only_for_custom(self) -> None:
        stock = self.recipe_of(name='stock')
        custom = self.recipe_of(name='custom')
        self.assertNotEqual(stock, custom)
        self.write('mm/util.c', 'int util = 2;\n')
        self.assertEqual(stock, self.recipe_of(name='stock'))
        self.assertNotEqual(custom, self.recipe_of(name='custom'))

class PatchListTest(unittest.TestCase):
    """The order the patches apply in, for each kind of tree."""

    def names(self, name: str, mutant: str = '') -> List[str]:
        return [os.path.relpath(p, ROOT) if p.startswith(ROOT) else p
                for p in tree.patch_list(name, mutant, '/cache', '7.3')]

    def test_kinds(self) -> None:
        hookup = sorted(os.path.relpath(p, ROOT) for p in glob.glob(
            os.path.join(ROOT, 'scripts/patches/7.3/hookup/*.patch')))
        reference = sorted(os.path.relpath(p, ROOT) for p in glob.glob(
            os.path.join(ROOT, 'scripts/patches/7.3/reference/*.patch')))
        self.assertTrue(hookup and reference)
        self.assertEqual(hookup, self.names('stock'))
        self.assertEqual(hookup, self.names('custom'))
        self.assertEqual(hookup + reference, self.names('reference'))
        self.assertEqual(hookup + reference + ['/m.patch'],
                         self.names('mutant', '/m.patch'))
        self.assertEqual(['/cache/series-am/7.3.diff'] + hookup,
                         self.names('series-v2'))

class UnstagedTest(unittest.TestCase):
    """What a restaging puts back: staged before and not now."""

    def test_restore(self) -> None:
        work = tempfile.mkdtemp(prefix='kernel-tree.')
        self.addCleanup(shutil.rmtree, work)
        src, made = os.path.join(work, 'src'), os.path.join(work, 'tree')
        for d in (src, made):
            os.makedirs(d)
        for path, text in ((src + '/kept.c', 'src\n'),
                           (made + '/kept.c', 'mutated\n'),
                           (made + '/added.c', 'added\n'),
                           (made + '/now.c', 'staged\n')):
            with open(path, 'w') as f:
                f.write(text)
        old, new = os.path.join(work, 'old'), os.path.join(work, 'new')
        Path(old).write_text('/kept.c\n/added.c\n/now.c\n')
        Path(new).write_text('/now.c\n')
        tree.restore_unstaged(src, made, old, new)
        self.assertEqual(['kept.c', 'now.c'], sorted(os.listdir(made)))
        with open(made + '/kept.c') as f:
            self.assertEqual('src\n', f.read())

class SyncTest(TreeTestCase):
    """The cached copy: only the edited file gets a new time."""

    def sync(self, made: str) -> None:
        staging = os.path.join(self.dir, 'staging')
        os.makedirs(staging, exist_ok=True)
        open(staging + '.files', 'w').close()
        tree.sync_tree('custom', self.src, made, staging)

    def test_only_the_edited_file_is_rewritten(self) -> None:
        made = os.path.join(self.dir, 'tree')
        shutil.copytree(self.src, made)
        self.sync(made)
        old = {p: os.stat(os.path.join(made, p)).st_mtime_ns
               for p in ('mm/vmalloc.c', 'mm/util.c')}
        time.sleep(0.05)
        self.write('mm/vmalloc.c', 'int vmap = 1;\n')
        self.sync(made)
        with open(os.path.join(made, 'mm/vmalloc.c')) as f:
            self.assertEqual('int vmap = 1;\n', f.read())
        self.assertGreater(os.stat(os.path.join(made, 'mm/vmalloc.c'))
                           .st_mtime_ns, old['mm/vmalloc.c'])
        self.assertEqual(os.stat(os.path.join(made, 'mm/util.c'))
                         .st_mtime_ns, old['mm/util.c'])

class KernelTreeTest(TreeTestCase):
    """A Debian source's tree: staged, up to date, restaged, a sibling seeded from it."""

    def test_tree(self) -> None:
        src = os.path.join(self.cache, 'src', '7.3')
        shutil.copytree(self.src, src)
        with open(os.path.join(src, '.perf_aux-debian'), 'w') as f:
            f.write('7.3-1\n')
        fix = os.path.join(self.dir, 'fix.patch')
        with open(fix, 'w') as f:
            f.write('--- a/mm/vmalloc.c\n+++ b/mm/vmalloc.c\n@@ -1 +1 @@\n-int vmap;\n'
                    '+int vmap = 2;\n')
        made = os.path.join(self.cache, 'trees', '7.3-stock')

        def kernel_tree(kernel: str, patches: List[str], mutant: str = '') -> str:
            out = io.StringIO()
            with mock.patch.object(tree, 'patch_list', return_value=patches), \
                    contextlib.redirect_stdout(out):
                tree.kernel_tree(lib.Run(kernel, '7.3'), mutant)
            return out.getvalue()

        def read(path: str) -> str:
            with open(os.path.join(made, path)) as f:
                return f.read()
        kernel_tree('stock', [fix])
        self.assertEqual('int vmap = 2;\n', read('mm/vmalloc.c'))
        with open(os.path.join(ROOT, 'lib/test_aux_pmu.c')) as f:
            self.assertEqual(f.read(), read('lib/test_aux_pmu.c'))
        self.assertIn('/mm/vmalloc.c\n', read('.perf_aux-staged'))
        self.assertEqual('Debian linux-source-7.3 7.3-1, version 7.3.0\n',
                         read('.perf_aux-source'))
        self.assertIn('is up to date', kernel_tree('stock', [fix]))
        util = os.stat(os.path.join(made, 'mm/util.c')).st_mtime_ns
        kernel_tree('stock', [])
        self.assertEqual('int vmap;\n', read('mm/vmalloc.c'))
        self.assertEqual(util, os.stat(os.path.join(made, 'mm/util.c')).st_mtime_ns)
        self.assertTrue(os.path.isfile(os.path.join(made, 'lib/test_aux_pmu.c')))
        out = kernel_tree('mutant', [fix], fix)
        self.assertIn(f'starting {self.cache}/trees/7.3-mutant from {made}', out)
        with open(os.path.join(self.cache, 'trees', '7.3-mutant', 'mm/vmalloc.c')) as f:
            self.assertEqual('int vmap = 2;\n', f.read())

class CommandTest(unittest.TestCase):
    """The command's complaints and their status, as the shell's."""

    def run_tree(self, *args: str, **env: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            lib.perf_aux('kernel-tree', *args),
            env=dict(os.environ, PERF_AUX_CACHE='/nonexistent', **env),
            capture_output=True, text=True)

    def test_usage(self) -> None:
        out = self.run_tree()
        self.assertEqual(1, out.returncode)
        self.assertIn('usage: python3 -m perf_aux kernel-tree NAME '
                      '[MUTANT.patch]', out.stderr)

    def test_unknown_tree(self) -> None:
        out = self.run_tree('bogus')
        self.assertEqual(2, out.returncode)
        self.assertEqual("perf_aux: error: unknown tree 'bogus'\n", out.stderr)

    def test_custom_needs_kernel_src(self) -> None:
        out = self.run_tree('custom', KERNEL_SRC='')
        self.assertEqual(2, out.returncode)
        self.assertIn('KERNEL_SRC= is not a kernel tree', out.stderr)

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

    def series_am(self, series: str) -> subprocess.CompletedProcess:
        """tree.series_am in a process of its own (perf_aux.lib's die ends it),
        then the diff it made."""
        code = ('import os, sys\nfrom perf_aux import lib, tree\n'
                'try:\n'
                '    tree.series_am(sys.argv[1], sys.argv[2], "7.3",\n'
                '                   os.environ["SERIES"])\n'
                'except lib.Error:\n'
                '    sys.exit(2)\n'
                'print(open(tree.series_diff(sys.argv[2], "7.3")).read())\n')
        return subprocess.run(
            [sys.executable, '-c', code, self.src, self.cache],
            env=dict(os.environ, SERIES=series, PYTHONPATH=SCRIPTS),
            capture_output=True, text=True)

    def lib(self, series: str, *funcs: str) -> List[str]:
        return [getattr(lib, f.split()[0])(*f.split()[1:], series)
                for f in funcs]

    def test_series_applies_with_git_am(self) -> None:
        series = self.make_series('int util2;\n')
        out = self.series_am(series)
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
        out = self.series_am(series)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn('series: 2 patches applied with git am', out.stdout)
        self.assertIn('+int large;', out.stdout)
        self.assertIn('+int util2;', out.stdout)

    def test_series_that_does_not_apply_names_the_patch(self) -> None:
        series = self.make_series('int util2;\n')
        # The base the author had is not ours: the second patch fails.
        self.write('mm/util.c', 'int other;\n')
        out = self.series_am(series)
        self.assertEqual(out.returncode, 2)
        self.assertIn('does not apply to 7.3: 0002 mm/util: follow up',
                      out.stderr)
        self.assertIn('error: patch failed: mm/util.c', out.stderr)

    def test_empty_series_holds_no_patch(self) -> None:
        empty = os.path.join(self.dir, 'empty')
        os.makedirs(empty)
        out = self.series_am(empty)
        self.assertEqual(out.returncode, 2)
        self.assertIn(f'SERIES={empty} holds no patch', out.stderr)

    def test_subject_and_version_name_the_run(self) -> None:
        series = self.make_series('int util2;\n')
        self.assertEqual(self.lib(series, 'series_subject',
                                  'kernel_name reference',
                                  'kernel_name stock'), [
            '[PATCH v4 0/2] *** SUBJECT HERE ***', 'series-v4', 'stock'])

    def test_version_of_a_single_mbox(self) -> None:
        mbox = os.path.join(self.dir, 'one.mbox')
        with open(mbox, 'w') as f:
            f.write('From x\nSubject: [RFC PATCH v12 1/3] mm/vmalloc: a\n'
                    ' long subject\n\nbody\n')
        self.assertEqual(self.lib(mbox, 'series_subject', 'kernel_name reference'),
                         ['[RFC PATCH v12 1/3] mm/vmalloc: a long subject',
                          'series-v12'])

class SeedBuildTest(unittest.TestCase):
    """A tree's first build at another target starts from a sibling's."""

    def test_copied_once_from_the_first_seed(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            trees = os.path.join(d, 'trees')
            for t in ('7.3-reference', '7.3-stock', '7.3-mutant'):
                os.makedirs(os.path.join(trees, t))
            ref = os.path.join(trees, '7.3-reference', '.build-arm64-16k')
            os.makedirs(ref)
            with open(os.path.join(ref, 'vmlinux.o'), 'w') as f:
                f.write('ref')
            mutant = os.path.join(trees, '7.3-mutant')
            with contextlib.redirect_stdout(io.StringIO()):
                tree.seed_build(mutant, '.build-arm64-16k', '7.3')
            copied = os.path.join(mutant, '.build-arm64-16k', 'vmlinux.o')
            with open(copied) as f:
                self.assertEqual('ref', f.read())
            with open(copied, 'w') as f:
                f.write('own')
            tree.seed_build(mutant, '.build-arm64-16k', '7.3')
            with open(copied) as f:
                self.assertEqual('own', f.read())
            # Nothing to start from: nothing made.
            tree.seed_build(mutant, '.build-arm64-64k', '7.3')
            self.assertFalse(os.path.exists(
                os.path.join(mutant, '.build-arm64-64k')))

if __name__ == '__main__':
    unittest.main()
