"""Segment summaries: what checking a closed segment entry by entry would tell open, kept
in a sidecar file so a restart need not walk its entries again (FORMAT.md section 10).

A closed segment never changes, so what the per-entry check of ``live_index`` learns from
it (its entry count, each key's newest entry in it, its TransactionState entries, its
RebalanceEvent bytes) is a function of its bytes. ``NNN.log.summary`` holds that, plus the
segment's size and a CRC-32 (``zlib.crc32``) of all its bytes, computed from the bytes the
summary was made from (those the per-entry check read, those the log appended, those
compaction wrote), never read back for it. Open uses a summary only when it decodes, has
this version, names the segment's base and size, and the CRC-32 of the segment file as it
is now matches; then the segment's bytes are the ones that were checked entry by entry (or
written by kcoord) when the summary was made. Anything else,
and the segment is checked entry by entry as if there were no summary, so corruption is
found, reported, refused or truncated exactly as without summaries.

Summaries are an optimisation: failing to write one is logged and ignored.
"""

from __future__ import annotations

import logging
import struct
import zlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from wire.checksum import crc32c

from .fs import FileSystem, write_atomically
from .key_ints import KeyInts
from .live_index import READ_CHUNK, SEQ_STRIDE, LiveIndex
from .record_types import (
    REBALANCE_EVENT_KEY_VERSION,
    TRANSACTION_STATE_KEY_VERSION,
    TXN_OFFSET_COMMIT_KEY_VERSION,
)
from .segment import encode_header

if TYPE_CHECKING:
    from .batch import EncodedBatch

__all__ = [
    "EVENT_KIND",
    "KEPT_KIND",
    "NEWEST_KIND",
    "SUMMARY_SUFFIX",
    "SUMMARY_TEMP_SUFFIX",
    "SUMMARY_VERSION",
    "SegmentSummary",
    "file_checksum",
    "key_kind",
    "load_summary",
    "orphan_summaries",
    "remove_summary",
    "summary_matches",
    "summary_path",
    "write_summary",
]

log = logging.getLogger(__name__)

#: ``00000000000000000042.log.summary`` summarises ``00000000000000000042.log``.
SUMMARY_SUFFIX = ".summary"
#: A summary being written (deleted at open).
SUMMARY_TEMP_SUFFIX = ".summary.new"
SUMMARY_VERSION = 1
_MAGIC = b"KCOORDSM"
# magic, version, flags, base, segment size, segment CRC-32, entries, event bytes,
# newest-entry count, kept-entry count
_HEAD = struct.Struct(">8sHHQQIQQII")
_NEWEST = struct.Struct(">QI")  # file offset, key length (the key bytes follow)
_U64 = struct.Struct(">Q")
_U32 = struct.Struct(">I")
#: Bytes of the segment read per call while computing its CRC-32.
CHECKSUM_CHUNK = 4 * READ_CHUNK

# What the entries of a key version contribute (as ``live_index._scan`` sorts them).
NEWEST_KIND, EVENT_KIND, KEPT_KIND = 0, 1, 2


def key_kind(prefix: bytes) -> int:
    """The kind of entry whose key starts with ``prefix`` (its first two bytes)."""
    if len(prefix) < 2:
        return NEWEST_KIND
    version = int.from_bytes(prefix, "big", signed=True)
    if version == REBALANCE_EVENT_KEY_VERSION:
        return EVENT_KIND
    special = min(REBALANCE_EVENT_KEY_VERSION, TRANSACTION_STATE_KEY_VERSION)
    if version < special or version == TXN_OFFSET_COMMIT_KEY_VERSION:
        return NEWEST_KIND
    return KEPT_KIND


_KINDS: dict[bytes, int] = {}


@dataclass(slots=True)
class SegmentSummary:
    """What the per-entry check of one segment contributes to open. Positions are
    ``base * SEQ_STRIDE + file offset``, as in :class:`~storage.live_index.LiveIndex`."""

    base: int
    #: bytes of the segment file summarised (its whole size for a closed segment)
    size: int
    count: int = 0
    event_bytes: int = 0
    #: key bytes -> position of the key's newest entry in this segment (a ``KeyInts`` for
    #: the active segment's, which lives as long as the segment is appended to)
    newest: dict[bytes, int] | KeyInts = field(default_factory=dict)
    #: positions of the TransactionState entries, in order
    kept: list[int] = field(default_factory=list)
    #: zlib.crc32 of the segment's bytes [0, size), as the summary saw them
    checksum: int = 0
    #: False when appends this summary did not see went to the segment (it is not written)
    complete: bool = True

    @classmethod
    def from_index(
        cls, base: int, size: int, count: int, index: LiveIndex, checksum: int
    ) -> SegmentSummary:
        """The summary of a segment that ``index`` (of that segment alone) covers, whose
        bytes [0, size) have the CRC-32 ``checksum``."""
        return cls(base, size, count, index.event_bytes, index.newest, index.kept, checksum)

    @classmethod
    def new_segment(cls, base: int) -> SegmentSummary:
        """The summary of a segment holding only its header (its newest entries kept
        compact: ``compact``)."""
        header = encode_header(base)
        return cls(base, len(header), checksum=zlib.crc32(header)).compact()

    def compact(self) -> SegmentSummary:
        """This summary, its newest-entry positions moved to a ``KeyInts`` (8 bytes an
        offset commit key instead of about 140: for the summary of the active segment)."""
        if isinstance(self.newest, dict):
            self.newest = KeyInts("Q", self.base * SEQ_STRIDE, self.newest.items())
        return self

    def add_commits(self, batch: EncodedBatch, live: KeyInts) -> int:
        """``add_entries`` of an ``EncodedBatch`` whose ``commits`` is set (every key an
        offset commit's: the newest of its key counts), which also applies them to the
        log's ``live`` sizes in the same pass (``KeyInts.put_commits``): the change in live
        bytes."""
        newest = self.newest
        data = batch.data
        if not isinstance(newest, KeyInts):  # (a summary not compacted: none is, today)
            self.add_entries(batch.entry_keys(), batch.count, data)
            return len(data) - live.put_commits(batch.commit_keys, 0, None)
        self.checksum = zlib.crc32(data, self.checksum)
        count = batch.count
        if len(batch.commit_keys) != count:
            self.complete = False
        had = live.put_commits(batch.commit_keys, self.base * SEQ_STRIDE + self.size, newest)
        self.size += len(data)
        self.count += count
        return len(data) - had

    def add_entries(
        self, keys: tuple[tuple[bytes, int, bool], ...], count: int, data: bytes,
    ) -> None:
        """Account for the entries ``data`` appended at ``size``: (key bytes, entry size,
        tombstone) of each, as ``EncodedBatch.keys``. A batch without them (``count``
        entries but no keys) leaves the summary incomplete."""
        self.checksum = zlib.crc32(data, self.checksum)
        if len(keys) != count:
            self.complete = False
        start = pos = self.base * SEQ_STRIDE + self.size
        newest = self.newest
        kinds = _KINDS
        for key, size, tombstone in keys:
            prefix = key[:2]
            kind = kinds.get(prefix)
            if kind is None:
                kind = kinds[prefix] = key_kind(prefix)
            if kind == NEWEST_KIND:
                newest[key] = pos
            elif kind == KEPT_KIND:
                self.kept.append(pos)
            elif not tombstone:
                self.event_bytes += size
            pos += size
        self.size += len(data)
        self.count += count
        if pos - start != len(data):
            self.complete = False

    def add_to(self, index: LiveIndex) -> None:
        """Merge into ``index``, which covers the segments before this one."""
        index.newest.update(self.newest.items())
        index.kept.extend(self.kept)
        index.event_bytes += self.event_bytes
        index.covered[self.base] = self.size

    def encode(self) -> bytearray:
        bias = self.base * SEQ_STRIDE
        parts = [
            _HEAD.pack(
                _MAGIC,
                SUMMARY_VERSION,
                0,
                self.base,
                self.size,
                self.checksum,
                self.count,
                self.event_bytes,
                len(self.newest),
                len(self.kept),
            )
        ]
        # One growing buffer, not a list of two objects per key: a summary of 10^6 keys
        # built as parts held about 150 MiB at once (issue 33).
        body = bytearray(b"".join(parts))
        pack = _NEWEST.pack
        for key, pos in self.newest.items():
            body += pack(pos - bias, len(key))
            body += key
        for pos in self.kept:
            body += _U64.pack(pos - bias)
        body += _U32.pack(crc32c(body))
        return body  # not copied to a bytes: that held the summary twice


def decode_summary(data: bytes) -> SegmentSummary | None:
    """The summary ``data`` holds, or None if it is not a whole, intact summary of this
    version (its own CRC-32C, the last four bytes, covers the rest)."""
    head = _intact_head(data)
    if head is None:
        return None
    _, _, _, base, size, checksum, count, events, n_newest, n_kept = head
    if base >= (1 << 63) // SEQ_STRIDE:
        return None
    body = memoryview(data)[:-4]
    bias = base * SEQ_STRIDE
    newest: dict[bytes, int] = {}
    pos = _HEAD.size
    end = len(body)
    unpack = _NEWEST.unpack_from
    try:
        for _ in range(n_newest):
            offset, key_len = unpack(data, pos)
            pos += _NEWEST.size
            if offset >= size or pos + key_len > end:
                return None
            newest[data[pos : pos + key_len]] = bias + offset
            pos += key_len
        if pos + 8 * n_kept != end:
            return None
        kept = [bias + offset for (offset,) in _U64.iter_unpack(data[pos:end])]
    except struct.error:
        return None
    if len(newest) != n_newest or any(offset >= bias + size for offset in kept):
        return None
    return SegmentSummary(base, size, count, events, newest, kept, checksum)


def _head_only(data: bytes) -> SegmentSummary | None:
    """The summary ``data`` holds without its key table (None: not whole and intact)."""
    head = _intact_head(data)
    if head is None:
        return None
    _, _, _, base, size, checksum, count, events = head[:8]
    return SegmentSummary(base, size, count, events, checksum=checksum)


def summary_matches(segment_path: str, base: int, data: bytes) -> bool:
    """Whether the summary beside ``segment_path`` (read with plain file I/O) is intact
    (its CRC-32C, magic, version) and describes exactly ``data``, the segment's bytes as
    the caller read them: base ``base``, size ``len(data)``, and ``zlib.crc32(data)``
    equal to the recorded CRC-32. Only the summary's fixed head is decoded. Anything else
    (no summary, unreadable, malformed, another base, size or checksum): False."""
    try:
        with open(summary_path(segment_path), "rb") as f:
            raw = f.read()
    except OSError:
        return False
    head = _intact_head(raw)
    if head is None:
        return False
    summary_base, size, checksum = head[3:6]
    return bool(summary_base == base and size == len(data) and zlib.crc32(data) == checksum)


def _intact_head(data: bytes) -> tuple[Any, ...] | None:
    """The fixed head of the summary ``data``, if ``data`` is whole and intact (its own
    CRC-32C, the last four bytes, covers the rest) and of this version; else None."""
    if len(data) < _HEAD.size + 4:
        return None
    if crc32c(memoryview(data)[:-4]) != _U32.unpack_from(data, len(data) - 4)[0]:
        return None
    head: tuple[Any, ...] = _HEAD.unpack_from(data)
    if head[0] != _MAGIC or head[1] != SUMMARY_VERSION:
        return None
    return head


def summary_path(segment_path: str) -> str:
    return segment_path + SUMMARY_SUFFIX


def file_checksum(fs: FileSystem, path: str, size: int) -> int | None:
    """zlib.crc32 of the bytes [0, size) of ``path``, read in chunks; None if the file is
    shorter."""
    checksum = 0
    offset = 0
    while offset < size:
        data = fs.read_range(path, offset, min(CHECKSUM_CHUNK, size - offset))
        if not data:
            return None
        checksum = zlib.crc32(data, checksum)
        offset += len(data)
        del data
    return checksum


def load_summary(
    fs: FileSystem, path: str, base: int, size: int, *, keys: bool = True
) -> SegmentSummary | None:
    """The summary of the segment file ``path`` (base ``base``, ``size`` bytes now), if it
    has one that describes exactly these bytes; None otherwise (then the caller checks the
    segment entry by entry). ``keys=False`` decodes only its head (no live index wanted:
    the summary's newest and kept entries are left empty)."""
    where = summary_path(path)
    try:
        if not fs.exists(where):
            return None
        data = fs.read_bytes(where)
    except OSError as exc:
        log.warning("ignoring the summary %s: %s", where, exc.strerror or exc)
        return None
    summary = decode_summary(data) if keys else _head_only(data)
    if summary is None or summary.base != base or summary.size != size:
        log.warning("ignoring the summary %s: it does not describe the segment", where)
        return None
    if file_checksum(fs, path, size) != summary.checksum:
        log.warning("ignoring the summary %s: the segment's CRC-32 differs", where)
        return None
    return summary


def write_summary(fs: FileSystem, directory: str, path: str, summary: SegmentSummary) -> bool:
    """Write the summary of the closed segment ``path`` atomically (a temporary file,
    fsynced, renamed, the directory fsynced). The segment is not read: the summary's
    CRC-32 is that of the bytes it was made from, so a segment whose bytes on disk differ
    from them never gets a summary that open would accept. On failure, log it, leave no
    temporary file behind if possible, and return False."""
    if not summary.complete:
        return False
    try:
        if fs.size(path) != summary.size:
            log.warning("not summarising %s: its size changed", path)
            return False
        write_atomically(fs, directory, summary_path(path), path + SUMMARY_TEMP_SUFFIX,
                         summary.encode())
    except OSError as exc:
        log.warning("could not write the summary of %s (ignored): %s", path,
                    exc.strerror or exc)
        return False
    return True


def remove_summary(fs: FileSystem, path: str) -> None:
    """Delete the summary of the segment file ``path``, if it has one (its segment is being
    deleted or replaced). The caller fsyncs the directory."""
    where = summary_path(path)
    if fs.exists(where):
        fs.unlink(where)


def orphan_summaries(names: list[str], segment_names: set[str]) -> list[str]:
    """The summaries among ``names`` whose segment is not among ``segment_names``."""
    return [
        name
        for name in names
        if name.endswith(".log" + SUMMARY_SUFFIX)
        and name[: -len(SUMMARY_SUFFIX)] not in segment_names
    ]
