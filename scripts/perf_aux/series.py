# SPDX-License-Identifier: GPL-2.0
"""make series (python3 -m perf_aux series).

The suite as the patch series it would be posted as, against the pristine
source of BASE (default: mainline), with a cover letter.  One commit per
line of scripts/series/parts: the base's hook-up patch of that part and
the suite's files it adds, with the commit message written there.  The
patches go to out/series/<base>/.

Usage: python3 -m perf_aux series [--check [--kernel-prefixes]]

--check proves what a maintainer would try first, one "ok -"/"not ok -"
line each: the series has at least SERIES_MIN_PATCHES patches, none adding
more than SERIES_MAX_ADDED lines; every patch is checkpatch.pl --strict
clean with the base's own checkpatch; the series git-am's onto the base
and ends with the project's kselftest files, all of them; applied patch by
patch to a copy of the whole pristine tree, the kselftests build at every
patch that changes them (the prefix's own Makefile: a kernel build per
prefix would cost a cold build each); and that tree holds the same files
as the staged stock tree, so the stock run's KUnit results are the series'
own (the KUnit run reuses that build).  The checks end with status 0: the
lines are the verdict (perf_aux.check's line_checks counts them); a
status of its own means the run itself broke.

--kernel-prefixes (make check-full) also builds the arm64 kernel at every
patch that changes it, with every test option of the series the tree has
so far, in one build directory from prefix to prefix.

The arguments are read by position, as the shell script read them:
--kernel-prefixes counts only after --check; anything else is ignored.

A part's hook-up is "-" where it has none.  The kselftests come in parts
(the helpers, then a program or two each): the perf_aux Makefile of each
commit is the project's without the lines that name a program, source or
header not yet added, so each patch adds its own lines.

PERF_AUX_AUTHOR: "Name <mail>" of the commits, else git's user.name and
user.email, else a placeholder.  Dates come from the project's HEAD, so the
same commit gives the same series.

The bases, the paths, patched_files, base_repo, kunit_py, ... are
perf_aux.lib's.
"""

import email.utils
import glob
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import List, NamedTuple, Optional, Sequence

from . import lib, shell
from .files import (collated, cp, head, read, records, relative, same_file,
                    tail, text_lines, write)
from .shell import git_in, tool, tool_output

KSFT = 'tools/testing/selftests/perf_aux'
SERIES_MIN_PATCHES = 9
SERIES_MAX_ADDED = 1000
CROSS = 'aarch64-linux-gnu-'
# The series' test options (not VMAP_GRANULE_KUNIT_TEST_STRICT: the plain
# base does not carry large vmap).
SERIES_OPTIONS = ('PERF_AUX_ALLOC_KUNIT_TEST', 'VMAP_GRANULE_KUNIT_TEST',
                  'TEST_VMALLOC', 'TEST_AUX_PMU')
# The programs (*_test), sources and headers a kselftest Makefile line
# names (grep -oE of the shell version, ASCII classes).
MAKEFILE_NAME = re.compile(r'[A-Za-z0-9_]+(?:_test|\.[ch])\b', re.ASCII)
TRAILER = re.compile(r'^[A-Za-z-]*: ')
INSERTIONS = re.compile(r'[0-9]* insertions?\(\+\)')
WARNING = re.compile(r'warning:|error:', re.IGNORECASE)
UAPI = re.compile(r'^diff --git a/(arch/[^/]*/)?include/uapi/', re.M)
RAN = re.compile(r'Ran [0-9]* tests.*')


class Part(NamedTuple):
    """A line of scripts/series/parts: the commit message's file, the
    hook-up ("0001", a base's patch by path, or "-"), the suite's paths
    the commit adds and the series it is in (its "[name]" line's)."""
    message: str
    hook: str
    paths: List[str]
    group: str = ''


class Group(NamedTuple):
    """A "[name] cover [needs...]" line of scripts/series/parts: a series
    of its own, with its cover letter's file and the groups it applies on
    top of."""
    name: str
    cover: str
    needs: List[str] = []


@dataclass
class Series:
    """Where a run of make series reads and writes, and what it knows of
    the base (perf_aux.lib's paths, BASE's version and Debian package)."""
    root: str
    base: str
    src: str
    work: str
    out: str
    hookup: str
    patches_dir: str
    cache: str
    version: str = ''
    debian: str = ''
    kernel_prefixes: bool = False


# What the checks print.

def say(text: str) -> None:
    """Text of a tool's, as it printed it (head of a log and the like)."""
    sys.stdout.write(text)
    sys.stdout.flush()


def check_line(rc: int, what: str) -> str:
    """A check line, as perf_aux.check's line_checks counts it: "ok - series:
    WHAT", or "not ok - series: WHAT" for a status RC other than 0."""
    return f"{'ok' if rc == 0 else 'not ok'} - series: {what}"


def result(rc: int, what: str) -> None:
    print(check_line(rc, what))


# The parts.

def parse_lines(text: str) -> List[List[str]]:
    """The lines of scripts/series/parts' TEXT as words, comments and
    empty lines dropped."""
    return [re.split(r'[ \t]+', line.strip(' \t'))
            for line in records(text)
            if line.strip(' \t') and not line.startswith('#')]


def parse_parts(text: str) -> List[Part]:
    """The parts of scripts/series/parts' TEXT, each with its group."""
    parts = []
    group = ''
    for words in parse_lines(text):
        if words[0].startswith('['):
            group = words[0].strip('[]')
            continue
        parts.append(Part(words[0], words[1] if len(words) > 1 else '',
                          words[2:], group))
    return parts


def parse_groups(text: str) -> List[Group]:
    """The series of scripts/series/parts' TEXT, in order."""
    return [Group(words[0].strip('[]'), words[1] if len(words) > 1 else '',
                  words[2:])
            for words in parse_lines(text) if words[0].startswith('[')]


def parts_text(s: Series) -> str:
    return read(os.path.join(s.root, 'scripts/series/parts'))


def parts(s: Series) -> List[Part]:
    return parse_parts(parts_text(s))


def part_patches(s: Series, hook: str) -> List[str]:
    """The patch of a part: a hook-up by number (0001), or a patch of the
    base's by its path (reference/0004: a fix the series carries first, on
    its own)."""
    where = s.patches_dir if '/' in hook else s.hookup
    return collated(glob.glob(glob.escape(os.path.join(where, hook)) +
                              '-*.patch'))


def fix_patches(s: Series) -> List[str]:
    """The parts' patches that are not hook-ups: the fixes."""
    return [p for part in parts(s) if '/' in part.hook
            for p in part_patches(s, part.hook)]


def part_files(s: Series, paths: Sequence[str]) -> List[str]:
    """The files of the project under PATHS as git knows them (untracked
    ones too, ignored ones not): build output never reaches the series."""
    proc = tool_output(['git', 'ls-files', '--cached', '--others',
                        '--exclude-standard', '--', *paths], cwd=s.root)
    return collated(records(proc.stdout))


def author(root: str) -> str:
    """The commits' "Name <mail>"."""
    if os.environ.get('PERF_AUX_AUTHOR'):
        return os.environ['PERF_AUX_AUTHOR']
    name, mail = (shell.text(['git', '-C', root, 'config', key])
                  for key in ('user.name', 'user.email'))
    if name and mail:
        return f'{name} <{mail}>'
    return 'perf_aux suite <perf_aux@localhost>'


def split_author(who: str) -> List[str]:
    """WHO's name and mail: ${who% <*} and ${who##*<} less its ">"."""
    name = who[:who.rindex(' <')] if ' <' in who else who
    mail = who[who.rindex('<') + 1:] if '<' in who else who
    return [name, mail[:-1] if mail.endswith('>') else mail]


def commit_message(message: str, who: str) -> str:
    """A part's commit message, signed off.  One ending in a trailer
    (Fixes:) gets the sign-off in the same block."""
    last = records(message)[-1] if records(message) else ''
    blank = '' if TRAILER.match(last) else '\n'
    return f'{message}{blank}Signed-off-by: {who}\n'


# MAINTAINERS.

def maintainers_line(pattern: str, path: str, root: str) -> Optional[str]:
    """The F: line (less "F:\\t") a section's PATTERN gives PATH, if any.
    A directory added a part at a time (the kselftests): each file's own
    line, a .c and its .h as one, so that every patch says who maintains
    what it adds."""
    line = pattern
    if (pattern.endswith('/') and path.startswith(pattern) and
            pattern != path + '/'):
        line = path
        stem = path[:-2] if path.endswith(('.c', '.h')) else path
        if (os.path.isfile(os.path.join(root, stem + '.c')) and
                os.path.isfile(os.path.join(root, stem + '.h'))):
            line = stem + '.[ch]'
    if pattern in (path, path + '/') or line != pattern:
        return line
    return None


def insert_f_line(maintainers: bytes, section: str, line: str) -> bytes:
    """MAINTAINERS with "F:\\tLINE" in SECTION, among its F: lines in byte
    order (the awk of the shell version, LC_ALL=C)."""
    sec = section.encode('utf-8', 'surrogateescape')
    f = b'F:\t' + line.encode('utf-8', 'surrogateescape')
    out = []
    in_sec = done = False
    data = maintainers[:-1] if maintainers.endswith(b'\n') else maintainers
    for rec in data.split(b'\n') if data else []:
        if rec == sec:
            in_sec = True
        if in_sec and not done and rec.startswith(b'F:') and rec > f:
            out.append(f)
            done = True
        if in_sec and not done and rec == b'':
            out.append(f)
            done = True
        if rec == b'':
            in_sec = False
        out.append(rec)
    return b''.join(rec + b'\n' for rec in out)


def maintainers_sections(s: Series) -> List[List[str]]:
    """scripts/series/maintainers: [path pattern, section] a line, as
    "IFS=<tab> read -r pattern section" splits it."""
    rows = []
    name = os.path.join(s.root, 'scripts/series/maintainers')
    for line in records(read(name)):
        if line.startswith('#'):
            continue
        pattern, _, section = line.strip('\t').partition('\t')
        rows.append([pattern, section.lstrip('\t')])
    return rows


def maintainers_add(s: Series, repo: str, paths: Sequence[str]) -> None:
    """The F: lines scripts/series/maintainers gives for PATHS (a file, or
    a directory with its trailing slash), each in its section."""
    name = os.path.join(repo, 'MAINTAINERS')
    for path in paths:
        for pattern, section in maintainers_sections(s):
            line = maintainers_line(pattern, path, s.root)
            if line is None:
                continue
            with open(name, 'rb') as f:
                text = f.read()
            f_line = b'F:\t' + line.encode('utf-8', 'surrogateescape')
            if f_line in records_bytes(text):
                continue
            with open(name + '.new', 'wb') as f:
                f.write(insert_f_line(text, section, line))
            os.replace(name + '.new', name)


def records_bytes(data: bytes) -> List[bytes]:
    if data.endswith(b'\n'):
        data = data[:-1]
    return data.split(b'\n') if data else []


# The kselftests' Makefile.

def makefile_names(line: str) -> List[str]:
    """The files a kselftest Makefile LINE names: a program (*_test) by
    its source."""
    return [tok + '.c' if tok.endswith('_test') else tok
            for tok in MAKEFILE_NAME.findall(line)]


def filter_makefile(makefile: str, present) -> str:
    """The project's kselftest MAKEFILE less each line (not a comment)
    naming a file that present(name) says is not there yet; no blank line
    left at the end."""
    kept = [line for line in text_lines(makefile)
            if line.startswith('#') or all(present(name)
                                           for name in makefile_names(line))]
    while kept and kept[-1] == '':
        kept.pop()
    return ''.join(line + '\n' for line in kept)


# The project's kselftest config: the options of the machine-wide programs
# (the extended suite, in no series) follow this comment.
EXTENDED_CONFIG = '# The machine-wide programs:'


def filter_config(config: str) -> str:
    """The kselftest CONFIG less the extended suite's options."""
    return config.split(EXTENDED_CONFIG, 1)[0]


def ksft_makefile(s: Series, repo: str) -> None:
    """The kselftests' Makefile and config of REPO as the files there so
    far have them."""
    here = os.path.join(repo, KSFT)
    if not os.path.isdir(here):
        return
    write(os.path.join(here, 'Makefile'),
          filter_makefile(read(os.path.join(s.root, KSFT, 'Makefile')),
                          lambda f: os.path.exists(os.path.join(here, f))))
    if os.path.exists(os.path.join(here, 'config')):
        write(os.path.join(here, 'config'),
              filter_config(read(os.path.join(s.root, KSFT, 'config'))))


# The series.

def series_base(s: Series, repo: str) -> None:
    """A git repository of the pristine files the series changes
    (MAINTAINERS, what the hook-ups change), committed as the base."""
    hookups = collated(glob.glob(glob.escape(s.hookup) + '/*.patch')) or \
        [s.hookup + '/*.patch']
    files = lib.patched_files(*hookups, *fix_patches(s))
    lib.base_repo(s.src, repo, f'Linux {s.version} (Debian '
                  f'linux-source-{s.base} {s.debian})', 'MAINTAINERS', *files)


def commit_date(root: str) -> str:
    """The project's HEAD's commit date, else now."""
    proc = tool_output(['git', '-C', root, 'log', '-1', '--format=%cD'],
                       stderr=subprocess.DEVNULL)
    if proc.returncode:
        return email.utils.formatdate(localtime=True)
    return proc.stdout.rstrip('\n')


def set_identity(who: str, date: str) -> None:
    """The commits' author and committer, for every git from here on (the
    base repositories' and git am's too, as the shell version exported
    them)."""
    name, mail = split_author(who)
    os.environ.update(GIT_AUTHOR_NAME=name, GIT_AUTHOR_EMAIL=mail,
                      GIT_COMMITTER_NAME=name, GIT_COMMITTER_EMAIL=mail,
                      GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)


def add_part(s: Series, repo: str, n: int, part: Part, who: str) -> None:
    """Commit N of the series: PART's hook-up and files."""
    if part.hook != '-':
        patches = part_patches(s, part.hook)
        if not patches and part.hook.startswith('reference/'):
            # A fix this base does not need (the bug came later).
            return
        if not patches:
            shell.die(f'series part {n}: no patch {part.hook} in {s.hookup}')
        if len(patches) > 1:
            shell.die(f'series part {n}: {len(patches)} patches '
                      f'{part.hook} in {s.hookup}')
        if tool(git_in(repo, 'apply', '--index', patches[0])):
            shell.die(f'series part {n}: hook-up '
                      f'{os.path.basename(patches[0])} does not apply '
                      f'to {s.base}')
    if part.paths:
        for f in part_files(s, part.paths):
            os.makedirs(os.path.join(repo, os.path.dirname(f)), exist_ok=True)
            cp(os.path.join(s.root, f), os.path.join(repo, f))
        maintainers_add(s, repo, part.paths)
        ksft_makefile(s, repo)
    tool(git_in(repo, 'add', '-A'), check=True)
    message = commit_message(
        read(os.path.join(s.root, 'scripts/series', part.message)), who)
    proc = subprocess.run(git_in(repo, 'commit', '-q', '-F', '-'),
                          input=message.encode('utf-8', 'surrogateescape'),
                          check=False)
    if proc.returncode:
        raise shell.ShellError('git commit', proc.returncode)


def description(s: Series, group: Group) -> str:
    """GROUP's cover letter from its branch description: its first
    paragraph is the subject, the rest the body, with the base named."""
    made = tool_output(['git', '-C', s.root, 'describe', '--always',
                        '--dirty'], stderr=subprocess.DEVNULL)
    made_from = (made.stdout + ('?' if made.returncode else '')).rstrip('\n')
    return (read(os.path.join(s.root, 'scripts/series', group.cover)) +
            '\n' +
            f'Base: Linux {s.version}, Debian linux-source-{s.base} '
            f'{s.debian}.\n' +
            f'Made by perf_aux `make series` from {made_from}.\n')


def insertions(patch: str) -> str:
    """The "N insertions(+)" of PATCH's diffstat, "-" without one."""
    for line in records(read(patch)):
        found = INSERTIONS.findall(line)
        if found:
            return '\n'.join(found)
    return '-'


def make_series(s: Series) -> None:
    """The series' repository (WORK/repo: the base, then a commit a part,
    a branch at the end of each group, which make fixes reads too) and
    each group's mails in OUT/<n>-<group>, listed with the lines each
    adds."""
    repo = os.path.join(s.work, 'repo')
    who = author(s.root)
    set_identity(who, commit_date(s.root))
    series_base(s, repo)
    all_parts = parts(s)
    shutil.rmtree(s.out, ignore_errors=True)
    previous = 'base'
    total = 0
    for k, group in enumerate(parse_groups(parts_text(s)), 1):
        for n, part in enumerate(all_parts, 1):
            if part.group == group.name:
                add_part(s, repo, n, part, who)
        tool(git_in(repo, 'branch', '-f', group.name, 'HEAD'), check=True)
        tool(git_in(repo, 'config', f'branch.{group.name}.description',
                    description(s, group).rstrip('\n')), check=True)
        out = group_dir(s, k, group)
        os.makedirs(out)
        tool(git_in(repo, 'format-patch', '-q', '--cover-letter',
                    '--cover-from-description=subject', '--no-signature',
                    '-o', out, f'{previous}..{group.name}'), check=True)
        previous = group.name
        mails = group_mails(out)
        added = sum(patch_added(read(p)) for p in mails)
        total += added
        print(f'series {k}, {group.name}: {len(mails)} patches, '
              f'{added} added lines, in {relative(out, s.root)} '
              f'(Linux {s.version})')
        for patch in collated(glob.glob(glob.escape(out) + '/0*.patch')):
            print(f'  {os.path.basename(patch):<58} {insertions(patch)}')
    print(f'series: {total} added lines in all')


def series_patches(s: Series) -> List[str]:
    """The patches of every group, in order, without the cover letters."""
    return [p for p in collated(glob.glob(glob.escape(s.out) + '/*/0*.patch'))
            if not p.endswith('/0000-cover-letter.patch')]


# The checks.

def checkpatch_totals(output: str) -> str:
    """The "total: " lines of checkpatch's OUTPUT, less that word."""
    return '\n'.join(line[len('total: '):] for line in records(output)
                     if line.startswith('total: '))


def checkpatch_clean(totals: str) -> bool:
    return totals.startswith('0 errors, 0 warnings, 0 checks, ')


def checkpatch_line(patch: str, totals: str) -> str:
    return (f'checkpatch --strict {os.path.basename(patch)}: '
            f"{totals or 'no output'}")


def check_checkpatch(s: Series, patches: Sequence[str]) -> None:
    """Every patch (not the cover letter) checkpatch --strict clean with
    the base's checkpatch, run from inside the base as it must be."""
    # Without git history (a Debian source) checkpatch cannot look up the
    # commit a Fixes: tag names; make fixes says so.
    ignore = [] if os.path.isdir(os.path.join(s.src, '.git')) else \
        ['--ignore=UNKNOWN_COMMIT_ID']
    checkpatch = ['perl', 'scripts/checkpatch.pl', '--strict', *ignore]
    for patch in patches:
        totals = checkpatch_totals(
            tool_output([*checkpatch, patch], cwd=s.src,
                        stderr=subprocess.STDOUT).stdout)
        rc = 0 if checkpatch_clean(totals) else 1
        if rc:
            terse = tool_output([*checkpatch, '--terse', patch], cwd=s.src)
            say(head(terse.stdout, 10))
        result(rc, checkpatch_line(patch, totals))


def patch_added(text: str) -> int:
    """The lines a patch's TEXT adds (its diff's "+" lines, not the "+++"
    headers)."""
    n = 0
    diff = False
    for line in records(text):
        if line.startswith('diff --git '):
            diff = True
        if diff and line.startswith('+') and not line.startswith('+++ '):
            n += 1
    return n


def changes_ksft(text: str) -> bool:
    return any(line.startswith(f'diff --git a/{KSFT}/')
               for line in records(text))


def size_lines(patches: Sequence[str], texts: Sequence[str]) -> List[str]:
    """The check lines of the series' shape: enough patches, none too
    large to review.  The kselftests are split to fit; a KUnit suite is
    one file and one patch, which this check reports but does not hold."""
    out = [check_line(0 if len(patches) >= SERIES_MIN_PATCHES else 1,
                f'{len(patches)} patches, at least {SERIES_MIN_PATCHES}')]
    most = 0
    for patch, text in zip(patches, texts):
        added = patch_added(text)
        name = os.path.basename(patch)
        if changes_ksft(text):
            most = max(most, added)
        if added <= SERIES_MAX_ADDED:
            continue
        if changes_ksft(text):
            out.append(check_line(1, f'{name}: {added} added lines, more '
                                  f'than {SERIES_MAX_ADDED}'))
        else:
            out.append(check_line(0, f'{name}: {added} added lines, more than '
                            f'{SERIES_MAX_ADDED} # SKIP not a kselftest part: '
                            'one suite, one file'))
    out.append(check_line(0 if most <= SERIES_MAX_ADDED else 1,
                    f'no kselftest patch adds more than {SERIES_MAX_ADDED} '
                    f'lines (at most {most})'))
    return out


def check_size(patches: Sequence[str]) -> None:
    for line in size_lines(patches, [read(p) for p in patches]):
        print(line)


def check_am(s: Series, patches: Sequence[str]) -> None:
    """git am of the mails, group after group, onto a fresh base
    repository: the series are what a maintainer's tools take.  The last
    commit holds the kselftest files the parts name as the project has
    them (the Makefile: the project's less the lines naming a file no part
    adds)."""
    repo = os.path.join(s.work, 'am')
    log = os.path.join(s.work, 'am.log')
    series_base(s, repo)
    rc = tool(git_in(repo, 'am', '-q', *patches), log=log)
    count = tool_output(git_in(repo, 'rev-list', '--count', 'base..HEAD'),
                        stderr=subprocess.DEVNULL)
    n = (count.stdout + ('0' if count.returncode else '')).rstrip('\n')
    if rc:
        say(head(read(log), 20))
    result(rc, f'git am onto Linux {s.version}: {n} commits')
    if rc:
        return
    check_am_alone(s, repo, log)

    rc = 0
    files = part_files(s, [p for part in parts(s) for p in part.paths
                           if p.startswith(KSFT + '/')])
    for f in files:
        if f == f'{KSFT}/Makefile':
            here = os.path.join(repo, KSFT)
            same = read(os.path.join(repo, f)) == filter_makefile(
                read(os.path.join(s.root, f)),
                lambda name: os.path.exists(os.path.join(here, name)))
        elif f == f'{KSFT}/config':
            same = read(os.path.join(repo, f)) == filter_config(
                read(os.path.join(s.root, f)))
        else:
            same = same_file(os.path.join(repo, f), os.path.join(s.root, f))
        if not same:
            rc = 1
            print(f'# not as in the project: {f}')
    for f in records(tool_output(['git', 'ls-files', KSFT], cwd=repo).stdout):
        if f not in files:
            rc = 1
            print(f'# not in a part: {f}')
    result(rc, f"the last commit has the {len(files)} files of {KSFT} "
           'the parts name, as in the project')


def group_dir(s: Series, k: int, group: Group) -> str:
    """Where GROUP, the K-th, has its mails."""
    return os.path.join(s.out, f'{k}-{group.name}')


def group_mails(out: str) -> List[str]:
    """The patches in OUT, without the cover letter."""
    return [p for p in collated(glob.glob(glob.escape(out) + '/0*.patch'))
            if not p.endswith('/0000-cover-letter.patch')]


def check_am_alone(s: Series, repo: str, log: str) -> None:
    """Each group git am'd onto the base with only the groups it names as
    needed: a maintainer takes one series without the others."""
    groups = parse_groups(parts_text(s))
    dirs = {g.name: group_dir(s, k, g) for k, g in enumerate(groups, 1)}
    for group in groups:
        tool(git_in(repo, 'checkout', '-q', '-f', '--detach', 'base'),
             check=True)
        mails = [m for name in (*group.needs, group.name)
                 for m in group_mails(dirs[name])]
        rc = tool(git_in(repo, 'am', '-q', *mails), log=log)
        if rc:
            say(head(read(log), 20))
            tool(git_in(repo, 'am', '--abort'))
        on = ' + '.join(['base', *group.needs])
        result(rc, f'series {group.name}: git am onto {on}, no other series')
    tool(git_in(repo, 'checkout', '-q', '-f', 'perf_aux'), check=True)


def headers_install(s: Series, tree: str, build: str) -> bool:
    """The uapi headers the kselftests build with, installed into BUILD."""
    log = os.path.join(s.work, 'headers.log')
    if tool(['make', '-s', '-C', tree, f'O={build}', 'ARCH=arm64',
             f'CROSS_COMPILE={CROSS}', 'headers_install'], log=log) == 0:
        return True
    say(head(read(log), 20))
    return False


def declares(tree: str, option: str) -> bool:
    """Whether a Kconfig file of TREE declares OPTION."""
    return tool(['grep', '-rqx', '--include=Kconfig*', f'config {option}',
                 tree]) == 0


def kernel_prefix(s: Series, tree: str, n: int, patch: str) -> None:
    """The arm64 kernel of the first N patches (kunit.py's arm64
    configuration) with each of SERIES_OPTIONS that a Kconfig file of TREE
    declares by then; where that is a KUnit suite, kunit.py runs it too
    (test_vmalloc runs nothing: its own parameters).  DEBUG_FS: the
    synthetic PMUs report there (kunit.py's arm64 configuration leaves it
    out), as the kselftests' config asks.  Not run by the host tests nor
    when it was ported: a transcription of the shell version's."""
    t0 = int(time.monotonic())
    frag = os.path.join(s.work, f'prefix-{n}.kunitconfig')
    log = os.path.join(s.work, f'kernel-{n}.log')
    config = 'CONFIG_KUNIT=y\nCONFIG_PERF_EVENTS=y\nCONFIG_DEBUG_FS=y\n'
    config += ''.join(f'CONFIG_{opt}=y\n' for opt in SERIES_OPTIONS
                      if declares(tree, opt))
    write(frag, config)
    how = ['build']
    if 'KUNIT_TEST=y' in config:
        how = ['run', '--kernel_args=panic=-1',
               f"--kernel_args={' '.join(lib.vmalloc_args('-', 'off'))}",
               f'--qemu_args=-m {lib.GUEST_MEMORY_MIB} '
               f'-cpu {lib.ARM64_QEMU_CPU}']
    rc = lib.kunit_py(os.path.join(s.work, 'kbuild'), log,
                      [*how, '--arch=arm64', f'--cross_compile={CROSS}',
                       f'--kunitconfig={frag}'], tree, CROSS)
    if rc:
        say(tail(read(log), 20))
    tests = sum('TEST' in line for line in records(config))
    ran = ''
    if how[0] != 'build':
        found = [m for line in records(read(log)) for m in RAN.findall(line)]
        ran = f", its KUnit suites pass: {found[-1] if found else ''}"
    result(rc, f'{os.path.basename(patch)}: with the {n} patches so far, the '
           f'arm64 kernel builds with {tests} test options{ran} '
           f'({int(time.monotonic()) - t0} s)')


def changes_kernel(text: str) -> bool:
    """Whether a patch's TEXT changes a file of a kernel build (not
    tools/, not MAINTAINERS)."""
    return any(line.startswith('diff --git a/') and
               not re.match(r'diff --git a/(tools/|MAINTAINERS )', line)
               for line in records(text))


def test_programs(build: str) -> str:
    """The kselftest programs built so far in BUILD, by name."""
    try:
        names = os.listdir(os.path.join(build, 'kselftest/perf_aux'))
    except OSError:
        return ''
    return ' '.join(collated(n for n in names
                             if not n.startswith('.') and n.endswith('_test')))


def warnings(log: str) -> List[str]:
    """A build log's lines that warn or err (grep -i 'warning:\\|error:')."""
    return [line for line in records(log) if WARNING.search(line)]


def check_prefixes(s: Series, patches: Sequence[str], tree: str,
                   build: str) -> None:
    """The patches applied to TREE one by one, and after each that changes
    the kselftests, those of that prefix built (with that prefix's
    Makefile, into BUILD, afresh at the first: a program is compiled in
    the prefix that adds it, so its warnings show there)."""
    built = 0
    n = 0
    for n, patch in enumerate(patches, 1):
        name = os.path.basename(patch)
        apply_log = os.path.join(s.work, 'apply.log')
        if tool(['git', 'apply', patch], cwd=tree, log=apply_log):
            say(head(read(apply_log), 20))
            result(1, f'{name} applies to the pristine Linux {s.version} tree '
                   f'after the {n - 1} before it')
            return
        text = read(patch)
        # A patch to a uapi header: installed again for what follows.
        if UAPI.search(text) and not headers_install(s, tree, build):
            result(1, f'{name}: make headers_install')
            return
        if s.kernel_prefixes and changes_kernel(text):
            kernel_prefix(s, tree, n, patch)
        if not changes_ksft(text):
            continue
        built += 1
        log = os.path.join(s.work, f'kselftest-{n}.log')
        rc = tool(['make', '-s', '-j2', '-C',
                   os.path.join(tree, 'tools/testing/selftests'),
                   f'O={build}', 'ARCH=arm64', f'CROSS_COMPILE={CROSS}',
                   'TARGETS=perf_aux'], log=log)
        found = warnings(read(log))
        say(''.join(line + '\n' for line in found[:10]))
        if found:
            rc = 1
        programs = test_programs(build) or 'no program yet'
        result(rc, f'{name}: with the {n} patches so far, TARGETS=perf_aux '
               f'builds, no warning: {programs}')
    result(0 if built > 1 else 1,
           f'all {n} patches apply to the whole pristine Linux {s.version} '
           f'tree; the kselftests built at each of the {built} that change '
           'them')


def unfixed_is(s: Series, tree: str, name: str, stock: str) -> bool:
    """Whether TREE's file NAME with the series' fixes taken back out is
    STOCK."""
    tmp = os.path.join(s.work, 'unfixed')
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(os.path.join(tmp, os.path.dirname(name)), exist_ok=True)
    ok = True
    try:
        cp(os.path.join(tree, name), os.path.join(tmp, name))
    except OSError as e:
        print(f'cp: {e}', file=sys.stderr)
    for p in fix_patches(s):
        if name not in lib.patched_files(p):
            continue
        if subprocess.run(['patch', '-s', '-R', '-p1', '-d', tmp, '-i', p],
                          stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode:
            ok = False
    ok = ok and same_file(os.path.join(tmp, name), stock)
    shutil.rmtree(tmp, ignore_errors=True)
    return ok


def stock_line(same: int, fixed: int, differ: int) -> str:
    more = f' and, but for the fixes, {fixed} more' if fixed else ''
    without = ' without the fixes' if fixed else ''
    return check_line(0 if differ == 0 else 1,
                      f"the stock tree holds the series' {same} kernel "
                      f"files{more}: its KUnit run is the series' "
                      f'own{without}')


def check_tree(s: Series, patches: Sequence[str]) -> None:
    """The series applied to a copy of the whole pristine tree (hard
    links: git apply replaces, never rewrites, the files it changes), and
    the kselftests built there as in any kernel tree, at each prefix
    (check_prefixes).  The headers installed by an earlier check stay: the
    copy keeps the pristine files' mtimes, so make installs again only a
    header the series changes.  Then the kernel files the series touches
    (not MAINTAINERS, not tools/: no part of a kernel build), against the
    staged stock tree."""
    tree = os.path.join(s.work, 'tree')
    build = os.path.join(s.work, 'build')
    shutil.rmtree(tree, ignore_errors=True)
    shutil.rmtree(os.path.join(build, 'kselftest'), ignore_errors=True)
    tool(['cp', '-al', s.src, tree], check=True)
    try:
        os.remove(os.path.join(tree, '.perf_aux-debian'))
    except FileNotFoundError:
        pass
    rc = 0 if headers_install(s, tree, build) else 1
    result(rc, f'make headers_install in the pristine Linux {s.version} tree')
    if rc:
        return

    check_prefixes(s, patches, tree, build)

    stock = os.path.join(s.cache, 'trees', f'{s.base}-stock')
    if not os.path.isdir(stock):
        print('ok - series: same files as the stock tree # SKIP no stock tree '
              f'of {s.base} staged')
        return
    names = tool_output(['git', 'diff', '--name-only', 'base', 'HEAD'],
                        cwd=os.path.join(s.work, 'am')).stdout
    same = fixed = differ = 0
    for name in records(names):
        if name == 'MAINTAINERS' or name.startswith('tools/'):
            continue
        if same_file(os.path.join(tree, name), os.path.join(stock, name)):
            same += 1
        elif unfixed_is(s, tree, name, os.path.join(stock, name)):
            fixed += 1
            print("# differs from the stock tree by the series' fixes "
                  f'only: {name}')
        else:
            differ += 1
            print(f'# differs from the stock tree: {name}')
    print(stock_line(same, fixed, differ))


# The command.

def parse_args(argv: Sequence[str]) -> List[bool]:
    """[--check [--kernel-prefixes]], by position."""
    check = len(argv) > 0 and argv[0] == '--check'
    kernel_prefixes = len(argv) > 1 and argv[1] == '--kernel-prefixes'
    return [check, kernel_prefixes]


def setup(kernel_prefixes: bool) -> Series:
    """BASE (checked) and its paths; its source unpacked if missing."""
    root, cache = lib.ROOT, lib.cache()
    base = os.environ.get('BASE') or lib.default_base()
    lib.check_base(base)
    patches_dir = lib.base_patches(base)
    s = Series(root=root, base=base, src=os.path.join(cache, 'src', base),
               work=os.path.join(cache, 'series', base),
               out=os.path.join(lib.out(), 'series', base),
               hookup=patches_dir + '/hookup', patches_dir=patches_dir,
               cache=cache, kernel_prefixes=kernel_prefixes)
    if not os.path.isdir(s.src):
        tool(lib.perf_aux('deps', f'base-{base}'), check=True,
             stdout=subprocess.DEVNULL)
    s.version = lib.tree_version(s.src)
    try:
        s.debian = read(os.path.join(s.src, '.perf_aux-debian')).rstrip('\n')
    except OSError:
        s.debian = 'unknown'
    return s


def series(argv: Sequence[str]) -> None:
    check, kernel_prefixes = parse_args(argv)
    s = setup(kernel_prefixes)
    os.makedirs(s.work, exist_ok=True)
    make_series(s)
    patches = series_patches(s)
    if check:
        check_size(patches)
        check_checkpatch(s, patches)
        check_am(s, patches)
        check_tree(s, patches)


def main(argv: Optional[List[str]] = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    return shell.entry(lambda: series(args) or 0)
