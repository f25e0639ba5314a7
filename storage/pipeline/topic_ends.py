"""Log-end offsets of the durable topics in a data directory (plain Python, no Spark).

``kcoord serve`` (``--topic-storage disk``, the default) keeps every topic under
``DATA_DIR/topics/<topic id>/``: ``topic.json`` (name, partition count, ...) and one
segment log per partition, ``<partition>/NNNNNNNNNNNNNNNNNNNN.log``, whose entries are
``key`` = the batch's base offset (int64), ``value`` = the record batch (entries without
a value move the log start offset). A partition's log end offset (its high watermark:
kcoord has one replica) is the last batch's base offset + last offset delta + 1.

Only the batch headers are needed: the last offset delta (int32 at byte 23) and the
largest timestamp (int64 at byte 35). :class:`PartitionEnds` keeps, per partition, the
log end as a step function of time: the end after every batch whose max timestamp is at
most T, so the end "as of T" counts only batches written by T (a batch's max timestamp is
its producer's time, the one Kafka's time index uses).

Read-only: segments are read as files (entry framing and CRC checked by
``storage.segment.scan_entries``); nothing is locked or truncated, so a running server's
directory can be read (a torn tail ends that partition's read).
"""

from __future__ import annotations

import bisect
import json
import mmap
import os
import struct
from dataclasses import dataclass, field

from storage.directory import find_segments
from storage.segment import HEADER_SIZE, scan_entries

__all__ = ["TOPICS_DIR", "PartitionEnds", "TopicLogs", "read_topic_logs"]

TOPICS_DIR = "topics"
_METADATA = "topic.json"
_DELETED_SUFFIX = ".deleted"
_OFFSET = struct.Struct(">q")
_LAST_OFFSET_DELTA = struct.Struct(">i")  # at byte 23 of a v2 batch
_MAX_TIMESTAMP = struct.Struct(">q")  # at byte 35
_BATCH_HEADER = 61
_ENTRY_HEAD = struct.Struct(">IIhi")  # length, crc, format, key length


@dataclass
class PartitionEnds:
    """One partition's log end over time: ``times[i]`` (ascending) -> ``ends[i]``, the
    log end once every batch with a max timestamp <= ``times[i]`` is counted."""

    times: list[int] = field(default_factory=list)
    ends: list[int] = field(default_factory=list)

    def end_as_of(self, when_ms: int | None) -> int:
        """The log end counting the batches whose max timestamp is <= ``when_ms`` (all of
        them for None); 0 for a partition without data."""
        if not self.ends:
            return 0
        if when_ms is None:
            return self.ends[-1]
        i = bisect.bisect_right(self.times, when_ms)
        return self.ends[i - 1] if i else 0


@dataclass
class TopicLogs:
    """The durable topics of one data directory: name -> partition count, and the log
    ends of each (topic, partition) that exists."""

    data_dir: str
    partition_counts: dict[str, int] = field(default_factory=dict)
    ends: dict[tuple[str, int], PartitionEnds] = field(default_factory=dict)


def _batch_ends(directory: str) -> list[tuple[int, int]]:
    """(max timestamp, end offset) of every batch of one partition log, in log order."""
    out: list[tuple[int, int]] = []
    try:
        segments = find_segments(directory)
    except OSError:
        return out
    for seg in segments:
        with open(seg.path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size <= HEADER_SIZE:
                continue
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
                scan = scan_entries(data, HEADER_SIZE, collect=False)  # type: ignore[arg-type]
                for pos in scan.positions:
                    _, _, _, key_len = _ENTRY_HEAD.unpack_from(data, pos)
                    key_at = pos + _ENTRY_HEAD.size
                    value_len = _LAST_OFFSET_DELTA.unpack_from(data, key_at + key_len)[0]
                    if key_len != _OFFSET.size or value_len < _BATCH_HEADER:
                        continue  # a log start move (no value), not a batch
                    (base,) = _OFFSET.unpack_from(data, key_at)
                    batch = key_at + key_len + 4
                    (delta,) = _LAST_OFFSET_DELTA.unpack_from(data, batch + 23)
                    (max_ts,) = _MAX_TIMESTAMP.unpack_from(data, batch + 35)
                    out.append((max_ts, base + delta + 1))
        if scan.stop is not None:
            break  # a torn tail (or worse): what follows is not the partition's data
    return out


def _steps(batches: list[tuple[int, int]]) -> PartitionEnds:
    """The step function of the log end over batch max timestamps."""
    ends = PartitionEnds()
    best = 0
    for max_ts, end in sorted(batches):
        if end <= best:
            continue
        best = end
        if ends.times and ends.times[-1] == max_ts:
            ends.ends[-1] = end
        else:
            ends.times.append(max_ts)
            ends.ends.append(end)
    return ends


def read_topic_logs(data_dir: str) -> TopicLogs | None:
    """The topics of ``data_dir``; None when it holds no ``topics/`` directory (a server
    run with ``--topic-storage memory``, or one that never had a topic)."""
    root = os.path.join(data_dir, TOPICS_DIR)
    if not os.path.isdir(root):
        return None
    logs = TopicLogs(os.path.abspath(data_dir))
    for entry in sorted(os.listdir(root)):
        path = os.path.join(root, entry)
        metadata = os.path.join(path, _METADATA)
        if entry.endswith(_DELETED_SUFFIX) or not os.path.isfile(metadata):
            continue  # being deleted, or a creation that never completed
        try:
            with open(metadata, encoding="utf-8") as f:
                spec = json.load(f)
            name, count = str(spec["name"]), int(spec["partitions"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        logs.partition_counts[name] = count
        for index in range(count):
            logs.ends[(name, index)] = _steps(_batch_ends(os.path.join(path, str(index))))
    return logs
