# SPDX-License-Identifier: GPL-2.0
"""The user documentation names only what exists: every relative link of
README.md, docs/ and the READMEs beside the LAVA jobs and integrations
resolves, to a heading where it has an #anchor, and every path of the
checkout they name is there."""
import glob
import os
import re
import unittest
from typing import Iterator, List, Set

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))
PAGES = ['README.md', 'lava-jobs/README.md', 'integrations/README.md',
         *sorted(os.path.relpath(p, ROOT)
                 for p in glob.glob(f'{ROOT}/docs/*.md'))]
LINK = re.compile(r'\]\(([^)\s]+)\)')
FENCE = re.compile(r'^```.*?^```', re.M | re.S)
# A path starting at a top-level directory of the checkout (out/ is what
# runs write, not the checkout's).
PATH = re.compile(r'(?<![\w./-])((?:%s)/[^\s`\'"()]*)' % '|'.join(
    re.escape(d) for d in sorted(os.listdir(ROOT))
    if os.path.isdir(os.path.join(ROOT, d)) and d not in ('.git', 'out')))
# Files of the kernel tree a run builds, not of the checkout.
KERNEL_FILES = {'tools/testing/kunit/kunit.py'}

def read(page: str) -> str:
    with open(os.path.join(ROOT, page), encoding='utf-8') as f:
        return f.read()

def anchors(page: str) -> Set[str]:
    """GitHub's ids of the page's headings."""
    ids: Set[str] = set()
    for heading in re.findall(r'^#+ +(.+?) *$', FENCE.sub('', read(page)),
                              re.M):
        slug = re.sub(r'[^\w\- ]', '', heading.lower()).replace(' ', '-')
        n = 0
        while (slug if n == 0 else f'{slug}-{n}') in ids:
            n += 1
        ids.add(slug if n == 0 else f'{slug}-{n}')
    return ids

def patched_files() -> Set[str]:
    """The kernel files the project's patches change."""
    files = set()
    for patch in glob.glob(f'{ROOT}/scripts/*/*/*/*.patch'):
        with open(patch, encoding='utf-8', errors='replace') as f:
            files.update(re.findall(r'^\+\+\+ b/(\S+)', f.read(), re.M))
    return files

def tree_files(block: str) -> Iterator[str]:
    """The files a code block lists, two spaces in, below a directory."""
    directory = ''
    for line in block.splitlines():
        if not line.startswith(' '):
            m = PATH.match(line)
            directory = m.group(1) if m and m.group(1).endswith('/') else ''
            continue
        m = re.match(r'  ((?:[\w.-]+\.py, )*[\w.-]+\.py)(?:\s|$)', line)
        if directory and m:
            yield from (directory + name for name in m.group(1).split(', '))

def named_paths(text: str) -> Iterator[str]:
    """The checkout paths in code spans and code blocks; a placeholder
    (<base>, [-<variant>]) stands for any name."""
    spans = re.findall(r'`([^`\n]+)`', FENCE.sub('', text))
    blocks = FENCE.findall(text)
    for path in [p for code in spans + blocks for p in PATH.findall(code)]:
        path = path.rstrip('.,:;')
        if '...' not in path and '…' not in path:
            yield re.sub(r'<[^>]*>', '*', re.sub(r'\[[^]]*\]', '', path))
    for block in blocks:
        yield from tree_files(block)

class DocsTest(unittest.TestCase):
    def test_links_resolve(self) -> None:
        for page in PAGES:
            for target in LINK.findall(read(page)):
                if re.match(r'[a-z]+:', target):
                    continue
                path, _, anchor = target.partition('#')
                path = os.path.normpath(os.path.join(os.path.dirname(page),
                                                     path)) if path else page
                with self.subTest(page=page, link=target):
                    self.assertTrue(os.path.exists(os.path.join(ROOT, path)))
                    if anchor:
                        self.assertIn(anchor, anchors(path))

    def test_paths_exist(self) -> None:
        kernel = patched_files() | KERNEL_FILES
        for page in PAGES:
            for path in named_paths(read(page)):
                with self.subTest(page=page, path=path):
                    self.assertTrue(glob.glob(os.path.join(ROOT, path)) or
                                    path.rstrip('/') in kernel)

    def test_the_checks_see_what_they_check(self) -> None:
        self.assertIn('what-a-run-needs', anchors('README.md'))
        self.assertEqual(['scripts/patches/*/hookup/', 'lib/test_vmalloc.c',
                          'scripts/expected/*/*.txt'],
                         list(named_paths(
                             'see `scripts/patches/<base>/hookup/`, '
                             '`lib/test_vmalloc.c`, `foo/bar`,\n```\n'
                             'cat scripts/expected/<base>/<target>[-<v>].txt'
                             '\n```\n')))
        self.assertEqual(['scripts/perf_aux/', 'scripts/perf_aux/check.py',
                          'scripts/perf_aux/lib.py', 'scripts/perf_aux/a.py'],
                         list(named_paths(
                             '```\nscripts/perf_aux/  the glue\n'
                             '  check.py, lib.py    stages\n'
                             '                      and more.py\n'
                             '  a.py  x\nmake run\n  b.py\n```\n')))

if __name__ == '__main__':
    unittest.main()
