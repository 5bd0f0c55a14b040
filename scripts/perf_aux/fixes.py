# SPDX-License-Identifier: GPL-2.0
"""make fixes: the fixes the series carries first (and their selftest),
patches of their own against BASE in out/fixes/<base>/, with a cover
letter addressed as the base's get_maintainer.pl says, checked as a
maintainer would: checkpatch --strict, a Fixes: tag, git am alone and
together onto the pristine base."""

import os
import re
import shutil
from typing import List

from . import lib
from .lib import DEVNULL, STDOUT, run, text
from .series import (checkpatch, checkpatch_clean, checkpatch_line,
                     checkpatch_totals, group_mails, parse_parts, read)

FIXES_LINE = re.compile(r'^Fixes: [0-9a-f]{12} \("', re.M)


def result(rc: int, what: str) -> None:
    print(f"{'ok' if rc == 0 else 'not ok'} - fixes: {what}", flush=True)


def maintainers(src: str, patches: List[str], *which: str) -> List[str]:
    """What SRC's get_maintainer.pl names for PATCHES (WHICH: --m, or
    --r and --l), without git history."""
    return [line for line in text(
        ['perl', 'scripts/get_maintainer.pl', '--nogit', '--nogit-fallback',
         '--no-rolestats', '--nom', '--nor', '--nol', *which, *patches],
        cwd=src, stderr=DEVNULL).splitlines() if line]


def git_am(repo: str, patches: List[str], log: str) -> int:
    """git am of PATCHES onto REPO's base tag, its output in LOG."""
    git = ['git', '-C', repo, '-c', 'user.name=perf_aux',
           '-c', 'user.email=perf_aux@localhost']
    run([*git, 'reset', '-q', '--hard', 'base'], check=True)
    rc = run([*git, 'am', '-q', *patches], log=log).returncode
    if rc:
        run([*git, 'am', '--abort'], stdout=DEVNULL, stderr=DEVNULL)
        print(''.join(read(log).splitlines(True)[:20]), end='', flush=True)
    return rc


def fixes(base: str) -> int:
    lib.check_base(base)
    src = f'{lib.cache()}/src/{base}'
    work = f'{lib.cache()}/series/{base}'
    out = f'{lib.out()}/fixes/{base}'
    rc = run(lib.perf_aux('series'), stdout=DEVNULL,
             env={'BASE': base}).returncode
    if rc:
        return rc
    n = sum('/' in p.hook for p in parse_parts(
        read(f'{lib.ROOT}/scripts/series/parts')))
    if n == 0:
        lib.die('no fix in scripts/series/parts')
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    repo = f'{work}/repo'
    git = ['git', '-C', repo]
    last = text([*git, 'rev-list', '--reverse', 'base..perf_aux'],
                check=True).split()[n - 1]
    diff = f'{work}/fixes.diff'
    run([*git, 'diff', 'base', last], log=diff, check=True)
    to = maintainers(src, [diff], '--m')
    cc = maintainers(src, [diff], '--r', '--l')
    run([*git, 'branch', '-f', 'fixes', last], check=True)
    run([*git, 'config', 'branch.fixes.description',
         read(f'{lib.ROOT}/scripts/series/fixes-cover.txt')], check=True)
    run([*git, 'format-patch', '-q', '--no-signature', '--cover-letter',
         '--cover-from-description=subject', '-o', out,
         *[f'--to={a}' for a in to], *[f'--cc={a}' for a in cc],
         'base..fixes'], check=True)
    patches = group_mails(out)
    version = lib.tree_version(src)
    print(f'fixes: {len(patches)} in {os.path.relpath(out, lib.ROOT)} '
          f'(Linux {version}) and a cover letter to {len(to)} maintainers, '
          f'cc {len(cc)}', flush=True)
    result(0 if to else 1, f"cover letter: To: {', '.join(to) or 'nobody'}")
    note = '' if os.path.isdir(f'{src}/.git') else \
        ' (Fixes: id not looked up: no git history)'
    for p in patches:
        totals = checkpatch_totals(text([*checkpatch(src), p], cwd=src,
                                        stderr=STDOUT))
        result(0 if checkpatch_clean(totals) else 1,
               checkpatch_line(p, totals) + note)
        # A test of the fixes (and its MAINTAINERS line) names no commit.
        if all(f == 'MAINTAINERS' or f.startswith('tools/testing/selftests/')
               for f in lib.patched_files(p)):
            continue
        body = read(p)
        named = '\n'.join(line[len('Fixes: '):] for line in body.split('\n')
                          if line.startswith('Fixes: '))
        result(0 if FIXES_LINE.search(body) else 1,
               f'{os.path.basename(p)} names the commit it fixes: {named}')
    am = f'{work}/fixes-am'
    lib.base_repo(src, am, f'Linux {base}', *lib.patched_files(*patches))
    for p in patches:
        result(git_am(am, [p], f'{work}/fixes-am.log'),
               f'git am {os.path.basename(p)} alone onto pristine '
               f'Linux {version}')
    result(git_am(am, patches, f'{work}/fixes-am.log'),
           f'git am onto pristine Linux {version}: '
           f'{len(patches)} of {len(patches)}')
    return 0


def main(argv: List[str]) -> int:
    del argv
    return fixes(os.environ.get('BASE') or lib.default_base())
