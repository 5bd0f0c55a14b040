# SPDX-License-Identifier: GPL-2.0
"""make series: the suite as the patch series it would be posted as,
against the pristine source of BASE, one commit per line of
scripts/series/parts (the base's hook-up of that part and the files it
adds), a cover letter per "[group]", into out/series/<base>/.

--check proves what a maintainer tries first, an "ok -"/"not ok -" line
each (docs/series.md): the series' size, checkpatch --strict, git am onto
the base (each group alone too), the kselftests built at every patch that
changes them, the same kernel files as the staged stock tree.
--kernel-prefixes also builds the arm64 kernel at every patch that
changes it.  PERF_AUX_AUTHOR: the commits' "Name <mail>"; their dates
are the project HEAD's, so the same commit gives the same series."""

import email.utils
import glob
import os
import re
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, NamedTuple, Optional, Sequence

from . import kunit, lib
from .lib import DEVNULL, PIPE, STDOUT, collated, die, run, text

KSFT = 'tools/testing/selftests/perf_aux'
SERIES_MIN_PATCHES = 9
SERIES_MAX_ADDED = 1000
CROSS = 'aarch64-linux-gnu-'
# The series' test options (the plain base has no large vmap to be strict).
SERIES_OPTIONS = ('PERF_AUX_ALLOC_KUNIT_TEST', 'VMAP_GRANULE_KUNIT_TEST',
                  'TEST_VMALLOC', 'TEST_AUX_PMU')
# The programs, sources and headers a kselftest Makefile line names.
MAKEFILE_NAME = re.compile(r'[A-Za-z0-9_]+(?:_test|\.[ch])\b', re.ASCII)
TRAILER = re.compile(r'^[A-Za-z-]*: ')
INSERTIONS = re.compile(r'[0-9]* insertions?\(\+\)')
WARNING = re.compile(r'warning:|error:', re.IGNORECASE)
UAPI = re.compile(r'^diff --git a/(arch/[^/]*/)?include/uapi/', re.M)
RAN = re.compile(r'Ran [0-9]* tests.*')
# The options of the machine-wide programs (in no series) follow this.
EXTENDED_CONFIG = '# The machine-wide programs:'


class Part(NamedTuple):
    """A line of scripts/series/parts: the message's file, the hook-up
    ("0001", a base's patch by path, or "-"), the paths, the group."""
    message: str
    hook: str
    paths: List[str]
    group: str = ''


class Group(NamedTuple):
    """A "[name] cover [needs...]" line: a series of its own."""
    name: str
    cover: str
    needs: List[str] = []


@dataclass
class Series:
    """Where make series reads and writes, and what it knows of the base;
    ENV: the commits' identity and date, for every git it runs."""
    root: str
    base: str
    src: str
    work: str
    out: str
    patches_dir: str
    version: str = ''
    debian: str = ''
    kernel_prefixes: bool = False
    env: Dict[str, str] = field(default_factory=dict)

    @property
    def hookup(self) -> str:
        return f'{self.patches_dir}/hookup'

    @property
    def parts(self) -> str:
        """scripts/series/parts."""
        return read(f'{self.root}/scripts/series/parts')

    def git(self, repo: str, *args: str, **kw):
        return run(['git', '-C', repo, '-c', 'core.autocrlf=false',
                    '-c', 'commit.gpgsign=false', *args], env=self.env, **kw)


def read(path: str) -> str:
    return Path(path).read_text(errors='surrogateescape')


def check_line(rc: int, what: str) -> str:
    return f"{'ok' if rc == 0 else 'not ok'} - series: {what}"


def result(rc: int, what: str) -> None:
    print(check_line(rc, what))


def say_head(text: str, n: int) -> None:
    """The first N lines of TEXT, as they are."""
    lib.show(''.join(text.splitlines(True)[:n]).encode(
        'utf-8', 'surrogateescape'))


def parse_lines(text: str) -> List[List[str]]:
    return [re.split(r'[ \t]+', line.strip(' \t'))
            for line in text.splitlines()
            if line.strip(' \t') and not line.startswith('#')]


def parse_parts(text: str) -> List[Part]:
    """The parts of scripts/series/parts' TEXT, each with its group."""
    parts, group = [], ''
    for words in parse_lines(text):
        if words[0].startswith('['):
            group = words[0].strip('[]')
        else:
            parts.append(Part(words[0], words[1] if len(words) > 1 else '',
                              words[2:], group))
    return parts


def parse_groups(text: str) -> List[Group]:
    return [Group(words[0].strip('[]'), words[1] if len(words) > 1 else '',
                  words[2:])
            for words in parse_lines(text) if words[0].startswith('[')]


def part_patches(s: Series, hook: str) -> List[str]:
    """A hook-up by number (0001), or a base's patch by path (a fix)."""
    where = s.patches_dir if '/' in hook else s.hookup
    return collated(glob.glob(glob.escape(f'{where}/{hook}') + '-*.patch'))


def fix_patches(s: Series) -> List[str]:
    return [p for part in parse_parts(s.parts) if '/' in part.hook
            for p in part_patches(s, part.hook)]


def part_files(s: Series, paths: Sequence[str]) -> List[str]:
    """The project's files under PATHS as git knows them (no build
    output)."""
    return collated(text(['git', 'ls-files', '--cached', '--others',
                                '--exclude-standard', '--', *paths],
                               cwd=s.root).splitlines())


def author(root: str, env) -> str:
    if env.get('PERF_AUX_AUTHOR'):
        return env['PERF_AUX_AUTHOR']
    name, mail = (text(['git', '-C', root, 'config', key])
                  for key in ('user.name', 'user.email'))
    if name and mail:
        return f'{name} <{mail}>'
    return 'perf_aux suite <perf_aux@localhost>'


def split_author(who: str) -> List[str]:
    """WHO's name and mail."""
    name = who[:who.rindex(' <')] if ' <' in who else who
    mail = who[who.rindex('<') + 1:] if '<' in who else who
    return [name, mail[:-1] if mail.endswith('>') else mail]


def commit_message(message: str, who: str) -> str:
    """A part's message signed off (in the trailer block if it ends in one)."""
    last = message.splitlines()[-1] if message else ''
    blank = '' if TRAILER.match(last) else '\n'
    return f'{message}{blank}Signed-off-by: {who}\n'


def maintainers_line(pattern: str, path: str, root: str) -> Optional[str]:
    """The F: line a section's PATTERN gives PATH: a file of a directory
    added a part at a time its own (a .c and its .h as one)."""
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
    """MAINTAINERS with "F:<tab>LINE" in SECTION, in byte order."""
    sec = section.encode('utf-8', 'surrogateescape')
    f = b'F:\t' + line.encode('utf-8', 'surrogateescape')
    out = []
    in_sec = done = False
    for rec in maintainers.splitlines():
        if rec == sec:
            in_sec = True
        if in_sec and not done and (rec == b'' or
                                    (rec.startswith(b'F:') and rec > f)):
            out.append(f)
            done = True
        if rec == b'':
            in_sec = False
        out.append(rec)
    return b''.join(rec + b'\n' for rec in out)


def maintainers_add(s: Series, repo: str, paths: Sequence[str]) -> None:
    """The F: lines scripts/series/maintainers gives for PATHS."""
    name = Path(repo, 'MAINTAINERS')
    rows = [line.strip('\t').partition('\t') for line in
            read(f'{s.root}/scripts/series/maintainers').splitlines()
            if not line.startswith('#')]
    for path in paths:
        for pattern, _, section in rows:
            line = maintainers_line(pattern, path, s.root)
            if line is None:
                continue
            data = name.read_bytes()
            if b'F:\t' + line.encode('utf-8', 'surrogateescape') in \
                    data.splitlines():
                continue
            name.write_bytes(insert_f_line(data, section.lstrip('\t'), line))


def makefile_names(line: str) -> List[str]:
    """The files a kselftest Makefile LINE names (a program by its .c)."""
    return [tok + '.c' if tok.endswith('_test') else tok
            for tok in MAKEFILE_NAME.findall(line)]


def filter_makefile(makefile: str, present) -> str:
    """The project's kselftest MAKEFILE less each line naming a file not
    present(name) yet; no blank line at the end."""
    kept = [line for line in makefile.split('\n')[:-1]
            if line.startswith('#') or all(present(name)
                                           for name in makefile_names(line))]
    while kept and kept[-1] == '':
        kept.pop()
    return ''.join(line + '\n' for line in kept)


def filter_config(config: str) -> str:
    """The kselftest CONFIG less the extended suite's options."""
    return config.split(EXTENDED_CONFIG, 1)[0]


def ksft_files(s: Series, repo: str) -> None:
    """REPO's kselftest Makefile and config as the files so far have them."""
    here = os.path.join(repo, KSFT)
    if not os.path.isdir(here):
        return
    Path(here, 'Makefile').write_text(filter_makefile(
        read(f'{s.root}/{KSFT}/Makefile'),
        lambda f: os.path.exists(os.path.join(here, f))),
        errors='surrogateescape')
    if os.path.exists(os.path.join(here, 'config')):
        Path(here, 'config').write_text(filter_config(
            read(f'{s.root}/{KSFT}/config')), errors='surrogateescape')


def series_base(s: Series, repo: str) -> None:
    """A repository of the pristine files the series changes."""
    hookups = collated(str(p) for p in Path(s.hookup).glob('*.patch'))
    files = lib.patched_files(*hookups, *fix_patches(s))
    lib.base_repo(s.src, repo, f'Linux {s.version} (Debian '
                  f'linux-source-{s.base} {s.debian})', 'MAINTAINERS', *files,
                  env=s.env)


def identity(s: Series, who: str) -> None:
    """The commits' author, committer and date (the project HEAD's)."""
    name, mail = split_author(who)
    date = run(['git', '-C', s.root, 'log', '-1', '--format=%cD'],
               stdout=PIPE, stderr=DEVNULL)
    date = date.stdout.rstrip('\n') if date.returncode == 0 else \
        email.utils.formatdate(localtime=True)
    s.env.update(GIT_AUTHOR_NAME=name, GIT_AUTHOR_EMAIL=mail,
                 GIT_COMMITTER_NAME=name, GIT_COMMITTER_EMAIL=mail,
                 GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)


def add_part(s: Series, repo: str, n: int, part: Part, who: str) -> None:
    """Commit N of the series: PART's hook-up and files."""
    if part.hook != '-':
        patches = part_patches(s, part.hook)
        if not patches and part.hook.startswith('reference/'):
            return  # a fix this base does not need
        if not patches:
            die(f'series part {n}: no patch {part.hook} in {s.hookup}')
        if len(patches) > 1:
            die(f'series part {n}: {len(patches)} patches {part.hook} in '
                f'{s.hookup}')
        if s.git(repo, 'apply', '--index', patches[0]).returncode:
            die(f'series part {n}: hook-up {os.path.basename(patches[0])} '
                f'does not apply to {s.base}')
    if part.paths:
        for f in part_files(s, part.paths):
            os.makedirs(os.path.join(repo, os.path.dirname(f)), exist_ok=True)
            dst = os.path.join(repo, f)
            existed = os.path.exists(dst)
            shutil.copyfile(os.path.join(s.root, f), dst)
            if not existed:
                shutil.copymode(os.path.join(s.root, f), dst)
        maintainers_add(s, repo, part.paths)
        ksft_files(s, repo)
    s.git(repo, 'add', '-A', check=True)
    message = commit_message(read(f'{s.root}/scripts/series/{part.message}'),
                             who)
    s.git(repo, 'commit', '-q', '-F', '-', check=True,
          input=message.encode('utf-8', 'surrogateescape'))


def group_dir(s: Series, k: int, group: Group) -> str:
    return os.path.join(s.out, f'{k}-{group.name}')


def group_mails(out: str) -> List[str]:
    """The patches in OUT, without the cover letter."""
    return [p for p in collated(str(p) for p in Path(out).glob('0*.patch'))
            if not p.endswith('/0000-cover-letter.patch')]


def make_series(s: Series, who: str) -> None:
    """WORK/repo (the base, a commit a part, a branch a group, which make
    fixes reads too) and each group's mails in OUT/<n>-<group>."""
    repo = os.path.join(s.work, 'repo')
    series_base(s, repo)
    parts = parse_parts(s.parts)
    shutil.rmtree(s.out, ignore_errors=True)
    made = run(['git', '-C', s.root, 'describe', '--always', '--dirty'],
               stdout=PIPE, stderr=DEVNULL)
    made_from = (made.stdout + ('?' if made.returncode else '')).rstrip('\n')
    previous, total = 'base', 0
    for k, group in enumerate(parse_groups(s.parts), 1):
        for n, part in enumerate(parts, 1):
            if part.group == group.name:
                add_part(s, repo, n, part, who)
        # The cover letter: its first paragraph the subject, the base named.
        cover = (read(f'{s.root}/scripts/series/{group.cover}') + '\n' +
                 f'Base: Linux {s.version}, Debian linux-source-{s.base} '
                 f'{s.debian}.\nMade by perf_aux `make series` from '
                 f'{made_from}.\n')
        s.git(repo, 'branch', '-f', group.name, 'HEAD', check=True)
        s.git(repo, 'config', f'branch.{group.name}.description',
              cover.rstrip('\n'), check=True)
        out = group_dir(s, k, group)
        os.makedirs(out)
        s.git(repo, 'format-patch', '-q', '--cover-letter',
              '--cover-from-description=subject', '--no-signature', '-o', out,
              f'{previous}..{group.name}', check=True)
        previous = group.name
        mails = group_mails(out)
        added = sum(patch_added(read(p)) for p in mails)
        total += added
        print(f'series {k}, {group.name}: {len(mails)} patches, '
              f"{added} added lines, in {out.replace(s.root + '/', '', 1)} "
              f'(Linux {s.version})')
        for patch in collated(str(p) for p in Path(out).glob('0*.patch')):
            found = [m for line in read(patch).splitlines()
                     for m in [INSERTIONS.findall(line)] if m]
            print(f'  {os.path.basename(patch):<58} '
                  f"{chr(10).join(found[0]) if found else '-'}")
    print(f'series: {total} added lines in all')


def checkpatch_totals(output: str) -> str:
    """The "total: " lines of checkpatch's OUTPUT, less that word."""
    return '\n'.join(line[len('total: '):] for line in output.splitlines()
                     if line.startswith('total: '))


def checkpatch_clean(totals: str) -> bool:
    return totals.startswith('0 errors, 0 warnings, 0 checks, ')


def checkpatch_line(patch: str, totals: str) -> str:
    return (f'checkpatch --strict {os.path.basename(patch)}: '
            f"{totals or 'no output'}")


def checkpatch(src: str) -> List[str]:
    """The base's checkpatch --strict; without git history (a Debian
    source) a Fixes: tag's commit cannot be looked up."""
    return ['perl', 'scripts/checkpatch.pl', '--strict',
            *([] if os.path.isdir(f'{src}/.git') else
              ['--ignore=UNKNOWN_COMMIT_ID'])]


def check_checkpatch(s: Series, patches: Sequence[str]) -> None:
    for patch in patches:
        totals = checkpatch_totals(text([*checkpatch(s.src), patch],
                                        cwd=s.src, stderr=STDOUT))
        rc = 0 if checkpatch_clean(totals) else 1
        if rc:
            say_head(run([*checkpatch(s.src), '--terse', patch], cwd=s.src,
                         stdout=PIPE).stdout, 10)
        result(rc, checkpatch_line(patch, totals))


def patch_added(text: str) -> int:
    """The lines a patch adds (its diff's "+" lines, not "+++")."""
    n, diff = 0, False
    for line in text.splitlines():
        diff |= line.startswith('diff --git ')
        n += diff and line.startswith('+') and not line.startswith('+++ ')
    return n


def changes_ksft(text: str) -> bool:
    return any(line.startswith(f'diff --git a/{KSFT}/')
               for line in text.splitlines())


def size_lines(patches: Sequence[str], texts: Sequence[str]) -> List[str]:
    """Enough patches, no kselftest patch too large to review (a KUnit
    suite is one file, one patch: reported, not held)."""
    out = [check_line(0 if len(patches) >= SERIES_MIN_PATCHES else 1,
                      f'{len(patches)} patches, at least '
                      f'{SERIES_MIN_PATCHES}')]
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
                                  f'{SERIES_MAX_ADDED} # SKIP not a kselftest '
                                  'part: one suite, one file'))
    out.append(check_line(0 if most <= SERIES_MAX_ADDED else 1,
                          f'no kselftest patch adds more than '
                          f'{SERIES_MAX_ADDED} lines (at most {most})'))
    return out


def check_am(s: Series, patches: Sequence[str]) -> None:
    """git am of the mails onto a fresh base, each group alone too; the
    last commit holds the parts' kselftest files as the project has them."""
    repo = os.path.join(s.work, 'am')
    log = os.path.join(s.work, 'am.log')
    series_base(s, repo)
    rc = s.git(repo, 'am', '-q', *patches, log=log).returncode
    count = s.git(repo, 'rev-list', '--count', 'base..HEAD', stdout=PIPE,
                  stderr=DEVNULL)
    n = (count.stdout + ('0' if count.returncode else '')).rstrip('\n')
    if rc:
        say_head(read(log), 20)
    result(rc, f'git am onto Linux {s.version}: {n} commits')
    if rc:
        return
    groups = parse_groups(s.parts)
    dirs = {g.name: group_dir(s, k, g) for k, g in enumerate(groups, 1)}
    for group in groups:
        s.git(repo, 'checkout', '-q', '-f', '--detach', 'base', check=True)
        mails = [m for name in (*group.needs, group.name)
                 for m in group_mails(dirs[name])]
        rc = s.git(repo, 'am', '-q', *mails, log=log).returncode
        if rc:
            say_head(read(log), 20)
            s.git(repo, 'am', '--abort')
        on = ' + '.join(['base', *group.needs])
        result(rc, f'series {group.name}: git am onto {on}, no other series')
    s.git(repo, 'checkout', '-q', '-f', 'perf_aux', check=True)
    rc = 0
    files = part_files(s, [p for part in parse_parts(s.parts)
                           for p in part.paths if p.startswith(KSFT + '/')])
    here = os.path.join(repo, KSFT)
    for f in files:
        mine = read(os.path.join(s.root, f))
        if f == f'{KSFT}/Makefile':
            mine = filter_makefile(mine, lambda name: os.path.exists(
                os.path.join(here, name)))
        elif f == f'{KSFT}/config':
            mine = filter_config(mine)
        if not os.path.isfile(os.path.join(repo, f)) or \
                read(os.path.join(repo, f)) != mine:
            rc = 1
            print(f'# not as in the project: {f}')
    for f in text(['git', 'ls-files', KSFT], cwd=repo).splitlines():
        if f not in files:
            rc = 1
            print(f'# not in a part: {f}')
    result(rc, f"the last commit has the {len(files)} files of {KSFT} "
           'the parts name, as in the project')


def headers_install(s: Series, tree: str, build: str) -> bool:
    """The uapi headers the kselftests build with, in BUILD."""
    log = os.path.join(s.work, 'headers.log')
    if run(['make', '-s', '-C', tree, f'O={build}', 'ARCH=arm64',
            f'CROSS_COMPILE={CROSS}', 'headers_install'],
           log=log).returncode == 0:
        return True
    say_head(read(log), 20)
    return False


def kernel_prefix(s: Series, tree: str, n: int, patch: str) -> None:
    """The arm64 kernel of the first N patches with each of
    SERIES_OPTIONS a Kconfig of TREE declares by then (DEBUG_FS: the
    synthetic PMUs report there); its KUnit suites run where it has some."""
    t0 = int(time.monotonic())
    frag = os.path.join(s.work, f'prefix-{n}.kunitconfig')
    log = os.path.join(s.work, f'kernel-{n}.log')
    config = 'CONFIG_KUNIT=y\nCONFIG_PERF_EVENTS=y\nCONFIG_DEBUG_FS=y\n'
    config += ''.join(f'CONFIG_{opt}=y\n' for opt in SERIES_OPTIONS
                      if run(['grep', '-rqx', '--include=Kconfig*',
                              f'config {opt}', tree]).returncode == 0)
    Path(frag).write_text(config)
    how = ['build']
    if 'KUNIT_TEST=y' in config:
        how = ['run', '--kernel_args=panic=-1',
               f"--kernel_args={' '.join(lib.vmalloc_args('-', 'off'))}",
               f'--qemu_args=-m {lib.GUEST_MEMORY_MIB} '
               f'-cpu {lib.ARM64_QEMU_CPU}']
    rc = kunit.kunit_py(os.path.join(s.work, 'kbuild'), log,
                        [*how, '--arch=arm64', f'--cross_compile={CROSS}',
                         f'--kunitconfig={frag}'], tree, CROSS)
    if rc:
        print(''.join(read(log).splitlines(True)[-20:]), end='')
    tests = sum('TEST' in line for line in config.splitlines())
    ran = ''
    if how[0] != 'build':
        found = RAN.findall(read(log))
        ran = f", its KUnit suites pass: {found[-1] if found else ''}"
    result(rc, f'{os.path.basename(patch)}: with the {n} patches so far, the '
           f'arm64 kernel builds with {tests} test options{ran} '
           f'({int(time.monotonic()) - t0} s)')


def changes_kernel(text: str) -> bool:
    """Whether a patch changes a file of a kernel build."""
    return any(line.startswith('diff --git a/') and
               not re.match(r'diff --git a/(tools/|MAINTAINERS )', line)
               for line in text.splitlines())


def warnings(log: str) -> List[str]:
    return [line for line in log.splitlines() if WARNING.search(line)]


def check_prefixes(s: Series, patches: Sequence[str], tree: str,
                   build: str) -> None:
    """The patches applied to TREE one by one, the kselftests built after
    each that changes them (a program's warnings show where it is added)."""
    built = n = 0
    for n, patch in enumerate(patches, 1):
        name = os.path.basename(patch)
        apply_log = os.path.join(s.work, 'apply.log')
        if run(['git', 'apply', patch], cwd=tree, log=apply_log).returncode:
            say_head(read(apply_log), 20)
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
        rc = run(['make', '-s', '-j2', '-C',
                  os.path.join(tree, 'tools/testing/selftests'), f'O={build}',
                  'ARCH=arm64', f'CROSS_COMPILE={CROSS}', 'TARGETS=perf_aux'],
                 log=log).returncode
        found = warnings(read(log))
        print(''.join(line + '\n' for line in found[:10]), end='')
        programs = ' '.join(collated(
            p.name for p in Path(build, 'kselftest/perf_aux').glob('*_test')
            if not p.name.startswith('.'))) or 'no program yet'
        result(rc or int(bool(found)), f'{name}: with the {n} patches so far, '
               f'TARGETS=perf_aux builds, no warning: {programs}')
    result(0 if built > 1 else 1,
           f'all {n} patches apply to the whole pristine Linux {s.version} '
           f'tree; the kselftests built at each of the {built} that change '
           'them')


def unfixed_is(s: Series, tree: str, name: str, stock: str) -> bool:
    """Whether TREE's NAME with the series' fixes taken out is STOCK."""
    tmp = os.path.join(s.work, 'unfixed')
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(os.path.join(tmp, os.path.dirname(name)), exist_ok=True)
    ok = os.path.isfile(os.path.join(tree, name))
    if ok:
        shutil.copyfile(os.path.join(tree, name), os.path.join(tmp, name))
    for p in fix_patches(s):
        if name in lib.patched_files(p):
            ok &= run(['patch', '-s', '-R', '-p1', '-d', tmp, '-i', p],
                      stdout=DEVNULL, stderr=DEVNULL).returncode == 0
    ok = ok and same_file(os.path.join(tmp, name), stock)
    shutil.rmtree(tmp, ignore_errors=True)
    return ok


def same_file(a: str, b: str) -> bool:
    try:
        return Path(a).read_bytes() == Path(b).read_bytes()
    except OSError:
        return False


def stock_line(same: int, fixed: int, differ: int) -> str:
    more = f' and, but for the fixes, {fixed} more' if fixed else ''
    without = ' without the fixes' if fixed else ''
    return check_line(0 if differ == 0 else 1,
                      f"the stock tree holds the series' {same} kernel "
                      f"files{more}: its KUnit run is the series' "
                      f'own{without}')


def check_tree(s: Series, patches: Sequence[str]) -> None:
    """The series applied to a hard-linked copy of the pristine tree, the
    kselftests built at each prefix; then the kernel files it touches
    against the staged stock tree (whose KUnit run is then the series')."""
    tree = os.path.join(s.work, 'tree')
    build = os.path.join(s.work, 'build')
    shutil.rmtree(tree, ignore_errors=True)
    shutil.rmtree(os.path.join(build, 'kselftest'), ignore_errors=True)
    run(['cp', '-al', s.src, tree], check=True)
    Path(tree, '.perf_aux-debian').unlink(missing_ok=True)
    rc = 0 if headers_install(s, tree, build) else 1
    result(rc, f'make headers_install in the pristine Linux {s.version} tree')
    if rc:
        return
    check_prefixes(s, patches, tree, build)
    stock = os.path.join(lib.cache(), 'trees', f'{s.base}-stock')
    if not os.path.isdir(stock):
        print('ok - series: same files as the stock tree # SKIP no stock tree '
              f'of {s.base} staged')
        return
    same = fixed = differ = 0
    for name in text(['git', 'diff', '--name-only', 'base', 'HEAD'],
                     cwd=os.path.join(s.work, 'am')).splitlines():
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


def setup(base: str, kernel_prefixes: bool = False) -> Series:
    """BASE's paths; its source unpacked if missing."""
    cache = lib.cache()
    lib.check_base(base)
    s = Series(root=lib.ROOT, base=base, src=f'{cache}/src/{base}',
               work=f'{cache}/series/{base}', out=f'{lib.out()}/series/{base}',
               patches_dir=lib.base_patches(base),
               kernel_prefixes=kernel_prefixes)
    if not os.path.isdir(s.src):
        run(lib.perf_aux('deps', f'base-{base}'), check=True, stdout=DEVNULL)
    s.version = lib.tree_version(s.src)
    s.debian = read(f'{s.src}/.perf_aux-debian').rstrip('\n') if \
        os.path.isfile(f'{s.src}/.perf_aux-debian') else 'unknown'
    return s


def main(argv: List[str]) -> int:
    """series [--check [--kernel-prefixes]], by position."""
    check = argv[:1] == ['--check']
    s = setup(os.environ.get('BASE') or lib.default_base(),
              argv[:2] == ['--check', '--kernel-prefixes'])
    os.makedirs(s.work, exist_ok=True)
    who = author(s.root, os.environ)
    identity(s, who)
    make_series(s, who)
    if check:
        patches = [p for p in collated(str(p) for p in
                                       Path(s.out).glob('*/0*.patch'))
                   if not p.endswith('/0000-cover-letter.patch')]
        for line in size_lines(patches, [read(p) for p in patches]):
            print(line)
        check_checkpatch(s, patches)
        check_am(s, patches)
        check_tree(s, patches)
    return 0
