# SPDX-License-Identifier: GPL-2.0
"""What the pipeline needs from Debian: packages for TARGET, lava, lab,
kunitpy; base-BASE unpacks linux-source-BASE into the cache and testdefs
an arm64 root filesystem, each through a private apt (the machine's apt
configuration is never changed).  Only what is missing is fetched."""

import glob
import os
import re
import shutil
import subprocess
import sys
from typing import List, Sequence, Set

from . import lib
from .lib import DEVNULL, PIPE, STDOUT, collated, die, run, text

# busybox-static and libopencsd-bin: the host tests of the LAVA converter
# (busybox sh and awk) and of the ETE decoder (trc_pkt_lister);
# python3-yaml: the host test of integrations/ parses what its patches add;
# python3-jinja2: the LAVA client's host tests render jobs with
# lava-jobs/generate.py (/usr/bin/python3), before any LAVA stage.
COMMON = ('bc bison flex libelf-dev libssl-dev ccache cpio gcc make xz-utils '
          'rsync kmod python3 gzip libopencsd-bin busybox-static python3-yaml '
          'python3-jinja2 lavacli').split()
ARM64 = 'gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-system-arm'.split()
X86 = 'qemu-system-x86 busybox-static libc6-dev'.split()
# kunit.py's other architectures (perf_aux kunit --series): their cross
# compilers and QEMU; i386 builds with the host's gcc, riscv boots OpenSBI.
KUNITPY = ('gcc-riscv64-linux-gnu qemu-system-misc opensbi '
           'gcc-powerpc64-linux-gnu qemu-system-ppc gcc-s390x-linux-gnu '
           'qemu-system-s390x gcc-arm-linux-gnueabihf').split()
# lava-run --validate of the board jobs looks for a TFTP directory and
# telnet (the stand-in devices' consoles), hence tftpd-hpa and telnet.
LAVA = ('lava-dispatcher lava-common python3-voluptuous python3-jinja2 '
        'python3-yaml git qemu-system-arm busybox-static cpio tftpd-hpa '
        'telnet').split()
LAB = 'lava-server lavacli postgresql'.split()
# The packages of the Debian root filesystem that test-definitions'
# kselftest.sh runs on: the ones it installs itself (its install(): sed
# perl wget xz-utils iproute2 python3-tap, the last for its parser), and
# the shells, core utilities and tools a Debian root has (bash is Essential
# in Debian, so KernelCI's root has it too).
TESTDEFS_PACKAGES = ('base-files dash bash coreutils grep findutils mawk '
                     'mount util-linux kmod procps sed perl wget xz-utils '
                     'iproute2 python3-tap').split()
KEYRING = '/usr/share/keyrings/debian-archive-keyring.gpg'
INSTALLED = 'install ok installed'


def err(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


class Deps:
    """One run: the cache, and whether apt's lists were updated yet."""

    def __init__(self) -> None:
        self.cache = lib.cache()
        self.min_debian = lib.MIN_DEBIAN
        self.lava_cache = f'{self.cache}/lava'
        self.apt_updated = False

    # The machine's own packages.

    @staticmethod
    def missing(packages: Sequence[str]) -> List[str]:
        """The PACKAGES dpkg does not have installed, in order."""
        need = []
        for pkg in packages:
            if INSTALLED not in text(['dpkg-query', '-W', '-f=${Status}\\n',
                                      pkg], stderr=DEVNULL).split('\n'):
                need.append(pkg)
        return need

    def apt_update(self) -> None:
        if not self.apt_updated:
            run(['apt-get', 'update', '-qq'], what='apt-get update failed')
            self.apt_updated = True

    def install_packages(self, packages: Sequence[str], to_stderr=False) -> None:
        need = self.missing(packages)
        if not need:
            return
        line = 'installing: ' + ' '.join(need)
        if to_stderr:
            err(line)
        else:
            print(line, flush=True)
        self.apt_update()
        run(['apt-get', 'install', '-y', '-qq', '--no-install-recommends',
            *need], what=f'apt-get install {" ".join(need)} failed',
            stdout=DEVNULL,
            env={'DEBIAN_FRONTEND': 'noninteractive'})

    def install_gcc_plugin_headers(self) -> None:
        """GCC's plugin headers: the sanitize build's stackleak plugin."""
        major = text(['aarch64-linux-gnu-gcc', '-dumpversion']).split('.')[0]
        self.install_packages(['g++', f'gcc-{major}-plugin-dev-aarch64-linux-gnu'])

    # Private apt: other suites and arm64, the machine's apt state kept.

    @staticmethod
    def debian_archive() -> str:
        """The archive the machine's apt sources use for Debian."""
        uris = text(['apt-get', 'indextargets', '--format', '$(URI)',
                     'Created-By: Packages'])
        for uri in uris.split('\n'):
            m = re.match(r'^(.*/debian)/dists/', uri)
            if m:
                return m.group(1)
        return ''

    def archive(self) -> str:
        archive = self.debian_archive()
        if not archive:
            die("no Debian archive in the machine's apt sources")
        return archive

    def apt_private(self, suite: str, *args: str) -> List[str]:
        """apt-get with the private sources list of SUITE."""
        d = f'{self.cache}/apt/{suite}'
        return ['apt-get', '-q', '-o', f'Dir::Etc::sourcelist={d}/sources.list',
                '-o', 'Dir::Etc::sourceparts=-', '-o',
                f'Dir::State::Lists={d}/lists', '-o', 'APT::Architectures=amd64',
                *args]

    @staticmethod
    def apt_arm64(d: str, *args: str) -> List[str]:
        """apt-get with D's own sources list, lists, dpkg status (empty:
        nothing is installed) and archives, arm64 packages only; nothing of
        the machine's apt configuration or dpkg state is read or changed."""
        return ['apt-get', '-q', '-o', f'Dir::Etc::sourcelist={d}/sources.list',
                '-o', f'Dir::Etc::sourceparts={d}/empty',
                '-o', 'Dir::Etc::preferences=/dev/null',
                '-o', f'Dir::Etc::preferencesparts={d}/empty',
                '-o', f'Dir::State::Lists={d}/lists',
                '-o', f'Dir::State::status={d}/status',
                '-o', f'Dir::Cache={d}/cache',
                '-o', f'Dir::Cache::archives={d}/archives',
                '-o', 'APT::Architecture=arm64', '-o', 'APT::Architectures::=arm64',
                '-o', 'APT::Sandbox::User=root', *args]

    def apt_arm64_suite(self, suite: str) -> str:
        """The private arm64 apt of SUITE, updated once per run."""
        d = f'{self.cache}/apt/{suite}-arm64'
        for sub in ('lists/partial', 'archives/partial', 'cache', 'empty'):
            os.makedirs(f'{d}/{sub}', exist_ok=True)
        if not os.path.isfile(f'{d}/status'):
            open(f'{d}/status', 'w').close()
        stamp = f'{d}/.updated.{os.getpid()}'
        if not os.path.isfile(stamp):
            with open(f'{d}/sources.list', 'w') as f:
                f.write(f'deb [arch=arm64 signed-by={KEYRING}] '
                        f'{self.archive()} {suite} main\n')
            run(self.apt_arm64(d, 'update', '-qq'),
                what=f'apt-get update of {suite} arm64 failed',
                stdout=sys.stderr)
            for old in glob.glob(glob.escape(d) + '/.updated.*'):
                os.remove(old)
            open(stamp, 'w').close()
        return d

    @staticmethod
    def download(argv: Sequence[str], cwd: str) -> None:
        """apt-get download ARGV in CWD, its lines on stderr."""
        for line in text(argv, cwd=cwd, stderr=STDOUT).splitlines():
            if 'unsandboxed' not in line:
                err(line)

    # The arm64 busybox, the bases' sources, the LAVA files, the root
    # filesystem of test-definitions.

    def fetch_arm64_busybox(self) -> None:
        """The arm64 busybox in the cache, never installed (it would
        replace the host's), from the host's release."""
        d = f'{self.cache}/busybox/arm64'
        if os.access(f'{d}/busybox', os.X_OK):
            return
        codename = text(['sh', '-c', '. /etc/os-release && '
                         'echo "$VERSION_CODENAME"'])
        self.unpack_arm64(codename, ['busybox-static'], f'{d}/unpacked')
        shutil.copy(f'{d}/unpacked/bin/busybox', f'{d}/busybox')
        shutil.rmtree(f'{d}/unpacked')

    def cached_deb(self, pkg: str, d: str) -> str:
        found = collated(glob.glob(f'{glob.escape(d)}/{glob.escape(pkg)}_*.deb'))
        return found[0] if found else ''

    def deb_unpack(self, pkg: str, d: str) -> None:
        """The package's files in D; its .deb stays in the cache."""
        if os.path.isdir(d):
            return
        debs = f'{self.lava_cache}/debs'
        os.makedirs(debs, exist_ok=True)
        deb = self.cached_deb(pkg, debs)
        if not deb:
            self.apt_update()
            self.download(['apt-get', 'download', '-qq', pkg], debs)
            deb = self.cached_deb(pkg, debs) or die(
                f'{pkg} could not be downloaded')
        run(['dpkg-deb', '-x', deb, f'{d}.tmp'],
            what=f'{deb} could not be unpacked')
        os.rename(f'{d}.tmp', d)

    def fetch_lava_files(self) -> None:
        self.deb_unpack('lava-server', f'{self.lava_cache}/lava-server')
        if os.path.isdir(f'{self.lava_cache}/supermin'):
            return
        self.apt_update()
        kpkg = ''
        for line in text(['apt-cache', 'depends',
                          'linux-image-amd64']).split('\n'):
            m = re.match(r'\s*Depends: (linux-image-[0-9]\S*)', line)
            if m:
                kpkg = m.group(1)
                break
        tmp = f'{self.lava_cache}/supermin.tmp'
        self.deb_unpack(kpkg, tmp)
        run(['depmod', '-b', tmp, kpkg[len('linux-image-'):]],
            what=f'depmod of {kpkg} failed')
        os.rename(tmp, f'{self.lava_cache}/supermin')

    def fetch_debian_deb(self, base: str) -> str:
        """The linux-source-BASE .deb (or installed tarball): its path."""
        pkg = f'linux-source-{base}'
        suite = lib.base_suite(base)
        os.makedirs(f'{self.cache}/debs', exist_ok=True)
        if not suite:
            self.install_packages([pkg], to_stderr=True)
            return f'/usr/src/{pkg}.tar.xz'
        d = f'{self.cache}/apt/{suite}'
        os.makedirs(f'{d}/lists/partial', exist_ok=True)
        with open(f'{d}/sources.list', 'w') as f:
            f.write(f'deb [signed-by={KEYRING}] {self.archive()} {suite} main\n')
        run(self.apt_private(suite, 'update', '-qq'),
            what=f'apt-get update of {suite} failed', stdout=sys.stderr)
        self.download(self.apt_private(suite, 'download', '-qq', pkg),
                      f'{self.cache}/debs')
        debs = glob.glob(f'{glob.escape(self.cache)}/debs/{pkg}_*.deb')
        if not debs:
            die(f'{pkg} could not be downloaded from {suite}')
        return max(debs, key=os.path.getmtime)

    def fetch_base(self, base: str) -> None:
        """The base's source in the cache, its version in .perf_aux-debian."""
        lib.check_base(base)
        dst = f'{self.cache}/src/{base}'
        if os.path.isfile(f'{dst}/.perf_aux-debian'):
            return
        path = self.fetch_debian_deb(base)
        tmp = f'{self.cache}/src/.extract.{os.getpid()}'
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(tmp)
        tarball = f'./usr/src/linux-source-{base}.tar.xz'
        if path.endswith('.deb'):
            version = text(['dpkg-deb', '-f', path, 'Version'])
            with subprocess.Popen(['dpkg-deb', '--fsys-tarfile', path],
                                  stdout=PIPE) as deb:
                rc = run(['tar', '-C', tmp, '-xf', '-', tarball],
                         stdin=deb.stdout).returncode
                deb.stdout.close()
            if rc or deb.returncode:
                die(f'{path}: no {tarball} in it')
            path = f'{tmp}/{tarball[2:]}'
        else:
            version = text(['dpkg-query', '-W', '-f=${Version}',
                            f'linux-source-{base}'])
        if base == '6.12' and run(['dpkg', '--compare-versions',
                                  version.split('-')[0], 'lt',
                                  self.min_debian]).returncode == 0:
            die(f'linux-source-6.12 {version} is older than '
                      f'{self.min_debian}, which brought '
                      'PERF_PMU_CAP_AUX_PREFER_LARGE')
        print(f'unpacking linux-source-{base} {version}', flush=True)
        run(['tar', '-C', tmp, '-xf', path],
            what=f'{path} could not be unpacked')
        shutil.rmtree(dst, ignore_errors=True)
        os.rename(f'{tmp}/linux-source-{base}', dst)
        shutil.rmtree(tmp, ignore_errors=True)
        with open(f'{dst}/.perf_aux-debian', 'w') as f:
            f.write(version + '\n')

    def fetch_testdefs_rootfs(self) -> None:
        """trixie's arm64 packages (the release of KernelCI's
        trixie-kselftest root filesystem) with everything they depend on,
        unpacked into $PERF_AUX_CACHE/rootfs/trixie-arm64."""
        d = f'{self.cache}/rootfs/trixie-arm64'
        if not set(TESTDEFS_PACKAGES) <= unpacked(d):
            n = self.unpack_arm64('trixie', TESTDEFS_PACKAGES, d)
            print(f'trixie arm64 root filesystem: {n} packages', flush=True)

    def unpack_arm64(self, suite: str, packages: Sequence[str],
                     d: str) -> int:
        """SUITE's arm64 PACKAGES with everything they depend on, unpacked
        into D (dpkg-deb -x: no maintainer script runs, and none is needed
        by what runs there), the packages and versions in its
        .perf_aux-packages; how many."""
        apt = self.apt_arm64_suite(suite)
        for deb in glob.glob(glob.escape(apt) + '/archives/*.deb'):
            os.remove(deb)
        run(self.apt_arm64(apt, 'install', '-y', '-qq', '-d',
                           '--no-install-recommends', *packages),
            what=f'the {suite} arm64 packages could not be downloaded',
            stdout=DEVNULL)
        tmp = f'{d}.tmp'
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(tmp)
        found = []
        for deb in collated(glob.glob(glob.escape(apt) + '/archives/*.deb')):
            run(['dpkg-deb', '-x', deb, tmp],
                what=f'{deb} could not be unpacked')
            found.append(text(['dpkg-deb', '-W',
                               '--showformat=${Package} ${Version}\\n', deb]))
        for sub in ('doc', 'man', 'locale', 'info'):
            shutil.rmtree(f'{tmp}/usr/share/{sub}', ignore_errors=True)
        with open(f'{tmp}/.perf_aux-packages', 'w') as f:
            f.write(''.join(p + '\n' for p in found))
        shutil.rmtree(d, ignore_errors=True)
        os.rename(tmp, d)
        return len(found)


def unpacked(d: str) -> Set[str]:
    """The packages unpack_arm64 unpacked into D (none yet: empty)."""
    try:
        with open(f'{d}/.perf_aux-packages', encoding='utf-8') as f:
            return {line.split()[0] for line in f if line.strip()}
    except OSError:
        return set()


def main(targets: List[str]) -> int:
    """deps TARGET|lava|lab|kunitpy|base-BASE|testdefs..."""
    d = Deps()
    packages = list(COMMON)
    for target in targets:
        if target == 'lava':
            packages += LAVA
        elif target == 'lab':
            packages += LAVA + LAB
        elif target == 'kunitpy':
            packages += ARM64 + X86 + KUNITPY
        elif target.startswith('base-') or target == 'testdefs':
            continue
        else:
            lib.check_target(target)
            packages += ARM64 if target.startswith('arm64-') else X86
    d.install_packages(packages)
    for target in targets:
        if target.startswith('arm64-'):
            d.install_gcc_plugin_headers()
            d.fetch_arm64_busybox()
        elif target in ('lava', 'lab'):
            d.fetch_lava_files()
        elif target.startswith('base-'):
            d.fetch_base(target[len('base-'):])
        elif target == 'testdefs':
            d.fetch_testdefs_rootfs()
    return 0
