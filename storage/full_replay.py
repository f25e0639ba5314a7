"""Replay of every record: the log read in order, on the fast path where it can be.

:func:`replay_all` reads each segment in chunks of ``READ_CHUNK`` bytes (one in memory at a
time) and decodes them with ``fast_decode``; bytes ``Log.open`` already checked (same size,
same file, the directory lock held) skip the CRC. Where the fast path stops short of a
chunk's end on a whole entry, the general path (``scan_entries`` + ``decode_record``) takes
the rest of the segment: precise errors, warnings for unknown record types.
"""

from __future__ import annotations

import bisect
from collections.abc import Generator, Sequence

from storage.records import Record, RecordKey

from .directory import Segment
from .errors import CorruptLogError
from .fast_decode import fast_decode
from .fs import FileSystem
from .live_index import READ_CHUNK
from .record_codec import RecordDecodeError, decode_record
from .record_types import EVENT_KEY_PREFIX
from .segment import ENTRY_OVERHEAD, HEADER_SIZE, entry_end, scan_entries

__all__ = ["replay_all"]


def replay_all(
    fs: FileSystem, segments: Sequence[Segment], live: dict[bytes, int], start: int = HEADER_SIZE
) -> Generator[Record, None, int]:
    """Every record of ``segments`` in log order, from file offset ``start`` of the first
    (unknown record types skipped with a warning). ``live`` gets each live key's newest
    entry size; returns (as the generator's value) the bytes of RebalanceEvent entries, for
    the compaction statistics."""
    keys: dict[bytes, RecordKey] = {}
    event_bytes = 0
    for i, seg in enumerate(segments):
        # A chunk never straddles the verified boundary.
        verified = min(seg.verified, seg.size)
        offset = start if i == 0 else HEADER_SIZE
        want = READ_CHUNK
        while offset < seg.size:
            limit = verified if offset < verified else seg.size
            request = min(want, limit - offset)
            data = fs.read_range(seg.path, offset, request)
            pos = 0
            while pos < len(data):
                records, after, events = fast_decode(
                    data, pos, len(data), live, keys, verify=offset >= verified
                )
                event_bytes += events
                yield from records
                if after == pos:
                    break
                pos = after
            offset += pos
            need = entry_end(data, pos) - pos
            if pos < len(data) and (len(data) < request or need <= len(data) - pos
                                    or offset + need > limit):
                break  # not an entry cut by the chunk's end
            want = max(READ_CHUNK, need)
            del data
        if offset < seg.size:
            data = fs.read_bytes(seg.path)
            event_bytes += yield from _replay_slow(seg, data, offset, live)
            del data
    return event_bytes


def _replay_slow(
    seg: Segment, data: bytes, start: int, live: dict[bytes, int]
) -> Generator[Record, None, int]:
    """The general path for the rest of a segment: precise errors, warnings for unknown
    record types."""
    scan = scan_entries(data, start, seg.size)
    if scan.stop is not None:
        at = start + scan.valid_bytes
        raise CorruptLogError(
            seg.path, at, f"segment changed on disk after it was opened: {scan.stop.value}"
        )
    event_bytes = 0
    for pos, (key, value) in zip(scan.positions, scan.entries, strict=True):
        try:
            record = decode_record(key, value)
        except RecordDecodeError as exc:
            every = scan_entries(data, HEADER_SIZE, seg.size, collect=False).positions
            index = seg.base + bisect.bisect_left(every, pos)
            raise CorruptLogError(seg.path, pos, f"entry {index} does not decode: {exc}") from None
        size = ENTRY_OVERHEAD + len(key) + (0 if value is None else len(value))
        if key[:2] == EVENT_KEY_PREFIX and value is not None:
            event_bytes += size
        elif value is None:
            live.pop(key, None)
        else:
            live[key] = size
        if record is not None:
            yield record
    return event_bytes

