# SPDX-License-Identifier: GPL-2.0
"""make series and make fixes: the suite as the patch series posted against BASE."""

import contextlib
import email.utils
import filecmp
import io
import os
import re
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

from . import deps, kunit, lib
from .lib import DEVNULL, PIPE, STDOUT, collated, die, read, run, text

ROOT = lib.ROOT
SERIES_DIR = f'{ROOT}/scripts/series'
KSFT = 'tools/testing/selftests/perf_aux'
SERIES_MIN_PATCHES = 9
SERIES_MAX_ADDED = 1000
CROSS = 'aarch64-linux-gnu-'
# The series' test options (the plain base has no large vmap to be strict).
SERIES_OPTIONS = ('PERF_AUX_ALLOC_KUNIT_TEST', 'VMAP_GRANULE_KUNIT_TEST', 'TEST_VMALLOC',
                  'TEST_AUX_PMU')
MAKEFILE_NAME = re.compile(r'[A-Za-z0-9_]+(?:_test|\.[ch])\b', re.ASCII)
TRAILER = re.compile(r'^[A-Za-z-]*: ')
INSERTIONS = re.compile(r'[0-9]* insertions?\(\+\)')
WARNING = re.compile(r'warning:|error:', re.IGNORECASE)
UAPI = re.compile(r'(arch/[^/]*/)?include/uapi/')
RAN = re.compile(r'Ran [0-9]* tests.*')
FIXES_LINE = re.compile(r'^Fixes: [0-9a-f]{12} \("', re.M)
# The options of the machine-wide programs (in no series) follow this.
EXTENDED_CONFIG = '# The machine-wide programs:'

class Part(NamedTuple):
    """A line of scripts/series/parts: message, hook-up (0001, a patch by path, -), paths."""
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
    """Where make series reads and writes, the base, the commits' identity and date (ENV)."""
    base: str
    src: str
    work: str
    out: str
    patches: str
    parts: List[Part]
    groups: List[Group]
    version: str
    debian: str
    kernel_prefixes: bool = False
    who: str = ''
    env: Dict[str, str] = field(default_factory=dict)

    def git(self, repo: str, *args: str, **kw):
        return run(['git', '-C', repo, '-c', 'core.autocrlf=false', '-c', 'commit.gpgsign=false',
                    *args], env=self.env, **kw)

def check_line(rc: int, what: str, verb: str = 'series') -> str:
    return f"{'ok' if rc == 0 else 'not ok'} - {verb}: {what}"

def result(rc: int, what: str, verb: str = 'series') -> None:
    print(check_line(rc, what, verb))

def shown(rc: int, log: str) -> int:
    """RC, with LOG's first lines shown where it is a failure."""
    print(''.join(read(log).splitlines(True)[:20]) if rc else '', end='')
    return rc

def parse(text_: str) -> Tuple[List[Part], List[Group]]:
    """The parts (each with its group) and the groups of scripts/series/parts' TEXT_."""
    parts: List[Part] = []
    groups: List[Group] = []
    for line in text_.splitlines():
        words = line.split()
        if not words or line.startswith('#'):
            continue
        if words[0].startswith('['):
            groups.append(Group(words[0].strip('[]'), (words + [''])[1], words[2:]))
        else:
            parts.append(Part(words[0], (words + [''])[1], words[2:], groups[-1].name))
    return parts, groups

def part_patches(s: Series, hook: str) -> List[str]:
    """A hook-up by number (0001), or a base's patch by path (a fix)."""
    where = s.patches if '/' in hook else f'{s.patches}/hookup'
    return collated(str(p) for p in Path(where).glob(f'{hook}-*.patch'))

def fix_patches(s: Series) -> List[str]:
    return [p for part in s.parts if '/' in part.hook for p in part_patches(s, part.hook)]

def part_files(paths: Sequence[str]) -> List[str]:
    """The project's files under PATHS as git knows them (no build output)."""
    return collated(text(['git', 'ls-files', '--cached', '--others', '--exclude-standard', '--',
                          *paths], cwd=ROOT).splitlines())

def numstat(patch: str) -> List[Tuple[int, str]]:
    """The lines PATCH adds to each file it changes (outside a repository: all of them)."""
    rows = [row.split('\t') for row in text(['git', 'apply', '--numstat', os.path.abspath(patch)],
                                            cwd='/').splitlines()]
    return [(0 if added == '-' else int(added), path) for added, _, path in rows]

def author() -> str:
    """PERF_AUX_AUTHOR, else git's user.name and user.email, else the suite's."""
    name, mail = (text(['git', '-C', ROOT, 'config', key]) for key in ('user.name', 'user.email'))
    return os.environ.get('PERF_AUX_AUTHOR') or \
        (f'{name} <{mail}>' if name and mail else 'perf_aux suite <perf_aux@localhost>')

def identity(who: str) -> Dict[str, str]:
    """The commits' author and committer WHO, their date the project HEAD's."""
    name, mail = email.utils.parseaddr(who)
    date = text(['git', '-C', ROOT, 'log', '-1', '--format=%cD'], stderr=DEVNULL) or \
        email.utils.formatdate(localtime=True)
    return dict(GIT_AUTHOR_NAME=name or mail, GIT_AUTHOR_EMAIL=mail,
                GIT_COMMITTER_NAME=name or mail, GIT_COMMITTER_EMAIL=mail,
                GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)

def commit_message(message: str, who: str) -> str:
    """A part's message signed off (in the trailer block if it ends in one)."""
    last = message.splitlines()[-1] if message else ''
    return f"{message}{'' if TRAILER.match(last) else chr(10)}Signed-off-by: {who}\n"

def maintainers_line(pattern: str, path: str, root: str) -> Optional[str]:
    """The F: line PATTERN gives PATH: a file of a directory its own (a .c and its .h as one)."""
    line = pattern
    if pattern.endswith('/') and path.startswith(pattern) and pattern != path + '/':
        line = path
        stem = path[:-2] if path.endswith(('.c', '.h')) else path
        if os.path.isfile(f'{root}/{stem}.c') and os.path.isfile(f'{root}/{stem}.h'):
            line = stem + '.[ch]'
    return line if pattern in (path, path + '/') or line != pattern else None

def insert_f_line(maintainers: str, section: str, line: str) -> str:
    """MAINTAINERS with "F:<tab>LINE" in SECTION, in order (a section must end in a blank)."""
    lines, f = maintainers.splitlines(), f'F:\t{line}'
    if section in lines and f not in lines:
        at = next((i for i in range(lines.index(section), len(lines))
                   if not lines[i] or lines[i].startswith('F:') and lines[i] > f), -1)
        lines[at:at] = [f] if at >= 0 else []
    return ''.join(rec + '\n' for rec in lines)

def maintainers_add(repo: str, paths: Sequence[str]) -> None:
    """The F: lines scripts/series/maintainers gives for PATHS."""
    name = f'{repo}/MAINTAINERS'
    rows = [line.strip('\t').partition('\t') for line in
            read(f'{SERIES_DIR}/maintainers').splitlines() if not line.startswith('#')]
    for path in paths:
        for pattern, _, section in rows:
            line = maintainers_line(pattern, path, ROOT)
            if line:
                Path(name).write_text(insert_f_line(read(name), section.lstrip('\t'), line),
                                      errors='surrogateescape')

def makefile_names(line: str) -> List[str]:
    """The files a kselftest Makefile LINE names (a program by its .c)."""
    return [tok + '.c' if tok.endswith('_test') else tok for tok in MAKEFILE_NAME.findall(line)]

def filter_makefile(makefile: str, present) -> str:
    """The kselftest MAKEFILE less each line naming a file not present(name) yet."""
    kept = [line for line in makefile.split('\n')[:-1]
            if line.startswith('#') or all(present(name) for name in makefile_names(line))]
    return '\n'.join(kept).rstrip('\n') + '\n'

def ksft_file(repo: str, f: str) -> str:
    """The project's file F as the kselftest files in REPO so far have it (config: the series')."""
    mine = read(f'{ROOT}/{f}')
    if f == f'{KSFT}/Makefile':
        return filter_makefile(mine, lambda name: os.path.exists(f'{repo}/{KSFT}/{name}'))
    return mine.split(EXTENDED_CONFIG, 1)[0] if f == f'{KSFT}/config' else mine

def add_part(s: Series, repo: str, n: int, part: Part) -> None:
    """Commit N of the series: PART's hook-up and files."""
    if part.hook != '-':
        patches = part_patches(s, part.hook)
        if not patches and part.hook.startswith('reference/'):
            return  # a fix this base does not need
        if len(patches) != 1:
            die(f'series part {n}: {len(patches)} patches {part.hook} in {s.patches}/hookup')
        if s.git(repo, 'apply', '--index', patches[0]).returncode:
            die(f'series part {n}: hook-up {os.path.basename(patches[0])} does not apply to '
                f'{s.base}')
    for f in part_files(part.paths) if part.paths else []:
        os.makedirs(os.path.dirname(f'{repo}/{f}'), exist_ok=True)
        shutil.copy(f'{ROOT}/{f}', f'{repo}/{f}')
    if part.paths:
        maintainers_add(repo, part.paths)
        for f in (f'{KSFT}/Makefile', f'{KSFT}/config'):
            if os.path.exists(f'{repo}/{f}'):
                Path(repo, f).write_text(ksft_file(repo, f), errors='surrogateescape')
    s.git(repo, 'add', '-A', check=True)
    s.git(repo, 'commit', '-q', '-m', commit_message(read(f'{SERIES_DIR}/{part.message}'), s.who),
          check=True)

def group_dir(s: Series, k: int, group: Group) -> str:
    return f'{s.out}/{k}-{group.name}'

def series_base(s: Series, repo: str) -> None:
    """A repository of the pristine files the series changes."""
    hookups = collated(str(p) for p in Path(s.patches, 'hookup').glob('*.patch'))
    lib.base_repo(s.src, repo, f'Linux {s.version} (Debian linux-source-{s.base} {s.debian})',
                  'MAINTAINERS', *lib.patched_files(*hookups, *fix_patches(s)), env=s.env)

def make_series(s: Series) -> None:
    """WORK/repo (a commit a part, a branch a group) and each group's mails in OUT/<k>-<group>."""
    repo = f'{s.work}/repo'
    series_base(s, repo)
    shutil.rmtree(s.out, ignore_errors=True)
    made_from = text(['git', '-C', ROOT, 'describe', '--always', '--dirty'], stderr=DEVNULL) or '?'
    previous, total = 'base', 0
    for k, group in enumerate(s.groups, 1):
        for n, part in enumerate(s.parts, 1):
            if part.group == group.name:
                add_part(s, repo, n, part)
        # The cover letter: its first paragraph the subject, the base named.
        cover = (read(f'{SERIES_DIR}/{group.cover}') + f'\nBase: Linux {s.version}, Debian '
                 f'linux-source-{s.base} {s.debian}.\nMade by perf_aux `make series` from '
                 f'{made_from}.')
        s.git(repo, 'branch', '-f', group.name, 'HEAD', check=True)
        s.git(repo, 'config', f'branch.{group.name}.description', cover, check=True)
        out = group_dir(s, k, group)
        s.git(repo, 'format-patch', '-q', '--cover-letter', '--cover-from-description=subject',
              '--no-signature', '-o', out, f'{previous}..{group.name}', check=True)
        previous = group.name
        mails = lib.series_mails(out)
        added = sum(a for m in mails for a, _ in numstat(m))
        total += added
        print(f"series {k}, {group.name}: {len(mails)} patches, {added} added lines, in "
              f"{out.replace(ROOT + '/', '', 1)} (Linux {s.version})")
        for patch in collated(str(p) for p in Path(out).glob('0*.patch')):
            m = INSERTIONS.search(read(patch))
            print(f"  {os.path.basename(patch):<58} {m.group(0) if m else '-'}")
    print(f'series: {total} added lines in all')

def checkpatch(src: str, patch: str) -> Tuple[int, str]:
    """checkpatch --strict of PATCH in SRC (Fixes: ids need git history): status, check line."""
    argv = ['perl', 'scripts/checkpatch.pl', '--strict',
            *([] if os.path.isdir(f'{src}/.git') else ['--ignore=UNKNOWN_COMMIT_ID'])]
    totals = '\n'.join(line[7:] for line in text([*argv, patch], cwd=src, stderr=STDOUT)
                       .splitlines() if line.startswith('total: '))
    rc = 0 if totals.startswith('0 errors, 0 warnings, 0 checks, ') else 1
    if rc:
        print(''.join(run([*argv, '--terse', patch], cwd=src, stdout=PIPE).stdout
                      .splitlines(True)[:10]), end='')
    return rc, f"checkpatch --strict {os.path.basename(patch)}: {totals or 'no output'}"

def size_lines(patches: Sequence[str], stats: Sequence[List[Tuple[int, str]]]) -> List[str]:
    """Enough patches, no kselftest patch (by numstat) too large to review (a KUnit one is)."""
    out = [check_line(0 if len(patches) >= SERIES_MIN_PATCHES else 1,
                      f'{len(patches)} patches, at least {SERIES_MIN_PATCHES}')]
    most = 0
    for patch, stat in zip(patches, stats):
        added = sum(a for a, _ in stat)
        ksft = any(path.startswith(KSFT + '/') for _, path in stat)
        most = max(most, added) if ksft else most
        if added > SERIES_MAX_ADDED:
            what = f'{os.path.basename(patch)}: {added} added lines, more than {SERIES_MAX_ADDED}'
            out.append(check_line(1, what) if ksft else
                       check_line(0, what + ' # SKIP not a kselftest part: one suite, one file'))
    out.append(check_line(0 if most <= SERIES_MAX_ADDED else 1, 'no kselftest patch adds more '
                          f'than {SERIES_MAX_ADDED} lines (at most {most})'))
    return out

def git_am(s: Series, repo: str, branch: str, mails: Sequence[str], log: str) -> int:
    """git am of MAILS onto REPO's base as BRANCH (an am left unfinished given up first)."""
    s.git(repo, 'am', '--abort', stdout=DEVNULL, stderr=DEVNULL)
    s.git(repo, 'checkout', '-q', '-f', '-B', branch, 'base', check=True)
    return shown(s.git(repo, 'am', '-q', *mails, log=log).returncode, log)

def check_am(s: Series, patches: Sequence[str]) -> None:
    """git am onto a fresh base, of each group too; the kselftest files at the end the project's."""
    repo, log = f'{s.work}/am', f'{s.work}/am.log'
    series_base(s, repo)
    rc = git_am(s, repo, 'perf_aux', patches, log)
    n = text(['git', '-C', repo, 'rev-list', '--count', 'base..HEAD'], stderr=DEVNULL) or '0'
    result(rc, f'git am onto Linux {s.version}: {n} commits')
    if rc:
        return
    dirs = {g.name: group_dir(s, k, g) for k, g in enumerate(s.groups, 1)}
    for group in s.groups:
        mails = [m for name in (*group.needs, group.name) for m in lib.series_mails(dirs[name])]
        result(git_am(s, repo, 'group', mails, log), f'series {group.name}: git am onto '
               f"{' + '.join(['base', *group.needs])}, no other series")
    s.git(repo, 'am', '--abort', stdout=DEVNULL, stderr=DEVNULL)
    s.git(repo, 'checkout', '-q', '-f', 'perf_aux', check=True)
    files = part_files([p for part in s.parts for p in part.paths if p.startswith(KSFT + '/')])
    wrong = [f'# not as in the project: {f}\n' for f in files if not os.path.isfile(f'{repo}/{f}')
             or read(f'{repo}/{f}') != ksft_file(repo, f)]
    wrong += [f'# not in a part: {f}\n' for f in text(['git', 'ls-files', KSFT],
                                                       cwd=repo).splitlines() if f not in files]
    print(''.join(wrong), end='')
    result(int(bool(wrong)), f'the last commit has the {len(files)} files of {KSFT} the parts '
           'name, as in the project')

def headers_install(s: Series, tree: str, build: str) -> bool:
    """The uapi headers the kselftests build with, in BUILD."""
    log = f'{s.work}/headers.log'
    return not shown(run(['make', '-s', '-C', tree, f'O={build}', 'ARCH=arm64',
                          f'CROSS_COMPILE={CROSS}', 'headers_install'], log=log).returncode, log)

def kernel_prefix(s: Series, tree: str, n: int, patch: str) -> None:
    """The arm64 kernel of N patches with the SERIES_OPTIONS TREE has, its KUnit suites run."""
    t0 = int(time.monotonic())
    frag, log = f'{s.work}/prefix-{n}.kunitconfig', f'{s.work}/kernel-{n}.log'
    config = 'CONFIG_KUNIT=y\nCONFIG_PERF_EVENTS=y\nCONFIG_DEBUG_FS=y\n' + ''.join(
        f'CONFIG_{opt}=y\n' for opt in SERIES_OPTIONS
        if run(['grep', '-rqx', '--include=Kconfig*', f'config {opt}', tree]).returncode == 0)
    Path(frag).write_text(config)
    how = ['build']
    if 'KUNIT_TEST=y' in config:
        how = ['run', '--kernel_args=panic=-1',
               f"--kernel_args={' '.join(lib.vmalloc_args('-', 'off'))}",
               f'--qemu_args=-m {lib.GUEST_MEMORY_MIB} -cpu {lib.ARM64_QEMU_CPU}']
    rc = kunit.kunit_py(f'{s.work}/kbuild', log, [*how, '--arch=arm64',
                        f'--cross_compile={CROSS}', f'--kunitconfig={frag}'], tree, CROSS)
    if rc:
        print(''.join(read(log).splitlines(True)[-20:]), end='')
    ran = ''
    if how[0] != 'build':
        found = RAN.findall(read(log))
        ran = f", its KUnit suites pass: {found[-1] if found else ''}"
    result(rc, f"{os.path.basename(patch)}: with the {n} patches so far, the arm64 kernel builds "
           f"with {config.count('TEST')} test options{ran} ({int(time.monotonic()) - t0} s)")

def check_prefixes(s: Series, patches: Sequence[str], tree: str, build: str) -> None:
    """The patches applied one by one, the kselftests built after each that changes them."""
    built = n = 0
    for n, patch in enumerate(patches, 1):
        name, log = os.path.basename(patch), f'{s.work}/apply.log'
        if shown(run(['git', 'apply', patch], cwd=tree, log=log).returncode, log):
            return result(1, f'{name} applies to the pristine Linux {s.version} tree after the '
                          f'{n - 1} before it')
        files = [path for _, path in numstat(patch)]
        # A patch to a uapi header: installed again for what follows.
        if any(UAPI.match(f) for f in files) and not headers_install(s, tree, build):
            return result(1, f'{name}: make headers_install')
        if s.kernel_prefixes and any(f != 'MAINTAINERS' and not f.startswith('tools/')
                                     for f in files):
            kernel_prefix(s, tree, n, patch)
        if not any(f.startswith(KSFT + '/') for f in files):
            continue
        built += 1
        log = f'{s.work}/kselftest-{n}.log'
        rc = run(['make', '-s', '-j2', '-C', f'{tree}/tools/testing/selftests', f'O={build}',
                  'ARCH=arm64', f'CROSS_COMPILE={CROSS}', 'TARGETS=perf_aux'], log=log).returncode
        found = [line for line in read(log).splitlines() if WARNING.search(line)]
        print(''.join(line + '\n' for line in found[:10]), end='')
        programs = ' '.join(collated(p.name for p in Path(build, 'kselftest/perf_aux')
                                     .glob('[!.]*_test'))) or 'no program yet'
        result(rc or int(bool(found)), f'{name}: with the {n} patches so far, TARGETS=perf_aux '
               f'builds, no warning: {programs}')
    result(0 if built > 1 else 1, f'all {n} patches apply to the whole pristine Linux '
           f'{s.version} tree; the kselftests built at each of the {built} that change them')

def same_file(a: str, b: str) -> bool:
    return os.path.isfile(a) and os.path.isfile(b) and filecmp.cmp(a, b, shallow=False)

def unfixed_is(s: Series, tree: str, name: str, stock: str) -> bool:
    """Whether TREE's NAME with the series' fixes taken out is STOCK."""
    tmp = f'{s.work}/unfixed'
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(os.path.dirname(f'{tmp}/{name}'))
    if not os.path.isfile(f'{tree}/{name}'):
        return False
    shutil.copyfile(f'{tree}/{name}', f'{tmp}/{name}')
    return all(run(['patch', '-s', '-R', '-p1', '-d', tmp, '-i', p], stdout=DEVNULL,
                   stderr=DEVNULL).returncode == 0
               for p in fix_patches(s) if name in lib.patched_files(p)) and \
        same_file(f'{tmp}/{name}', stock)

def stock_line(same: int, fixed: int, differ: int) -> str:
    more = f' and, but for the fixes, {fixed} more' if fixed else ''
    return check_line(0 if differ == 0 else 1, f"the stock tree holds the series' {same} kernel "
                      f"files{more}: its KUnit run is the series' own"
                      f"{' without the fixes' if fixed else ''}")

def check_tree(s: Series, patches: Sequence[str]) -> None:
    """The series on a copy of the pristine tree, built at each prefix, beside the stock tree."""
    tree, build = f'{s.work}/tree', f'{s.work}/build'
    shutil.rmtree(tree, ignore_errors=True)
    shutil.rmtree(f'{build}/kselftest', ignore_errors=True)
    run(['cp', '-al', s.src, tree], check=True)
    Path(tree, '.perf_aux-debian').unlink(missing_ok=True)
    rc = 0 if headers_install(s, tree, build) else 1
    result(rc, f'make headers_install in the pristine Linux {s.version} tree')
    if rc:
        return
    check_prefixes(s, patches, tree, build)
    stock = f'{lib.cache()}/trees/{s.base}-stock'
    if not os.path.isdir(stock):
        return print('ok - series: same files as the stock tree # SKIP no stock tree of '
                     f'{s.base} staged')
    n = {'same': 0, 'fixed': 0, 'differ': 0}
    for name in text(['git', 'diff', '--name-only', 'base', 'HEAD'],
                     cwd=f'{s.work}/am').splitlines():
        if name != 'MAINTAINERS' and not name.startswith('tools/'):
            kind = 'same' if same_file(f'{tree}/{name}', f'{stock}/{name}') else 'fixed' \
                if unfixed_is(s, tree, name, f'{stock}/{name}') else 'differ'
            n[kind] += 1
            only = " by the series' fixes only" if kind == 'fixed' else ''
            if kind != 'same':
                print(f'# differs from the stock tree{only}: {name}')
    print(stock_line(n['same'], n['fixed'], n['differ']))

def setup(kernel_prefixes: bool = False) -> Series:
    """The series of BASE (its source unpacked if missing), the commits' identity set."""
    base = lib.check('BASE', os.environ.get('BASE') or lib.default_base(), lib.BASES)
    src = f'{lib.cache()}/src/{base}'
    if not os.path.isdir(src):
        with contextlib.redirect_stdout(io.StringIO()):
            deps.main([f'base-{base}'])
    who = author()
    s = Series(base, src, f'{lib.cache()}/series/{base}', f'{lib.out()}/series/{base}',
               lib.base_patches(base), *parse(read(f'{SERIES_DIR}/parts')),
               lib.tree_version(src), read(f'{src}/.perf_aux-debian').rstrip() or 'unknown',
               kernel_prefixes, who, identity(who))
    os.makedirs(s.work, exist_ok=True)
    return s

def main(argv: List[str]) -> int:
    """series [--check [--kernel-prefixes]], by position."""
    s = setup(argv[:2] == ['--check', '--kernel-prefixes'])
    make_series(s)
    if argv[:1] == ['--check']:
        patches = [p for k, g in enumerate(s.groups, 1)
                   for p in lib.series_mails(group_dir(s, k, g))]
        for line in size_lines(patches, [numstat(p) for p in patches]):
            print(line)
        for patch in patches:
            result(*checkpatch(s.src, patch))
        check_am(s, patches)
        check_tree(s, patches)
    return 0

def maintainers(src: str, patch: str, *which: str) -> List[str]:
    """Whom SRC's get_maintainer.pl names for PATCH (WHICH: --m, or --r and --l)."""
    return [line for line in text(['perl', 'scripts/get_maintainer.pl', '--nogit',
                                   '--nogit-fallback', '--no-rolestats', '--nom', '--nor', '--nol',
                                   *which, patch], cwd=src, stderr=DEVNULL).splitlines() if line]

def fixes_main(argv: List[str]) -> int:
    """make fixes: the series' fixes (and their test) on their own in out/fixes/<base>/."""
    s = setup()
    with contextlib.redirect_stdout(io.StringIO()):
        make_series(s)
    out, repo, diff = f'{lib.out()}/fixes/{s.base}', f'{s.work}/repo', f'{s.work}/fixes.diff'
    shutil.rmtree(out, ignore_errors=True)
    # The series' first group, [fixes], its cover letter without the series' lines.
    s.git(repo, 'diff', 'base', 'fixes', log=diff, check=True)
    to, cc = maintainers(s.src, diff, '--m'), maintainers(s.src, diff, '--r', '--l')
    s.git(repo, 'config', 'branch.fixes.description', read(f'{SERIES_DIR}/fixes-cover.txt'),
          check=True)
    s.git(repo, 'format-patch', '-q', '--no-signature', '--cover-letter',
          '--cover-from-description=subject', '-o', out, *[f'--to={a}' for a in to],
          *[f'--cc={a}' for a in cc], 'base..fixes', check=True)
    patches = lib.series_mails(out)
    print(f'fixes: {len(patches)} in {os.path.relpath(out, ROOT)} (Linux {s.version}) and a '
          f'cover letter to {len(to)} maintainers, cc {len(cc)}')
    result(0 if to else 1, f"cover letter: To: {', '.join(to) or 'nobody'}", 'fixes')
    note = '' if os.path.isdir(f'{s.src}/.git') else ' (Fixes: id not looked up: no git history)'
    for p in patches:
        rc, line = checkpatch(s.src, p)
        result(rc, line + note, 'fixes')
        # A test of the fixes (and its MAINTAINERS line) names no commit.
        if all(f == 'MAINTAINERS' or f.startswith('tools/testing/selftests/')
               for f in lib.patched_files(p)):
            continue
        body = read(p)
        named = '\n'.join(line[7:] for line in body.split('\n') if line.startswith('Fixes: '))
        result(0 if FIXES_LINE.search(body) else 1,
               f'{os.path.basename(p)} names the commit it fixes: {named}', 'fixes')
    am, log = f'{s.work}/fixes-am', f'{s.work}/fixes-am.log'
    lib.base_repo(s.src, am, f'Linux {s.base}', *lib.patched_files(*patches), env=s.env)
    for p in patches:
        result(git_am(s, am, 'perf_aux', [p], log),
               f'git am {os.path.basename(p)} alone onto pristine Linux {s.version}', 'fixes')
    result(git_am(s, am, 'perf_aux', patches, log), f'git am onto pristine Linux {s.version}: '
           f'{len(patches)} of {len(patches)}', 'fixes')
    return 0
