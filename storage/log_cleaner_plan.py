"""What the log cleaner cleans, decided without I/O (Kafka's ``LogCleanerManager``,
``LogToClean`` and ``Cleaner.groupSegmentsBySize``).

A partition is described by its segments (:class:`SegmentInfo`: entry index, bytes, first
and last batch offsets, timestamps), its log start and end offsets, its last stable offset
and the cleaner's checkpoint (the first dirty offset: where the last cleaning's offset map
ended). :func:`log_to_clean` finds the cleanable dirty range as Kafka's
``cleanableOffsets`` does -- never past the last stable offset (an open transaction's data
is never cleaned), the active segment, or the first segment holding a record younger than
``min.compaction.lag.ms`` -- rounded down to a segment boundary, and the dirty ratio;
:meth:`LogToClean.should_clean` applies ``min.cleanable.dirty.ratio`` and
``max.compaction.lag.ms``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = [
    "CleanerLogConfig",
    "LogToClean",
    "SegmentInfo",
    "group_segments_by_size",
    "log_to_clean",
]

_LONG_MAX = 2**63 - 1


@dataclass(frozen=True, slots=True)
class CleanerLogConfig:
    """A compacted topic's cleaning settings (Kafka's names and defaults)."""

    delete_retention_ms: int = 86_400_000
    min_cleanable_dirty_ratio: float = 0.5
    min_compaction_lag_ms: int = 0
    max_compaction_lag_ms: int = _LONG_MAX
    segment_bytes: int = 1_073_741_824

    @classmethod
    def from_configs(cls, topic: Mapping[str, str], broker: Mapping[str, str],
                     segment_bytes: int) -> CleanerLogConfig:
        """The topic's keys, else the broker's ``log.cleaner.*`` synonyms, else Kafka's
        defaults; ValueError for a value that is not a number."""
        def pick(key: str, broker_key: str, default: str) -> str:
            return topic.get(key, broker.get(broker_key, default))

        return cls(
            delete_retention_ms=int(pick("delete.retention.ms",
                                         "log.cleaner.delete.retention.ms", "86400000")),
            min_cleanable_dirty_ratio=float(pick("min.cleanable.dirty.ratio",
                                                 "log.cleaner.min.cleanable.ratio", "0.5")),
            min_compaction_lag_ms=int(pick("min.compaction.lag.ms",
                                           "log.cleaner.min.compaction.lag.ms", "0")),
            max_compaction_lag_ms=int(pick("max.compaction.lag.ms",
                                           "log.cleaner.max.compaction.lag.ms",
                                           str(_LONG_MAX))),
            segment_bytes=segment_bytes,
        )


@dataclass(frozen=True, slots=True)
class SegmentInfo:
    """One segment as the planner sees it; offsets None when it holds no batch."""

    index: int  # the storage segment's base entry index
    size: int
    first_offset: int | None = None
    last_offset: int | None = None
    max_timestamp: int = -1
    first_timestamp: int = -1


@dataclass(frozen=True, slots=True)
class LogToClean:
    """A partition's cleanable range (Kafka's ``LogToClean``)."""

    first_dirty_offset: int
    first_uncleanable_offset: int
    clean_bytes: int
    cleanable_bytes: int
    need_compaction_now: bool
    #: The closed segments [0, cleanable_segments) may be cleaned this round.
    cleanable_segments: int
    #: The checkpoint was outside the log and was reset to the log start.
    force_update_checkpoint: bool = False

    @property
    def total_bytes(self) -> int:
        return self.clean_bytes + self.cleanable_bytes

    @property
    def cleanable_ratio(self) -> float:
        return self.cleanable_bytes / self.total_bytes if self.total_bytes else 0.0

    def should_clean(self, config: CleanerLogConfig) -> bool:
        """Kafka's ``grabFilthiestCompactedLog`` filter."""
        if self.total_bytes <= 0:
            return False
        return ((self.need_compaction_now and self.cleanable_bytes > 0)
                or self.cleanable_ratio > config.min_cleanable_dirty_ratio)


def _starts(segment: SegmentInfo, default: int) -> int:
    return segment.first_offset if segment.first_offset is not None else default


def log_to_clean(
    segments: Sequence[SegmentInfo],
    log_start_offset: int,
    log_end_offset: int,
    last_stable_offset: int,
    checkpoint: int | None,
    now_ms: int,
    config: CleanerLogConfig,
) -> LogToClean:
    """The cleanable range of a partition whose last segment is the active one."""
    closed = list(segments[:-1])
    dirty = log_start_offset if checkpoint is None else checkpoint
    force = False
    if dirty < log_start_offset or dirty > log_end_offset:
        dirty, force = log_start_offset, checkpoint is not None
    active_start = _starts(segments[-1], log_end_offset) if segments else log_end_offset
    uncleanable = min(last_stable_offset, active_start)
    # Segments ending before the dirty offset are clean; the rest until the boundary dirty.
    if config.min_compaction_lag_ms > 0:
        for seg in closed:
            if seg.last_offset is None or seg.last_offset < dirty:
                continue
            if seg.max_timestamp > now_ms - config.min_compaction_lag_ms:
                uncleanable = min(uncleanable, _starts(seg, uncleanable))
                break
    uncleanable = max(dirty, uncleanable)
    # Round down to a segment boundary (Kafka's calculateCleanableBytes).
    boundary = len(closed)
    for i, seg in enumerate(closed):
        if seg.last_offset is not None and seg.last_offset >= uncleanable:
            boundary = i
            break
    first_uncleanable = (_starts(closed[boundary], uncleanable) if boundary < len(closed)
                         else active_start)
    clean_bytes = cleanable_bytes = 0
    earliest_dirty_ts = _LONG_MAX
    for seg in closed[:boundary]:
        if seg.last_offset is not None and seg.last_offset < dirty:
            clean_bytes += seg.size
        else:
            cleanable_bytes += seg.size
            if seg.first_timestamp > 0:
                earliest_dirty_ts = min(earliest_dirty_ts, seg.first_timestamp)
    max_lag = max(config.max_compaction_lag_ms, 0)
    need_now = earliest_dirty_ts < now_ms - max_lag if max_lag < now_ms else False
    return LogToClean(dirty, max(dirty, first_uncleanable), clean_bytes, cleanable_bytes,
                      need_now, boundary, force)


def group_segments_by_size(segments: Sequence[SegmentInfo], max_size: int,
                           end_offset: int) -> list[list[SegmentInfo]]:
    """The segments starting before ``end_offset``, in groups of consecutive segments of at
    most ``max_size`` bytes together (each group becomes one cleaned segment)."""
    groups: list[list[SegmentInfo]] = []
    for seg in segments:
        if seg.first_offset is not None and seg.first_offset >= end_offset:
            break
        if groups and sum(s.size for s in groups[-1]) + seg.size <= max_size:
            groups[-1].append(seg)
        else:
            groups.append([seg])
    return groups
