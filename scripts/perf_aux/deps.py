# SPDX-License-Identifier: GPL-2.0
"""What the pipeline needs from Debian and lacks (sources and arm64 roots by a private apt)."""

import functools
import glob
import os
import platform
import re
import shutil
import sys
from pathlib import Path
from typing import List, Sequence

from . import lib
from .lib import DEVNULL, collated, die, run, text

# The host tests': busybox-static (the LAVA converter), libopencsd-bin (the ETE decoder),
# python3-yaml (integrations/), python3-jinja2 (lava-jobs/generate.py, with /usr/bin/python3).
COMMON = ('bc bison flex libelf-dev libssl-dev ccache cpio gcc make xz-utils rsync kmod python3 '
          'gzip libopencsd-bin busybox-static python3-yaml python3-jinja2 lavacli').split()
ARM64 = 'gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-system-arm'.split()
X86 = 'qemu-system-x86 busybox-static libc6-dev'.split()
# kunit --series: the other architectures' cross compilers and QEMU (riscv boots OpenSBI).
KUNITPY = ('gcc-riscv64-linux-gnu qemu-system-misc opensbi gcc-powerpc64-linux-gnu '
           'qemu-system-ppc gcc-s390x-linux-gnu qemu-system-s390x gcc-arm-linux-gnueabihf').split()
# lava-run --validate of the board jobs wants a TFTP directory and telnet (their consoles).
LAVA = ('lava-dispatcher lava-common python3-voluptuous python3-jinja2 python3-yaml git '
        'qemu-system-arm busybox-static cpio tftpd-hpa telnet').split()
LAB = 'lava-server lavacli postgresql'.split()
# The Debian root test-definitions' kselftest.sh runs on: what its install() installs (sed perl
# wget xz-utils iproute2 python3-tap) and the shells and tools a Debian root has.
TESTDEFS_PACKAGES = ('base-files dash bash coreutils grep findutils mawk mount util-linux kmod '
                     'procps sed perl wget xz-utils iproute2 python3-tap').split()
KEYRING = '/usr/share/keyrings/debian-archive-keyring.gpg'

def missing(packages: Sequence[str]) -> List[str]:
    """The PACKAGES dpkg does not have installed, in order."""
    listed = text(['dpkg-query', '-W', '-f=${Package} ${Status}\\n', *packages], stderr=DEVNULL)
    have = {line.split()[0] for line in listed.splitlines() if line.endswith(' ok installed')}
    return [p for p in packages if p not in have]

@functools.cache
def apt_update() -> None:
    run(['apt-get', 'update', '-qq'], what='apt-get update failed')

def install(packages: Sequence[str]) -> None:
    """The PACKAGES not installed yet, from the machine's apt."""
    need = missing(packages)
    if not need:
        return
    print('installing: ' + ' '.join(need))
    apt_update()
    run(['apt-get', 'install', '-y', '-qq', '--no-install-recommends', *need],
        what=f"apt-get install {' '.join(need)} failed", stdout=DEVNULL,
        env={'DEBIAN_FRONTEND': 'noninteractive'})

@functools.cache
def archive() -> str:
    """The archive the machine's apt sources use for Debian."""
    for uri in text(['apt-get', 'indextargets', '--format', '$(URI)',
                     'Created-By: Packages']).split('\n'):
        m = re.match(r'^(.*/debian)/dists/', uri)
        if m:
            return m.group(1)
    die("no Debian archive in the machine's apt sources")

def apt(d: str, arch: str, *args: str) -> List[str]:
    """apt-get with D's own sources, lists, dpkg status (empty) and archives, of ARCH only."""
    options = [f'Dir::Etc::sourcelist={d}/sources.list', f'Dir::Etc::sourceparts={d}/empty',
               'Dir::Etc::preferences=/dev/null', f'Dir::Etc::preferencesparts={d}/empty',
               f'Dir::State::Lists={d}/lists', f'Dir::State::status={d}/status',
               f'Dir::Cache={d}/cache', f'Dir::Cache::archives={d}/archives',
               f'APT::Architecture={arch}', f'APT::Architectures::={arch}',
               'APT::Sandbox::User=root']
    return ['apt-get', '-q', *(w for o in options for w in ('-o', o)), *args]

@functools.cache
def private_apt(suite: str, arch: str) -> str:
    """The private apt directory of SUITE's ARCH packages, updated once a run."""
    d = f'{lib.cache()}/apt/{suite}-{arch}'
    for sub in ('lists/partial', 'archives/partial', 'cache', 'empty'):
        os.makedirs(f'{d}/{sub}', exist_ok=True)
    Path(d, 'status').touch()
    Path(d, 'sources.list').write_text(
        f'deb [arch={arch} signed-by={KEYRING}] {archive()} {suite} main\n')
    run(apt(d, arch, 'update', '-qq'), what=f'apt-get update of {suite} {arch} failed',
        stdout=sys.stderr)
    return d

def fetch_arm64_busybox() -> None:
    """The host release's arm64 busybox in the cache (installed, it would replace the host's)."""
    d = f'{lib.cache()}/busybox/arm64'
    if os.access(f'{d}/busybox', os.X_OK):
        return
    codename = platform.freedesktop_os_release()['VERSION_CODENAME']
    unpack_arm64(codename, ['busybox-static'], f'{d}/unpacked')
    shutil.copy(f'{d}/unpacked/bin/busybox', f'{d}/busybox')
    shutil.rmtree(f'{d}/unpacked')

def download(pkg: str, debs: str, suite: str = '', again: bool = False) -> str:
    """PKG's newest .deb in DEBS, downloaded (AGAIN: anew) from SUITE's private apt or ours."""
    os.makedirs(debs, exist_ok=True)
    pattern = f'{glob.escape(debs)}/{glob.escape(pkg)}_*.deb'
    if again or not glob.glob(pattern):
        if not suite:
            apt_update()
        run(apt(private_apt(suite, 'amd64'), 'amd64', 'download', '-qq', pkg) if suite else
            ['apt-get', 'download', '-qq', '-o', 'APT::Sandbox::User=root', pkg], cwd=debs,
            stdout=sys.stderr)
    return max(glob.glob(pattern), key=os.path.getmtime, default='') or die(
        f"{pkg} could not be downloaded{f' from {suite}' if suite else ''}")

def deb_unpack(pkg: str, d: str) -> None:
    """PKG's files in D (from the machine's apt); its .deb stays in the cache."""
    if not os.path.isdir(d):
        deb = download(pkg, f'{lib.cache()}/lava/debs')
        with lib.whole(d) as part:
            run(['dpkg-deb', '-x', deb, part], what=f'{deb} could not be unpacked')

def fetch_lava_files() -> None:
    """lava-server's files, and the Debian kernel's modules that LAVA's supermin needs."""
    lava = f'{lib.cache()}/lava'
    deb_unpack('lava-server', f'{lava}/lava-server')
    if os.path.isdir(f'{lava}/supermin'):
        return
    apt_update()
    depends = text(['apt-cache', 'depends', 'linux-image-amd64'])
    kpkg = (re.search(r'^\s*Depends: (linux-image-[0-9]\S*)', depends, re.M)
            or die('no linux-image-amd64 kernel package')).group(1)
    deb = download(kpkg, f'{lava}/debs')
    with lib.whole(f'{lava}/supermin') as part:
        run(['dpkg-deb', '-x', deb, part], what=f'{deb} could not be unpacked')
        run(['depmod', '-b', part, kpkg[len('linux-image-'):]], what=f'depmod of {kpkg} failed')

def fetch_base(base: str) -> None:
    """The base's source in the cache, its Debian version in .perf_aux-debian."""
    lib.check('BASE', base, lib.BASES)
    cache, pkg = lib.cache(), f'linux-source-{base}'
    dst, tmp = f'{cache}/src/{base}', f'{cache}/src/.extract.{os.getpid()}'
    if os.path.isfile(f'{dst}/.perf_aux-debian'):
        return
    # linux-source-BASE's Debian suite ('': the machine's own).
    suite = {'6.12': '', '7.2': 'sid'}.get(base, 'experimental')
    deb = download(pkg, f'{cache}/debs', suite, again=True)
    version = text(['dpkg-deb', '-f', deb, 'Version'])
    if base == '6.12' and run(['dpkg', '--compare-versions', version.split('-')[0], 'lt',
                               lib.MIN_DEBIAN]).returncode == 0:
        die(f'{pkg} {version} is older than {lib.MIN_DEBIAN}, which brought '
            'PERF_PMU_CAP_AUX_PREFER_LARGE')
    print(f'unpacking {pkg} {version}')
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)  # and src/ itself, on an empty cache
    run(['dpkg-deb', '-x', deb, tmp], what=f'{deb} could not be unpacked')
    run(['tar', '-C', tmp, '-xf', f'{tmp}/usr/src/{pkg}.tar.xz'],
        what=f'{pkg}.tar.xz could not be unpacked')
    shutil.rmtree(dst, ignore_errors=True)
    os.rename(f'{tmp}/{pkg}', dst)
    shutil.rmtree(tmp, ignore_errors=True)
    Path(dst, '.perf_aux-debian').write_text(version + '\n')

def unpack_arm64(suite: str, packages: Sequence[str], d: str) -> int:
    """SUITE's arm64 PACKAGES and what they need, dpkg-deb -x'd into D and listed; how many."""
    apt_dir = private_apt(suite, 'arm64')
    for deb in glob.glob(glob.escape(apt_dir) + '/archives/*.deb'):
        os.remove(deb)
    run(apt(apt_dir, 'arm64', 'install', '-y', '-qq', '-d', '--no-install-recommends',
            *packages), what=f'the {suite} arm64 packages could not be downloaded', stdout=DEVNULL)
    found = []
    with lib.whole(d) as part:
        for deb in collated(glob.glob(glob.escape(apt_dir) + '/archives/*.deb')):
            run(['dpkg-deb', '-x', deb, part], what=f'{deb} could not be unpacked')
            found.append(text(['dpkg-deb', '-W', '--showformat=${Package} ${Version}\\n', deb]))
        for sub in ('doc', 'man', 'locale', 'info'):
            shutil.rmtree(f'{part}/usr/share/{sub}', ignore_errors=True)
        Path(part, '.perf_aux-packages').write_text(''.join(p + '\n' for p in found))
    return len(found)

def fetch_testdefs_rootfs() -> None:
    """KernelCI's trixie-kselftest root filesystem, unpacked again where a package is missing."""
    d = f'{lib.cache()}/rootfs/trixie-arm64'
    listed = Path(d, '.perf_aux-packages')
    if not listed.is_file() or \
            set(TESTDEFS_PACKAGES) - {line.split()[0] for line in listed.read_text().splitlines()}:
        print(f"trixie arm64 root filesystem: {unpack_arm64('trixie', TESTDEFS_PACKAGES, d)} "
              'packages')

def main(targets: List[str]) -> int:
    """deps TARGET|lava|lab|kunitpy|base-BASE|testdefs..."""
    packages = list(COMMON)
    for target in targets:
        if target in ('lava', 'lab', 'kunitpy'):
            packages += {'lava': LAVA, 'lab': LAVA + LAB, 'kunitpy': ARM64 + X86 + KUNITPY}[target]
        elif not target.startswith('base-') and target != 'testdefs':
            packages += X86 if lib.check('TARGET', target, lib.TARGETS) == 'x86_64' else ARM64
    install(packages)
    for target in targets:
        if target.startswith('arm64-'):
            install(['g++', 'gcc-' + text(['aarch64-linux-gnu-gcc', '-dumpversion']).split('.')[0]
                     + '-plugin-dev-aarch64-linux-gnu'])  # the sanitize build's GCC plugins
            fetch_arm64_busybox()
        elif target in ('lava', 'lab'):
            fetch_lava_files()
        elif target.startswith('base-'):
            fetch_base(target[len('base-'):])
        elif target == 'testdefs':
            fetch_testdefs_rootfs()
    return 0
