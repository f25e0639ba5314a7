"""Compaction: rewrite the closed segments as their live set and swap it in atomically.

The live set keeps, in log order, the newest entry of every key (keys compared decoded, so
OffsetCommitKey v0 and v1 of one partition are one key); tombstones survive until
``tombstone_retention_ms`` after the segment holding them was last written (then replay no
longer needs them: compaction always starts at the first segment, so nothing older of the
key is left); RebalanceEvent history keeps the newest ``event_max_per_group`` events per
group that are younger than ``event_retention_ms``.

Steps, and what a crash after each leaves (``Log.open`` finishes or discards the work):

1. roll the active segment, so every segment compacted is closed;
2. write ``LO-HI.cleaned`` (LO = first compacted base, HI = active segment's base), fsync;
   a crash leaves a temporary file that open deletes;
3. rename it to ``LO-HI.swap`` and fsync the directory: the commit point; from here open
   completes the swap;
4. delete the old segments in [LO, HI), rename the swap file to ``LO.log``, fsync the
   directory.

Memory is bounded whatever the log's size: segments are read ``_READ_CHUNK`` bytes at a
time (an entry longer than that, at most 32 MiB, is read whole), and what is held across
the two passes is per live key (its decoded key and its newest entry's index), a bit per
entry, and the newest ``event_max_per_group`` events of each group. Steps 2 and 3 are
``rewrite_closed``: Python work per entry (pass 1 decodes every key), which the server runs
in a child process (``compaction_process``) so that it does not hold the GIL its event
loop needs.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections import defaultdict, deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from storage.records import RebalanceEventKey, RebalanceEventValue

from .directory import Segment
from .errors import CompactionError, CorruptLogError, LogWriteError
from .fs import FileSystem, write_all
from .log import Log
from .record_codec import RecordDecodeError, UnknownKey, decode_key, decode_value
from .record_types import EVENT_KEY_PREFIX
from .segment import HEADER_SIZE, StopReason, encode_header, scan_entries
from .segment_summary import SegmentSummary

__all__ = [
    "CompactionPolicy", "CompactionResult", "Rewrite", "Rewritten", "compact", "maybe_compact",
    "rewrite_closed", "stream_segment", "swap_path",
]

log = logging.getLogger(__name__)

_WRITE_CHUNK = 1 << 20
_READ_CHUNK = 1 << 20


@dataclass(frozen=True, slots=True)
class CompactionPolicy:
    """When to compact and what survives it."""

    #: compact when dead entry bytes >= dead_ratio x live entry bytes ...
    dead_ratio: float = 1.0
    #: ... and the log holds at least this many entry bytes.
    min_bytes: int = 16 * 1024 * 1024
    #: keep tombstones this long after their segment was last written (Kafka's
    #: delete.retention.ms default).
    tombstone_retention_ms: int = 24 * 60 * 60 * 1000
    #: RebalanceEvent history: maximum age and count per group.
    event_retention_ms: int = 7 * 24 * 60 * 60 * 1000
    event_max_per_group: int = 1000


@dataclass(frozen=True, slots=True)
class CompactionResult:
    """What one compaction did."""

    lo: int
    hi: int
    segments_before: int
    entries_before: int
    entries_after: int
    bytes_before: int
    bytes_after: int
    tombstones_dropped: int
    events_dropped: int
    seconds: float


def maybe_compact(
    log_: Log, policy: CompactionPolicy | None = None, *, now_ms: int | None = None,
    rewrite: Rewrite | None = None,
) -> CompactionResult | None:
    """Compact if the log's statistics say dead records outweigh live ones enough."""
    policy = policy or CompactionPolicy()
    if not log_.needs_compaction(policy.dead_ratio, policy.min_bytes):
        return None
    return compact(log_, policy, now_ms=now_ms, rewrite=rewrite)


def compact(
    log_: Log, policy: CompactionPolicy | None = None, *, now_ms: int | None = None,
    rewrite: Rewrite | None = None,
) -> CompactionResult | None:
    """Compact every closed segment now; None when there is nothing to compact.

    Appends may continue from other threads meanwhile (they go to the active segment); a
    replay in progress makes it return None (it would delete the files being read).
    ``rewrite`` writes the swap file (``rewrite_closed``, here, by default; the server
    runs it in a child process: ``storage.compaction_process``)."""
    policy = policy or CompactionPolicy()
    with log_.lock:
        if log_.replaying or log_.compacting:
            return None
        log_.compacting = True
    try:
        return _compact(log_, policy, now_ms, rewrite or rewrite_closed)
    finally:
        with log_.lock:
            log_.compacting = False
            log_.idle.notify_all()


@dataclass(frozen=True, slots=True)
class Rewritten:
    """What rewriting the closed segments into their swap file did."""

    entries_before: int
    entries_after: int
    bytes_after: int
    tombstones_dropped: int
    events_dropped: int
    dropped_event_bytes: int
    summary: SegmentSummary


Rewrite = Callable[[FileSystem, str, list[Segment], int, CompactionPolicy, int], Rewritten]
"""(file system, directory, the closed segments, HI, policy, now_ms) -> what it did, once
``LO-HI.swap`` holds the live set of the closed segments [LO, HI) and is committed."""


def swap_path(directory: str, lo: int, hi: int) -> str:
    """The swap file of a compaction of entries [lo, hi)."""
    return os.path.join(directory, f"{lo:020d}-{hi:020d}.swap")


def _compact(log_: Log, policy: CompactionPolicy, now_ms: int | None, rewrite: Rewrite,
             ) -> CompactionResult | None:
    started = time.perf_counter()
    if now_ms is None:
        now_ms = time.time_ns() // 1_000_000
    log_.roll()
    with log_.lock:
        closed = list(log_.segments[:-1])
        hi = log_.segments[-1].base
    if not closed:
        return None
    lo = closed[0].base
    done = rewrite(log_.fs, log_.directory, closed, hi, policy, now_ms)
    try:
        log_.fs.fsync_dir(log_.directory)
        log_.replace_segments(lo, hi, swap_path(log_.directory, lo, hi), done.entries_after,
                              done.dropped_event_bytes, done.summary)
    except OSError as exc:  # the swap is committed: the next open finishes it
        log_.fail(f"compaction could not finish its swap ({exc.strerror or exc})")
        raise LogWriteError(
            f"compaction swap failed: {exc.strerror or exc}; restart to complete it", exc.errno
        ) from exc
    result = CompactionResult(
        lo=lo,
        hi=hi,
        segments_before=len(closed),
        entries_before=done.entries_before,
        entries_after=done.entries_after,
        bytes_before=sum(s.size for s in closed),
        bytes_after=done.bytes_after,
        tombstones_dropped=done.tombstones_dropped,
        events_dropped=done.events_dropped,
        seconds=time.perf_counter() - started,
    )
    log.info(
        "compacted entries [%d, %d): %d segments, %d -> %d entries, %d -> %d bytes in %.3fs",
        lo,
        hi,
        result.segments_before,
        result.entries_before,
        result.entries_after,
        result.bytes_before,
        result.bytes_after,
        result.seconds,
    )
    return result


def rewrite_closed(fs: FileSystem, directory: str, closed: list[Segment], hi: int,
                   policy: CompactionPolicy, now_ms: int) -> Rewritten:
    """Write the live set of the ``closed`` segments (entries [their first base, ``hi``))
    to ``LO-HI.cleaned``, fsync it and rename it to ``LO-HI.swap`` (the commit point).
    CompactionError if that failed (the log is unchanged)."""
    lo = closed[0].base
    # Pass 1: where each key's newest entry is, and the newest events per group.
    newest: dict[object, int] = {}
    #: Keys whose newest entry is a tombstone: whether it is still young enough to keep.
    tombstones: dict[object, bool] = {}
    max_events = max(0, policy.event_max_per_group)
    events: defaultdict[str, deque[int]] = defaultdict(lambda: deque(maxlen=max_events))
    index = 0
    for seg in closed:
        mtime_ms = fs.mtime_ns(seg.path) // 1_000_000
        fresh_tombstones = now_ms - mtime_ms < policy.tombstone_retention_ms
        for key_bytes, value, _, _, _ in stream_segment(fs, seg):
            key = _identity(key_bytes)
            if type(key) is RebalanceEventKey:
                ts = _event_timestamp(key, value)
                if ts is not None and now_ms - ts <= policy.event_retention_ms and max_events:
                    events[key.group].append(index)
            else:
                newest[key] = index
                if value is None:
                    tombstones[key] = fresh_tombstones
                elif tombstones:
                    tombstones.pop(key, None)
            index += 1
    entries_before = index
    keep = bytearray((index + 7) // 8)  # one bit per entry
    tombstones_dropped = 0
    for key, i in newest.items():
        if tombstones.get(key, True):
            keep[i >> 3] |= 1 << (i & 7)
        else:
            tombstones_dropped += 1
    del newest, tombstones
    kept_events = 0
    for history in events.values():
        for i in history:
            keep[i >> 3] |= 1 << (i & 7)
        kept_events += len(history)
    del events

    # Pass 2: copy the surviving entries, in order, to the .cleaned file.
    swap = swap_path(directory, lo, hi)
    cleaned = swap.removesuffix(".swap") + ".cleaned"
    if fs.exists(cleaned):
        fs.unlink(cleaned)
    try:
        count, written, event_entries, dropped_event_bytes, summary = _write_cleaned(
            fs, closed, keep, cleaned, lo
        )
        fs.rename(cleaned, swap)  # the commit point: open() completes the swap from here
    except OSError as exc:
        with contextlib.suppress(OSError):
            if fs.exists(cleaned):
                fs.unlink(cleaned)
        raise CompactionError(
            f"compaction failed before its swap ({exc.strerror or exc}); the log is unchanged"
        ) from exc
    return Rewritten(entries_before, count, written, tombstones_dropped,
                     event_entries - kept_events, dropped_event_bytes, summary)


def stream_segment(
    fs: FileSystem, seg: Segment
) -> Iterator[tuple[bytes, bytes | None, bytes, int, int]]:
    """Every entry of a closed segment, read ``_READ_CHUNK`` bytes at a time:
    (key, value or None, the buffer holding the entry, its start and end in it)."""
    end = seg.size
    offset = HEADER_SIZE  # the file offset of buf[0]
    buf = b""
    while offset < end:
        want = min(max(_READ_CHUNK, 2 * len(buf)), end - offset - len(buf))
        chunk = fs.read_range(seg.path, offset + len(buf), want) if want > 0 else b""
        if not chunk:
            raise CorruptLogError(seg.path, offset, "segment changed on disk after it was opened")
        buf = buf + chunk if buf else chunk
        scan = scan_entries(buf)
        whole = offset + len(buf) >= end
        if scan.stop is not None and (whole or scan.stop is not StopReason.TRUNCATED):
            raise CorruptLogError(seg.path, offset + scan.valid_bytes,
                                  "segment changed on disk after it was opened")
        positions = scan.positions
        ends = [*positions[1:], scan.valid_bytes]
        for (key_bytes, value), start, stop in zip(scan.entries, positions, ends, strict=True):
            yield key_bytes, value, buf, start, stop
        buf = buf[scan.valid_bytes:]
        offset += scan.valid_bytes


def _write_cleaned(
    fs: FileSystem, closed: list[Segment], keep: bytearray, cleaned: str, lo: int
) -> tuple[int, int, int, int, SegmentSummary]:
    """Copy the entries whose index is in ``keep``, in order, to a new segment file
    ``cleaned`` (fsynced). Returns (entries written, bytes written, event entries seen,
    bytes of event entries dropped, the new segment's summary)."""
    summary = SegmentSummary.new_segment(lo)
    tombstone_mtime = 0
    count = written = index = event_entries = event_bytes = kept_event_bytes = 0
    out = fs.open_append(cleaned, create=True)
    try:
        buffer = [encode_header(lo)]
        buffered = HEADER_SIZE
        for seg in closed:
            seg_mtime = fs.mtime_ns(seg.path)
            for key_bytes, value, data, pos, end in stream_segment(fs, seg):
                is_event = key_bytes[:2] == EVENT_KEY_PREFIX
                if is_event:
                    event_entries += 1
                    event_bytes += end - pos
                if keep[index >> 3] & (1 << (index & 7)):
                    if is_event:
                        kept_event_bytes += end - pos
                    entry = data[pos:end]
                    buffer.append(entry)
                    buffered += end - pos
                    count += 1
                    summary.add_entries(((key_bytes, end - pos, value is None),), 1, entry)
                    if value is None:
                        tombstone_mtime = max(tombstone_mtime, seg_mtime)
                    if buffered >= _WRITE_CHUNK:
                        write_all(out, b"".join(buffer))
                        written += buffered
                        buffer, buffered = [], 0
                index += 1
        write_all(out, b"".join(buffer))
        written += buffered
        out.fsync()
    finally:
        out.close()
    if tombstone_mtime:
        # Retained tombstones keep their age: the output gets the modification time of
        # the newest segment one came from, so no tombstone looks older than it is (none
        # is dropped early; some may stay up to one segment's lifetime longer).
        fs.set_mtime_ns(cleaned, tombstone_mtime)
    return count, written, event_entries, event_bytes - kept_event_bytes, summary


def _identity(key_bytes: bytes) -> object:
    """What makes two entries the same key: the decoded key, or the raw bytes of keys this
    kcoord cannot decode (so they are compacted like Kafka does, by bytes)."""
    try:
        key = decode_key(key_bytes)
    except RecordDecodeError:
        return ("undecodable", key_bytes)
    if type(key) is UnknownKey:
        return ("unknown", key_bytes)
    return key


def _event_timestamp(key: RebalanceEventKey, value: bytes | None) -> int | None:
    if value is None:
        return None
    try:
        event = decode_value(key, value)
    except RecordDecodeError:
        return None
    return event.timestamp if isinstance(event, RebalanceEventValue) else None
