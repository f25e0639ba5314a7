"""A :class:`~storage.log.Log` and its live snapshot (``live_snapshot``): replaying from
it at open, and writing a new one (at a clean close and periodically).

Both read segments, so both count as a replay (``Log.replaying``): compaction, which
deletes segment files, waits for them, and they for it.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from storage.records import Record

from .errors import CorruptLogError, StorageError
from .full_replay import replay_all
from .live_snapshot import (
    SNAPSHOT_FILE,
    LiveSnapshot,
    PackedEntries,
    build_snapshot,
    decode_entries,
    load_snapshot,
    read_snapshot,
    stale_reason,
    write_snapshot,
)

if TYPE_CHECKING:
    from .directory import Segment
    from .fs import FileSystem
    from .log import Log

__all__ = ["ROLL_AT_CLOSE_BYTES", "Build", "SnapshotReplay", "build_and_write",
           "replay_from_snapshot", "snapshot_at_close", "snapshot_log"]

log = logging.getLogger(__name__)

#: An active segment this large is closed at a clean stop: open checks the last segment
#: entry by entry (about 2.5 us an entry: a full 64 MiB segment of offset commits, 2 s),
#: a closed one by its summary's CRC-32.
ROLL_AT_CLOSE_BYTES = 4 * 1024 * 1024


@dataclass(slots=True)
class SnapshotReplay:
    """A replay that starts from the snapshot: the groups whose committed offsets it holds
    packed (decoded when first asked for), then ``records``: its other records and every
    record after it, in log order. Applying the packed groups' records and ``records``
    leaves the state a replay of the whole log leaves."""

    groups: dict[str, PackedEntries]
    records: Iterator[Record]
    #: segments the snapshot covers, the tail replayed after it
    covered_segments: int
    tail_bytes: int


@contextmanager
def _reading(log_: Log) -> Iterator[list[Segment]]:
    """The log's segments (copies, as they are now), compaction kept away meanwhile."""
    with log_.lock:
        log_.idle.wait_for(lambda: not log_.compacting)
        log_.replaying += 1
        segments = [dataclasses.replace(seg) for seg in log_.segments]
    try:
        yield segments
    finally:
        with log_.lock:
            log_.replaying -= 1
            log_.idle.notify_all()


def replay_from_snapshot(log_: Log) -> SnapshotReplay | None:
    """The replay from the directory's snapshot, if it has one that describes a prefix of
    the log; None (with one log line saying why) if not: replay the whole log then."""
    snapshot = read_snapshot(log_.fs, log_.directory)
    if snapshot is None:
        return None
    with _reading(log_) as segments:
        reason = stale_reason(log_.fs, snapshot, segments)
    if reason is not None:
        log.warning("ignoring %s (%s): replaying the whole log", SNAPSHOT_FILE, reason)
        return None
    covered = [(base, size) for base, size, _ in snapshot.covered]
    groups = {group: PackedEntries(entries) for group, entries in snapshot.groups.items()}
    tail = sum(seg.size for seg in segments[len(covered):]) + (
        segments[len(covered) - 1].size - covered[-1][1])
    snapshot.groups = {}
    return SnapshotReplay(groups, _records(log_, snapshot, covered), len(covered), tail)


def _records(log_: Log, snapshot: LiveSnapshot, covered: list[tuple[int, int]]
             ) -> Iterator[Record]:
    other, snapshot.other = snapshot.other, b""
    yield from decode_entries(other)
    del other
    with _reading(log_) as segments:
        now = [(seg.base, seg.size) for seg in segments[: len(covered)]]
        if len(now) != len(covered) or any(base != c_base or size < c_size for (base, size), (
                c_base, c_size) in zip(now, covered, strict=True)):
            raise CorruptLogError(log_.directory, 0, "the log changed under its snapshot")
        live: dict[bytes, int] = {}
        event_bytes = yield from replay_all(
            log_.fs, segments[len(covered) - 1 :], live, start=covered[-1][1]
        )
    log_.set_stats(live, snapshot.live_bytes, snapshot.event_bytes + event_bytes)


Build = Callable[["FileSystem", str, list["Segment"]], LiveSnapshot | None]
"""(file system, directory, the segments, durable and kept from compaction) -> the
snapshot written, or None (logged)."""


def build_and_write(fs: FileSystem, directory: str, segments: list[Segment]
                    ) -> LiveSnapshot | None:
    """Build the snapshot of ``segments`` (durable, kept from compaction by the caller)
    from the directory's previous one if it still describes them, and write it; None if it
    could not be (logged)."""
    try:
        previous = load_snapshot(fs, directory)
        if previous is not None and stale_reason(fs, previous, segments) is not None:
            previous = None
        snapshot = build_snapshot(fs, segments, previous)
    except (OSError, ValueError, StorageError) as exc:
        log.warning("could not build %s (ignored): %s", SNAPSHOT_FILE, exc)
        return None
    del previous
    return snapshot if write_snapshot(fs, directory, snapshot) else None


def snapshot_log(log_: Log, build: Build = build_and_write) -> LiveSnapshot | None:
    """Write the snapshot of the log as it is now (its bytes fsynced first), built from
    the previous snapshot when that still describes the log, else from every entry. The
    snapshot written (None: it could not be, which is logged: a snapshot is an
    optimisation, and the log stays as it was). ``build`` builds and writes it
    (``build_and_write``, here, by default; the server runs it in a child process:
    ``storage.snapshot_process``)."""
    with _reading(log_) as segments:
        try:
            log_.sync()  # what the snapshot covers is durable before the snapshot is
        except StorageError as exc:
            log.warning("could not build %s (ignored): %s", SNAPSHOT_FILE, exc)
            return None
        return build(log_.fs, log_.directory, segments)


def snapshot_at_close(log_: Log) -> LiveSnapshot | None:
    """At a clean stop: close the active segment if it holds ``ROLL_AT_CLOSE_BYTES`` (its
    summary written), then write the snapshot (``snapshot_log``)."""
    if log_.segments and log_.segments[-1].size >= ROLL_AT_CLOSE_BYTES:
        try:
            log_.roll()
        except StorageError as exc:
            log.warning("could not close the active segment at the stop (ignored): %s", exc)
            return None
    return snapshot_log(log_)
