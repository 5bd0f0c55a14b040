#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host tests of tools/testing/selftests/perf_aux/trace_check.c.

It is linked into trace_check_host.c with the host compiler and fed
byte streams: recorded SPE and ETM trace quoted in public messages and docs
(test_data/trace/*.hex, each file names its source) and streams built here
by hand from the SPE packet formats (Arm ARM; the header values match
tools/perf/util/arm-spe-decoder/arm-spe-pkt-decoder.h).
"""

import os
import struct
import subprocess
import unittest
from typing import Dict

from host_driver import (HERE, SELFTEST_DIR, DriverTestCase, HeaderBuilds,
                         HostDriver)

HEADER = os.path.join(SELFTEST_DIR, 'trace_check.h')
SOURCE = os.path.join(SELFTEST_DIR, 'trace_check.c')
DRIVER = os.path.join(HERE, 'trace_check_host.c')
TRACE_DATA = os.path.join(HERE, 'test_data', 'trace')


def read_hex(name: str) -> bytes:
    """Bytes of a test_data/trace/*.hex file ('#' starts a comment)."""
    with open(os.path.join(TRACE_DATA, name)) as f:
        text = ' '.join(line.split('#', 1)[0] for line in f)
    return bytes.fromhex(text)


# SPE packets, built from the packet formats.
def _sz(payload_len: int) -> int:
    """Header bits [5:4] for a payload of 1, 2, 4 or 8 bytes."""
    return {1: 0, 2: 1, 4: 2, 8: 3}[payload_len] << 4


def address(index: int, addr: int, el: int = 0, ns: int = 1) -> bytes:
    """Address packet (0 PC, 1 branch target, 2 VA, 3 PA; 8+ extended)."""
    payload = struct.pack('<Q', addr | ns << 63 | el << 61)
    if index < 8:
        return bytes([0xb0 | index]) + payload
    return bytes([0x20 | index >> 3, 0xb0 | (index & 7)]) + payload


def counter(index: int, value: int) -> bytes:
    """Counter packet (0 total, 1 issue, 2 translation latency; 8+ ext.)."""
    payload = struct.pack('<H', value)
    if index < 8:
        return bytes([0x98 | index]) + payload
    return bytes([0x20 | index >> 3, 0x98 | (index & 7)]) + payload


def events(mask: int, size: int = 2) -> bytes:
    return bytes([0x42 | _sz(size)]) + mask.to_bytes(size, 'little')


def data_source(value: int, size: int = 2) -> bytes:
    return bytes([0x43 | _sz(size)]) + value.to_bytes(size, 'little')


def context(value: int, index: int = 0) -> bytes:
    return bytes([0x64 | index]) + struct.pack('<I', value)


def op_type(op_class: int, value: int) -> bytes:
    return bytes([0x48 | op_class, value])


def timestamp(value: int) -> bytes:
    return b'\x71' + struct.pack('<Q', value)


END = b'\x01'

LOAD = (address(0, 0xffff800010001000, el=1) + events(0x16) +
        counter(1, 4) + counter(0, 9) + op_type(1, 0x00) +
        address(2, 0xaaaae65dda40) + counter(2, 1) +
        address(3, 0x8032c955a40) + data_source(0x0) + context(0x1234) +
        timestamp(13196304120239))
STORE = (address(0, 0xaaaae4a9b600) + op_type(1, 0x01) +
         address(2, 0xaaaae65dda48) + address(3, 0x8032c955a48) +
         events(0x2, 4) + END)
BRANCH = (address(0, 0xaaaae4a9b620) + op_type(2, 0x01) +
          address(1, 0xaaaae4a9b700) + events(0x82) + counter(0, 3) + END)
EXTENDED = (address(0, 0xaaaae4a9b640) + counter(8, 12) +
            address(9, 0xaaaae4a9b650) + events(0x2, 8) +
            data_source(0x5, 4) + END)


class TraceCheckHost(HostDriver):
    """trace_check_host.c built: runs a checker on a byte stream."""

    def __init__(self) -> None:
        super().__init__(DRIVER, SOURCE)

    def run(self, checker: str, data: bytes) -> Dict[str, str]:
        path = os.path.join(self.dir, 'trace.bin')
        with open(path, 'wb') as f:
            f.write(data)
        proc = subprocess.run([self.binary, checker, path],
                              capture_output=True, text=True)
        if proc.returncode not in (0, 1):
            raise RuntimeError(proc.stderr)
        fields = dict(kv.split('=', 1) for kv in
                      proc.stdout.strip().split(' ', 6))
        fields['exit'] = str(proc.returncode)
        return fields

class CheckerTestCase(DriverTestCase):
    host: TraceCheckHost

    @classmethod
    def make_host(cls) -> TraceCheckHost:
        return TraceCheckHost()

    def check(self, checker: str, data: bytes, **expected: object) -> None:
        assert self.host
        got = self.host.run(checker, data)
        want = {k: str(v) for k, v in expected.items()}
        self.assertEqual(want, {k: got[k] for k in want}, got)
        # The return value and the error string must agree.
        self.assertEqual(got['ret'] == '0', got['error'] == 'none', got)
        self.assertEqual(got['ret'] == '0', got['exit'] == '0', got)

    def valid(self, checker: str, data: bytes, **expected: object) -> None:
        self.check(checker, data, ret=0, error='none', bad_offset=0,
                   **expected)

    def invalid(self, checker: str, data: bytes, offset: int, error: str,
                **expected: object) -> None:
        self.check(checker, data, ret=-1, bad_offset=offset, error=error,
                   **expected)


# Packets in each hand-built record, counted from the builders above.
PACKETS = {LOAD: 11, STORE: 6, BRANCH: 6, EXTENDED: 6}


def packets(*records: bytes) -> int:
    return sum(PACKETS[rec] for rec in records)


class SpeRecordedTest(CheckerTestCase):
    """Trace recorded on SPE hardware, as published (see the .hex files)."""

    def test_branch_records_pad_before_their_timestamp(self) -> None:
        self.valid('spe', read_hex('spe-perf-branch.hex'),
                   records=2, packets=14, pad_bytes=12)

    def test_stream_cut_inside_a_record_needs_partial(self) -> None:
        data = read_hex('spe-kvm-guest.hex')
        self.invalid('spe', data, 0x4c, 'SPE record not terminated',
                     records=2, packets=18, pad_bytes=6)

    def test_stream_cut_inside_a_record_is_partial(self) -> None:
        self.valid('spe-partial', read_hex('spe-kvm-guest.hex'),
                   records=2, packets=18, pad_bytes=6)

    def test_whole_records_of_the_kvm_guest_stream(self) -> None:
        self.valid('spe', read_hex('spe-kvm-guest.hex')[:0x4c],
                   records=2, packets=14, pad_bytes=6)

    def test_flipped_header_in_recorded_stream(self) -> None:
        data = bytearray(read_hex('spe-perf-branch.hex'))
        data[0x11a - 0x108] = 0x80      # B COND -> no packet class
        self.invalid('spe', bytes(data), 0x12, 'unknown SPE packet header',
                     records=0, packets=4)


class SpeCraftedTest(CheckerTestCase):
    """Streams built here from the SPE packet formats."""

    def test_empty_stream(self) -> None:
        self.valid('spe', b'', records=0, packets=0, pad_bytes=0)

    def test_padding_only(self) -> None:
        self.valid('spe', bytes(64), records=0, packets=0, pad_bytes=64)

    def test_load_store_branch_records(self) -> None:
        self.valid('spe', LOAD + STORE + BRANCH, records=3,
                   packets=packets(LOAD, STORE, BRANCH), pad_bytes=0)

    def test_padding_between_records(self) -> None:
        data = bytes(3) + LOAD + bytes(16) + STORE + bytes(5) + BRANCH
        self.valid('spe', data, records=3, pad_bytes=24,
                   packets=packets(LOAD, STORE, BRANCH))

    def test_extended_header_packets(self) -> None:
        self.valid('spe', EXTENDED + LOAD, records=2,
                   packets=packets(EXTENDED, LOAD))

    def test_every_payload_size(self) -> None:
        rec = (events(0x2, 1) + events(0x2, 2) + events(0x2, 4) +
               events(0x2, 8) + data_source(1, 1) + data_source(1, 8) +
               context(7, 3) + op_type(0, 0x08) + END)
        self.valid('spe', rec, records=1, packets=9)

    def test_timestamp_or_end_closes_a_record(self) -> None:
        data = address(0, 0x1000) + END + address(0, 0x2000) + timestamp(1)
        self.valid('spe', data, records=2, packets=4)

    def test_alignment_packet_skips_to_its_boundary(self) -> None:
        # At offset 4, 0x22 0x00 aligns to 8: the two 0xff bytes after it
        # are skipped, not parsed (0xff is no packet header).
        data = bytes(4) + b'\x22\x00\xff\xff' + BRANCH
        self.valid('spe', data, records=1, pad_bytes=8,
                   packets=packets(BRANCH))

    def test_alignment_packet_past_the_end(self) -> None:
        self.invalid('spe', BRANCH + b'\x23\x00\x00', len(BRANCH),
                     'truncated SPE packet', records=1)

    def test_unknown_header_after_records(self) -> None:
        data = LOAD + bytes(4) + b'\x02' + STORE
        self.invalid('spe', data, len(LOAD) + 4, 'unknown SPE packet header',
                     records=1, pad_bytes=4)

    def test_unknown_header_inside_record(self) -> None:
        data = STORE + address(0, 0x1000) + b'\x70' + END
        self.invalid('spe', data, len(STORE) + 9, 'unknown SPE packet header',
                     records=1)

    def test_extended_header_of_no_packet(self) -> None:
        # Only address and counter packets have an extended form.
        data = BRANCH + b'\x20\x42\x00\x00' + END
        self.invalid('spe', data, len(BRANCH), 'unknown SPE packet header')

    def test_partial_does_not_hide_a_bad_header(self) -> None:
        data = BRANCH + b'\x80' + address(0, 0x1000)
        self.invalid('spe-partial', data, len(BRANCH),
                     'unknown SPE packet header')

    def test_garbage(self) -> None:
        self.invalid('spe', bytes.fromhex('deadbeefcafef00d'), 0,
                     'unknown SPE packet header', records=0, packets=0)

    def test_truncated_payload(self) -> None:
        data = LOAD + address(2, 0xaaaae65dda40)[:4]
        self.invalid('spe', data, len(LOAD), 'truncated SPE packet',
                     records=1)

    def test_truncated_extended_header(self) -> None:
        self.invalid('spe', STORE + b'\x20', len(STORE),
                     'truncated SPE packet', records=1)

    def test_truncated_payload_is_partial(self) -> None:
        data = LOAD + address(2, 0xaaaae65dda40)[:4]
        self.valid('spe-partial', data, records=1, packets=packets(LOAD))

    def test_record_without_end(self) -> None:
        data = BRANCH + bytes(2) + STORE[:-1]
        self.invalid('spe', data, len(BRANCH) + 2,
                     'SPE record not terminated', records=1)

    def test_record_without_end_is_partial(self) -> None:
        data = BRANCH + bytes(2) + STORE[:-1]
        self.valid('spe-partial', data, records=1, pad_bytes=2)


class EteAsyncTest(CheckerTestCase):
    """Raw ETE streams, as TRBE writes them."""

    ASYNC = bytes(11) + b'\x80'

    def test_recorded_stream_has_one_async(self) -> None:
        self.valid('ete', read_hex('ete-opencsd-juno.hex'), async_=1)

    def test_two_sessions(self) -> None:
        data = read_hex('ete-opencsd-juno.hex')
        self.valid('ete', data + data, async_=2)

    def test_ignore_padding_before_async(self) -> None:
        # TRBE pads with ETE ignore packets (0x70); they are not counted.
        data = b'\x70' * 256 + read_hex('ete-opencsd-juno.hex')
        self.valid('ete', data, async_=1, pad_bytes=0)

    def test_recorded_stream_without_async(self) -> None:
        data = read_hex('ete-opencsd-juno.hex')[len(self.ASYNC):]
        self.invalid('ete', data, 0, 'no ETE A-Sync packet', async_=0)

    def test_ten_zeros_are_no_async(self) -> None:
        self.invalid('ete', bytes(10) + b'\x80' + b'\x04', 0,
                     'no ETE A-Sync packet', async_=0)

    def test_async_after_zero_payload_bytes(self) -> None:
        # A 64-bit address packet for address 0 ends in eight 0x00 bytes.
        data = b'\x9d' + bytes(8) + self.ASYNC + b'\x04'
        self.valid('ete', data, async_=1)

    def test_empty_stream(self) -> None:
        self.valid('ete', b'', async_=0)

    def check(self, checker: str, data: bytes, **expected: object) -> None:
        if 'async_' in expected:
            expected['async'] = expected.pop('async_')
        super().check(checker, data, **expected)


class HeaderBuildTest(HeaderBuilds, unittest.TestCase):
    """The header and trace_check.c must build alone, as C99, for the host
    and arm64."""

    HEADER = HEADER
    SOURCE = SOURCE
    FLAGS = ('-std=c99', '-pedantic')

if __name__ == '__main__':
    unittest.main()
