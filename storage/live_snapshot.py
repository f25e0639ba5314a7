"""The live snapshot: the log's live set up to a recorded position, so a restart replays
only the tail after it (FORMAT.md section 11; issue 33).

``live.snapshot`` holds, for a prefix of the log (every covered segment's base, size and
zlib.crc32 of those bytes), the entries a last-value-per-key replay of that prefix needs,
copied byte for byte from the log (framing and CRC-32C included):

- the offset commits, per group: each (group, topic, partition)'s newest value, tombstoned
  keys dropped (a tombstone of an offset commit removes the key whatever key version wrote
  it, and a group's offsets depend on nothing else), in log order. A loader keeps each
  group's entries packed and decodes them when the group is first asked for
  (:class:`PackedEntries`: the same ``fast_decode`` and ``HardState.apply`` as replay);
- every other entry replay needs (``live_index``'s selection: each key's newest entry,
  tombstones included, and every TransactionState entry), in log order, decoded at load.

Applying the snapshot then the log after its position leaves the state applying the whole
log leaves (tests/storage/test_live_snapshot.py checks it on generated logs). The file is
written atomically (a temporary file, fsynced, renamed, the directory fsynced) and ends with
a CRC-32C of the rest; a snapshot that is missing, torn, corrupt, of another version or
stale (a covered segment gone, shorter or with other bytes: compaction, retention, a
truncating recovery) is ignored with one log line and the whole log is replayed.

A new snapshot is built from the previous one (when it still describes the log) and the
entries appended since, so writing one costs the tail, not the log.
"""

from __future__ import annotations

import logging
import os
import struct
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field

from storage.records import Record, RecordKey

from .batch import EncodedBatch
from .directory import Segment
from .fast_decode import fast_decode
from .fs import FileSystem, write_atomically
from .live_index import READ_CHUNK
from .record_codec import RecordDecodeError, decode_record
from .record_types import OFFSET_COMMIT_KEY_VERSIONS
from .segment import HEADER_SIZE, entry_end, frames, scan_entries
from .segment_summary import EVENT_KIND, KEPT_KIND, file_checksum, key_kind

__all__ = [
    "SNAPSHOT_FILE",
    "SNAPSHOT_TEMP_SUFFIX",
    "TOLD_APART_AT",
    "LiveSnapshot",
    "PackedEntries",
    "build_snapshot",
    "decode_entries",
    "load_snapshot",
    "pack_offsets",
    "read_snapshot",
    "stale_reason",
    "write_snapshot",
]

log = logging.getLogger(__name__)

SNAPSHOT_FILE = "live.snapshot"
SNAPSHOT_TEMP_SUFFIX = ".snapshot.new"
SNAPSHOT_VERSION = 1
_MAGIC = b"KCOORDSN"
# magic, version, flags, covered segments, groups, live bytes, RebalanceEvent bytes
_HEAD = struct.Struct(">8sHHIIQQ")
_COVERED = struct.Struct(">QQI")  # base, bytes covered, zlib.crc32 of them
_GROUP = struct.Struct(">HI")  # group name length, entries length (name, entries follow)
_U64 = struct.Struct(">Q")
_U32 = struct.Struct(">I")
_U16 = struct.Struct(">H")
_OFFSET_PREFIXES = frozenset(struct.pack(">h", v) for v in OFFSET_COMMIT_KEY_VERSIONS)


class PackedEntries:
    """Log entries kept as bytes until asked for: ``records()`` decodes them (one group's
    committed offsets, from a snapshot or packed by :func:`pack_offsets`)."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data

    def records(self) -> list[Record]:
        return decode_entries(self.data)


def pack_offsets(records: Sequence[Record]) -> PackedEntries:
    """A group's first offset commits, ``records`` in log order, packed as the log frames
    them (``EncodedBatch``): decoding and applying them in order leaves what applying
    ``records`` leaves."""
    return PackedEntries(EncodedBatch.encode(records).data)


def decode_entries(data: bytes) -> list[Record]:
    """The records of the whole, checked entries ``data`` (replay's ``fast_decode``; the
    general decoder for an entry it does not handle; unknown record types skipped)."""
    out: list[Record] = []
    pos, end = 0, len(data)
    live: dict[bytes, int] = {}
    keys: dict[bytes, RecordKey] = {}
    while pos < end:
        records, after, _ = fast_decode(data, pos, end, live, keys, verify=False)
        out.extend(records)
        if after < end:
            scan = scan_entries(data, after, end, limit=1)
            if scan.stop is not None or not scan.entries:
                raise RecordDecodeError(f"snapshot entry at {after} is not whole")
            record = decode_record(*scan.entries[0])
            if record is not None:
                out.append(record)
            after = entry_end(data, after)
        pos = after
    return out


@dataclass(slots=True)
class LiveSnapshot:
    """The live set of the log's prefix ``covered`` (see the module docstring)."""

    #: (segment base, bytes covered, zlib.crc32 of those bytes), in log order; every
    #: segment but the last is covered whole
    covered: list[tuple[int, int, int]] = field(default_factory=list)
    #: group -> its offset commits' entries
    groups: dict[str, bytes] = field(default_factory=dict)
    #: every other live entry, in log order
    other: bytes = b""
    #: entry bytes of the live set and of RebalanceEvent history (compaction statistics)
    live_bytes: int = 0
    event_bytes: int = 0

    def encode(self) -> bytes:
        parts = [_HEAD.pack(_MAGIC, SNAPSHOT_VERSION, 0, len(self.covered), len(self.groups),
                            self.live_bytes, self.event_bytes)]
        parts.extend(_COVERED.pack(*each) for each in self.covered)
        for group, entries in self.groups.items():
            name = group.encode("utf-8")
            parts.append(_GROUP.pack(len(name), len(entries)))
            parts.append(name)
            parts.append(entries)
        parts.append(_U64.pack(len(self.other)))
        parts.append(self.other)
        body = b"".join(parts)
        from wire.checksum import crc32c

        return body + _U32.pack(crc32c(body))


def _decode(data: bytes) -> LiveSnapshot:
    """The snapshot ``data`` holds; ValueError saying why it is not a whole, intact one."""
    from wire.checksum import crc32c

    if len(data) < _HEAD.size + 12:
        raise ValueError("truncated")
    if crc32c(memoryview(data)[:-4]) != _U32.unpack_from(data, len(data) - 4)[0]:
        raise ValueError("checksum mismatch")
    magic, version, _, n_covered, n_groups, live_bytes, event_bytes = _HEAD.unpack_from(data)
    if magic != _MAGIC or version != SNAPSHOT_VERSION:
        raise ValueError(f"not a version {SNAPSHOT_VERSION} snapshot")
    pos = _HEAD.size
    try:
        covered = [_COVERED.unpack_from(data, pos + i * _COVERED.size) for i in range(n_covered)]
        pos += n_covered * _COVERED.size
        groups: dict[str, bytes] = {}
        unpack = _GROUP.unpack_from
        for _ in range(n_groups):
            name_len, entries_len = unpack(data, pos)
            pos += _GROUP.size
            name = data[pos : pos + name_len].decode("utf-8")
            pos += name_len
            groups[name] = data[pos : pos + entries_len]
            pos += entries_len
        (other_len,) = _U64.unpack_from(data, pos)
        pos += 8
        other = data[pos : pos + other_len]
        pos += other_len
    except (struct.error, UnicodeDecodeError) as exc:
        raise ValueError(f"malformed: {exc}") from None
    if pos != len(data) - 4 or len(groups) != n_groups:
        raise ValueError("malformed: sizes do not add up")
    return LiveSnapshot(covered, groups, other, live_bytes, event_bytes)


def load_snapshot(fs: FileSystem, directory: str) -> LiveSnapshot | None:
    """The directory's snapshot if it has a whole, intact one (None, silently, if not)."""
    try:
        return _decode(fs.read_bytes(os.path.join(directory, SNAPSHOT_FILE)))
    except (OSError, ValueError):
        return None


def read_snapshot(fs: FileSystem, directory: str) -> LiveSnapshot | None:
    """The directory's snapshot if it is whole and intact (None, with one log line, if it
    is missing or not; the caller then replays the whole log)."""
    path = os.path.join(directory, SNAPSHOT_FILE)
    try:
        if not fs.exists(path):
            log.info("no %s: replaying the whole log", SNAPSHOT_FILE)
            return None
        return _decode(fs.read_bytes(path))
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        log.warning("ignoring %s (%s): replaying the whole log", path, reason)
        return None


def stale_reason(fs: FileSystem, snapshot: LiveSnapshot, segments: Sequence[Segment]) -> str | None:
    """Why ``snapshot`` does not describe a prefix of ``segments`` (None: it does)."""
    if not snapshot.covered:
        return "it covers nothing"
    if len(snapshot.covered) > len(segments):
        return "a segment it covers is gone"
    for i, (base, size, checksum) in enumerate(snapshot.covered):
        seg = segments[i]
        last = i == len(snapshot.covered) - 1
        if seg.base != base or seg.size < size or (not last and seg.size != size):
            return f"segment {base} it covers is gone or changed size"
        if file_checksum(fs, seg.path, size) != checksum:
            return f"the bytes of segment {base} it covers changed"
    return None


def _offset_group(key: bytes) -> str | None:
    """The group of an OffsetCommitKey's bytes (None: not one, or not parseable)."""
    if key[:2] not in _OFFSET_PREFIXES or len(key) < 4:
        return None
    (length,) = _U16.unpack_from(key, 2)
    if length > 0x7FFF or 4 + length > len(key):
        return None
    try:
        return key[4 : 4 + length].decode("utf-8")
    except UnicodeDecodeError:
        return None


class _Builder:
    """A snapshot being extended entry by entry (see ``build_snapshot``)."""

    def __init__(self, previous: LiveSnapshot | None) -> None:
        self.groups = dict(previous.groups) if previous is not None else {}
        #: group -> its entries so far (its previous ones first), tombstones included:
        #: told apart per group in ``result`` (one group's dict at a time: a dict per
        #: touched group held about 250 bytes an entry, 10^6 of them in a periodic snapshot)
        self.touched: dict[str, bytearray] = {}
        #: group -> the size of its ``touched`` entries at which they are told apart before
        #: ``result`` (twice what was live when they last were: memory bounded by what is
        #: live, not by how often a group commits)
        self.limits: dict[str, int] = {}
        self.other: dict[object, bytes] = {}
        self.kept = 0
        self.event_bytes = previous.event_bytes if previous is not None else 0
        if previous is not None:
            self.add(previous.other, 0, len(previous.other))

    def add(self, data: bytes, start: int, end: int, *, verify: bool = False) -> int:
        """Add the entries of ``data[start:end]``; where the whole entries stop."""
        at = start
        for pos, kend, vlen, stop in frames(data, start, end, verify=verify):
            key = data[pos + 14 : kend]
            entry = data[pos:stop]
            group = _offset_group(key)
            if group is not None:
                entries = self.touched.get(group)
                if entries is None:
                    entries = self.touched[group] = bytearray(self.groups.get(group, b""))
                entries += entry
                if len(entries) > self.limits.get(group, TOLD_APART_AT):  # (read late:
                    # tests lower it)
                    # a group committing on and on: its newest entries only, now
                    entries[:] = _live_offsets(bytes(entries))
                    self.limits[group] = max(TOLD_APART_AT, 2 * len(entries))
            else:
                kind = key_kind(key[:2])
                if kind == EVENT_KIND:
                    if vlen != -1:
                        self.event_bytes += stop - pos
                elif kind == KEPT_KIND:
                    self.kept += 1
                    self.other[self.kept] = entry
                else:
                    self.other.pop(key, None)
                    self.other[key] = entry
            at = stop
        return at

    def result(self, covered: list[tuple[int, int, int]]) -> LiveSnapshot:
        touched, self.touched = self.touched, {}
        self.limits = {}
        while touched:
            group, data = touched.popitem()
            packed = _live_offsets(bytes(data))
            del data
            if packed:
                self.groups[group] = packed
            else:
                self.groups.pop(group, None)
        other = b"".join(self.other.values())
        live = len(other) + sum(len(entries) for entries in self.groups.values())
        return LiveSnapshot(covered, self.groups, other, live, self.event_bytes)


#: Bytes of a touched group's entries past which they are told apart during a build.
TOLD_APART_AT = 64 * 1024


def _live_offsets(data: bytes) -> bytes:
    """A group's offset commit entries ``data`` (in log order, tombstones included) as the
    snapshot keeps them: each key's newest entry unless a tombstone is, in log order of
    those (key versions 0 and 1 share a layout: equal bodies, equal keys)."""
    entries: dict[bytes, bytes] = {}
    for pos, kend, vlen, stop in frames(data, verify=False):
        body = data[pos + 16 : kend]
        entries.pop(body, None)
        if vlen != -1:
            entries[body] = data[pos:stop]
    return b"".join(entries.values())


def build_snapshot(
    fs: FileSystem, segments: Sequence[Segment], previous: LiveSnapshot | None
) -> LiveSnapshot:
    """The snapshot of ``segments`` (whole, as they are now): ``previous`` (which must
    describe a prefix of them: ``stale_reason`` is None) extended by the entries after it,
    or, without one, every entry. Entries are checked (CRC-32C) as they are read."""
    builder = _Builder(previous)
    covered = list(previous.covered[:-1]) if previous is not None else []
    for i, seg in enumerate(segments):
        if i < len(covered):
            continue
        if previous is not None and i == len(previous.covered) - 1:
            _, offset, checksum = previous.covered[-1]
        else:
            offset, checksum = HEADER_SIZE, zlib.crc32(fs.read_range(seg.path, 0, HEADER_SIZE))
        while offset < seg.size:
            data = fs.read_range(seg.path, offset, min(READ_CHUNK, seg.size - offset))
            need = entry_end(data, 0)
            if need > len(data):
                data = fs.read_range(seg.path, offset, need)
            done = builder.add(data, 0, len(data), verify=True)
            if done == 0:
                raise ValueError(f"{seg.path}: no whole entry at byte {offset}")
            checksum = zlib.crc32(memoryview(data)[:done], checksum)
            offset += done
        covered.append((seg.base, offset, checksum))
    return builder.result(covered)


def write_snapshot(fs: FileSystem, directory: str, snapshot: LiveSnapshot) -> bool:
    """Write ``snapshot`` atomically (temporary file, fsync, rename, directory fsync); on
    failure log it, remove the temporary file and return False."""
    final = os.path.join(directory, SNAPSHOT_FILE)
    try:
        write_atomically(fs, directory, final, final + ".new", snapshot.encode())
    except OSError as exc:
        log.warning("could not write %s (ignored): %s", final, exc.strerror or exc)
        return False
    return True
