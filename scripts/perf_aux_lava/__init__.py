# SPDX-License-Identifier: GPL-2.0
"""The perf_aux LAVA glue; what a QEMU job of lava-jobs/ takes from a build."""

import glob
import os
import shutil
import sys
from typing import Dict, List, Optional, Sequence

SCRIPTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, SCRIPTS)
from perf_aux import lib as plib  # noqa: E402
from perf_aux.lib import ROOT, Error, read  # noqa: E402

# Debian's python: lava_common, python3-yaml, python3-jinja2.
PYTHON = '/usr/bin/python3'
# The direct run's suites the jobs do not run: the vmap benchmark (the jobs
# boot with run_test_mask=0) and perf's fix outside the perf_aux collection.
DIRECT_ONLY = ('test_vmalloc', 'perf_events.mmap_accounting')
OVERLAY_OPTIONS = ('PCI_HOST_GENERIC', 'VIRTIO_PCI', 'VIRTIO_BLK', 'EXT4_FS',
                   'EXT4_USE_FOR_EXT2')
__all__ = ['Error', 'ROOT', 'plib', 'read']

def guestfs_env(tmp: str) -> Dict[str, str]:
    """libguestfs' kernel (none in a container's /boot) and TCG, for LAVA."""
    cache = os.path.join(plib.cache(), 'lava')
    os.makedirs(os.path.join(cache, 'guestfs'), exist_ok=True)
    return dict(LIBGUESTFS_BACKEND='direct', TMPDIR=tmp,
                LIBGUESTFS_BACKEND_SETTINGS='force_tcg',
                LIBGUESTFS_CACHEDIR=os.path.join(cache, 'guestfs'),
                SUPERMIN_KERNEL=''.join(sorted(glob.glob(
                    f'{cache}/supermin/boot/vmlinuz-*'))[:1]),
                SUPERMIN_MODULES=''.join(sorted(glob.glob(
                    f'{cache}/supermin/lib/modules/*'))[:1]))

def write_private(path: str, text: str) -> None:
    """text in path, mode 0600 from the start."""
    fd = os.open(path + '.new', os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, 'w') as f:
        f.write(text)
    os.replace(path + '.new', path)

def kernel_missing(build: str) -> Optional[str]:
    """The first option LAVA's overlay disk needs that build's kernel lacks."""
    config = read(os.path.join(build, '.config')).splitlines()
    return next((f'CONFIG_{o}' for o in OVERLAY_OPTIONS
                 if f'CONFIG_{o}=y' not in config), None)

def commit_all(repo: str, branch: str, message: str) -> None:
    """The files in repo as the one commit of a new git repository."""
    git = ['git', '-C', repo, '-c', 'user.name=perf_aux',
           '-c', 'user.email=perf_aux@localhost']
    for args in (['init', '-q', '-b', branch], ['add', '-A'],
                 ['commit', '-q', '-m', message]):
        plib.run(git + args, check=True, stdout=plib.DEVNULL)

def testdefs(parent: str) -> str:
    """parent/testdefs: a git repository of this checkout's lava-jobs/."""
    repo = os.path.join(parent, 'testdefs')
    shutil.rmtree(repo, ignore_errors=True)
    shutil.copytree(os.path.join(ROOT, 'lava-jobs'),
                    os.path.join(repo, 'lava-jobs'))
    head = plib.text(['git', '-C', ROOT, 'rev-parse', '--short', 'HEAD'])
    commit_all(repo, 'main', f'lava-jobs of {head}')
    return repo

def generate(out: str, job: str, sets: Sequence[str],
             lab: str = '') -> int:
    """lava-jobs/generate.py's job with lab's values and sets in out."""
    argv = [PYTHON, os.path.join(ROOT, 'lava-jobs', 'generate.py'),
            '--out', out] + (['--lab', lab] if lab else [])
    for s in sets:
        argv += ['--set', s]
    return plib.status(argv + [job], stdout=plib.DEVNULL)

def stage_build(build: str, d: str) -> List[str]:
    """Copies of build's Image.gz and initramfs.cpio.gz in d: their paths."""
    paths = [os.path.join(d, 'Image.gz'), os.path.join(d, 'initramfs.cpio.gz')]
    shutil.copyfile(os.path.join(build, 'arch', 'arm64', 'boot', 'Image.gz'),
                    paths[0])
    shutil.copyfile(os.path.join(build, 'initramfs.cpio.gz'), paths[1])
    return paths
