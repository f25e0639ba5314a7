"""Segment files and log-entry framing (pure: bytes in, bytes out; see FORMAT.md).

A segment file is a 24-byte header followed by entries::

    header: magic "KCOORDLG" | u16 format version | u16 flags (0) | u64 base index
            | u32 CRC-32C of the 20 bytes before it
    entry:  u32 length | u32 CRC-32C | u16 entry format version | payload
    payload (format 1): i32 key length | key | i32 value length (-1 = tombstone) | value

All integers are big-endian. ``length`` counts the bytes after the CRC field (format
version + payload) and the CRC covers exactly those bytes.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum

from wire.checksum import crc32c

__all__ = [
    "ENTRY_FORMAT_VERSION",
    "ENTRY_OVERHEAD",
    "HEADER_SIZE",
    "MAGIC",
    "MAX_ENTRY_LENGTH",
    "SEGMENT_FORMAT_VERSION",
    "Entry",
    "ScanResult",
    "SegmentHeaderError",
    "StopReason",
    "decode_entries",
    "decode_header",
    "encode_entry",
    "encode_header",
    "entry_end",
    "find_next_valid_entry",
    "frames",
    "scan_entries",
]

MAGIC = b"KCOORDLG"
SEGMENT_FORMAT_VERSION = 1
ENTRY_FORMAT_VERSION = 1
#: Longest allowed ``length`` field: larger values are treated as corruption.
MAX_ENTRY_LENGTH = 32 * 1024 * 1024

_HEADER = struct.Struct(">8sHHQ")
HEADER_SIZE = _HEADER.size + 4  # + CRC
_ENTRY_HEAD = struct.Struct(">IIH")  # length, crc, format version
_ENTRY_HEAD14 = struct.Struct(">IIHi")  # ... and the key length
_I32 = struct.Struct(">i")
_U32 = struct.Struct(">I")
_MIN_LENGTH = 2 + 4 + 4  # format version + key length + value length
_MIN_ENTRY = 8 + _MIN_LENGTH
#: Bytes an entry adds around its key and value (tombstones: the value is absent).
ENTRY_OVERHEAD = 8 + _MIN_LENGTH


class SegmentHeaderError(ValueError):
    """A segment file header that is short, has the wrong magic or an unknown version."""


#: One decoded log entry: (raw key bytes, raw value bytes or None for a tombstone). A plain
#: tuple: building a NamedTuple per entry would cost more than decoding it.
Entry = tuple[bytes, bytes | None]


class StopReason(Enum):
    """Why :func:`scan_entries` stopped before the end of its input."""

    TRUNCATED = "truncated entry (the data ends inside it)"
    BAD_LENGTH = "impossible entry length"
    CHECKSUM = "CRC-32C mismatch"
    MALFORMED = "payload does not match its framing"
    UNSUPPORTED_FORMAT = "unknown entry format version"


@dataclass(frozen=True, slots=True)
class ScanResult:
    """Entries decoded from the start of the input, where each one starts, how many bytes
    they cover, and why decoding stopped (None: the input ended cleanly)."""

    entries: list[Entry]
    positions: list[int]
    valid_bytes: int
    stop: StopReason | None
    stop_detail: str = ""


def encode_header(base_index: int) -> bytes:
    """The 24-byte header of a segment whose first entry has index ``base_index``."""
    head = _HEADER.pack(MAGIC, SEGMENT_FORMAT_VERSION, 0, base_index)
    return head + _U32.pack(crc32c(head))


def decode_header(data: bytes) -> int:
    """Check a segment header and return its base index."""
    if len(data) < HEADER_SIZE:
        raise SegmentHeaderError(f"header is {len(data)} bytes, expected {HEADER_SIZE}")
    magic, version, _flags, base = _HEADER.unpack_from(data)
    if magic != MAGIC:
        raise SegmentHeaderError(f"bad magic {magic!r}, expected {MAGIC!r}")
    (crc,) = _U32.unpack_from(data, _HEADER.size)
    if crc != crc32c(data[: _HEADER.size]):
        raise SegmentHeaderError("header CRC-32C mismatch")
    if version != SEGMENT_FORMAT_VERSION:
        raise SegmentHeaderError(
            f"segment format version {version}; this kcoord reads {SEGMENT_FORMAT_VERSION}"
        )
    return int(base)


def encode_entry(key: bytes, value: bytes | None) -> bytes:
    """Frame one key/value pair as a format-1 entry."""
    if value is None:
        body = b"".join((b"\x00\x01", _I32.pack(len(key)), key, b"\xff\xff\xff\xff"))
    else:
        body = b"".join((b"\x00\x01", _I32.pack(len(key)), key, _I32.pack(len(value)), value))
    return _U32.pack(len(body)) + _U32.pack(crc32c(body)) + body


def frames(
    data: bytes, start: int = 0, end: int | None = None, *, verify: bool = True
) -> Iterator[tuple[int, int, int, int]]:
    """The one walk over entry framing: for each whole, well-framed entry of
    ``data[start:end]`` in order, ``(pos, kend, vlen, stop)``: where it starts, where its
    key ends (the key is ``data[pos + 14:kend]``), its value length (-1: a tombstone; the
    value is ``data[kend + 4:stop]``) and where it ends. Stops, without saying why, at the
    end or at the first entry that is torn, too long or short, fails its CRC-32C (unless
    ``verify=False``, for bytes checked since they were read), has another format version,
    or whose key and value do not fill it; :func:`scan_entries` tells why.

    Replay's fast path (``fast_decode``), the live index and :func:`scan_entries` build on
    it; per entry it costs what the same checks inline do (a generator resumes about as
    fast as a loop iterates)."""
    head = _ENTRY_HEAD14.unpack_from
    i32 = _I32.unpack_from
    checksum = crc32c
    n = len(data) if end is None else max(start, min(end, len(data)))
    last = n - _MIN_ENTRY
    min_length, max_length, fmt_version = _MIN_LENGTH, MAX_ENTRY_LENGTH, ENTRY_FORMAT_VERSION
    pos = start
    while pos <= last:
        length, crc, fmt, klen = head(data, pos)
        stop = pos + 8 + length
        if length < min_length or length > max_length or stop > n:
            return
        if verify and checksum(data[pos + 8 : stop]) != crc:
            return
        kend = pos + 14 + klen
        if fmt != fmt_version or klen < 0 or kend + 4 > stop:
            return
        (vlen,) = i32(data, kend)
        if vlen == -1:
            if kend + 4 != stop:
                return
        elif vlen < 0 or kend + 4 + vlen != stop:
            return
        yield pos, kend, vlen, stop
        pos = stop


def entry_end(data: bytes, pos: int) -> int:
    """Where the entry whose length field is at ``data[pos:]`` ends, by that field alone
    (``pos + 8`` when the field is not all there); past ``len(data)`` when the entry is."""
    if len(data) - pos < 4:
        return pos + 8
    return pos + 8 + int(_U32.unpack_from(data, pos)[0])


def scan_entries(
    data: bytes,
    start: int = 0,
    end: int | None = None,
    *,
    collect: bool = True,
    limit: int | None = None,
) -> ScanResult:
    """Decode entries from ``data[start:end]`` until its end, the first bad entry, or
    ``limit`` entries (then ``stop`` is None and ``valid_bytes`` says where to go on).

    The general reader: :func:`frames` walks the entries, and where it stops short of the
    end this says why. Replay (after its fast path), recovery, compaction, ``kcoord log
    dump`` and the pipeline scan through it. Never raises for any input; ``valid_bytes``
    counts from ``start``. With ``collect=False`` only positions are gathered (a cheaper
    check of a segment).
    """
    entries: list[Entry] = []
    positions: list[int] = []
    append_entry = entries.append
    append_pos = positions.append
    n = len(data) if end is None else max(start, min(end, len(data)))
    pos = start
    remaining = -1 if limit is None else limit
    if remaining != 0:
        for at, kend, vlen, stop in frames(data, start, n):
            if collect:
                append_entry((data[at + 14 : kend], None if vlen == -1 else data[kend + 4 : stop]))
            append_pos(at)
            pos = stop
            remaining -= 1
            if remaining == 0:
                break
    reason: StopReason | None = None
    detail = ""
    if pos < n and remaining != 0:
        reason, detail = _why_not_an_entry(data, pos, n)
    return ScanResult(entries, positions, pos - start, reason, detail)


def _why_not_an_entry(data: bytes, pos: int, n: int) -> tuple[StopReason, str]:
    """Why :func:`frames` stopped at ``pos`` (``data[pos:n]`` is not a whole entry)."""
    if n - pos < _MIN_ENTRY:
        return _short_tail(data, pos, n)
    length, crc, fmt, klen = _ENTRY_HEAD14.unpack_from(data, pos)
    if length < _MIN_LENGTH or length > MAX_ENTRY_LENGTH:
        return StopReason.BAD_LENGTH, f"length {length}"
    body = pos + 8
    stop = body + length
    if stop > n:
        return StopReason.TRUNCATED, f"length {length}, {n - body} bytes left"
    if crc32c(data[body:stop]) != crc:
        return StopReason.CHECKSUM, f"stored {crc:#010x}"
    if fmt != ENTRY_FORMAT_VERSION:
        return StopReason.UNSUPPORTED_FORMAT, f"format version {fmt}"
    kend = pos + 14 + klen
    if klen < 0 or kend + 4 > stop:
        return StopReason.MALFORMED, f"key length {klen}"
    (vlen,) = _I32.unpack_from(data, kend)
    if vlen == -1:
        return StopReason.MALFORMED, "bytes after a tombstone"
    return StopReason.MALFORMED, f"value length {vlen}"


def _short_tail(data: bytes, pos: int, n: int) -> tuple[StopReason, str]:
    """Classify fewer bytes than the smallest entry."""
    if n - pos >= 4:
        (length,) = _U32.unpack_from(data, pos)
        if length < _MIN_LENGTH or length > MAX_ENTRY_LENGTH:
            return StopReason.BAD_LENGTH, f"length {length}"
    return StopReason.TRUNCATED, f"{n - pos} bytes left, an entry takes at least {_MIN_ENTRY}"


def decode_entries(data: bytes) -> tuple[list[Entry], int]:
    """(entries, valid_bytes) for a raw entry stream; stops at the first torn or corrupt
    entry, ``valid_bytes <= len(data)``, never raises."""
    result = scan_entries(data)
    return result.entries, result.valid_bytes


def find_next_valid_entry(data: bytes, start: int) -> int | None:
    """The first position after ``start`` where a whole, checksummed entry begins, or None.

    Used to tell a torn tail (nothing valid follows) from corruption in the middle."""
    n = len(data)
    head = _ENTRY_HEAD.unpack_from
    for pos in range(start + 1, n - 9):
        length, crc, fmt = head(data, pos)
        if fmt != ENTRY_FORMAT_VERSION or length < _MIN_LENGTH or length > MAX_ENTRY_LENGTH:
            continue
        end = pos + 8 + length
        if end <= n and crc32c(data[pos + 8 : end]) == crc:
            return pos
    return None
