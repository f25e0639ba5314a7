"""segment: entry framing, the segment header, and a decoder that never raises."""

from __future__ import annotations

import struct

import pytest
from crc32c import crc32c
from hypothesis import given, settings
from hypothesis import strategies as st
from storage_strategies import records

from storage.record_codec import encode_record
from storage.records import OffsetCommitKey, OffsetCommitValue, Record
from storage.segment import (
    HEADER_SIZE,
    MAGIC,
    SegmentHeaderError,
    StopReason,
    decode_entries,
    decode_header,
    encode_entry,
    encode_header,
    entry_end,
    find_next_valid_entry,
    frames,
    scan_entries,
)

# The FORMAT.md worked example: commit of offset 5 for g1/t/0 at 1700000000000.
GOLDEN_ENTRY = bytes.fromhex(
    "0000002f"  # length 47: the bytes after the CRC field
    "1225b792"  # CRC-32C of those 47 bytes
    "0001"  # entry format 1
    "0000000d"  # key length 13
    "0001 0002 6731 0001 74 00000000"  # OffsetCommitKey v1 g1/t/0
    "00000018"  # value length 24
    "0003 0000000000000005 ffffffff 0000 0000018bcfe56800"  # OffsetCommitValue v3
)
GOLDEN_TOMBSTONE = bytes.fromhex(
    "00000017"  # length 23
    "6609310a"  # CRC-32C
    "0001"  # entry format 1
    "0000000d"  # key length 13
    "0001 0002 6731 0001 74 00000000"  # the same key
    "ffffffff"  # value length -1: tombstone, no value bytes
)


def test_golden_entry_matches_format_md() -> None:
    record = Record(OffsetCommitKey("g1", "t", 0), OffsetCommitValue(5, -1, "", 1_700_000_000_000))
    key, value = encode_record(record)
    assert encode_entry(key, value) == GOLDEN_ENTRY
    assert crc32c(GOLDEN_ENTRY[8:]) == 0x1225B792
    assert encode_entry(key, None) == GOLDEN_TOMBSTONE
    assert decode_entries(GOLDEN_ENTRY + GOLDEN_TOMBSTONE) == (
        [(key, value), (key, None)],
        len(GOLDEN_ENTRY) + len(GOLDEN_TOMBSTONE),
    )


def test_header_round_trip_and_errors() -> None:
    header = encode_header(42)
    assert len(header) == HEADER_SIZE == 24
    assert header[:8] == MAGIC == b"KCOORDLG"
    assert struct.unpack(">HHQ", header[8:20]) == (1, 0, 42)
    assert decode_header(header + b"rest") == 42
    with pytest.raises(SegmentHeaderError, match="magic"):
        decode_header(b"X" + header[1:])
    with pytest.raises(SegmentHeaderError, match="CRC"):
        decode_header(header[:19] + b"\x01" + header[20:])
    with pytest.raises(SegmentHeaderError, match="expected 24"):
        decode_header(header[:10])
    future = MAGIC + struct.pack(">HHQ", 2, 0, 0)
    with pytest.raises(SegmentHeaderError, match="version 2"):
        decode_header(future + struct.pack(">I", crc32c(future)))


def _log(recs: list[Record]) -> tuple[bytes, list[tuple[bytes, bytes | None]]]:
    pairs = [encode_record(r) for r in recs]
    return b"".join(encode_entry(k, v) for k, v in pairs), pairs


@given(st.lists(records, max_size=8))
def test_encode_decode_round_trip(recs: list[Record]) -> None:
    data, pairs = _log(recs)
    entries, valid = decode_entries(data)
    assert entries == pairs and valid == len(data)
    assert scan_entries(data).stop is None


def _check_prefix_property(data: bytes) -> list[tuple[bytes, bytes | None]]:
    entries, valid = decode_entries(data)
    assert 0 <= valid <= len(data)
    assert decode_entries(data[:valid]) == (entries, valid)
    full = scan_entries(data)
    lean = scan_entries(data, collect=False)
    assert (lean.positions, lean.valid_bytes, lean.stop) == (
        full.positions,
        full.valid_bytes,
        full.stop,
    )
    assert (full.stop is None) == (valid == len(data))
    return entries


@settings(max_examples=500)
@given(st.binary(max_size=200))
def test_fuzz_any_bytes(data: bytes) -> None:
    _check_prefix_property(data)


@given(st.lists(records, min_size=1, max_size=6), st.data())
def test_fuzz_mutated_valid_logs(recs: list[Record], draw: st.DataObject) -> None:
    data, pairs = _log(recs)
    mutated = bytearray(data)
    kind = draw.draw(st.sampled_from(["flip", "truncate", "insert", "overwrite", "zero-tail"]))
    at = draw.draw(st.integers(0, len(data) - 1))
    if kind == "flip":
        mutated[at] ^= 1 << draw.draw(st.integers(0, 7))
    elif kind == "truncate":
        del mutated[at:]
    elif kind == "insert":
        mutated[at:at] = draw.draw(st.binary(min_size=1, max_size=8))
    elif kind == "overwrite":
        chunk = draw.draw(st.binary(min_size=1, max_size=8))
        mutated[at : at + len(chunk)] = chunk
    else:
        mutated[at:] = bytes(len(data) - at)
    entries = _check_prefix_property(bytes(mutated))
    # Whatever survives is a prefix of what was written: damage never invents records.
    if bytes(mutated) != data:
        assert entries == pairs[: len(entries)]


@given(st.lists(records, max_size=6), st.binary(max_size=40), st.booleans())
def test_frames_is_the_walk_scan_entries_reports_on(
    recs: list[Record], tail: bytes, verify: bool
) -> None:
    """``frames`` yields each entry ``scan_entries`` reads (key and value where it says)
    and stops where its valid bytes end; unverified, it skips only the CRC check."""
    data = _log(recs)[0] + tail
    walked = list(frames(data, verify=verify))
    scan = scan_entries(data)
    assert [pos for pos, *_ in walked][: len(scan.positions)] == scan.positions
    if verify or scan.stop is not StopReason.CHECKSUM:
        assert len(walked) == len(scan.positions)
    for (pos, kend, vlen, stop), (key, value) in zip(walked, scan.entries, strict=False):
        assert data[pos + 14 : kend] == key
        assert (None if vlen == -1 else data[kend + 4 : stop]) == value
        assert entry_end(data, pos) == stop
    end = walked[-1][3] if walked else 0
    assert verify is False or end == scan.valid_bytes


def test_entry_end_reads_the_length_field_alone() -> None:
    assert entry_end(GOLDEN_ENTRY, 0) == len(GOLDEN_ENTRY)
    assert entry_end(b"HDR" + GOLDEN_ENTRY[:10], 3) == 3 + len(GOLDEN_ENTRY)  # past the data
    assert entry_end(b"\x00\x00\x00", 0) == 8  # no whole length field


def test_stop_reasons() -> None:
    good = GOLDEN_ENTRY
    assert scan_entries(good[:-1]).stop is StopReason.TRUNCATED
    assert scan_entries(good[:5]).stop is StopReason.TRUNCATED
    assert scan_entries(b"\x00\x00\x00\x01" + good[4:]).stop is StopReason.BAD_LENGTH
    assert scan_entries(b"\xff\xff\xff\xff" + good[4:]).stop is StopReason.BAD_LENGTH
    flipped = good[:-1] + bytes([good[-1] ^ 1])
    assert scan_entries(flipped).stop is StopReason.CHECKSUM
    body = b"\x00\x02" + good[10:]
    other_format = struct.pack(">II", len(body), crc32c(body)) + body
    result = scan_entries(good + other_format)
    assert result.stop is StopReason.UNSUPPORTED_FORMAT and len(result.entries) == 1
    body = b"\x00\x01" + struct.pack(">i", 100) + b"k"
    bad_key_len = struct.pack(">II", len(body) + 4, crc32c(body + b"\0" * 4)) + body + b"\0" * 4
    assert scan_entries(bad_key_len).stop is StopReason.MALFORMED


def test_scan_window_and_positions() -> None:
    data = b"HDR" + GOLDEN_ENTRY + GOLDEN_TOMBSTONE
    result = scan_entries(data, 3)
    assert result.positions == [3, 3 + len(GOLDEN_ENTRY)]
    assert result.valid_bytes == len(data) - 3
    only_first = scan_entries(data, 3, 3 + len(GOLDEN_ENTRY))
    assert len(only_first.entries) == 1 and only_first.stop is None


def test_find_next_valid_entry() -> None:
    garbage = b"\x00" * 7
    data = GOLDEN_ENTRY + garbage + GOLDEN_TOMBSTONE
    assert find_next_valid_entry(data, len(GOLDEN_ENTRY)) == len(GOLDEN_ENTRY) + 7
    assert find_next_valid_entry(GOLDEN_ENTRY + garbage, len(GOLDEN_ENTRY)) is None
