"""The live index: one pass that both checks a segment's entries (what recovery needs) and
remembers where each key's newest entry is (what a last-value-per-key replay needs).

Segments are read ``READ_CHUNK`` bytes at a time (an entry that does not fit, at most
32 MiB, is read whole), so checking a log of 64 MiB segments never holds one in memory.
The per-entry work is the framing checks of ``segment.frames`` (a header unpack and a
CRC-32C among them) and one dict store; no value is decoded and no object built.

What the index keeps, by key version (the first two key bytes, see ``record_codec``):

- every record type whose state is last value per key (offset commits, group metadata,
  consumer group records, staged transactional offsets, and unknown types below 100): the
  position of the key's newest entry, tombstones included (a tombstone still has to remove
  what an equal-decoding key of another key version wrote before it);
- TransactionState (101): every entry, in order (replay reserves every producer id it saw);
- RebalanceEvent history (100): nothing but its bytes (replay ignores history; compaction's
  statistics count it).

A position is ``segment base * SEQ_STRIDE + file offset``: sorting positions gives log order.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field

from .fs import FileSystem
from .record_types import (
    REBALANCE_EVENT_KEY_VERSION,
    TRANSACTION_STATE_KEY_VERSION,
    TXN_OFFSET_COMMIT_KEY_VERSION,
)
from .segment import MAX_ENTRY_LENGTH, entry_end, frames

__all__ = ["READ_CHUNK", "SEQ_STRIDE", "LiveIndex", "index_range", "read_entry_window"]

#: Bytes read per call while scanning a segment.
READ_CHUNK = 1024 * 1024
#: Positions of entries of different segments never collide (a segment is < 1 TiB).
SEQ_STRIDE = 1 << 40

_FIRST_SPECIAL_VERSION = min(REBALANCE_EVENT_KEY_VERSION, TRANSACTION_STATE_KEY_VERSION)


@dataclass(slots=True)
class LiveIndex:
    """Where the entries a last-value-per-key replay needs are, for a prefix of the log."""

    #: key bytes -> position of the key's newest entry
    newest: dict[bytes, int] = field(default_factory=dict)
    #: positions of entries kept whatever follows them (TransactionState)
    kept: list[int] = field(default_factory=list)
    #: bytes of RebalanceEvent entries (tombstones excluded), as replay counts them
    event_bytes: int = 0
    #: segment base -> file offset up to which its entries are indexed
    covered: dict[int, int] = field(default_factory=dict)
    #: False once a segment was checked without it (a repair): it then describes nothing
    complete: bool = True

    def positions(self) -> list[int]:
        """The positions of every entry replay must decode, in log order."""
        return sorted([*self.newest.values(), *self.kept])


def _scan(
    data: bytes, end: int, newest: dict[bytes, int], kept: list[int], bias: int
) -> tuple[int, int, int]:
    """Check and index the entries of ``data[:end]`` (``segment.frames``: until its end or
    the first entry that is not whole and valid): (where it stopped, entries indexed,
    RebalanceEvent bytes)."""
    special = _FIRST_SPECIAL_VERSION  # < 256: the common key versions have a 0 high byte
    event_version = REBALANCE_EVENT_KEY_VERSION
    last_wins_special = TXN_OFFSET_COMMIT_KEY_VERSION
    keep = kept.append
    pos = count = event_bytes = 0
    for at, kend, vlen, stop in frames(data, 0, end):
        # the key version: the first two key bytes, big-endian and signed
        k = at + 14
        high = data[k]
        if kend - k < 2 or (high == 0 and data[k + 1] < special) or high >= 0x80:
            newest[data[k:kend]] = bias + at  # a last-value-per-key type (or a short key)
        else:
            kver = high << 8 | data[k + 1]
            if kver == event_version:
                if vlen != -1:  # a RebalanceEvent tombstone has no bytes
                    event_bytes += stop - at
            elif kver == last_wins_special:
                newest[data[k:kend]] = bias + at
            else:
                keep(bias + at)
        count += 1
        pos = stop
    return pos, count, event_bytes


def index_range(
    fs: FileSystem,
    path: str,
    base: int,
    start: int,
    end: int,
    index: LiveIndex | None,
    checksum: int = 0,
) -> tuple[int, int, int]:
    """Check (and, with an ``index``, index) the entries of bytes [start, end) of the
    segment file ``path`` whose base is ``base``, reading it in chunks: (the file offset
    where the valid entries end, how many there are, ``zlib.crc32`` of the bytes from
    ``start`` to that offset continuing ``checksum``, for a segment summary). Stops at the
    first entry that is torn, corrupt or malformed; the caller classifies it. Without an
    index the positions are gathered chunk by chunk and dropped (a plain check, in bounded
    memory)."""
    offset = start
    count = 0
    want = READ_CHUNK
    bias = base * SEQ_STRIDE
    while offset < end:
        request = min(want, end - offset)
        data = fs.read_range(path, offset, request)
        newest = index.newest if index is not None else {}
        kept = index.kept if index is not None else []
        pos, entries, event_bytes = _scan(data, len(data), newest, kept, bias + offset)
        count += entries
        checksum = zlib.crc32(memoryview(data)[:pos], checksum)
        if index is not None:
            index.event_bytes += event_bytes
        offset += pos
        want = READ_CHUNK
        if pos == 0:
            # The first entry does not fit in what was read: read it whole, if it can be
            # (not if the file ended early, or what was read is all there is).
            if len(data) < 4 or len(data) < request or request == end - offset:
                break
            need = entry_end(data, 0)
            if need > 8 + MAX_ENTRY_LENGTH or need <= len(data):
                break
            want = need
        del data  # before the next read: one chunk in memory at a time
    if index is not None:
        index.covered[base] = offset
    return offset, count, checksum


def read_entry_window(
    fs: FileSystem, path: str, pos: int, end: int
) -> tuple[bytes, int]:
    """Bytes of the segment file ``path`` from ``pos`` holding at least the whole entry
    that starts there (up to ``READ_CHUNK`` bytes, never past ``end``), and that entry's
    end relative to them (0 if the bytes there do not frame an entry)."""
    data = fs.read_range(path, pos, min(READ_CHUNK, end - pos))
    if len(data) < 4:
        return data, 0
    stop = entry_end(data, 0)
    if stop > end - pos:
        return data, 0
    if stop > len(data):
        data = fs.read_range(path, pos, stop)
    return data, stop
