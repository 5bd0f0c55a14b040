# SPDX-License-Identifier: GPL-2.0
"""Host builds of the perf_aux selftests' helpers, for their host tests.

Each helper under tools/testing/selftests/perf_aux/ that has host tests (a
.c file and its header) is linked into a small C driver
(scripts/tests/*_host.c) with the host compiler, once per test class, in a
scratch directory removed afterwards.
"""

import os
import shutil
import subprocess
import tempfile
import unittest
from typing import Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SELFTEST_DIR = os.path.join(ROOT, 'tools', 'testing', 'selftests', 'perf_aux')
CFLAGS = ['-std=gnu99', '-O2', '-Wall', '-Wextra', '-Werror']


class HostDriver:
    """The driver @source, linked with @helpers (the selftests' .c files it
    tests), built into a fresh scratch directory."""

    def __init__(self, source: str, *helpers: str) -> None:
        name = os.path.splitext(os.path.basename(source))[0]
        self.dir = tempfile.mkdtemp(prefix=name + '.')
        self.binary = os.path.join(self.dir, name)
        try:
            subprocess.run(['gcc', *CFLAGS, '-I', SELFTEST_DIR, '-o',
                            self.binary, source, *helpers], check=True)
        except subprocess.CalledProcessError:
            self.cleanup()
            raise

    def cleanup(self) -> None:
        shutil.rmtree(self.dir)


class DriverTestCase(unittest.TestCase):
    """Tests sharing one built driver, cls.host, made by make_host()."""

    host: Optional[HostDriver] = None

    @classmethod
    def make_host(cls) -> HostDriver:
        raise NotImplementedError

    @classmethod
    def setUpClass(cls) -> None:
        if not shutil.which('gcc'):
            raise unittest.SkipTest('no host gcc')
        cls.host = cls.make_host()

    @classmethod
    def tearDownClass(cls) -> None:
        if cls.host:
            cls.host.cleanup()



class HeaderBuilds:
    """Mixin for a unittest.TestCase: HEADER builds alone, with FLAGS, as
    a file's only include, and so does SOURCE (its .c file), for the host
    and for arm64."""

    HEADER = ''
    SOURCE = ''
    FLAGS: Tuple[str, ...] = ()

    def compile(self, compiler: str) -> 'subprocess.CompletedProcess[str]':
        if not shutil.which(compiler):
            self.skipTest(f'no {compiler}')  # type: ignore[attr-defined]
        flags = [compiler, *self.FLAGS, '-Wall', '-Wextra', '-Werror',
                 '-fsyntax-only']
        proc = subprocess.run(
            [*flags, '-include', self.HEADER, '-x', 'c', '-'],
            input='int main(void) { return 0; }\n', capture_output=True,
            text=True)
        if proc.returncode or not self.SOURCE:
            return proc
        return subprocess.run([*flags, self.SOURCE], capture_output=True,
                              text=True)

    def test_builds_on_the_host(self) -> None:
        proc = self.compile('gcc')
        self.assertEqual(0, proc.returncode, proc.stderr)  # type: ignore

    def test_builds_for_arm64(self) -> None:
        proc = self.compile('aarch64-linux-gnu-gcc')
        self.assertEqual(0, proc.returncode, proc.stderr)  # type: ignore
