#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host tests of tools/testing/selftests/perf_aux/ete_decode.c.

It is linked into ete_decode_host.c with the host compiler.  Raw ETE
streams, as TRBE writes them, are built here by hand from the ETE packet
formats (Arm Embedded Trace Extension: A-Sync, Trace Info, Trace On,
Context, addresses, atoms, timestamps, events) and decoded by the real
trc_pkt_lister (Debian libopencsd-bin, installed by perf_aux deps).
Stand-in listers (shell scripts) check the command line, the snapshot
directory, the time limit and the "not installed" result without OpenCSD.
"""

import os
import shutil
import subprocess
import tempfile
import time
import unittest
from typing import Dict, List, Optional

from host_driver import (HERE, SELFTEST_DIR, DriverTestCase, HeaderBuilds,
                         HostDriver)

HEADER = os.path.join(SELFTEST_DIR, 'ete_decode.h')
SOURCE = os.path.join(SELFTEST_DIR, 'ete_decode.c')
DRIVER = os.path.join(HERE, 'ete_decode_host.c')
LISTER = shutil.which('trc_pkt_lister') or (
    '/usr/bin/trc_pkt_lister'
    if os.access('/usr/bin/trc_pkt_lister', os.X_OK) else None)

ETIMEDOUT = 110
ECHILD = 10
ENOENT = 2

# The ID registers of an ETE as sysfs shows them under cs_etm/cpuN, chosen
# here (no board to copy from):
#  TRCIDR0 0x28000ea1: TSSIZE 64-bit, COMMOPT 1, branch broadcast, cycle
#          counting, return stack, 4 events; no data or conditional trace;
#  TRCIDR1 0x4100fff0: designer Arm, TRCARCHMAJ/MIN 0xf/0xf as an ETE has;
#  TRCIDR2 0x00001088: 64-bit addresses, 32-bit context and VMID;
#  TRCDEVARCH 0x47725a13: Arm, ETE (ARCHVER 5, ARCHPART 0xa13), revision 2.
SYSFS_REGS = {
    'trcidr/trcidr0': 0x28000ea1,
    'trcidr/trcidr1': 0x4100fff0,
    'trcidr/trcidr2': 0x00001088,
    'trcidr/trcidr8': 0x0,
    'mgmt/trcdevarch': 0x47725a13,
    'mgmt/trcauthstatus': 0xcc,
}


# ETE packets, built from the packet formats.
def a_sync() -> bytes:
    return bytes(11) + b'\x80'


def trace_info(info: int = 0) -> bytes:
    """Trace Info with its INFO section (PLCTL bit 0)."""
    return b'\x01\x01' + bytes([info])


TRACE_ON = b'\x04'
IGNORE = b'\x70'
OVERFLOW = b'\x00\x05'


def context(el: int = 0, cid: Optional[int] = None) -> bytes:
    """Context packet, AArch64 and non-secure; CONTEXTIDR 32 bits wide."""
    info = el | 1 << 4 | 1 << 5 | (0x80 if cid is not None else 0)
    tail = cid.to_bytes(4, 'little') if cid is not None else b''
    return b'\x81' + bytes([info]) + tail


def _addr64_is0(addr: int) -> bytes:
    return (bytes([(addr >> 2) & 0x7f, (addr >> 9) & 0x7f]) +
            (addr >> 16).to_bytes(6, 'little'))


def long_address(addr: int) -> bytes:
    """Long address, 64-bit, IS0 (A64)."""
    return b'\x9d' + _addr64_is0(addr)


def address_with_context(addr: int, cid: int) -> bytes:
    """Long address with context, 64-bit, IS0, EL0, with CONTEXTIDR."""
    return (b'\x85' + _addr64_is0(addr) + bytes([0xb0]) +
            cid.to_bytes(4, 'little'))


def short_address(addr: int) -> bytes:
    """Short address, IS0: bits [16:2] in two bytes."""
    return bytes([0x95, 0x80 | (addr >> 2) & 0x7f, (addr >> 9) & 0xff])


def atom_f1(executed: bool) -> bytes:
    return bytes([0xf6 | executed])


def atom_f6(taken: int, last_taken: bool = True) -> bytes:
    """Atom format 6: @taken E atoms (3 to 23), then one E or N."""
    return bytes([0xc0 | (0 if last_taken else 0x20) | (taken - 3)])


def timestamp(value: int) -> bytes:
    """Timestamp, no cycle count: 7 bits a byte, bit 7 says more follow."""
    out = bytearray()
    while True:
        out.append(value & 0x7f | (0x80 if value >> 7 else 0))
        value >>= 7
        if not value:
            return b'\x02' + bytes(out)


def event(number: int) -> bytes:
    return bytes([0x70 | number])


# A session as the trace unit starts it, then some program flow.
SESSION = [
    a_sync(), trace_info(), TRACE_ON, context(cid=0x1234),
    long_address(0xaaaae4a9b600), atom_f1(True), atom_f1(False),
    atom_f6(23), atom_f6(5, last_taken=False), short_address(0xaaaae4a9b640),
    timestamp(13196304120239), event(1),
    address_with_context(0xaaaae4a9c000, 0x1234),
    atom_f6(10), OVERFLOW, a_sync(), trace_info(), TRACE_ON,
    long_address(0xaaaae4a9b700), atom_f1(True),
]


def stream(packets: List[bytes]) -> bytes:
    return b''.join(packets)


def write_sysfs(root: str, regs: Dict[str, int]) -> str:
    """A cs_etm/cpuN directory as the coresight driver lays it out."""
    cpu = os.path.join(root, 'cpu0')
    for name, value in regs.items():
        path = os.path.join(cpu, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'w') as f:
            f.write(f'{value:#x}\n')
    return cpu


def fake_lister(directory: str, body: str) -> str:
    """An executable stand-in for trc_pkt_lister running @body."""
    path = os.path.join(directory, 'trc_pkt_lister')
    with open(path, 'w') as f:
        f.write('#!/bin/sh\n' + body + '\n')
    os.chmod(path, 0o755)
    return path


class EteDecodeHost(HostDriver):
    """ete_decode_host.c built, and a fake sysfs directory of an ETE."""

    def __init__(self) -> None:
        super().__init__(DRIVER, SOURCE)
        self.cpu = write_sysfs(os.path.join(self.dir, 'sysfs'), SYSFS_REGS)

    def run(self, args: List[str], env: Optional[Dict[str, str]] = None
            ) -> Dict[str, str]:
        proc = subprocess.run([self.binary, *args], capture_output=True,
                              text=True, env=env, timeout=120)
        if proc.returncode not in (0, 1, 2) or not proc.stdout:
            raise RuntimeError(proc.stderr)
        head, _, error = proc.stdout.rstrip('\n').partition(' error=')
        fields = dict(kv.split('=', 1) for kv in head.split(' '))
        if error:
            fields['error'] = error
        fields['exit'] = str(proc.returncode)
        return fields

    def decode(self, data: bytes, cut: bool = False, timeout: int = 60,
               env: Optional[Dict[str, str]] = None) -> Dict[str, str]:
        path = os.path.join(self.dir, 'trace.bin')
        with open(path, 'wb') as f:
            f.write(data)
        return self.run(['decode', self.cpu, path,
                         'cut' if cut else 'whole', str(timeout)], env)

class HostTestCase(DriverTestCase):
    host: EteDecodeHost

    @classmethod
    def make_host(cls) -> EteDecodeHost:
        return EteDecodeHost()

    def setUp(self) -> None:
        # ete_decode() works under $TMPDIR: a fresh one shows what it left.
        self.tmp = tempfile.mkdtemp(prefix='ete_decode_tmp.')
        self.addCleanup(shutil.rmtree, self.tmp)
        self.env = dict(os.environ, TMPDIR=self.tmp)
        self.env.pop('TRC_PKT_LISTER', None)

    def assertNothingLeft(self) -> None:
        self.assertEqual([], os.listdir(self.tmp))


class RealListerTestCase(HostTestCase):
    """Decoded by the installed trc_pkt_lister."""

    def setUp(self) -> None:
        if not LISTER:
            self.skipTest('trc_pkt_lister not installed (libopencsd-bin)')
        super().setUp()

    def decode(self, data: bytes, cut: bool = False) -> Dict[str, str]:
        assert self.host
        got = self.host.decode(data, cut=cut, env=self.env)
        self.assertNothingLeft()
        # The return value, the error count and the exit status agree.
        self.assertEqual(got['ret'] == '0', got['errors'] == '0', got)
        self.assertEqual(got['ret'] == '0', got['exit'] == '0', got)
        return got

    def assertClean(self, data: bytes, packets: int) -> None:
        got = self.decode(data)
        self.assertEqual({'ret': '0', 'packets': str(packets),
                          'errors': '0', 'processed': str(len(data)),
                          'error': 'none'},
                         {k: got[k] for k in ('ret', 'packets', 'errors',
                                              'processed', 'error')})

    def assertBad(self, data: bytes, error: str, cut: bool = False
                  ) -> Dict[str, str]:
        got = self.decode(data, cut=cut)
        self.assertEqual('1', got['ret'], got)
        self.assertIn(error, got['error'])
        return got


class ValidStreamTest(RealListerTestCase):

    def test_session_decodes_every_packet_without_error(self) -> None:
        self.assertClean(stream(SESSION), len(SESSION))

    def test_ignore_padding_before_sync_and_between_sessions(self) -> None:
        # TRBE pads with ignore bytes; before the first A-Sync they are
        # unsynchronised data, after it ignore packets.
        data = IGNORE * 64 + stream(SESSION) + IGNORE * 3 + stream(SESSION)
        self.assertClean(data, 2 * len(SESSION) + 3)

    def test_stream_cut_inside_a_packet_is_accepted_when_cut(self) -> None:
        data = stream(SESSION[:5]) + long_address(0xaaaae4a9b700)[:4]
        got = self.decode(data, cut=True)
        self.assertEqual(('0', '5', '0'),
                         (got['ret'], got['packets'], got['errors']), got)


class BadStreamTest(RealListerTestCase):

    def test_reserved_header_after_sync(self) -> None:
        # 0x08 is no ETE packet header.
        data = stream(SESSION[:3]) + b'\x08' + stream(SESSION[3:])
        got = self.assertBad(data, 'OCSD_ERR_INVALID_PCKT_HDR')
        self.assertIn('I_RESERVED', got['error'])

    def test_header_reserved_in_this_configuration(self) -> None:
        # 0x20 is a data synchronisation marker: ETE traces no data.
        data = stream(SESSION[:6]) + b'\x20' + stream(SESSION[6:])
        self.assertBad(data, 'I_RESERVED_CFG')

    def test_broken_periodic_async(self) -> None:
        data = stream(SESSION[:6]) + bytes(11) + b'\x81' + stream(SESSION[6:])
        self.assertBad(data, 'I_BAD_SEQUENCE')

    def test_unknown_extension_packet(self) -> None:
        data = stream(SESSION[:6]) + b'\x00\x07' + stream(SESSION[6:])
        self.assertBad(data, 'I_BAD_SEQUENCE')

    def test_stream_cut_inside_a_packet(self) -> None:
        data = stream(SESSION[:5]) + long_address(0xaaaae4a9b700)[:4]
        got = self.assertBad(data, 'I_INCOMPLETE_EOT')
        self.assertEqual('5', got['packets'])

    def test_garbage_without_async(self) -> None:
        got = self.assertBad(bytes.fromhex('deadbeefcafef00d') * 8,
                             'no ETE packet decoded', cut=True)
        self.assertEqual(('0', '64'), (got['packets'], got['processed']))

    def test_session_without_its_async(self) -> None:
        self.assertBad(stream(SESSION[1:10]), 'no ETE packet decoded',
                       cut=True)

    def test_empty_stream(self) -> None:
        self.assertBad(b'', 'no ETE packet decoded')


class ListerRunTest(HostTestCase):
    """How trc_pkt_lister is found and run, with stand-ins for it."""

    def fake(self, body: str) -> str:
        bindir = tempfile.mkdtemp(prefix='ete_decode_bin.')
        self.addCleanup(shutil.rmtree, bindir)
        return fake_lister(bindir, body)

    def test_not_installed_is_its_own_result(self) -> None:
        assert self.host
        env = dict(self.env, TRC_PKT_LISTER=os.path.join(self.tmp, 'none'))
        got = self.host.decode(stream(SESSION), env=env)
        self.assertEqual(('2', '0', '1'),
                         (got['ret'], got['packets'], got['exit']), got)
        self.assertNothingLeft()

    def test_snapshot_describes_one_raw_ete_source(self) -> None:
        assert self.host
        seen = os.path.join(self.host.dir, 'seen')
        shutil.rmtree(seen, ignore_errors=True)
        lister = self.fake(f'echo "$@" > {seen}.args; cp -r "$2" {seen}')
        env = dict(self.env, TRC_PKT_LISTER=lister)
        data = stream(SESSION)
        self.host.decode(data, env=env)
        self.assertNothingLeft()

        with open(seen + '.args') as f:
            args = f.read().split()
        self.assertEqual(['-ss_dir', '-logfilename', '-stats'],
                         args[0::2])
        self.assertTrue(args[1].startswith(self.tmp + '/ete_decode.'))
        self.assertEqual(os.path.join(args[1], 'listing.txt'), args[3])
        with open(os.path.join(seen, 'trace.bin'), 'rb') as f:
            self.assertEqual(data, f.read())
        ini = {}
        for name in ('snapshot.ini', 'cpu_0.ini', 'ete_0.ini', 'trace.ini'):
            with open(os.path.join(seen, name)) as f:
                ini[name] = f.read().split()
        self.assertIn('device1=ete_0.ini', ini['snapshot.ini'])
        self.assertIn('metadata=trace.ini', ini['snapshot.ini'])
        self.assertIn('type=ARMv9-A', ini['cpu_0.ini'])
        self.assertIn('type=ETE', ini['ete_0.ini'])
        for key, value in (('TRCIDR0', 0x28000ea1), ('TRCIDR1', 0x4100fff0),
                           ('TRCIDR2', 0x1088), ('TRCIDR8', 0),
                           ('TRCDEVARCH', 0x47725a13), ('TRCCONFIGR', 0),
                           ('TRCTRACEIDR', 0x10)):
            self.assertIn(f'{key}={value:#x}', ini['ete_0.ini'])
        # No frame formatter in a TRBE buffer: one source, raw.
        self.assertIn('format=source_data', ini['trace.ini'])
        self.assertIn('ete_0=trbe', ini['trace.ini'])
        self.assertIn('cpu_0=ete_0', ini['trace.ini'])

    def test_lister_found_in_path(self) -> None:
        assert self.host
        lister = self.fake(f'echo found > {self.tmp}.path')
        self.addCleanup(os.unlink, self.tmp + '.path')
        env = dict(self.env, PATH=os.path.dirname(lister) + ':/bin')
        self.host.decode(stream(SESSION), env=env)
        with open(self.tmp + '.path') as f:
            self.assertEqual('found\n', f.read())

    def test_stuck_lister_is_killed_at_the_time_limit(self) -> None:
        assert self.host
        env = dict(self.env, TRC_PKT_LISTER=self.fake('exec sleep 30'))
        start = time.monotonic()
        got = self.host.decode(stream(SESSION), timeout=1, env=env)
        self.assertLess(time.monotonic() - start, 10)
        self.assertEqual((str(-ETIMEDOUT), '2'), (got['ret'], got['exit']))
        self.assertNothingLeft()

    def test_lister_that_lists_nothing_is_no_pass(self) -> None:
        assert self.host
        env = dict(self.env, TRC_PKT_LISTER=self.fake('exit 0'))
        got = self.host.decode(stream(SESSION), env=env)
        self.assertEqual('1', got['ret'], got)
        self.assertIn('wrote no listing', got['error'])
        self.assertNothingLeft()

    def test_listing_that_stops_early_is_no_pass(self) -> None:
        # As trc_pkt_lister after a fatal decoder error: no final count.
        assert self.host
        env = dict(self.env, TRC_PKT_LISTER=self.fake(
            'printf "Idx:0; ID:0;\\tI_ASYNC : Alignment Synchronisation.\\n"'
            ' > "$4"'))
        got = self.host.decode(stream(SESSION), env=env)
        self.assertEqual(('1', '1'), (got['ret'], got['packets']), got)
        self.assertIn('did not process the trace', got['error'])

    def test_lister_that_fails_is_a_run_error(self) -> None:
        assert self.host
        env = dict(self.env, TRC_PKT_LISTER=self.fake('exit 3'))
        got = self.host.decode(stream(SESSION), env=env)
        self.assertEqual((str(-ECHILD), '2'), (got['ret'], got['exit']))
        self.assertNothingLeft()


class RegistersTest(HostTestCase):
    """ete_regs_read() on a cs_etm/cpuN layout."""

    def test_registers_read_from_sysfs_layout(self) -> None:
        assert self.host
        got = self.host.run(['regs', self.host.cpu])
        want = {name.split('/')[1]: f'{value:#x}'
                for name, value in SYSFS_REGS.items()}
        want.update(ret='0', trcconfigr='0x0', trctraceidr='0x10')
        self.assertEqual(want, {k: got[k] for k in want})

    def test_missing_register_is_an_error(self) -> None:
        assert self.host
        regs = dict(SYSFS_REGS)
        del regs['mgmt/trcdevarch']
        cpu = write_sysfs(self.tmp, regs)
        got = self.host.run(['regs', cpu])
        self.assertEqual((str(-ENOENT), '1'), (got['ret'], got['exit']))


class HeaderBuildTest(HeaderBuilds, unittest.TestCase):
    """The header and ete_decode.c must build alone, as GNU C99, for the
    host and arm64."""

    HEADER = HEADER
    SOURCE = SOURCE
    FLAGS = ('-std=gnu99',)

if __name__ == '__main__':
    unittest.main()
