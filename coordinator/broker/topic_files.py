"""Durable topics: each topic's metadata and record batches in the data directory.

Layout, under ``DATA_DIR/topics/``:

- ``<topic id>/topic.json``: name, id, partition count, configs and a replication factor
  given at creation, written atomically
  (temporary file, fsync, rename, fsync of the directory) before the topic exists for
  clients.
- ``<topic id>/<partition>/``: the partition's batches, as received with their base offsets
  assigned, in storage's own segment log (``storage.log.Log``: the same entry framing, CRC,
  recovery and fsync policy as the metadata log). The partition logs share a pool of open
  files (``storage.open_files``, ``kcoord.max.open.segment.files``) and the data
  directory's lock, so a server holds a bounded number of descriptors however many
  partitions it has. One entry per batch: the key is the base
  offset (int64), the value the batch. DeleteRecords moving the log start offset is an
  entry of its own: key ``b"L"`` + the new log start offset (int64), no value.

A partition log rolls to a new segment at the topic's ``segment.bytes`` (else the broker's
``log.segment.bytes``). Retention deletes a partition's oldest closed segments, whole, as
Kafka does: those whose newest record is older than ``retention.ms``, and those a size above
``retention.bytes`` can do without; the partition's log start offset moves to the first
offset kept. For that, each segment's first and last batch offsets and largest timestamp
are kept in memory (read at startup, updated on append).

A batch is written to the OS before the partition takes it (and fsynced first with
``--fsync always``), so an acknowledged record survives SIGKILL; a torn tail is truncated
and reported as in the metadata log. At startup every topic comes back with its id,
partition count, configs and batches; feeding the batches through the partition again
rebuilds offsets and the idempotent producers' sequence state. A deleted topic's directory
is renamed aside before it is removed, so a crash mid-delete never resurrects it.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import struct
import threading
import uuid
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from coordinator.broker.errors import BrokerError
from storage.directory import Segment
from storage.errors import StorageError
from storage.open_files import DEFAULT_MAX_OPEN_SEGMENT_FILES, PooledFileSystem
from storage.partition_keys import BATCH_KEY, CLEANED_START_PREFIX, LOG_START_PREFIX
from storage.policy import FsyncPolicy, RecoverMode
from storage.segment import HEADER_SIZE, encode_entry, entry_end
from wire import ErrorCode

if TYPE_CHECKING:
    from storage.log import Log
    from storage.log_cleaner import CleanResult
    from storage.log_cleaner_plan import SegmentInfo

__all__ = ["TOPICS_DIR", "LoadedTopic", "TopicFiles"]

log = logging.getLogger(__name__)

TOPICS_DIR = "topics"
_METADATA = "topic.json"
_DELETED_SUFFIX = ".deleted"
_CLEANER_CHECKPOINT = "cleaner-offset-checkpoint"
_OFFSET = BATCH_KEY
_LOG_START = LOG_START_PREFIX
_LAST_OFFSET_DELTA = struct.Struct(">i")  # at byte 23 of a batch
_MAX_TIMESTAMP = struct.Struct(">q")  # at byte 35 of a batch
_TIMESTAMPS = struct.Struct(">qq")  # base and max timestamps, at byte 27 of a batch
_DEFAULT_SEGMENT_BYTES = 1_073_741_824  # log.segment.bytes


@dataclass(slots=True)
class LoadedTopic:
    """A topic as the data directory holds it: batches per partition, in offset order (the
    partitions ``TopicFiles.read_partitions`` has read and the caller not yet taken)."""

    name: str
    topic_id: uuid.UUID
    partitions: int
    configs: dict[str, str]
    batches: dict[int, list[bytes]] = field(default_factory=dict)
    #: Per partition, where each of ``batches`` lies: segment file, position in it.
    locations: dict[int, list[tuple[str, int]]] = field(default_factory=dict)
    #: As created (-1: the cluster's default.replication.factor).
    replication_factor: int = -1
    #: Log start offsets DeleteRecords moved (partitions without one start at their data).
    log_starts: dict[int, int] = field(default_factory=dict)
    #: The log start offset the log cleaner noted at the head of the log (it may lie below
    #: the first batch kept): applied before ``log_starts``.
    cleaned_starts: dict[int, int] = field(default_factory=dict)


@dataclass(slots=True)
class _SegmentSpan:
    """The batches of one segment: first and last offsets, largest timestamp."""

    first_offset: int
    last_offset: int
    max_timestamp: int
    #: The first batch's base timestamp (max.compaction.lag.ms).
    first_timestamp: int = -1


def _span_of(data: bytes, base_offset: int) -> _SegmentSpan:
    (delta,) = _LAST_OFFSET_DELTA.unpack_from(data, 23)
    (first_timestamp, max_timestamp) = _TIMESTAMPS.unpack_from(data, 27)
    return _SegmentSpan(base_offset, base_offset + delta, max_timestamp, first_timestamp)


class TopicFiles:
    """The ``topics/`` directory of one data directory."""

    def __init__(self, data_dir: str, fsync: FsyncPolicy, recover: RecoverMode,
                 segment_bytes: int = _DEFAULT_SEGMENT_BYTES,
                 max_open_files: int = DEFAULT_MAX_OPEN_SEGMENT_FILES) -> None:
        self.root = os.path.join(data_dir, TOPICS_DIR)
        #: The partition logs' files: at most ``max_open_files`` descriptors open at once.
        self.fs = PooledFileSystem(max_open_files)
        self.fsync: FsyncPolicy = fsync
        self.recover: RecoverMode = recover
        #: ``log.segment.bytes``: the segment size of topics without ``segment.bytes``.
        self.segment_bytes = segment_bytes
        self._logs: dict[tuple[uuid.UUID, int], Log] = {}
        #: Held while a partition log opens: ``open_partitions`` runs in a worker thread.
        self._opening = threading.RLock()
        self._topic_segment_bytes: dict[uuid.UUID, int] = {}
        #: Per partition log: each segment's batches, by the segment's first entry index.
        self._spans: dict[tuple[uuid.UUID, int], dict[int, _SegmentSpan]] = {}

    # -- loading ------------------------------------------------------------------------

    def load(self) -> Iterator[LoadedTopic]:
        """Every topic of the directory (finishing deletions a crash interrupted), its
        partitions not read yet: ``read_partitions`` reads them."""
        if not os.path.isdir(self.root):
            return
        for entry in sorted(os.listdir(self.root)):
            path = os.path.join(self.root, entry)
            if entry.endswith(_DELETED_SUFFIX):
                shutil.rmtree(path, ignore_errors=True)
                continue
            metadata = os.path.join(path, _METADATA)
            if not os.path.isfile(metadata):
                continue  # a creation that never completed: no client ever saw the topic
            with open(metadata, encoding="utf-8") as f:
                spec = json.load(f)
            topic = LoadedTopic(spec["name"], uuid.UUID(spec["topic_id"]),
                                int(spec["partitions"]), dict(spec.get("configs", {})),
                                replication_factor=int(spec.get("replication_factor", -1)))
            self._remember_segment_bytes(topic.topic_id, topic.configs)
            yield topic

    def read_partitions(self, topic: LoadedTopic) -> Iterator[int]:
        """Read ``topic``'s partitions one at a time into its ``batches`` and ``locations``,
        yielding each index once read. A caller that takes each partition's batches out
        before asking for the next holds one partition's bytes at a time, not the topic's:
        10^6 records of 100 bytes in one topic peaked at 193 MiB read whole."""
        path = os.path.join(self.root, str(topic.topic_id))
        for index in range(topic.partitions):
            if os.path.isdir(os.path.join(path, str(index))):
                self._read_partition(topic, index)
                yield index

    def _read_partition(self, topic: LoadedTopic, index: int) -> None:
        partition_log = self._open(topic.topic_id, index)
        for action in partition_log.recovery:
            log.warning("topic %s partition %d: %s", topic.name, index, action)
        batches = topic.batches[index] = []
        locations = topic.locations[index] = []
        spans = self._spans.setdefault((topic.topic_id, index), {})
        for segment in list(partition_log.segments):
            data, scan = partition_log.read_segment(segment)
            for (key, value), start in zip(scan.entries, scan.positions, strict=True):
                if value is not None:
                    batches.append(value)
                    locations.append((segment.path, entry_end(data, start) - len(value)))
                    self._widen(spans, segment.base, value, _OFFSET.unpack(key)[0])
                elif key[:1] == _LOG_START and len(key) == 1 + _OFFSET.size:
                    (topic.log_starts[index],) = _OFFSET.unpack_from(key, 1)
                elif key[:1] == CLEANED_START_PREFIX and len(key) == 1 + _OFFSET.size:
                    (topic.cleaned_starts[index],) = _OFFSET.unpack_from(key, 1)

    # -- writes -------------------------------------------------------------------------

    def created(self, name: str, topic_id: uuid.UUID, partitions: int,
                configs: Mapping[str, str], replication_factor: int = -1) -> None:
        """Persist a new topic's metadata (before it exists for clients)."""
        self._remember_segment_bytes(topic_id, configs)
        directory = os.path.join(self.root, str(topic_id))
        try:
            os.makedirs(directory, exist_ok=True)
            tmp = os.path.join(directory, _METADATA + ".tmp")
            with open(tmp, "w", encoding="utf-8") as f:
                spec: dict[str, object] = {"name": name, "topic_id": str(topic_id),
                                           "partitions": partitions, "configs": dict(configs)}
                if replication_factor != -1:
                    spec["replication_factor"] = replication_factor
                json.dump(spec, f)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, os.path.join(directory, _METADATA))
            _fsync_dir(directory)
            _fsync_dir(self.root)
        except OSError as exc:
            raise BrokerError(ErrorCode.KAFKA_STORAGE_ERROR,
                              f"cannot persist topic {name}: {exc.strerror or exc}") from exc

    def deleted(self, topic_id: uuid.UUID) -> None:
        """Forget a topic's files: closed, renamed aside (atomic), then removed."""
        directory = os.path.join(self.root, str(topic_id))
        aside = directory + _DELETED_SUFFIX
        with self._opening:  # (no partition of it opening in a worker thread meanwhile)
            for key in [k for k in self._logs if k[0] == topic_id]:
                self._logs.pop(key).close()
                self._spans.pop(key, None)
            self.fs.forget_reads_under(directory)
            if not os.path.isdir(directory):
                return
            try:
                os.replace(directory, aside)
                _fsync_dir(self.root)
            except OSError as exc:
                raise BrokerError(ErrorCode.KAFKA_STORAGE_ERROR,
                                  f"cannot delete topic {topic_id}: {exc.strerror or exc}"
                                  ) from exc
        shutil.rmtree(aside, ignore_errors=True)

    def appended(self, topic_id: uuid.UUID, index: int, base_offset: int,
                 data: bytes) -> tuple[str, int]:
        """Write one batch (base offset assigned) to the partition's log, fsynced per the
        policy; the segment file and the position of the batch there. KAFKA_STORAGE_ERROR
        if it cannot be written (nothing is then applied)."""
        entry = encode_entry(_OFFSET.pack(base_offset), data)
        try:
            partition_log = self._open(topic_id, index)
            written = partition_log.write_batch(_one_entry(entry))
        except (StorageError, OSError) as exc:
            raise BrokerError(ErrorCode.KAFKA_STORAGE_ERROR,
                              f"cannot append to partition {index}: {exc}") from exc
        spans = self._spans.get((topic_id, index))
        if spans is None:
            spans = self._spans[(topic_id, index)] = {}
        self._widen(spans, partition_log.segments[-1].base, data, base_offset)
        assert written is not None  # (one entry)
        path, start = written
        return path, start + len(entry) - len(data)  # the batch ends its entry

    @staticmethod
    def _widen(spans: dict[int, _SegmentSpan], segment: int, data: bytes, base: int) -> None:
        known = spans.get(segment)
        if known is None:
            spans[segment] = _span_of(data, base)
            return
        (delta,) = _LAST_OFFSET_DELTA.unpack_from(data, 23)
        (max_timestamp,) = _MAX_TIMESTAMP.unpack_from(data, 35)
        known.last_offset = base + delta
        if max_timestamp > known.max_timestamp:
            known.max_timestamp = max_timestamp

    def expire(self, topic_id: uuid.UUID, index: int, retention_ms: int, retention_bytes: int,
               now_ms: int) -> int | None:
        """Delete the partition's oldest closed segments that retention lets go (-1: no
        limit); the first offset kept after them, or None when nothing was deleted."""
        key = (topic_id, index)
        partition_log = self._logs.get(key)
        if partition_log is None:
            return None
        spans = self._spans.get(key, {})
        closed = partition_log.segments[:-1]
        doomed: list[Segment] = []
        if retention_ms >= 0:
            for segment in closed:
                span = spans.get(segment.base)
                if span is not None and span.max_timestamp >= now_ms - retention_ms:
                    break
                doomed.append(segment)
        if retention_bytes >= 0:
            size = sum(s.size - HEADER_SIZE for s in partition_log.segments)
            size -= sum(s.size - HEADER_SIZE for s in doomed)
            for segment in closed[len(doomed):]:
                if size - (segment.size - HEADER_SIZE) < retention_bytes:
                    break
                doomed.append(segment)
                size -= segment.size - HEADER_SIZE
        if not doomed:
            return None
        try:
            partition_log.delete_oldest(len(doomed))
        except (StorageError, OSError) as exc:
            log.error("retention of partition %d of %s failed: %s", index, topic_id, exc)
            return None
        kept = [spans.pop(s.base) for s in doomed if s.base in spans]
        return kept[-1].last_offset + 1 if kept else None

    # -- the log cleaner (storage.log_cleaner) ------------------------------------------

    def partition_log(self, topic_id: uuid.UUID, index: int) -> Log | None:
        """The partition's open log, None when it is not open (never created here)."""
        return self._logs.get((topic_id, index))

    def partition_bytes(self, topic_id: uuid.UUID, index: int) -> int:
        """The bytes of the partition's segment files (their valid lengths, headers
        included): what Kafka's ``log.size`` reports; 0 when it was never written."""
        partition_log = self._logs.get((topic_id, index))
        return 0 if partition_log is None else sum(s.size for s in partition_log.segments)

    def segment_bytes_of(self, topic_id: uuid.UUID) -> int:
        """The topic's ``segment.bytes`` (else ``log.segment.bytes``)."""
        return self._topic_segment_bytes.get(topic_id, self.segment_bytes)

    def segment_infos(self, topic_id: uuid.UUID, index: int) -> list[SegmentInfo]:
        """The partition's segments as the cleaner plans with them (the last is active)."""
        # Imported here: the cleaner's plan is not needed to answer the first Metadata
        # (about 14 M instructions of the start-up, issue 33).
        from storage.log_cleaner_plan import SegmentInfo

        partition_log = self._logs.get((topic_id, index))
        if partition_log is None:
            return []
        spans = self._spans.get((topic_id, index), {})
        infos = []
        for segment in list(partition_log.segments):
            span = spans.get(segment.base)
            if span is None:
                infos.append(SegmentInfo(segment.base, segment.size - HEADER_SIZE))
            else:
                infos.append(SegmentInfo(segment.base, segment.size - HEADER_SIZE,
                                         span.first_offset, span.last_offset,
                                         span.max_timestamp, span.first_timestamp))
        return infos

    def cleaned(self, topic_id: uuid.UUID, index: int, result: CleanResult) -> None:
        """Note what a cleaning round left of each segment group it rewrote."""
        spans = self._spans.get((topic_id, index))
        if spans is None:
            return
        for group in result.groups:
            for base in [b for b in spans if group.lo <= b < group.hi]:
                del spans[base]
            if group.kept:
                first, last = group.kept[0], group.kept[-1]
                spans[group.lo] = _SegmentSpan(first[0], last[1],
                                               max(k[2] for k in group.kept),
                                               group.first_timestamp)

    def read_cleaner_checkpoints(self) -> dict[tuple[uuid.UUID, int], int]:
        """The log cleaner's first dirty offsets (Kafka's ``cleaner-offset-checkpoint``:
        a version line, a count line, then ``topic-id partition offset`` lines); empty when
        missing or unreadable (the next rounds then clean from the log start)."""
        try:
            with open(os.path.join(self.root, _CLEANER_CHECKPOINT), encoding="utf-8") as f:
                lines = f.read().splitlines()
            out = {}
            for line in lines[2:]:
                topic, index, offset = line.split()
                out[(uuid.UUID(topic), int(index))] = int(offset)
            return out
        except (OSError, ValueError):
            return {}

    def write_cleaner_checkpoints(self, checkpoints: Mapping[tuple[uuid.UUID, int], int]) -> None:
        """Persist them atomically (temporary file, fsync, rename); may run in a thread."""
        lines = ["0", str(len(checkpoints))]
        lines += [f"{t} {i} {o}" for (t, i), o in sorted(checkpoints.items())]
        os.makedirs(self.root, exist_ok=True)
        final = os.path.join(self.root, _CLEANER_CHECKPOINT)
        with open(final + ".tmp", "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(final + ".tmp", final)
        _fsync_dir(self.root)

    def _remember_segment_bytes(self, topic_id: uuid.UUID, configs: Mapping[str, str]) -> None:
        try:
            size = int(configs.get("segment.bytes", self.segment_bytes))
        except ValueError:
            size = self.segment_bytes
        self._topic_segment_bytes[topic_id] = max(size, HEADER_SIZE + 1)

    def log_start_moved(self, topic_id: uuid.UUID, index: int, log_start_offset: int) -> None:
        """Record a partition's new log start offset (DeleteRecords) before it takes effect."""
        entry = encode_entry(_LOG_START + _OFFSET.pack(log_start_offset), None)
        try:
            self._open(topic_id, index).write_batch(_one_entry(entry))
        except (StorageError, OSError) as exc:
            raise BrokerError(ErrorCode.KAFKA_STORAGE_ERROR,
                              f"cannot record the log start of partition {index}: {exc}") from exc

    def sync(self) -> None:
        """Flush every partition log with unsynced writes (the interval policy's tick)."""
        for partition_log in list(self._logs.values()):  # may run in a worker thread
            if partition_log.dirty:
                partition_log.sync()

    def close(self) -> None:
        """Flush and close every partition log."""
        with self._opening:
            for partition_log in self._logs.values():
                partition_log.close()
            self._logs.clear()
            self.fs.close_reads()

    def unopened(self, partitions: Iterable[tuple[uuid.UUID, int]]) -> list[tuple[uuid.UUID, int]]:
        """Those of ``partitions`` whose log is not open yet."""
        logs = self._logs
        return [key for key in partitions if key not in logs]

    def open_partitions(self, partitions: Iterable[tuple[uuid.UUID, int]]) -> None:
        """Open (create, recover) these partitions' logs now; blocking, for a worker thread
        (``TopicStore.open_logs`` where partitions are created, the startup's load): a new
        partition log locks its directory and creates its first segment with three fsyncs,
        which on the event loop held every connection of the server (0.5 s for six
        partitions on an idle disk). A log that cannot be opened is left for the append to
        report (KAFKA_STORAGE_ERROR)."""
        for topic_id, index in partitions:
            try:
                with self._opening:  # (not a topic deleted meanwhile: no directory again)
                    if not os.path.isdir(os.path.join(self.root, str(topic_id))):
                        continue
                    self._open(topic_id, index)
            except (StorageError, OSError) as exc:
                log.debug("partition %s-%d did not open ahead of its append: %s", topic_id,
                          index, exc)

    def _open(self, topic_id: uuid.UUID, index: int) -> Log:
        key = (topic_id, index)
        partition_log = self._logs.get(key)
        if partition_log is not None:
            return partition_log
        with self._opening:  # (one opener at a time: the loop's append, or a worker thread)
            partition_log = self._logs.get(key)
            if partition_log is None:
                from storage.log import Log  # see _one_entry

                directory = os.path.join(self.root, str(topic_id), str(index))
                segment_bytes = self._topic_segment_bytes.get(topic_id, self.segment_bytes)
                partition_log = Log.open(directory, fsync=self.fsync, recover=self.recover,
                                         segment_bytes=max(segment_bytes, HEADER_SIZE + 1),
                                         fs=self.fs)
                self._logs[key] = partition_log
        return partition_log


def _one_entry(entry: bytes) -> Any:
    """``entry`` as a batch for ``Log.write_batch``. storage's log and batch modules (the
    coordinator's record codecs with them) are imported where a partition log is first
    used, not with this module: a server with no topic data answers its first Metadata
    before it needs them (startup time)."""
    from storage.batch import EncodedBatch

    return EncodedBatch(entry, 1)


def _fsync_dir(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
