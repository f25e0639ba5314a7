"""Kafka's log cleaner for a topic partition's segment log (``Cleaner``, ``OffsetMap``,
``CleanedTransactionMetadata``).

A partition log holds one entry per record batch (key: the base offset, int64; value: the
batch) and log-start entries (key ``b"L"`` + offset, no value): the format the broker's
``topic_files`` writes. One cleaning round, given the range
``log_cleaner_plan.log_to_clean`` chose:

1. **offset map**: the dirty batches are read and each key's latest offset noted, keyed by
   the key's MD5 digest, in a map of at most ``dedupe_buffer_size / ENTRY_COST`` x load
   factor keys (Kafka's ``log.cleaner.dedupe.buffer.size``): when it fills, the round ends
   there (``end_offset``) and the next round goes on. Records of aborted transactions are
   not mapped.
2. **groups**: the segments from the log's first up to ``end_offset`` are grouped into runs
   of at most ``segment.bytes``; each run is rewritten as one segment, a record kept when
   it is its key's latest (or past the map), a tombstone only until its batch's delete
   horizon (KIP-534: stamped ``now + delete.retention.ms`` the first time a batch holding
   one is cleaned), aborted transactional data dropped, markers dropped once their
   transaction has no data left and their horizon passed, each active producer's last batch
   and the round's last batch kept (empty if need be) -- ``MemoryRecords.filterTo``.
   Offsets never change: batches keep their base and last offsets, leaving gaps.
3. **swap**: each group's output is written to ``LO-HI.cleaned``, fsynced, renamed
   ``LO-HI.swap`` (the commit point: ``Log.open`` completes a swap a crash interrupted, and
   deletes a ``.cleaned`` file) -- ``write_cleaned``; then, group after group, the old
   segments are deleted and the swap renamed into place (``Log.replace_segments``). Every
   group is committed before the first is installed, so the range cleaned needs its
   output's size again on disk for that time.

Steps 1 and 2 are Python work per record, which the server runs in a child process
(``log_cleaner_process``) so that it does not hold the GIL its event loop needs; the log's
lock is held only for the swap's renames.
"""

from __future__ import annotations

import contextlib
import hashlib
import heapq
import os
import struct
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from wire.records import CRC_AT, InvalidRecordBatch, RecordBatchHeader, parse_batches

from .compaction import stream_segment, swap_path
from .directory import SWAP_RE, Segment
from .errors import CompactionError
from .fs import FileSystem, write_all
from .kafka_batch import (
    BatchRecord,
    can_rebuild,
    delete_horizon_ms,
    empty_batch,
    read_records,
    rebuild_batch,
)
from .log import Log
from .log_cleaner_plan import CleanerLogConfig, SegmentInfo, group_segments_by_size
from .partition_keys import BATCH_KEY, CLEANED_START_PREFIX, LOG_START_PREFIX
from .segment import HEADER_SIZE, encode_entry, encode_header

__all__ = [
    "DEFAULT_DEDUPE_BUFFER_SIZE",
    "ENTRY_COST",
    "CleanResult",
    "CleanRound",
    "CleanedGroup",
    "CleanedTransactionMetadata",
    "KeptBatch",
    "LastRecord",
    "OffsetMap",
    "WriteCleaned",
    "clean_log",
    "discard_uninstalled",
    "write_cleaned",
]

DEFAULT_DEDUPE_BUFFER_SIZE = 128 * 1024 * 1024
DEFAULT_LOAD_FACTOR = 0.9
#: Bytes one map entry costs in CPython: the 16-byte digest (49), the offset int (32),
#: the dict's slot and index (about 40).
ENTRY_COST = 121
_WRITE_CHUNK = 1 << 20
_CONTROL_KEY = struct.Struct(">hh")
_CRC = struct.Struct(">I")
_ABORT, _COMMIT = 0, 1


class OffsetMap:
    """Key digest -> latest offset, bounded (Kafka's ``SkimpyOffsetMap``)."""

    __slots__ = ("_map", "latest_offset", "slots")

    def __init__(self, memory: int = DEFAULT_DEDUPE_BUFFER_SIZE) -> None:
        self.slots = max(1, memory // ENTRY_COST)
        self._map: dict[bytes, int] = {}
        #: The latest offset the map covers (-1: none).
        self.latest_offset = -1

    def __len__(self) -> int:
        return len(self._map)

    def put(self, key: bytes, offset: int) -> None:
        self._map[hashlib.md5(key, usedforsecurity=False).digest()] = offset
        self.latest_offset = offset

    def get(self, key: bytes) -> int:
        """The key's latest offset, -1 when absent."""
        return self._map.get(hashlib.md5(key, usedforsecurity=False).digest(), -1)

    def utilization(self) -> float:
        return len(self._map) / self.slots


@dataclass(frozen=True, slots=True)
class LastRecord:
    """An active producer's last data offset (None: its last entry is a marker) and epoch."""

    last_data_offset: int | None
    producer_epoch: int


class CleanedTransactionMetadata:
    """Ongoing aborted and committed transactions as the cleaner walks the log: which
    batches are aborted data and which markers may go (Kafka's class of this name)."""

    def __init__(self, aborted: Sequence[tuple[int, int, int]] = ()) -> None:
        #: (first offset, producer id, last offset) of aborted transactions, a min-heap.
        self._aborted = list(aborted)
        heapq.heapify(self._aborted)
        self._ongoing_committed: set[int] = set()
        #: producer id -> [marker offset, last data batch offset seen or None]
        self._ongoing_aborted: dict[int, list[int | None]] = {}
        #: (producer id, marker offset) of aborted transactions whose marker stays with data.
        self.retained_aborted: set[tuple[int, int]] = set()

    def _consume_up_to(self, offset: int) -> None:
        while self._aborted and self._aborted[0][0] <= offset:
            _, producer_id, last = heapq.heappop(self._aborted)
            self._ongoing_aborted.setdefault(producer_id, [last, None])

    def on_control_batch_read(self, header: RecordBatchHeader, data: bytes) -> bool:
        """Whether the marker may be discarded."""
        self._consume_up_to(header.last_offset)
        if header.record_count == 0:
            return True  # an empty control batch was cleaned already
        kind = _control_type(data)
        if kind == _ABORT:
            aborted = self._ongoing_aborted.pop(header.producer_id, None)
            if aborted is not None and aborted[1] is not None:
                self.retained_aborted.add((header.producer_id, header.last_offset))
                return False
            return True
        if kind == _COMMIT:
            if header.producer_id in self._ongoing_committed:
                self._ongoing_committed.discard(header.producer_id)
                return False
            return True
        return False

    def on_batch_read(self, header: RecordBatchHeader) -> bool:
        """Whether the data batch belongs to an aborted transaction."""
        self._consume_up_to(header.last_offset)
        if not header.is_transactional:
            return False
        aborted = self._ongoing_aborted.get(header.producer_id)
        if aborted is not None:
            aborted[1] = header.last_offset
            return True
        self._ongoing_committed.add(header.producer_id)
        return False


def _control_type(data: bytes) -> int:
    try:
        records = read_records(data, parse_batches(data, verify_crc=False)[0])
    except ValueError:
        return -1
    if not records or records[0].key is None or len(records[0].key) < _CONTROL_KEY.size:
        return -1
    return int(_CONTROL_KEY.unpack_from(records[0].key)[1])


class KeptBatch(NamedTuple):
    """A batch a group kept, where its output holds it (the segment ``LO.log`` once
    installed): the bytes stay on disk, as an appended batch's do."""

    base_offset: int
    last_offset: int
    max_timestamp: int
    size: int
    #: The batch's CRC field (what a read checks it found this batch by).
    crc: int
    #: Where the batch starts in the group's output file.
    position: int


@dataclass(slots=True)
class CleanedGroup:
    """One run of segments rewritten as one: the storage indexes it covered, the offsets of
    the batches it read, and the batches it kept, in order."""

    lo: int
    hi: int
    first_offset: int | None
    last_offset: int | None
    kept: list[KeptBatch] = field(default_factory=list)
    first_timestamp: int = -1
    #: Entries in the group's output (its batches and a log start entry).
    entries: int = 0


@dataclass(slots=True)
class CleanResult:
    """One cleaning round: where the next one starts, what each group became, and
    statistics (Kafka's ``CleanerStats``)."""

    end_offset: int
    groups: list[CleanedGroup]
    #: (producer id, marker offset) of aborted transactions the cleaned range still holds.
    retained_aborted: set[tuple[int, int]]
    bytes_read: int = 0
    bytes_written: int = 0
    records_read: int = 0
    records_kept: int = 0
    map_utilization: float = 0.0
    seconds: float = 0.0


def _batches(fs: FileSystem, seg: Segment) -> Iterator[tuple[RecordBatchHeader, bytes] | int]:
    """The batches of a closed segment in order; a log-start entry yields its offset."""
    for key, value, _, _, _ in stream_segment(fs, seg):
        # Hand the interpreter to the event loop's thread between batches: a waiting
        # thread otherwise gets it only every sys.getswitchinterval() (5 ms), per wakeup.
        time.sleep(0)
        if value is None:
            if key[:1] in (LOG_START_PREFIX, CLEANED_START_PREFIX) and len(key) == 9:
                yield BATCH_KEY.unpack_from(key, 1)[0]
            continue
        try:
            (header,) = parse_batches(value, verify_crc=False)
        except (InvalidRecordBatch, ValueError) as exc:
            raise CompactionError(f"{seg.path}: a batch does not parse: {exc}") from None
        yield header, value


def build_offset_map(fs: FileSystem, segments: Sequence[Segment], start: int, end: int,
                     offset_map: OffsetMap, aborted: Sequence[tuple[int, int, int]],
                     load_factor: float = DEFAULT_LOAD_FACTOR) -> int:
    """Map the keys of records at offsets in [start, end) of ``segments``; the offset the
    map covers up to (exclusive): ``end``, or less when the map filled first."""
    txn = CleanedTransactionMetadata(aborted)
    limit = max(1, int(offset_map.slots * load_factor))
    for seg in segments:
        last_seen = -1
        for item in _batches(fs, seg):
            if isinstance(item, int):
                continue
            header, data = item
            if header.base_offset >= end:
                return end
            last_seen = header.last_offset
            if header.is_control:
                txn.on_control_batch_read(header, data)
            elif not txn.on_batch_read(header):
                try:
                    records = read_records(data, header)
                except ValueError:
                    records = []  # unreadable: mapped as keyless (kept, see filter_batch)
                for record in records:
                    if record.key is not None and record.offset >= start:
                        if len(offset_map) >= limit and offset_map.get(record.key) < 0:
                            return offset_map.latest_offset + 1
                        offset_map.put(record.key, record.offset)
            if header.last_offset >= start:
                offset_map.latest_offset = max(offset_map.latest_offset, header.last_offset)
        if last_seen >= 0:
            offset_map.latest_offset = max(offset_map.latest_offset, min(last_seen, end - 1))
    return min(end, offset_map.latest_offset + 1) if offset_map.latest_offset >= 0 else start


@dataclass(frozen=True, slots=True)
class CleanRound:
    """What one cleaning round is given: the closed segments ``infos`` to clean (the
    cleanable ones, in order, starting with the log's first), the dirty range, the topic's
    settings, and the partition's state: its log start, ``aborted`` (first offset, producer
    id, marker offset) of the aborted transactions in the range, each active producer's
    ``last_records``."""

    infos: Sequence[SegmentInfo]
    first_dirty_offset: int
    first_uncleanable_offset: int
    config: CleanerLogConfig
    now_ms: int
    log_start_offset: int
    aborted: Sequence[tuple[int, int, int]] = ()
    last_records: Mapping[int, LastRecord] = field(default_factory=dict)
    dedupe_buffer_size: int = DEFAULT_DEDUPE_BUFFER_SIZE


WriteCleaned = Callable[[FileSystem, str, Sequence[Segment], CleanRound], CleanResult]
"""Writes a round's groups as committed swap files: ``write_cleaned`` here, or the same in
a child process (``log_cleaner_process``)."""


def write_cleaned(fs: FileSystem, directory: str, segments: Sequence[Segment],
                  job: CleanRound) -> CleanResult:
    """The round's file work on the log whose segments are ``segments`` (the active one
    last): the offset map, then each group's output committed as ``LO-HI.swap``. If it
    fails, what it wrote is deleted again (``discard_uninstalled``): the log is as it was."""
    started = time.perf_counter()
    by_index = {s.base: s for s in segments[:-1]}
    cleaned = [by_index[i.index] for i in job.infos]
    offset_map = OffsetMap(job.dedupe_buffer_size)
    dirty = [s for s, i in zip(cleaned, job.infos, strict=True)
             if i.last_offset is None or i.last_offset >= job.first_dirty_offset]
    end_offset = build_offset_map(fs, dirty, job.first_dirty_offset,
                                  job.first_uncleanable_offset, offset_map, job.aborted)
    result = CleanResult(end_offset, [], set(), map_utilization=offset_map.utilization())
    txn = CleanedTransactionMetadata(job.aborted)
    cleaner = _GroupCleaner(offset_map, txn, job.config, job.now_ms, job.last_records,
                            job.first_uncleanable_offset, result)
    bases = [s.base for s in segments]
    try:
        for group in group_segments_by_size(job.infos, job.config.segment_bytes, end_offset):
            lo = group[0].index
            hi = bases[bases.index(group[-1].index) + 1]
            start = job.log_start_offset if lo == bases[0] else None
            result.groups.append(cleaner.clean_group(
                fs, directory, [by_index[g.index] for g in group], lo, hi, start))
    except BaseException:
        with contextlib.suppress(OSError):
            discard_uninstalled(fs, directory)
        raise
    result.retained_aborted = txn.retained_aborted
    result.seconds = time.perf_counter() - started
    return result


def discard_uninstalled(fs: FileSystem, directory: str) -> None:
    """Delete the ``.swap`` and ``.cleaned`` files a failed round left in ``directory``
    (while a round runs, nothing else writes them there), fsync the directory."""
    try:
        names = [n for n in fs.listdir(directory)
                 if SWAP_RE.match(n) or n.endswith(".cleaned")]
    except FileNotFoundError:
        return  # the topic was deleted meanwhile
    for name in names:
        fs.unlink(os.path.join(directory, name))
    if names:
        fs.fsync_dir(directory)


def clean_log(log: Log, job: CleanRound, write: WriteCleaned = write_cleaned) -> CleanResult:
    """One cleaning round: its groups written and committed (``write``, by default
    ``write_cleaned`` in this thread), then swapped into ``log`` in order."""
    result = write(log.fs, log.directory, list(log.segments), job)
    for group in result.groups:
        log.replace_segments(group.lo, group.hi, swap_path(log.directory, group.lo, group.hi),
                             group.entries)
    return result


class _GroupCleaner:
    def __init__(self, offset_map: OffsetMap, txn: CleanedTransactionMetadata,
                 config: CleanerLogConfig, now_ms: int, last_records: Mapping[int, LastRecord],
                 upper_bound: int, result: CleanResult) -> None:
        self.map = offset_map
        self.txn = txn
        self.config = config
        self.now_ms = now_ms
        self.last_records = last_records
        self.upper_bound = upper_bound
        self.result = result

    def clean_group(self, fs: FileSystem, directory: str, segments: list[Segment], lo: int,
                    hi: int, log_start: int | None) -> CleanedGroup:
        group = CleanedGroup(lo, hi, None, None)
        entries: list[bytes] = []
        written = HEADER_SIZE  # where the next entry starts in the output
        for seg in segments:
            self.result.bytes_read += seg.size
            for item in _batches(fs, seg):
                if isinstance(item, int):
                    continue  # superseded by the log start entry of the first group
                header, data = item
                if group.first_offset is None:
                    group.first_offset = header.base_offset
                group.last_offset = header.last_offset
                kept = self.filter_batch(header, data)
                if kept is None:
                    continue
                entry = encode_entry(BATCH_KEY.pack(header.base_offset), kept)
                entries.append(entry)
                written += len(entry)
                (new,) = parse_batches(kept, verify_crc=False)
                if not group.kept:
                    group.first_timestamp = new.base_timestamp
                group.kept.append(KeptBatch(header.base_offset, header.last_offset,
                                            new.max_timestamp, len(kept),
                                            _CRC.unpack_from(kept, CRC_AT)[0],
                                            written - len(kept)))  # the batch ends its entry
        # The log start offset as it is now (it may lie before the first batch kept). When
        # it does not fit, nothing was dropped and no start entry was here: not needed.
        if log_start is not None and len(entries) < hi - lo:
            start = encode_entry(CLEANED_START_PREFIX + BATCH_KEY.pack(log_start), None)
            entries.insert(0, start)
            group.kept = [k._replace(position=k.position + len(start)) for k in group.kept]
        self._write(fs, directory, lo, hi, entries)
        group.entries = len(entries)
        return group

    def _write(self, fs: FileSystem, directory: str, lo: int, hi: int,
               entries: list[bytes]) -> None:
        swap = swap_path(directory, lo, hi)
        cleaned = swap.removesuffix(".swap") + ".cleaned"
        if fs.exists(cleaned):
            fs.unlink(cleaned)
        out = fs.open_append(cleaned, create=True)
        try:
            chunk = [encode_header(lo)]
            size = HEADER_SIZE
            for entry in entries:
                chunk.append(entry)
                size += len(entry)
                if size >= _WRITE_CHUNK:
                    write_all(out, b"".join(chunk))
                    self.result.bytes_written += size
                    chunk, size = [], 0
            write_all(out, b"".join(chunk))
            self.result.bytes_written += size
            out.fsync()
        except BaseException:
            out.close()
            if fs.exists(cleaned):
                fs.unlink(cleaned)
            raise
        out.close()
        fs.rename(cleaned, swap)  # the commit point: Log.open completes the swap from here
        fs.fsync_dir(directory)

    def filter_batch(self, header: RecordBatchHeader, data: bytes) -> bytes | None:
        """The batch as it leaves the cleaner (itself, rebuilt, emptied) or None."""
        horizon = delete_horizon_ms(header)
        if header.is_control:
            can_discard = self.txn.on_control_batch_read(header, data)
            discard_records = can_discard and horizon is not None and horizon <= self.now_ms
        else:
            can_discard = discard_records = self.txn.on_batch_read(header)
        last = self.last_records.get(header.producer_id)
        last_of_producer = last is not None and (
            header.last_offset == last.last_data_offset if last.last_data_offset is not None
            else header.is_control and header.producer_epoch == last.producer_epoch)
        retain_empty = ((header.producer_id >= 0 and last_of_producer)
                        or header.last_offset + 1 == self.upper_bound)
        if discard_records and not retain_empty:
            return None
        marker_for_empty_txn = can_discard and header.is_control
        try:
            records = read_records(data, header)
        except ValueError:
            return data  # records it cannot read (Produce validated them): kept whole
        self.result.records_read += len(records)
        kept = [r for r in records if not discard_records and self.retain(header, r, horizon)]
        self.result.records_kept += len(kept)
        if not kept:
            return empty_batch(header) if retain_empty else None
        tombstones = any(not r.has_value for r in kept)
        set_horizon = (tombstones or marker_for_empty_txn) and horizon is None
        if (len(kept) == len(records) and not set_horizon) or not can_rebuild(header):
            return data  # unchanged, or a snappy/lz4 batch: kept whole
        new_horizon = (self.now_ms + self.config.delete_retention_ms if set_horizon
                       else horizon)
        return rebuild_batch(header, kept, new_horizon)

    def retain(self, header: RecordBatchHeader, record: BatchRecord, horizon: int | None) -> bool:
        if header.is_control:
            return True
        if record.offset > self.map.latest_offset:
            return True
        if record.key is None:
            return False
        if record.offset < self.map.get(record.key):
            return False
        return record.has_value or horizon is None or self.now_ms < horizon
