# SPDX-License-Identifier: GPL-2.0
"""Kernel trees: a source, the overlay and patches, remade in what differs when the recipe does."""

import hashlib
import os
import shutil
import stat
import sys
import tempfile
from pathlib import Path
from typing import List, Sequence

from . import lib
from .lib import DEVNULL, PIPE, Run, collated, die, read, run

# The project's files and directories the trees get at their kernel paths.
OVERLAY = ('kernel/events/ring_buffer_kunit.c', 'kernel/events/ring_buffer_kunit_orders.h',
           'kernel/events/ring_buffer_kunit.kunitconfig', 'lib/test_aux_pmu.c', 'mm/tests',
           'tools/testing/selftests/perf_aux',
           'tools/testing/selftests/perf_events/mmap_accounting.c')
RECIPE = '.perf_aux-recipe'
# The trees a new tree starts from, the first made.
SEEDS = ('reference', 'stock', 'mutant', 'series-')

def walk(top: str) -> List[str]:
    """The files and links under TOP, relative to it; its .git left out."""
    found = []
    for d, dirs, names in os.walk(top):
        if d == top and '.git' in dirs:
            dirs.remove('.git')
        found += [os.path.relpath(os.path.join(d, n), top)
                  for n in names + [x for x in dirs if os.path.islink(os.path.join(d, x))]]
    return found

def tree_state(src: str) -> bytes:
    """A git tree's HEAD, diff and untracked files' sha256sum; another's names, sizes, times."""
    def git(*args: str):
        return run(['git', '-C', src, *args], stdout=PIPE, stderr=DEVNULL)
    if git('rev-parse', '--is-inside-work-tree').returncode:
        lines = []
        for rel in walk(src):
            st = os.lstat(os.path.join(src, rel))
            if stat.S_ISREG(st.st_mode):
                seconds, ns = divmod(st.st_mtime_ns, 1000000000)
                lines.append(os.fsencode(f'{rel} {st.st_size} {seconds}.{ns:09d}0\n'))
        return b''.join(sorted(lines))
    state = git('rev-parse', 'HEAD').stdout + git('diff', 'HEAD').stdout
    for name in git('ls-files', '--others', '--exclude-standard', '-z').stdout.split('\0'):
        if name:
            digest = hashlib.sha256(Path(src, name).read_bytes()).hexdigest()
            escaped = name.replace('\\', '\\\\').replace('\n', '\\n')
            state += f"{'' if escaped == name else chr(92)}{digest}  {escaped}\n"
    return os.fsencode(state)

def tree_describe(src: str) -> str:
    """tree_state in words, for the run's log and the report."""
    described = run(['git', '-C', src, 'describe', '--always', '--dirty', '--abbrev=12'],
                    stdout=PIPE, stderr=DEVNULL)
    if described.returncode == 0:
        return 'git ' + described.stdout.rstrip('\n')
    return f'not a git tree, files {hashlib.sha256(tree_state(src)).hexdigest()[:12]}'

def series_diff(cache: str, base: str) -> str:
    return os.path.join(cache, 'series-am', f'{base}.diff')

def series_am(src: str, cache: str, base: str, series: str) -> int:
    """git am of SERIES onto SRC's files, as one diff in series_diff; how many it applied."""
    repo = os.path.join(cache, 'series-am', base)
    mails = lib.series_mails(series)
    if not mails or not os.path.exists(mails[0]) or os.path.getsize(mails[0]) == 0:
        die(f'SERIES={series} holds no patch')
    git = lib.base_repo(src, repo, 'base', *lib.patched_files(*mails))
    if run([*git, 'am', '--empty=drop', *mails], log=repo + '.log').returncode:
        log = read(repo + '.log')
        sys.stderr.write(log)
        failed = [line[16:] for line in log.split('\n') if line.startswith('Patch failed at ')]
        die(f"SERIES={series} does not apply to {base}: {failed[0] if failed else ''}")
    count = int(run([*git, 'rev-list', '--count', 'base..HEAD'], stdout=PIPE).stdout or 0)
    print(f'series: {count} patches applied with git am')
    Path(series_diff(cache, base)).write_text(run([*git, 'diff', 'base', 'HEAD'], stdout=PIPE,
                                                  check=True).stdout, errors='surrogateescape')
    return count

def patch_list(name: str, mutant: str, cache: str, base: str) -> List[str]:
    """Tree NAME's patches in order: a series, the hook-ups, the reference ones, the mutant."""
    patches = lib.base_patches(base)
    found = [series_diff(cache, base)] if name.startswith('series-') else []
    found += collated(str(p) for p in Path(patches, 'hookup').glob('*.patch'))
    if name in ('reference', 'mutant'):
        found += collated(str(p) for p in Path(patches, 'reference').glob('*.patch'))
    return found + ([mutant] if mutant else [])

def recipe(root: str, src: str, version: str, name: str, patches: Sequence[str]) -> str:
    """A hash of the source, version (a user's state), patches and overlay files, and content."""
    digest = hashlib.sha256(os.fsencode(f'{src} {version}\n'))
    if name == 'custom':
        digest.update(tree_state(src))
    root = os.path.abspath(root)
    parts = [(os.path.relpath(p, root) if os.path.commonpath([root, os.path.abspath(p)]) == root
              else p, p) for p in patches]
    overlay = [p for p in OVERLAY if os.path.isfile(f'{root}/{p}')]
    overlay += [f'{p}/{f}' for p in OVERLAY if os.path.isdir(f'{root}/{p}')
                for f in walk(f'{root}/{p}')]
    parts += [(f, f'{root}/{f}') for f in collated(overlay) if not os.path.islink(f'{root}/{f}')]
    for label, path in parts:
        digest.update(os.fsencode(label + '\n'))
        digest.update(Path(path).read_bytes())
    return digest.hexdigest()

def seed_build(tree: str, build: str, base: str) -> None:
    """TREE's BUILD directory, where it has none, from the first tree of BASE that has one."""
    if os.path.isdir(os.path.join(tree, build)):
        return
    for seed in SEEDS:
        other = os.path.join(os.path.dirname(tree), lib.tree_name(seed, base), build)
        if os.path.dirname(other) != tree and os.path.isdir(other):
            print(f'starting {tree}/{build} from {other}')
            run(['cp', '-a', other, os.path.join(tree, build)], check=True)
            return

def staged_content(root: str, src: str, stage: str, patches: Sequence[str]) -> None:
    """STAGE: the overlay and the files the patches change, patched; STAGE.files, their list."""
    run(['rsync', '-aR', *(f'{root}/./{p}' for p in OVERLAY), stage + '/'], check=True)
    originals = [f'{src}/./{p}' for p in lib.patched_files(*patches)
                 if not os.path.lexists(f'{stage}/{p}') and os.path.lexists(f'{src}/{p}')]
    if originals:
        run(['rsync', '-aR', *originals, stage + '/'], check=True)
    for patch in patches:
        print(f'applying {os.path.basename(patch)}')
        with open(patch, 'rb') as f:
            run(['patch', '-p1', '-s', '-N', '--no-backup-if-mismatch', '-d', stage], stdin=f,
                what=f'{os.path.basename(patch)} does not apply to {src}')
    listed = ['/' + f for f in walk(stage)]
    listed += ['/' + path for path in OVERLAY if not os.path.exists(f'{src}/{path}')]
    Path(stage + '.files').write_text(''.join(f'{p}\n' for p in listed), errors='surrogateescape')

def restore_unstaged(src: str, tree: str, old: str, new: str) -> None:
    """The files listed in OLD and not in NEW back to SRC's content (or away)."""
    for path in collated(set(read(old).split('\n')) - set(read(new).split('\n')) - {''}):
        if os.path.isfile(src + path) or os.path.islink(src + path):
            run(['rsync', '-lc', src + path, tree + path], check=True)
        elif os.path.isfile(tree + path):
            os.remove(tree + path)

def sync_tree(name: str, src: str, tree: str, staging: str) -> None:
    """TREE made SRC plus STAGING, by content: only files that differ get a new mtime."""
    staged = os.path.join(tree, '.perf_aux-staged')
    stamp = f"{src} {read(f'{src}/.perf_aux-debian').rstrip()} {lib.tree_version(src)}\n"
    if name != 'custom' and os.path.isfile(staged) and read(f'{tree}/.perf_aux-src') == stamp:
        # A Debian source never changes: only what was staged can differ.
        restore_unstaged(src, tree, staged, staging + '.files')
    else:
        run(['rsync', '-rlc', '--delete', '--exclude=/.build-*', '--exclude=/.git',
             '--exclude=/.perf_aux-*', f'--exclude-from={staging}.files', src + '/', tree + '/'],
            check=True)
    run(['rsync', '-rlc', staging + '/', tree + '/'], check=True)
    shutil.copyfile(staging + '.files', staged)
    Path(tree, '.perf_aux-src').write_text(stamp)

def source(r: Run, cache: str):
    """The source of R's tree, its base and its origin in words."""
    name = r.kernel
    if name == 'custom':
        if not r.src or not os.path.isfile(os.path.join(r.src, 'Makefile')):
            die(f'KERNEL_SRC={r.src} is not a kernel tree')
        version = lib.tree_version(r.src)
        base = lib.version_base(version)
        if not os.path.isdir(lib.base_patches(base)):
            die(f"KERNEL_SRC={r.src} is {version}: no hook-ups for {base} (bases: "
                f"{' '.join(lib.BASES)})")
        return r.src, base, f'{r.src} ({tree_describe(r.src)})'
    if name not in ('reference', 'stock', 'mutant') and not name.startswith('series-'):
        die(f"unknown tree '{name}'")
    src = os.path.join(cache, 'src', r.base)
    if not os.path.isfile(os.path.join(src, '.perf_aux-debian')):
        die(f'no source for base {r.base} (run PYTHONPATH=scripts python3 -m perf_aux deps '
            f'base-{r.base})')
    origin = f"Debian linux-source-{r.base} {read(f'{src}/.perf_aux-debian').rstrip()}"
    if name.startswith('series-'):
        count = series_am(src, cache, r.base, r.series)
        origin += f' + series "{lib.series_subject(r.series)}" ({count} patches)'
    return src, r.base, origin

def kernel_tree(r: Run, mutant: str = '') -> int:
    """R's tree (with MUTANT, a patch) brought up to date."""
    cache = lib.cache()
    src, base, origin = source(r, cache)
    if mutant:
        if not os.path.isfile(mutant):
            die(f'no mutant patch {mutant}')
        mutant = os.path.realpath(mutant)
    tree = os.path.join(cache, 'trees', lib.tree_name(r.kernel, base))
    version = lib.tree_version(src)
    patches = patch_list(r.kernel, mutant, cache, base)
    stamp = recipe(lib.ROOT, src, version, r.kernel, patches) + '\n'
    print(f'kernel source: {origin}, version {version}')
    if read(f'{tree}/{RECIPE}') == stamp:
        print(f'tree {tree} is up to date')
        return 0
    os.makedirs(os.path.join(cache, 'trees'), exist_ok=True)
    if not os.path.isdir(tree):
        # A copy of the first tree of the base made before (with the target's default build).
        seed = next((t for t in (f'{cache}/trees/{lib.tree_name(s, base)}' for s in SEEDS)
                     if r.kernel != 'custom' and os.path.isfile(f'{t}/{RECIPE}')), '')
        build, tmp = f'.build-{r.target}', tree + '.tmp'
        if seed:
            print(f'starting {tree} from {seed} and its {build}')
            run(['rsync', '-a', '--exclude=/.build-*', seed + '/', tmp + '/'], check=True)
            if os.path.isdir(f'{seed}/{build}'):
                run(['cp', '-a', f'{seed}/{build}', tmp + '/'], check=True)
        else:
            run(['cp', '-a', src, tmp], check=True)
        shutil.rmtree(f'{tmp}/.git', ignore_errors=True)
        Path(tmp, RECIPE).unlink(missing_ok=True)
        os.rename(tmp, tree)
    staging = tempfile.mkdtemp(prefix='tmp.')
    try:
        staged_content(lib.ROOT, src, staging, patches)
        sync_tree(r.kernel, src, tree, staging)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        Path(staging + '.files').unlink(missing_ok=True)
    Path(tree, '.perf_aux-source').write_text(f'{origin}, version {version}\n')
    Path(tree, RECIPE).write_text(stamp)
    return 0

def main(argv: List[str]) -> int:
    """kernel-tree NAME [MUTANT.patch], the rest from the environment."""
    if not argv:
        die('usage: python3 -m perf_aux kernel-tree NAME [MUTANT.patch]', 1)
    env = os.environ
    r = Run(argv[0], lib.check('BASE', env.get('BASE') or lib.default_base(), lib.BASES),
            env.get('TARGET') or 'arm64-4k', src=env.get('KERNEL_SRC', ''),
            series=env.get('SERIES', ''))
    return kernel_tree(r, argv[1] if len(argv) > 1 else '')
