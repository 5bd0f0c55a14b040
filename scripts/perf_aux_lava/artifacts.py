# SPDX-License-Identifier: GPL-2.0
"""What a QEMU job of lava-jobs/ takes from a build of the pipeline, for
lava-run (checks) and a LAVA server (submit): the kernel options LAVA's
overlay disk needs, the ramdisk, and this checkout's lava-jobs/ as the git
repository LAVA fetches the test definition from."""

import gzip
import os
import shutil
import subprocess
import sys
from typing import List, Optional

from . import common
from .common import ROOT

# Suites of the direct run the jobs do not run, left out where the two are
# compared: lib/test_vmalloc.c's vmap benchmark, whose run_test_mask bit
# make run finds in the tree it builds (perf_aux.lib), while lava-jobs'
# jobs boot with run_test_mask=0; the perf_events test of perf's fixes,
# outside the perf_aux collection the jobs run.
DIRECT_ONLY = ('test_vmalloc', 'perf_events.mmap_accounting')
OVERLAY_OPTIONS = ('PCI_HOST_GENERIC', 'VIRTIO_PCI', 'VIRTIO_BLK', 'EXT4_FS',
                   'EXT4_USE_FOR_EXT2')


def kernel_missing(build: str) -> Optional[str]:
    """The first option LAVA's QEMU overlay disk needs that the kernel of
    build lacks (CONFIG_...), else None."""
    try:
        with open(os.path.join(build, '.config')) as f:
            config = set(f.read().splitlines())
    except OSError:
        config = set()
    for opt in OVERLAY_OPTIONS:
        if f'CONFIG_{opt}=y' not in config:
            return f'CONFIG_{opt}'
    return None


def ramdisk(build: str, dest: str) -> str:
    """A copy of the pipeline's initramfs in dest or, when it was packed
    with another init (before scripts/initramfs/init had its LAVA mode),
    the same list packed again with today's init (the kselftests are the
    same files).  Its path; OSError or CalledProcessError on failure."""
    src = os.path.join(build, 'initramfs.cpio.gz')
    out = os.path.join(dest, 'initramfs.cpio.gz')
    with gzip.open(src) as f:
        init = subprocess.run(['cpio', '-i', '--quiet', '--to-stdout',
                               'init'], input=f.read(), capture_output=True,
                              check=True).stdout
    with open(os.path.join(ROOT, 'scripts', 'initramfs', 'init'), 'rb') as f:
        if init == f.read():
            shutil.copyfile(src, out)
            return out
    print(f'# {src} has another init: packed again from initramfs.list',
          file=sys.stderr)
    cpio = subprocess.run([os.path.join(build, 'usr', 'gen_init_cpio'),
                           os.path.join(build, 'initramfs.list')],
                          capture_output=True, check=True).stdout
    with gzip.open(out, 'wb', compresslevel=1) as f:
        f.write(cpio)
    return out


def testdefs(parent: str) -> str:
    """A git repository holding this checkout's lava-jobs/ in
    parent/testdefs, as a lab's clone of the project would (LAVA fetches
    test definitions by git).  CalledProcessError on failure."""
    repo = os.path.join(parent, 'testdefs')
    shutil.rmtree(repo, ignore_errors=True)
    os.makedirs(repo)
    shutil.copytree(os.path.join(ROOT, 'lava-jobs'),
                    os.path.join(repo, 'lava-jobs'))
    head = subprocess.run(['git', '-C', ROOT, 'rev-parse', '--short', 'HEAD'],
                          capture_output=True, text=True).stdout.strip()
    commit_all(repo, 'main', f'lava-jobs of {head}')
    return repo


def generate(out: str, job: str = '', sets: List[str] = (),
             lab: str = '') -> int:
    """lava-jobs/generate.py's rendering of the jobs (all, or job) with
    lab's values (default lab.example.yaml) and sets into out: its exit
    status."""
    argv = [common.PYTHON, os.path.join(ROOT, 'lava-jobs', 'generate.py'),
            '--out', out] + (['--lab', lab] if lab else [])
    for s in sets:
        argv += ['--set', s]
    return common.run(argv + ([job] if job else []),
                      stdout=subprocess.DEVNULL)


def commit_all(repo: str, branch: str, message: str) -> None:
    """The files in REPO as the one commit of a new git repository there,
    on BRANCH (LAVA fetches test definitions by git).
    CalledProcessError on failure."""
    git = ['git', '-C', repo, '-c', 'user.name=perf_aux',
           '-c', 'user.email=perf_aux@localhost']
    for args in (['init', '-q', '-b', branch], ['add', '-A'],
                 ['commit', '-q', '-m', message]):
        subprocess.run(git + args, check=True, stdout=subprocess.DEVNULL)
