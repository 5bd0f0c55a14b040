# SPDX-License-Identifier: GPL-2.0
"""Kernel source trees in $PERF_AUX_CACHE/trees/: reference, stock (the
negative control), custom (KERNEL_SRC), mutant and series-vN, each a
Debian source (or the user's tree) with the project's overlay and patches.
A tree is remade only when its recipe changed, and then only changed files
get a new mtime, so the build directories inside it rebuild
incrementally."""

import hashlib
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import List, Sequence

from . import lib
from .lib import Run, collated, die
from .lib import PIPE, DEVNULL, run

# The project's files and directories the trees get at their kernel paths.
OVERLAY = ('kernel/events/ring_buffer_kunit.c',
           'kernel/events/ring_buffer_kunit_orders.h',
           'kernel/events/ring_buffer_kunit.kunitconfig',
           'lib/test_aux_pmu.c', 'mm/tests',
           'tools/testing/selftests/perf_aux',
           'tools/testing/selftests/perf_events/mmap_accounting.c')
RECIPE = '.perf_aux-recipe'
# The trees a new tree may start from, in order of preference.
SEEDS = ('reference', 'stock', 'mutant', 'series-')


def cat(path: str) -> str:
    """PATH's content less its trailing newlines; '' without it."""
    try:
        return Path(path).read_text(errors='surrogateescape').rstrip('\n')
    except OSError:
        return ''


def write_line(path: str, line: str) -> None:
    Path(path).write_text(line + '\n', errors='surrogateescape')


def find_files(top: str, prune: str = '') -> List[str]:
    """The files and links under TOP as "/path", in find's order (the
    order .perf_aux-staged has always had); PRUNE left out."""
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
    """The regular files among PATHS and under them, in ROOT, sorted."""
    found: List[str] = []
    for path in paths:
        full = os.path.join(root, path)
        if os.path.islink(full):
            continue
        if os.path.isfile(full):
            found.append(path)
        elif os.path.isdir(full):
            found += [path + rel for rel in find_files(full)
                      if not os.path.islink(full + rel)]
    return collated(found)


def stamp_lines(top: str) -> bytes:
    """Each regular file's "name size mtime" line (find -printf '%P %s
    %T@'), sorted: a tree outside git, in its recipe."""
    out: List[bytes] = []
    for rel in find_files(top, prune='/.git'):
        st = os.lstat(top + rel)
        if stat.S_ISREG(st.st_mode):
            seconds, nanoseconds = divmod(st.st_mtime_ns, 1000000000)
            out.append(os.fsencode(f'{rel[1:]} {st.st_size} '
                                   f'{seconds}.{nanoseconds:09d}0\n'))
    return b''.join(sorted(out))


def sha256sum_line(directory: str, name: str) -> bytes:
    """sha256sum NAME's line, in DIRECTORY."""
    digest = hashlib.sha256(Path(directory, name).read_bytes()).hexdigest()
    if '\\' in name or '\n' in name:
        name = name.replace('\\', '\\\\').replace('\n', '\\n')
        return os.fsencode(f'\\{digest}  {name}\n')
    return os.fsencode(f'{digest}  {name}\n')


def git(src: str, *args: str) -> 'subprocess.CompletedProcess[str]':
    return run(['git', '-C', src, *args], stdout=PIPE, stderr=DEVNULL)


def tree_state(src: str) -> bytes:
    """What a user's tree holds: a git tree's HEAD, diff and untracked
    files' checksums; any other tree's names, sizes and times."""
    if git(src, 'rev-parse', '--is-inside-work-tree').returncode:
        return stamp_lines(src)
    untracked = git(src, 'ls-files', '--others', '--exclude-standard', '-z')
    return os.fsencode(git(src, 'rev-parse', 'HEAD').stdout +
                       git(src, 'diff', 'HEAD').stdout) + b''.join(
        sha256sum_line(src, name)
        for name in untracked.stdout.split('\0') if name)


def tree_describe(src: str) -> str:
    """tree_state in words, for the run's log and the report."""
    if git(src, 'rev-parse', '--is-inside-work-tree').returncode == 0:
        return 'git ' + git(src, 'describe', '--always', '--dirty',
                            '--abbrev=12').stdout.rstrip('\n')
    digest = hashlib.sha256(tree_state(src)).hexdigest()
    return f'not a git tree, files {digest[:12]}'


def series_diff(cache: str, base: str) -> str:
    return os.path.join(cache, 'series-am', f'{base}.diff')


def series_am(src: str, cache: str, base: str, series: str) -> int:
    """git am of SERIES onto the files of SRC it changes, as one diff in
    series_diff; how many patches it applied."""
    repo = os.path.join(cache, 'series-am', base)
    mails = lib.series_mails(series)
    if not mails or not os.path.exists(mails[0]) or \
            os.path.getsize(mails[0]) == 0:
        die(f'SERIES={series} holds no patch')
    lib.base_repo(src, repo, 'base', *lib.patched_files(*mails))
    if run(['git', '-C', repo, '-c', 'user.name=perf_aux', '-c',
            'user.email=perf_aux@localhost', 'am', '--empty=drop', *mails],
           log=repo + '.log').returncode:
        log = cat(repo + '.log') + '\n'
        sys.stderr.write(log)
        failed = [line[len('Patch failed at '):] for line in log.split('\n')
                  if line.startswith('Patch failed at ')]
        die(f'SERIES={series} does not apply to {base}: '
            f"{failed[0] if failed else ''}")
    count = int(git(repo, 'rev-list', '--count', 'base..HEAD').stdout or 0)
    print(f'series: {count} patches applied with git am')
    with open(series_diff(cache, base), 'wb') as f:
        run(['git', '-C', repo, 'diff', 'base', 'HEAD'], stdout=f, check=True)
    return count


def patches_in(directory: str) -> List[str]:
    return collated(str(p) for p in Path(directory).glob('*.patch'))


def patch_list(name: str, mutant: str, cache: str, base: str) -> List[str]:
    """The patches of tree NAME in the order they apply: a series, the
    hook-ups, the reference patches, the mutant."""
    patches = lib.base_patches(base)
    found = [series_diff(cache, base)] if name.startswith('series-') else []
    found += patches_in(os.path.join(patches, 'hookup'))
    if name in ('reference', 'mutant'):
        found += patches_in(os.path.join(patches, 'reference'))
    return found + ([mutant] if mutant else [])


def project_path(root: str, path: str) -> str:
    """PATH relative to the project ROOT where it is in it."""
    if os.path.commonpath([os.path.abspath(root), os.path.abspath(path)]) \
            == os.path.abspath(root):
        return os.path.relpath(path, root)
    return path


def recipe(root: str, src: str, version: str, name: str,
           patches: Sequence[str]) -> str:
    """A hash of the source, its version (a user's tree's state too), the
    patches by their project path and the overlay, with their content."""
    digest = hashlib.sha256(os.fsencode(f'{src} {version}\n'))
    if name == 'custom':
        digest.update(tree_state(src))
    parts = [(project_path(root, path), path) for path in patches]
    parts += [(f, os.path.join(root, f)) for f in regular_files(root, OVERLAY)]
    for label, path in parts:
        digest.update(os.fsencode(label + '\n'))
        digest.update(Path(path).read_bytes())
    return digest.hexdigest()


def up_to_date(tree: str, stamp: str) -> bool:
    return cat(os.path.join(tree, RECIPE)) == stamp


def seed_build(tree: str, build: str, base: str) -> None:
    """TREE's BUILD directory, where it has none, copied from the first
    tree of BASE that has one: its first build recompiles what differs."""
    if os.path.isdir(os.path.join(tree, build)):
        return
    for seed in SEEDS:
        other = os.path.join(os.path.dirname(tree), lib.tree_name(seed, base),
                             build)
        if os.path.dirname(other) != tree and os.path.isdir(other):
            print(f'starting {tree}/{build} from {other}')
            run(['cp', '-a', other, os.path.join(tree, build)], check=True)
            return


def new_tree(tree: str, src: str, seed: str, target: str) -> None:
    """TREE as a copy of SEED (with TARGET's default build) or SRC."""
    build = f'.build-{target}'
    tmp = tree + '.tmp'
    if seed:
        print(f'starting {tree} from {seed} and its {build}')
        run(['rsync', '-a', '--exclude=/.build-*', seed + '/', tmp + '/'],
            check=True)
        if os.path.isdir(os.path.join(seed, build)):
            run(['cp', '-a', os.path.join(seed, build), tmp + '/'], check=True)
    else:
        run(['cp', '-a', src, tmp], check=True)
    shutil.rmtree(os.path.join(tmp, '.git'), ignore_errors=True)
    Path(tmp, RECIPE).unlink(missing_ok=True)
    os.rename(tmp, tree)


def staged_content(root: str, src: str, stage: str,
                   patches: Sequence[str]) -> None:
    """STAGE: the overlay and every file a patch changes, patched;
    STAGE.files lists them for rsync."""
    for path in OVERLAY:
        here = os.path.join(stage, path)
        if os.path.isdir(os.path.join(root, path)):
            os.makedirs(here, exist_ok=True)
            run(['cp', '-a', os.path.join(root, path, '.'), here + '/'],
                check=True)
        else:
            os.makedirs(os.path.dirname(here), exist_ok=True)
            run(['cp', '-a', os.path.join(root, path), here], check=True)
    for path in lib.patched_files(*patches):
        if os.path.exists(os.path.join(stage, path)) or \
                not os.path.exists(os.path.join(src, path)):
            continue
        os.makedirs(os.path.join(stage, os.path.dirname(path)), exist_ok=True)
        run(['cp', '-a', os.path.join(src, path), os.path.join(stage, path)],
            check=True)
    for patch in patches:
        print(f'applying {os.path.basename(patch)}')
        with open(patch, 'rb') as f:
            if run(['patch', '-p1', '-s', '-N', '--no-backup-if-mismatch',
                    '-d', stage], stdin=f).returncode:
                die(f'{os.path.basename(patch)} does not apply to {src}')
    # The overlay's own directories, whatever the builds left there.
    listed = find_files(stage) + ['/' + path for path in OVERLAY
                                  if not os.path.exists(f'{src}/{path}')]
    Path(stage + '.files').write_text(''.join(f'{p}\n' for p in listed),
                                      errors='surrogateescape')


def unstaged(old: Sequence[str], new: Sequence[str]) -> List[str]:
    """The files staged before (OLD) and not now (NEW), sorted."""
    return collated(set(path for path in old if path) - set(new))


def restore_unstaged(src: str, tree: str, old: str, new: str) -> None:
    """The files listed in OLD and not in NEW back to SRC's content, or
    away where SRC has none."""
    for path in unstaged(cat(old).split('\n'), cat(new).split('\n')):
        if os.path.isfile(src + path) or os.path.islink(src + path):
            run(['rsync', '-lc', src + path, tree + path], check=True)
        elif os.path.isfile(tree + path):
            os.remove(tree + path)


def sync_tree(name: str, src: str, tree: str, staging: str) -> None:
    """TREE made SRC plus STAGING, by content: only files that differ get
    a new mtime."""
    staged = os.path.join(tree, '.perf_aux-staged')
    stamp = f"{src} {cat(os.path.join(src, '.perf_aux-debian'))} " \
        f'{lib.tree_version(src)}'
    if name != 'custom' and os.path.isfile(staged) and \
            cat(os.path.join(tree, '.perf_aux-src')) == stamp:
        # A Debian source never changes: only what was staged can differ.
        restore_unstaged(src, tree, staged, staging + '.files')
    else:
        run(['rsync', '-rlc', '--delete', '--exclude=/.build-*',
             '--exclude=/.git', '--exclude=/.perf_aux-*',
             f'--exclude-from={staging}.files', src + '/', tree + '/'],
            check=True)
    run(['rsync', '-rlc', staging + '/', tree + '/'], check=True)
    shutil.copyfile(staging + '.files', staged)
    write_line(os.path.join(tree, '.perf_aux-src'), stamp)


def debian_source(cache: str, base: str) -> str:
    """The base's Debian source, unpacked by perf_aux deps base-BASE."""
    src = os.path.join(cache, 'src', base)
    if not os.path.isfile(os.path.join(src, '.perf_aux-debian')):
        die(f'no source for base {base} (run PYTHONPATH=scripts '
            f'python3 -m perf_aux deps base-{base})')
    return src


def source(r: Run, cache: str):
    """The source of R's tree, its base and its origin in words."""
    name = r.kernel
    if name in ('reference', 'stock', 'mutant') or name.startswith('series-'):
        lib.check_base(r.base)
        if name.startswith('series-') and not r.series:
            die(f'{name} needs SERIES')
        if name.startswith('series-') and not os.path.exists(r.series):
            die(f'SERIES={r.series}: no such file or directory')
        src = debian_source(cache, r.base)
        origin = f"Debian linux-source-{r.base} " \
            f"{cat(os.path.join(src, '.perf_aux-debian'))}"
        if name.startswith('series-'):
            count = series_am(src, cache, r.base, r.series)
            origin += f' + series "{lib.series_subject(r.series)}" ' \
                f'({count} patches)'
        return src, r.base, origin
    if name == 'custom':
        src = r.src
        if not os.path.isfile(os.path.join(src, 'Makefile')):
            die(f'KERNEL_SRC={src} is not a kernel tree')
        version = lib.tree_version(src)
        base = lib.version_base(version)
        if not os.path.isdir(lib.base_patches(base)):
            die(f'KERNEL_SRC={src} is {version}: no hook-ups for '
                f"{base} (bases: {' '.join(lib.BASES)})")
        return src, base, f'{src} ({tree_describe(src)})'
    die(f"unknown tree '{name}'")


def kernel_tree(r: Run, mutant: str = '') -> int:
    """R's tree (with MUTANT, a patch) brought up to date."""
    root, cache = lib.ROOT, lib.cache()
    src, base, origin = source(r, cache)
    if mutant:
        if not os.path.isfile(mutant):
            die(f'no mutant patch {mutant}')
        mutant = os.path.realpath(mutant)
    tree = os.path.join(cache, 'trees', lib.tree_name(r.kernel, base))
    version = lib.tree_version(src)
    patches = patch_list(r.kernel, mutant, cache, base)
    stamp = recipe(root, src, version, r.kernel, patches)
    print(f'kernel source: {origin}, version {version}')
    if up_to_date(tree, stamp):
        print(f'tree {tree} is up to date')
        return 0
    os.makedirs(os.path.join(cache, 'trees'), exist_ok=True)
    if not os.path.isdir(tree):
        seeds = [] if r.kernel == 'custom' else [
            t for t in (os.path.join(cache, 'trees', lib.tree_name(s, base))
                        for s in SEEDS) if os.path.isfile(f'{t}/{RECIPE}')]
        new_tree(tree, src, (seeds or [''])[0], r.target)
    staging = tempfile.mkdtemp(prefix='tmp.')
    try:
        staged_content(root, src, staging, patches)
        sync_tree(r.kernel, src, tree, staging)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        Path(staging + '.files').unlink(missing_ok=True)
    write_line(os.path.join(tree, '.perf_aux-source'),
               f'{origin}, version {version}')
    write_line(os.path.join(tree, RECIPE), stamp)
    return 0


def main(argv: List[str]) -> int:
    """kernel-tree NAME [MUTANT.patch], the rest from the environment."""
    if not argv or not argv[0]:
        sys.stderr.write('perf_aux kernel-tree: 1: usage: python3 -m '
                         'perf_aux kernel-tree NAME [MUTANT.patch]\n')
        return 1
    if argv[0] == 'custom' and not os.environ.get('KERNEL_SRC'):
        sys.stderr.write('perf_aux kernel-tree: KERNEL_SRC: custom needs '
                         'KERNEL_SRC\n')
        return 1
    env = os.environ
    r = Run(argv[0], env.get('BASE') or lib.default_base(),
            env.get('TARGET') or 'arm64-4k', src=env.get('KERNEL_SRC', ''),
            series=env.get('SERIES', ''))
    return kernel_tree(r, argv[1] if len(argv) > 1 else '')
