# SPDX-License-Identifier: GPL-2.0
"""What every step shares: paths, selectors, Run, running a program."""

import email.parser
import json
import locale
import os
import re
import shutil
import subprocess
import sys
from contextlib import contextmanager, nullcontext
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

ROOT = os.path.abspath(f'{__file__}/../../..')
# Kernel bases: Debian's linux-source-<base>; the first is the default.
BASES = ('7.3', '7.2', '6.12')
TARGETS = ('arm64-4k', 'arm64-16k', 'arm64-64k', 'x86_64')
KERNELS = ('reference', 'stock')
# A configuration (a build directory of its own) or a boot parameter on
# top of a target's default kernel (docs/variants.md).
VARIANTS = ('default', 'strict', 'nohugevmalloc', 'hugetlb', 'sanitize',
            'kcsan', 'nonroot', 'fail_setup', 'smp', 'soak', 'plain')
# Older Debian 6.12 sources lack PERF_PMU_CAP_AUX_PREFER_LARGE.
MIN_DEBIAN = '6.12.113'
# "max" alone has pointer authentication with QARMA5, which TCG emulates
# slowly: a KUnit boot 4x slower.
ARM64_QEMU_CPU = 'max,pauth-impdef=on'
# Every guest's memory (a host test keeps the LAVA template's equal): at
# 16K pages a NO_SG PMD buffer needs a free 32 MiB block.
GUEST_MEMORY_MIB = 2048
KUNIT_PY = 'tools/testing/kunit/kunit.py'
PIPE, DEVNULL, STDOUT = subprocess.PIPE, subprocess.DEVNULL, subprocess.STDOUT
REPORT = re.compile(r'BUG:|WARNING:|UBSAN:|Internal error: Oops|'
                    r'kmemleak: [1-9][0-9]* unreferenced')

class Error(Exception):
    """A step that cannot go on: its message was printed; exit STATUS."""
    def __init__(self, message: str, status: int = 2) -> None:
        super().__init__(message)
        self.status = status

def error(message: str) -> None:
    print(f'perf_aux: error: {message}', file=sys.stderr, flush=True)

def die(message: str, status: int = 2):
    """Prints MESSAGE and raises Error."""
    error(message)
    raise Error(message, status)

def stopped(signum: int, frame) -> None:
    """SIGTERM: an exception, so that run() stops its program first."""
    raise SystemExit(128 + signum)

def run(argv: Sequence[str], cwd: Optional[str] = None,
        env: Optional[Dict[str, str]] = None, log: Optional[str] = None,
        stdin=None, stdout=None, stderr=None, input: Optional[bytes] = None,
        timeout: Optional[float] = None, check: bool = False,
        what: str = '') -> 'subprocess.CompletedProcess[str]':
    """ARGV with ENV added, output in LOG (2>&1) or STDOUT, STDERR; 124 past
    TIMEOUT.  Stopped (SIGTERM, ^C), it stops ARGV first: timeout(1), in a
    process group of its own, passes SIGTERM on to QEMU."""
    sys.stdout.flush()
    with open(log, 'wb') if log is not None else nullcontext() as f, subprocess.Popen(
            argv, cwd=cwd, env={**os.environ, **(env or {})},
            stdin=PIPE if input is not None else stdin, stdout=f or stdout,
            stderr=STDOUT if f else stderr) as p:
        try:
            out, err = p.communicate(input, timeout)
            proc = subprocess.CompletedProcess(argv, p.returncode, out, err)
        except subprocess.TimeoutExpired:
            p.kill()
            proc = subprocess.CompletedProcess(argv, 124, b'')
        except BaseException:
            p.terminate()
            raise
    if isinstance(proc.stdout, bytes):
        proc.stdout = proc.stdout.decode('utf-8', 'surrogateescape')
    if proc.returncode and what:
        die(what)
    if proc.returncode and check:
        raise Error(f'{argv[0]}: exit {proc.returncode}', proc.returncode)
    return proc

@contextmanager
def whole(path: str) -> Iterator[str]:
    """A directory made in .NAME and renamed PATH (replaced) when the
    block ends: never half of one."""
    part = os.path.join(os.path.dirname(path), '.' + os.path.basename(path))
    shutil.rmtree(part, ignore_errors=True)
    os.makedirs(part)
    yield part
    shutil.rmtree(path, ignore_errors=True)
    os.rename(part, path)

def status(argv: Sequence[str], **kw) -> int:
    return run(argv, **kw).returncode

def text(argv: Sequence[str], **kw) -> str:
    """What ARGV prints, its last newlines dropped."""
    return run(argv, stdout=PIPE, **kw).stdout.rstrip('\n')

def show(data: bytes) -> None:
    sys.stdout.flush()
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()

def collated(names) -> List[str]:
    return sorted(names, key=locale.strxfrm)

def cache() -> str:
    """Trees, builds and ccache: a fixed path outside the clone."""
    return os.environ.get('PERF_AUX_CACHE') or '/var/cache/perf_aux'

def out() -> str:
    return os.path.abspath(os.environ.get('PERF_AUX_OUT') or f'{ROOT}/out')

def exports() -> Dict[str, str]:
    """ccache's settings for every build (trees at other paths share)."""
    return {'CCACHE_DIR': f'{cache()}/ccache', 'CCACHE_NOHASHDIR': '1', 'CCACHE_MAXSIZE': '8G'}

def default_base() -> str:
    return BASES[0]

def unknown(what: str, value: str, allowed: Sequence[str]) -> str:
    """The complaint about a selector VALUE not among ALLOWED, or ''."""
    return '' if value in allowed else f"unknown {what}='{value}' (one of: {' '.join(allowed)})"

def check(what: str, value: str, allowed: Sequence[str]) -> str:
    if value not in allowed:
        die(unknown(what, value, allowed))
    return value

def version_base(version: str) -> str:
    m = re.match(r'^([0-9]+\.[0-9]+)', version)
    return m.group(1) if m else version

def base_patches(base: str) -> str:
    return f'{ROOT}/scripts/patches/{base}'

def perf_aux(verb: str, *args: str, python: str = 'python3', module: str = 'perf_aux') -> List[str]:
    return ['env', f'PYTHONPATH={ROOT}/scripts', python, '-m', module, verb, *args]

def variant_build(variant: str) -> str:
    """The configuration a variant builds: soak boots sanitize's."""
    return 'sanitize' if variant == 'soak' else variant

def variant_config(variant: str) -> str:
    build = variant_build(variant)
    return f'{ROOT}/scripts/config/variant-{build}.config' \
        if build in ('hugetlb', 'sanitize', 'kcsan') else ''

def variant_args(variant: str, duration: str = '') -> List[str]:
    """The boot parameters a variant adds (soak: DURATION seconds)."""
    return {
        'strict': ['perf_aux.strict'],
        # Honouring nohugevmalloc is a rule only strict mode asserts.
        'nohugevmalloc': ['nohugevmalloc', 'perf_aux.strict'],
        'nonroot': ['perf_aux.user=65534'],
        'plain': ['perf_aux.plain'],
        'fail_setup': ['perf_aux.fail_setup', 'perf_aux.tests='
                       'perf_aux:pagesize_test,perf_aux:mmap_test,'
                       'perf_aux:fragment_test'],
        'sanitize': ['kasan_multi_shot'],
        'soak': ['kasan_multi_shot', 'perf_aux.tests=perf_aux:soak_test',
                 'perf_aux.soak='
                 f"{duration or os.environ.get('DURATION') or 600}"],
    }.get(variant, [])

def variant_cpus(variant: str) -> int:
    return 4 if variant in ('smp', 'sanitize', 'kcsan', 'soak') else 2

def granule_strict(kernel: str, variant: str) -> bool:
    """The granule suite booted strict: large vmap, or a strict variant."""
    return (kernel in ('reference', 'mutant') or kernel.startswith('series-')
            or variant in ('strict', 'nohugevmalloc'))

def build_dir(target: str, variant: str) -> str:
    return f'.build-{target}' + (f'-{variant_build(variant)}' if variant_config(variant) else '')

def read(path: str) -> str:
    """PATH's text, '' where there is none."""
    try:
        return Path(path).read_text(errors='surrogateescape')
    except OSError:
        return ''

def vmalloc_args(tree: str, mode: str) -> List[str]:
    """test_vmalloc's parameters: "bench" TREE's vmap benchmark alone."""
    cases = re.findall(r'(?m)^\s*\{ "([a-z0-9_]+)",', read(f'{tree}/lib/test_vmalloc.c'))
    if mode == 'bench' and 'vmap_contig_chunks_test' in cases:
        mask = 1 << cases.index('vmap_contig_chunks_test')
        return [f'test_vmalloc.run_test_mask={mask}',
                'test_vmalloc.nr_threads=1', 'test_vmalloc.test_loop_count=5',
                'test_vmalloc.test_repeat_count=1']
    return ['test_vmalloc.run_test_mask=0']

def console_reports(*logs: str) -> List[str]:
    """The kernel's reports in console logs, once each, sorted."""
    return collated({line for log in logs for line in read(log).split('\n') if REPORT.search(line)})

def run_reports(run: str) -> List[str]:
    logs = f'{out()}/logs/{run}'
    return console_reports(f'{logs}-kunit.log', f'{logs}-kselftest.log')

def result_name(kernel: str, base: str, target: str, variant: str) -> str:
    return f'{kernel}-{base}-{target}' + ('' if variant == 'default' else f'-{variant}')

def tree_name(kernel: str, base: str) -> str:
    """<base>-<kernel>, "custom", or <base>-series for any series."""
    return 'custom' if kernel == 'custom' else \
        f"{base}-{'series' if kernel.startswith('series-') else kernel}"

def target_arch(target: str) -> Tuple[str, str]:
    """The kernel's ARCH and CROSS_COMPILE for TARGET."""
    return ('arm64', 'aarch64-linux-gnu-') if target.startswith('arm64-') else ('x86_64', '')

def tree_version(src: str) -> str:
    return text(['make', '-s', '-C', src, 'kernelversion'], stderr=DEVNULL)

def patched_files(*patches: str) -> List[str]:
    """The files the patches change, as git am -p1 (a deleted one: "---")."""
    return collated({re.sub(r'^[^/]*/', '', old if new == '/dev/null' else new)
                     for patch in patches for old, new in re.findall(
                         r'(?m)^--- (\S+).*\n\+\+\+ (\S+)', read(patch))})

def base_repo(src: str, repo: str, message: str, *files: str,
              env: Optional[Dict[str, str]] = None) -> List[str]:
    """A git repository REPO of SRC's FILES, committed, tagged "base"; git in it."""
    shutil.rmtree(repo, ignore_errors=True)
    os.makedirs(repo)
    git = ['git', '-C', repo, '-c', 'user.name=perf_aux',
           '-c', 'user.email=perf_aux@localhost', '-c', 'commit.gpgsign=false']
    run([*git, 'init', '-q', '-b', 'perf_aux'], check=True, env=env)
    for f in files:
        if os.path.isfile(f'{src}/{f}'):
            os.makedirs(os.path.dirname(f'{repo}/{f}'), exist_ok=True)
            shutil.copy(f'{src}/{f}', f'{repo}/{f}')
    for args in (['add', '-A'], ['commit', '-q', '--allow-empty', '-m', message], ['tag', 'base']):
        run([*git, *args], check=True, env=env)
    return git

def series_mails(series: str) -> List[str]:
    """An mbox, or a directory's patches in order but cover letters."""
    if not os.path.isdir(series):
        return [series]
    return sorted((str(p) for p in Path(series).iterdir()
                   if p.name.endswith(('.patch', '.mbx', '.eml'))
                   and 'cover-letter' not in p.name
                   and p.is_file() and not p.is_symlink()), key=os.fsencode)

def series_subject(series: str) -> str:
    """The subject of SERIES: its cover letter's, else its first mail's."""
    covers = [str(p) for p in Path(series).glob('*cover-letter*')
              if p.is_file()] if os.path.isdir(series) else [series]
    try:
        with open((covers or series_mails(series) or [''])[0], 'rb') as f:
            mail = email.parser.BytesHeaderParser().parse(f)
    except OSError:
        return ''
    subject = mail.get('Subject') or ''
    return re.sub(r'[ \t]+', ' ', re.sub(r'\r?\n', '', str(subject)))

def kernel_name(kernel: str, series: str = '', src: str = '') -> str:
    """The kernel of result paths: "custom", "series-vN" ("[PATCH vN ...]", v1) or KERNEL."""
    if src or not series or kernel != 'reference':
        return 'custom' if src else kernel
    m = re.match(r'^\[[^\]]*\bv([0-9]+)\b[^\]]*\]', series_subject(series))
    return f"series-v{m.group(1) if m else 1}"

@dataclass(frozen=True)
class Run:
    """One run of a kernel (as results name it); SRC: a user's tree."""
    kernel: str = 'reference'
    base: str = BASES[0]
    target: str = 'arm64-4k'
    variant: str = 'default'
    kargs: Tuple[str, ...] = ()
    src: str = ''
    series: str = ''

    @property
    def name(self) -> str:
        return result_name(self.kernel, self.base, self.target, self.variant)

    @property
    def tree(self) -> str:
        return f'{cache()}/trees/{tree_name(self.kernel, self.base)}'

    @property
    def results(self) -> str:
        return f'{out()}/results/{self.name}'

    def log(self, what: str) -> str:
        return f'{out()}/logs/{self.name}-{what}.log'

    def save(self) -> None:
        Path(self.results, 'run.json').write_text(json.dumps(asdict(self), indent=1) + '\n')

def resumed(env) -> bool:
    """RESUME=1: go on from what a stopped run finished."""
    return env.get('RESUME', '') not in ('', '0')

def env_run(env=None, **given) -> Run:
    """The Run of make's selectors (in ENV) but those GIVEN, checked."""
    env = os.environ if env is None else env
    r = replace(Run(env.get('KERNEL') or 'reference', env.get('BASE', ''),
                    env.get('TARGET') or 'arm64-4k',
                    env.get('VARIANT') or 'default',
                    (env.get('KERNEL_ARGS') or '').split(),
                    env.get('KERNEL_SRC', ''), env.get('SERIES', '')), **given)
    if r.src and r.series:
        die('SERIES and KERNEL_SRC: one or the other')
    check('TARGET', r.target, TARGETS)
    check('VARIANT', r.variant, VARIANTS)
    if not r.src and r.kernel != 'mutant' and not r.kernel.startswith('series-'):
        check('KERNEL', r.kernel, KERNELS)
    base = version_base(tree_version(r.src)) if r.src else \
        check('BASE', r.base or default_base(), BASES)
    return replace(r, kernel=kernel_name(r.kernel, r.series, r.src),
                   base=base or default_base(), kargs=tuple(r.kargs))
