# SPDX-License-Identifier: GPL-2.0
"""The user documentation names only what exists: every relative link of
README.md, docs/ and the READMEs beside the LAVA jobs and integrations
resolves, and every project path they name in backquotes is there."""
import glob
import os
import re
import unittest


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))
PAGES = ['README.md', 'lava-jobs/README.md', 'integrations/README.md',
         *sorted(os.path.relpath(p, ROOT)
                 for p in glob.glob(f'{ROOT}/docs/*.md'))]
LINK = re.compile(r'\]\(([^)\s]+)\)')
# A path in backquotes under a directory of the project's own.
PATH = re.compile(r'`((?:scripts|docs|lava-jobs|integrations|'
                  r'tools/testing/selftests/perf_aux|mm/tests)/[^`\s]*)`')


class DocsTest(unittest.TestCase):
    def test_links_resolve(self) -> None:
        for page in PAGES:
            text = open(os.path.join(ROOT, page), encoding='utf-8').read()
            for target in LINK.findall(text):
                if re.match(r'[a-z]+:|#', target):
                    continue
                path = os.path.join(ROOT, os.path.dirname(page),
                                    target.split('#')[0])
                with self.subTest(page=page, link=target):
                    self.assertTrue(os.path.exists(path))

    def test_paths_exist(self) -> None:
        for page in PAGES:
            text = open(os.path.join(ROOT, page), encoding='utf-8').read()
            for path in PATH.findall(text):
                if re.search(r'[<>*\[{]|\.\.\.|…', path):
                    continue
                with self.subTest(page=page, path=path):
                    self.assertTrue(os.path.exists(os.path.join(ROOT, path)))


if __name__ == '__main__':
    unittest.main()
