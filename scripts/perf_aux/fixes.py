# SPDX-License-Identifier: GPL-2.0
"""make fixes (python3 -m perf_aux fixes).

The fixes the series carries first and the selftest that goes with them
(the parts of scripts/series/parts whose patch is one of the base's by
path), each as a patch of its own against the pristine source of BASE, for
the maintainers of the code they fix to take without the suite, with a
cover letter addressed as the base's get_maintainer.pl says.  The patches
go to out/fixes/<base>/, each checked as a maintainer would: "ok -"/
"not ok -" lines for checkpatch.pl --strict (the base's own), a Fixes: tag
(the fixes, not the test) and git am of each alone, then of all, onto the
pristine base.

Usage: make fixes [BASE=7.3]
"""

import glob
import os
import re
import shutil
import subprocess
from typing import List, Optional

from . import lib, shell
from .files import collated, read, records
from .series import checkpatch_clean, checkpatch_line, checkpatch_totals
from .shell import tool, tool_output

FIXES_LINE = re.compile(r'^Fixes: [0-9a-f]{12} \("', re.M)


def result(rc: int, what: str) -> None:
    print(f"{'ok' if rc == 0 else 'not ok'} - fixes: {what}", flush=True)


def fix_count(root: str) -> int:
    """The parts of scripts/series/parts whose hook-up is a patch by
    path: the fixes, which come first."""
    n = 0
    for line in records(read(f'{root}/scripts/series/parts')):
        fields = line.split()
        if not line.startswith('#') and len(fields) > 1 and '/' in fields[1]:
            n += 1
    return n


def maintainers(src: str, patches: List[str], *which: str) -> List[str]:
    """What scripts/get_maintainer.pl of SRC names for PATCHES, without
    git history: WHICH selects (--m: maintainers; --r, --l: reviewers
    and lists)."""
    proc = tool_output(['perl', 'scripts/get_maintainer.pl', '--nogit',
                        '--nogit-fallback', '--no-rolestats', '--nom', '--nor',
                        '--nol', *which, *patches], cwd=src,
                       stderr=subprocess.DEVNULL)
    return [line for line in records(proc.stdout) if line]


def git_am(repo: str, patches: List[str], log: str) -> int:
    """git am of PATCHES onto REPO's base tag, its output in LOG."""
    git = ['git', '-C', repo, '-c', 'user.name=perf_aux',
           '-c', 'user.email=perf_aux@localhost']
    subprocess.run([*git, 'reset', '-q', '--hard', 'base'], check=True)
    with open(log, 'wb') as f:
        rc = subprocess.run([*git, 'am', '-q', *patches], stdout=f,
                            stderr=subprocess.STDOUT, check=False).returncode
    if rc:
        subprocess.run([*git, 'am', '--abort'], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=False)
        print(''.join(read(log).splitlines(True)[:20]), end='', flush=True)
    return rc


def fixes() -> int:
    base = os.environ.get('BASE') or lib.default_base()
    lib.check_base(base)
    src = f'{lib.cache()}/src/{base}'
    work = f'{lib.cache()}/series/{base}'
    out = f'{lib.out()}/fixes/{base}'
    os.environ['BASE'] = base
    rc = tool(lib.perf_aux('series'), stdout=subprocess.DEVNULL)
    if rc:
        return rc
    n = fix_count(lib.ROOT)
    if n == 0:
        lib.die('no fix in scripts/series/parts')
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    repo = f'{work}/repo'
    last = subprocess.run(['git', '-C', repo, 'rev-list', '--reverse',
                           'base..perf_aux'], stdout=subprocess.PIPE,
                          text=True, check=True).stdout.split()[n - 1]
    # The cover letter, addressed as the base's get_maintainer.pl says of
    # the whole change.
    diff = f'{work}/fixes.diff'
    tool(['git', '-C', repo, 'diff', 'base', last],
         log=diff, check=True)
    to = maintainers(src, [diff], '--m')
    cc = maintainers(src, [diff], '--r', '--l')
    subprocess.run(['git', '-C', repo, 'branch', '-f', 'fixes', last],
                   check=True)
    subprocess.run(['git', '-C', repo, 'config', 'branch.fixes.description',
                    read(f'{lib.ROOT}/scripts/series/fixes-cover.txt')],
                   check=True)
    tool(['git', '-C', repo, 'format-patch', '-q', '--no-signature',
          '--cover-letter', '--cover-from-description=subject', '-o', out,
          *[f'--to={a}' for a in to], *[f'--cc={a}' for a in cc],
          'base..fixes'], check=True)
    patches = [p for p in collated(glob.glob(glob.escape(out) + '/*.patch'))
               if not p.endswith('/0000-cover-letter.patch')]
    version = lib.tree_version(src)
    print(f'fixes: {len(patches)} in {os.path.relpath(out, lib.ROOT)} '
          f'(Linux {version}) and a cover letter to {len(to)} maintainers, '
          f'cc {len(cc)}', flush=True)
    result(0 if to else 1, f"cover letter: To: {', '.join(to) or 'nobody'}")

    ignore = [] if os.path.isdir(f'{src}/.git') else \
        ['--ignore=UNKNOWN_COMMIT_ID']
    note = ' (Fixes: id not looked up: no git history)' if ignore else ''
    for p in patches:
        totals = checkpatch_totals(tool_output(
            ['perl', 'scripts/checkpatch.pl', '--strict', *ignore, p],
            cwd=src, stderr=subprocess.STDOUT).stdout)
        result(0 if checkpatch_clean(totals) else 1,
               checkpatch_line(p, totals) + note)
        # A test of the fixes (and its MAINTAINERS line) names no commit.
        if all(f == 'MAINTAINERS' or f.startswith('tools/testing/selftests/')
               for f in lib.patched_files(p)):
            continue
        text = read(p)
        named = '\n'.join(line[len('Fixes: '):] for line in text.split('\n')
                          if line.startswith('Fixes: '))
        result(0 if FIXES_LINE.search(text) else 1,
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


def main(argv: Optional[List[str]] = None) -> int:
    del argv
    return shell.entry(fixes)
