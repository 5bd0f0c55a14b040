# SPDX-License-Identifier: GPL-2.0
"""Kernel source trees (python3 -m perf_aux kernel-tree).

Prepares the kernel source tree $PERF_AUX_CACHE/trees/<base>-NAME:

  reference  Debian linux-source-<base> + hook-ups + reference patches
  stock      Debian linux-source-<base> + hook-ups (the negative control)
  custom     the tree in $KERNEL_SRC (copied, never modified) + hook-ups
  mutant     the reference tree + the patch given as second argument
  series-vN  Debian linux-source-<base> + the series in $SERIES (an mbox or
             a directory of patches, git am'd onto the base) + hook-ups

BASE (default: the first of PERF_AUX_BASES) chooses the Debian source; for
a custom tree the base is its version's major.minor.  "Hook-ups" are the
project's files overlaid at their kernel paths (OVERLAY below) plus the
patches in scripts/patches/<base>/hookup that wire them into Kconfig and
the Makefiles; scripts/patches/<base>/reference is what the base lacks of
the rules under test.

A tree is rebuilt only when its recipe (source version, overlay files,
patches) changed, and then only changed files get a new mtime, so the
build directories inside it (.build-*) rebuild incrementally.  That is why
the copying is rsync's and cp -a's: content compared, times kept.

Usage: BASE=7.3 [SERIES=PATH] python3 -m perf_aux kernel-tree NAME
       [MUTANT.patch]

The bases, the paths, tree_version, tree_name, patched_files, base_repo,
series_mails, ... are perf_aux.lib's.
"""

import glob
import hashlib
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from typing import List, NamedTuple, Optional, Sequence

from . import lib, shell
from .files import cat, collated, read, records, remove, write_line
from .shell import tool, tool_output

# The project's files and directories the trees get at their kernel paths.
OVERLAY = ('kernel/events/ring_buffer_kunit.c',
           'kernel/events/ring_buffer_kunit_orders.h',
           'kernel/events/ring_buffer_kunit.kunitconfig',
           'lib/test_aux_pmu.c', 'mm/tests',
           'tools/testing/selftests/perf_aux',
           'tools/testing/selftests/perf_events/mmap_accounting.c')
USAGE = 'usage: python3 -m perf_aux kernel-tree NAME [MUTANT.patch]'
RECIPE = '.perf_aux-recipe'
# The tree names a new tree may start from, in order of preference.
SEEDS = ('reference', 'stock', 'mutant', 'series-')


# Files.

def find_files(top: str, prune: str = '') -> List[str]:
    """find TOP -type f -o -type l, as "/path" names under TOP and in
    find's order (each directory's entries as the directory lists them,
    a subdirectory's right after its name): .perf_aux-staged is written
    in the order the shell version wrote it.  PRUNE: a "/path" left out
    with all it holds (find's -path ./PATH -prune)."""
    found: List[str] = []

    def walk(rel: str) -> None:
        with os.scandir(top + rel) as entries:
            for entry in entries:
                path = f'{rel}/{entry.name}'
                if path == prune:
                    continue
                if entry.is_symlink() or entry.is_file(follow_symlinks=False):
                    found.append(path)
                elif entry.is_dir(follow_symlinks=False):
                    walk(path)

    walk('')
    return found


def regular_files(root: str, paths: Sequence[str]) -> List[str]:
    """find PATHS -type f 2>/dev/null | sort, in ROOT: the regular files
    among PATHS and under those that are directories, no symlink
    followed, in the locale's collation."""
    found: List[str] = []
    for path in paths:
        full = os.path.join(root, path)
        if os.path.isfile(full) and not os.path.islink(full):
            found.append(path)
        elif os.path.isdir(full) and not os.path.islink(full):
            for rel in find_files(full):
                if not os.path.islink(full + rel):
                    found.append(path + rel)
    return collated(found)


def stamp_lines(top: str) -> bytes:
    """find TOP -path ./.git -prune -o -type f -printf '%P %s %T@\\n' |
    LC_ALL=C sort: each regular file's name, size and modification time
    (seconds, ten decimals, as find prints them)."""
    out: List[bytes] = []
    for rel in find_files(top, prune='/.git'):
        st = os.lstat(top + rel)
        if not stat.S_ISREG(st.st_mode):
            continue
        seconds, nanoseconds = divmod(st.st_mtime_ns, 1000000000)
        out.append(os.fsencode(f'{rel[1:]} {st.st_size} '
                               f'{seconds}.{nanoseconds:09d}0\n'))
    return b''.join(sorted(out))


def sha256sum_line(directory: str, name: str) -> bytes:
    """sha256sum NAME's line, in DIRECTORY (coreutils' escaping of a
    name with a backslash or a newline included)."""
    digest = hashlib.sha256()
    with open(os.path.join(directory, name), 'rb') as f:
        for block in iter(lambda: f.read(1 << 20), b''):
            digest.update(block)
    if '\\' in name or '\n' in name:
        name = name.replace('\\', '\\\\').replace('\n', '\\n')
        return os.fsencode(f'\\{digest.hexdigest()}  {name}\n')
    return os.fsencode(f'{digest.hexdigest()}  {name}\n')


# The sources.

def debian_source(cache: str, base: str) -> str:
    """The base's Debian source, unpacked by perf_aux deps base-BASE."""
    src = os.path.join(cache, 'src', base)
    if not os.path.isfile(os.path.join(src, '.perf_aux-debian')):
        shell.die(f'no source for base {base} (run PYTHONPATH=scripts '
                  f'python3 -m perf_aux deps base-{base})')
    return src


def source_stamp(src: str) -> str:
    """What identifies an unpacked source."""
    return f"{src} {cat(os.path.join(src, '.perf_aux-debian'))} " \
        f'{lib.tree_version(src)}'


def is_git(src: str) -> bool:
    """Whether SRC is in a git work tree (git rev-parse's status)."""
    return subprocess.run(['git', '-C', src, 'rev-parse',
                           '--is-inside-work-tree'],
                          stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0


def git_output(src: str, *args: str) -> bytes:
    """What git ARGS prints in SRC, as bytes (a diff is hashed as it
    is), its status aside as in $(...) among a command's output."""
    sys.stdout.flush()
    return subprocess.run(['git', '-C', src, *args], stdout=subprocess.PIPE,
                          check=False).stdout


def tree_state(src: str) -> bytes:
    """What a user's tree holds, for the recipe: a git tree's HEAD, its
    uncommitted diff and untracked files' checksums; any other tree's
    file names, sizes and modification times.  An edit is seen either
    way, so a run never reports an old kernel's results as the new
    one's."""
    if not is_git(src):
        return stamp_lines(src)
    untracked = git_output(src, 'ls-files', '--others', '--exclude-standard',
                           '-z')
    return (git_output(src, 'rev-parse', 'HEAD') +
            git_output(src, 'diff', 'HEAD') +
            b''.join(sha256sum_line(src, os.fsdecode(name))
                     for name in untracked.split(b'\0') if name))


def tree_describe(src: str) -> str:
    """tree_state in words, for the run's log and the report."""
    if is_git(src):
        describe = git_output(src, 'describe', '--always', '--dirty',
                              '--abbrev=12')
        return f"git {os.fsdecode(describe).rstrip(chr(10))}"
    digest = hashlib.sha256(tree_state(src)).hexdigest()
    return f'not a git tree, files {digest[:12]}'


# The series.

def series_diff(cache: str, base: str) -> str:
    """The series as one diff, made by series_am."""
    return os.path.join(cache, 'series-am', f'{base}.diff')


def series_am(src: str, cache: str, base: str) -> int:
    """git am of $SERIES onto the files of SRC it changes (a repository of
    those files alone: git am reads nothing else); the result as one diff
    for the staging (series_diff).  A series that does not apply stops
    here, naming the patch, with git am's own message.  Returns how many
    patches it applied."""
    series = os.environ.get('SERIES', '')
    repo = os.path.join(cache, 'series-am', base)
    mails = lib.series_mails()
    if not mails or not os.path.exists(mails[0]) or \
            os.path.getsize(mails[0]) == 0:
        shell.die(f'SERIES={series} holds no patch')
    lib.base_repo(src, repo, 'base', *lib.patched_files(*mails))
    rc = tool(['git', '-C', repo, '-c', 'user.name=perf_aux',
               '-c', 'user.email=perf_aux@localhost', 'am', '--empty=drop',
               *mails], log=repo + '.log')
    if rc:
        log = read(repo + '.log')
        sys.stderr.write(log)
        sys.stderr.flush()
        failed = [line[len('Patch failed at '):] for line in log.split('\n')
                  if line.startswith('Patch failed at ')]
        shell.die(f'SERIES={series} does not apply to {base}: '
                  f"{failed[0] if failed else ''}")
    count = int(tool_output(['git', '-C', repo, 'rev-list', '--count',
                             'base..HEAD']).stdout.strip() or 0)
    print(f'series: {count} patches applied with git am')
    with open(series_diff(cache, base), 'wb') as f:
        tool(['git', '-C', repo, 'diff', 'base', 'HEAD'], stdout=f,
             check=True)
    return count


# The recipe.

def patch_list(name: str, mutant: str, cache: str, base: str) -> List[str]:
    """The patches of tree NAME, in the order they apply: a series first
    (written against the plain base), the hook-ups, the reference patches
    (reference and mutant trees), the mutant."""
    patches = lib.base_patches(base)
    found = [series_diff(cache, base)] if name.startswith('series-') else []
    found += patches_in(os.path.join(patches, 'hookup'))
    if name in ('reference', 'mutant'):
        found += patches_in(os.path.join(patches, 'reference'))
    if mutant:
        found.append(mutant)
    return found


def patches_in(directory: str) -> List[str]:
    """DIRECTORY/*.patch, in the order ls gives them."""
    return collated(glob.glob(glob.escape(directory) + '/*.patch'))


def project_path(root: str, path: str) -> str:
    """PATH relative to the project ROOT where it is in it, else PATH."""
    inside = os.path.commonpath([os.path.abspath(root), os.path.abspath(path)])
    if inside == os.path.abspath(root):
        return os.path.relpath(path, root)
    return path


def recipe(root: str, src: str, version: str, name: str,
           patches: Sequence[str]) -> str:
    """A hash of everything the tree is made of: the source and its
    version (a user's tree's state too), each patch by its path and each
    overlay file by its name in the tree, with their content.  A patch of
    the project is named by its path in the project, so every clone of the
    same commit has the same recipe and reuses the trees of the cache."""
    digest = hashlib.sha256(os.fsencode(f'{src} {version}\n'))
    if name == 'custom':
        digest.update(tree_state(src))
    parts = [(project_path(root, path), path) for path in patches]
    parts += [(f, os.path.join(root, f)) for f in regular_files(root, OVERLAY)]
    for label, path in parts:
        digest.update(os.fsencode(label + '\n'))
        with open(path, 'rb') as f:
            digest.update(f.read())
    return digest.hexdigest()


def up_to_date(tree: str, stamp: str) -> bool:
    """Whether TREE was made from the recipe STAMP."""
    path = os.path.join(tree, RECIPE)
    return os.path.isfile(path) and cat(path) == stamp


# The tree.

def seed_tree(cache: str, name: str, base: str) -> str:
    """A tree of the same base to start a new one from, its build
    directories included, so that the new tree's first build recompiles
    only what differs (the stock control after the reference, a
    mutant).  None for a custom tree."""
    if name == 'custom':
        return ''
    for seed in SEEDS:
        tree = os.path.join(cache, 'trees', lib.tree_name(seed, base))
        if os.path.isfile(os.path.join(tree, RECIPE)):
            return tree
    return ''


def seed_build(tree: str, build: str, base: str) -> None:
    """TREE's BUILD directory, where it has none yet, copied from the
    first tree of BASE that has one (SEEDS order): its first build then
    recompiles only what differs from that tree, cache or not (a mutant
    at another page size)."""
    if os.path.isdir(os.path.join(tree, build)):
        return
    for seed in SEEDS:
        other = os.path.join(os.path.dirname(tree), lib.tree_name(seed, base),
                             build)
        if os.path.dirname(other) != tree and os.path.isdir(other):
            print(f'starting {tree}/{build} from {other}')
            tool(['cp', '-a', other, os.path.join(tree, build)], check=True)
            return


def new_tree(tree: str, src: str, seed: str) -> None:
    """TREE as a copy of SEED or SRC.  Of SEED's build directories only
    TARGET's default one comes along: the others may be many and large,
    and the first build of another recompiles only what differs anyway
    (ccache)."""
    build = '.build-' + (os.environ.get('TARGET') or 'arm64-4k')
    tmp = tree + '.tmp'
    if seed:
        print(f'starting {tree} from {seed} and its {build}')
        tool(['rsync', '-a', '--exclude=/.build-*', seed + '/', tmp + '/'],
             check=True)
        if os.path.isdir(os.path.join(seed, build)):
            tool(['cp', '-a', os.path.join(seed, build), tmp + '/'],
                 check=True)
    else:
        tool(['cp', '-a', src, tmp], check=True)
    remove(os.path.join(tmp, '.git'))
    remove(os.path.join(tmp, RECIPE))
    os.rename(tmp, tree)


def staged_content(root: str, src: str, stage: str,
                   patches: Sequence[str]) -> None:
    """STAGE holds the overlay and every file a patch changes, patched;
    STAGE.files lists them for rsync (anchored)."""
    for path in OVERLAY:
        if os.path.isdir(os.path.join(root, path)):
            os.makedirs(os.path.join(stage, path), exist_ok=True)
            tool(['cp', '-a', os.path.join(root, path, '.'),
                  os.path.join(stage, path) + '/'], check=True)
        else:
            os.makedirs(os.path.join(stage, os.path.dirname(path)),
                        exist_ok=True)
            tool(['cp', '-a', os.path.join(root, path),
                  os.path.join(stage, path)], check=True)
    for path in lib.patched_files(*patches):
        if os.path.exists(os.path.join(stage, path)) or \
                not os.path.exists(os.path.join(src, path)):
            continue
        os.makedirs(os.path.join(stage, os.path.dirname(path)), exist_ok=True)
        tool(['cp', '-a', os.path.join(src, path), os.path.join(stage, path)],
             check=True)
    for patch in patches:
        print(f'applying {os.path.basename(patch)}')
        with open(patch, 'rb') as f:
            sys.stdout.flush()
            rc = subprocess.run(['patch', '-p1', '-s', '-N',
                                 '--no-backup-if-mismatch', '-d', stage],
                                stdin=f).returncode
        if rc:
            shell.die(f'{os.path.basename(patch)} does not apply to {src}')
    # The overlay's own directories, whatever the builds left there.
    listed = find_files(stage) + [
        '/' + path for path in OVERLAY
        if not os.path.exists(os.path.join(src, path))]
    with open(stage + '.files', 'w', encoding='utf-8',
              errors='surrogateescape') as f:
        f.write(''.join(line + '\n' for line in listed))


def unstaged(old: Sequence[str], new: Sequence[str]) -> List[str]:
    """comm -23 of the sorted lists: the files staged for the tree's
    previous recipe (OLD) and not for this one (NEW), in order."""
    now = set(new)
    return collated(set(path for path in old if path and path not in now))


def restore_unstaged(src: str, tree: str, old: str, new: str) -> None:
    """The files listed in OLD and not in NEW go back to SRC's content,
    or away where SRC has none."""
    for path in unstaged(records(read(old)), records(read(new))):
        if os.path.isfile(src + path) or os.path.islink(src + path):
            tool(['rsync', '-lc', src + path, tree + path], check=True)
        elif os.path.isfile(tree + path):
            os.remove(tree + path)


def sync_tree(name: str, src: str, tree: str, staging: str) -> None:
    """TREE made SRC plus the staging copy STAGING (listed in
    STAGING.files).  Content compare, no times: only files that differ
    get a new mtime, so make rebuilds exactly what changed.  The overlay
    and the patched files come from the staging copy, so that a file a
    patch changes is written once, and only when its patched content
    changed."""
    staged = os.path.join(tree, '.perf_aux-staged')
    stamp = source_stamp(src)
    if name != 'custom' and os.path.isfile(staged) and \
            cat(os.path.join(tree, '.perf_aux-src')) == stamp:
        # A Debian source never changes: only what was staged before
        # (a previous mutant) and what is staged now can differ.
        restore_unstaged(src, tree, staged, staging + '.files')
    else:
        tool(['rsync', '-rlc', '--delete', '--exclude=/.build-*',
              '--exclude=/.git', '--exclude=/.perf_aux-*',
              f'--exclude-from={staging}.files', src + '/', tree + '/'],
             check=True)
    tool(['rsync', '-rlc', staging + '/', tree + '/'], check=True)
    shutil.copyfile(staging + '.files', staged)
    write_line(os.path.join(tree, '.perf_aux-src'), stamp)


# The command.

def usage_error(what: str, message: str) -> int:
    """${WHAT:?MESSAGE}'s complaint, and its status."""
    sys.stderr.write(f'perf_aux kernel-tree: {what}: {message}\n')
    return 1


class Source(NamedTuple):
    """Where a tree comes from: the source tree, its base and its origin
    in words (the tree's .perf_aux-source, the run's report)."""
    src: str
    base: str
    origin: str


def source(name: str, base: str, cache: str) -> Source:
    """The source of tree NAME (base BASE unless it is a user's tree); the
    series git am'd for a series-vN."""
    if name in ('reference', 'stock', 'mutant'):
        lib.check_base(base)
        src = debian_source(cache, base)
        return Source(src, base, f'Debian linux-source-{base} '
                      f"{cat(os.path.join(src, '.perf_aux-debian'))}")
    if name.startswith('series-'):
        lib.check_base(base)
        series = os.environ.get('SERIES', '')
        if not series:
            shell.die(f'{name} needs SERIES')
        if not os.path.exists(series):
            shell.die(f'SERIES={series}: no such file or directory')
        src = debian_source(cache, base)
        count = series_am(src, cache, base)
        return Source(src, base, f'Debian linux-source-{base} '
                      f"{cat(os.path.join(src, '.perf_aux-debian'))} + "
                      f'series "{lib.series_subject()}" '
                      f'({count} patches)')
    if name == 'custom':
        src = os.environ.get('KERNEL_SRC', '')
        if not os.path.isfile(os.path.join(src, 'Makefile')):
            shell.die(f'KERNEL_SRC={src} is not a kernel tree')
        version = lib.tree_version(src)
        base = lib.version_base(version)
        if not os.path.isdir(lib.base_patches(base)):
            bases = ' '.join(lib.BASES)
            shell.die(f'KERNEL_SRC={src} is {version}: no hook-ups for '
                      f'{base} (bases: {bases})')
        return Source(src, base, f'{src} ({tree_describe(src)})')
    shell.die(f"unknown tree '{name}'")


def kernel_tree(name: str, mutant: str) -> int:
    """Tree NAME (with MUTANT, a patch, for a mutant) brought up to
    date: nothing done where its recipe is the one it was made from, else
    made anew from a seed or its source, or synced, file by file."""
    root, cache = lib.ROOT, lib.cache()
    if name == 'custom' and not os.environ.get('KERNEL_SRC'):
        return usage_error('KERNEL_SRC', 'custom needs KERNEL_SRC')
    base = os.environ.get('BASE') or lib.default_base()
    src, base, origin = source(name, base, cache)
    if mutant:
        if not os.path.isfile(mutant):
            shell.die(f'no mutant patch {mutant}')
        mutant = os.path.realpath(mutant)
    tree = os.path.join(cache, 'trees', lib.tree_name(name, base))
    version = lib.tree_version(src)
    patches = patch_list(name, mutant, cache, base)
    stamp = recipe(root, src, version, name, patches)
    print(f'kernel source: {origin}, version {version}')
    if up_to_date(tree, stamp):
        print(f'tree {tree} is up to date')
        return 0

    os.makedirs(os.path.join(cache, 'trees'), exist_ok=True)
    if not os.path.isdir(tree):
        new_tree(tree, src, seed_tree(cache, name, base))
    staging = tempfile.mkdtemp(prefix='tmp.')
    try:
        staged_content(root, src, staging, patches)
        sync_tree(name, src, tree, staging)
    finally:
        remove(staging)
        remove(staging + '.files')
    write_line(os.path.join(tree, '.perf_aux-source'),
               f'{origin}, version {version}')
    write_line(os.path.join(tree, RECIPE), stamp)
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or not args[0]:
        return usage_error('1', USAGE)
    return shell.entry(lambda: kernel_tree(args[0], args[1]
                                           if len(args) > 1 else ''))
