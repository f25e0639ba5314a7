"""The append-only record log in a data directory (see FORMAT.md for the bytes).

``Log.open`` locks the directory, finishes or discards an interrupted compaction, checks
every segment (a closed one with a valid summary by its CRC-32: ``segment_summary``),
truncates a torn tail of the last one (and reports it), refuses corruption anywhere else
unless ``recover="truncate"``, and opens the last segment for appends. A segment's summary
is written when the log rolls past it.
``replay()`` yields every record in order (``full_replay``), ``replay_live()`` the live
ones (``live_replay``); ``append()`` writes a batch (one ``write``) and
fsyncs it when the policy is ``always``. Appends are thread-safe (the async wrapper runs
them in worker threads).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Iterator, Sequence

from storage.records import Record

from .batch import EncodedBatch
from .directory import RecoveryAction, Segment, lock_directory, segment_name
from .errors import CorruptLogError, LogClosedError, LogWriteError
from .fs import FileHandle, FileSystem, OsFileSystem, write_all
from .full_replay import replay_all
from .key_ints import KeyInts
from .live_index import LiveIndex
from .live_replay import replay_live
from .policy import FSYNC_POLICIES, FsyncPolicy, RecoverMode
from .recovery import recover_directory
from .segment import HEADER_SIZE, ScanResult, encode_header, scan_entries
from .segment_summary import SegmentSummary, remove_summary, write_summary

__all__ = ["DEFAULT_SEGMENT_BYTES", "Log"]

log = logging.getLogger(__name__)

DEFAULT_SEGMENT_BYTES = 64 * 1024 * 1024


class Log:
    """An open, locked record log. Use :meth:`open`."""

    def __init__(self, directory: str, fs: FileSystem, lock_fd: int, *, segment_bytes: int,
                 fsync: FsyncPolicy, fsync_interval_ms: int, recover: RecoverMode) -> None:
        self.directory = directory
        self.fs = fs
        self.segment_bytes = segment_bytes
        self.fsync_policy: FsyncPolicy = fsync
        self.fsync_interval_ms = fsync_interval_ms
        self.recover_mode: RecoverMode = recover
        self.recovery: list[RecoveryAction] = []
        self.segments: list[Segment] = []
        self.lock = threading.RLock()
        self.fsync_count = 0
        #: Under ``interval``, whether an append past the interval fsyncs itself; False
        #: once a background flusher owns interval fsyncs (``AsyncLog``), so an append on
        #: the event loop never waits for a disk flush.
        self.interval_sync_inline = True
        self._lock_fd: int | None = lock_fd
        self._active: FileHandle | None = None
        self._dirty = False
        #: one fsync at a time (``sync``), and the handle it is fsyncing (not closed under it)
        self._one_sync = threading.Lock()
        self._syncing: FileHandle | None = None
        self._last_sync = time.monotonic()
        self._failed: str | None = None
        # Compaction statistics: live entry bytes per key, all entry bytes.
        self._live = KeyInts()
        self.live_bytes = 0
        self.event_bytes = 0
        self.stats_valid = False
        #: replays in progress, and whether a compaction runs: they exclude each other
        #: (compaction deletes the segment files a replay would read)
        self.replaying = 0
        self.compacting = False
        self.idle = threading.Condition(self.lock)
        #: what open() learnt for replay_live (None: replay_live builds it)
        self._live_index: LiveIndex | None = None
        #: the active segment's summary so far, written when it is rolled
        self._building: SegmentSummary | None = None

    # ----------------------------------------------------------------------------------
    # Opening and recovery

    @classmethod
    def open(
        cls,
        directory: str,
        *,
        segment_bytes: int = DEFAULT_SEGMENT_BYTES,
        fsync: FsyncPolicy = "always",
        fsync_interval_ms: int = 1000,
        recover: RecoverMode = "fail",
        fs: FileSystem | None = None,
        live_index: bool = False,
    ) -> Log:
        """Lock ``directory`` (created if missing), recover it and open it for appends.

        ``live_index=True`` remembers, while checking the segments, where each key's newest
        entry is, for :meth:`replay_live` (one int per live key)."""
        if fsync not in FSYNC_POLICIES:
            raise ValueError(f"fsync policy must be always, interval or never: {fsync!r}")
        if recover not in ("fail", "truncate"):
            raise ValueError(f"recover must be 'fail' or 'truncate': {recover!r}")
        if segment_bytes <= HEADER_SIZE:
            raise ValueError(f"segment_bytes must exceed {HEADER_SIZE}")
        fs = fs or OsFileSystem()
        lock_fd = lock_directory(fs, directory)
        self = cls(directory, fs, lock_fd, segment_bytes=segment_bytes, fsync=fsync,
                   fsync_interval_ms=fsync_interval_ms, recover=recover)
        try:
            self._recover(LiveIndex() if live_index else None)
        except BaseException:
            self._release_lock()
            raise
        return self

    def _path(self, name: str) -> str:
        return os.path.join(self.directory, name)

    def _recover(self, index: LiveIndex | None) -> None:
        self.segments, self.recovery, building = recover_directory(
            self.fs, self.directory, self.recover_mode, index
        )
        self._building = None if building is None else building.compact()
        self._live_index = index
        if not self.segments:
            self._active = self._create_segment(0)
        else:
            self._active = self.fs.open_append(self.segments[-1].path)
        for action in self.recovery:
            log.warning(
                "recovery: %s at byte %d of %s: dropped %d bytes, kept %d entries before it",
                action.reason,
                action.offset,
                action.path,
                action.dropped_bytes,
                action.entries_kept,
            )

    def _create_segment(self, base: int) -> FileHandle:
        """Create a segment atomically (header written and fsynced under a temporary name,
        then renamed) and return it open for appends."""
        final = self._path(segment_name(base))
        temp = final + ".new"
        if self.fs.exists(temp):
            self.fs.unlink(temp)
        handle = self.fs.open_append(temp, create=True)
        try:
            header = encode_header(base)
            write_all(handle, header)
            handle.fsync()
            self.fs.rename(temp, final)
            self.fs.fsync_dir(self.directory)
        except BaseException:
            handle.close()
            raise
        self.segments.append(Segment(base, final, HEADER_SIZE, 0))
        self._building = SegmentSummary.new_segment(base)
        return handle

    # ----------------------------------------------------------------------------------
    # Reading

    @property
    def next_index(self) -> int:
        """Index the next appended entry will get."""
        last = self.segments[-1]
        return last.base + last.count

    @property
    def total_bytes(self) -> int:
        """Entry bytes in all segments (headers excluded)."""
        return sum(s.size - HEADER_SIZE for s in self.segments)

    def read_segment(self, seg: Segment, *, collect: bool = True) -> tuple[bytes, ScanResult]:
        """The bytes of a segment and its entries, up to its known valid size."""
        data = self.fs.read_bytes(seg.path)
        scan = scan_entries(data, HEADER_SIZE, seg.size, collect=collect)
        if scan.stop is not None or HEADER_SIZE + scan.valid_bytes != seg.size:
            raise CorruptLogError(
                seg.path,
                HEADER_SIZE + scan.valid_bytes,
                "segment changed on disk after it was opened",
            )
        return data, scan

    def replay(self) -> Iterator[Record]:
        """Every record in log order (unknown record types skipped with a warning).

        A full pass also rebuilds the statistics :meth:`needs_compaction` uses."""
        with self.lock:
            self.idle.wait_for(lambda: not self.compacting)
            self.replaying += 1
        try:
            live: dict[bytes, int] = {}
            event_bytes = yield from replay_all(self.fs, list(self.segments), live)
            self.set_stats(live, 0, event_bytes)
        finally:
            with self.lock:
                self.replaying -= 1
                self.idle.notify_all()

    def replay_live(self) -> Iterator[Record]:
        """The records a last-value-per-key reader needs, in log order: every key's newest
        entry (tombstones included) and every TransactionState entry; RebalanceEvent history
        is skipped (``storage.live_replay``). One pass over the log when it was opened with
        ``live_index=True`` and none over what open() checked. Rebuilds the compaction
        statistics like :meth:`replay`."""
        with self.lock:
            self.idle.wait_for(lambda: not self.compacting)
            self.replaying += 1
            index, self._live_index = self._live_index, None
            segments = list(self.segments)
        try:
            live: dict[bytes, int] = {}
            event_bytes = yield from replay_live(self.fs, segments, index, live)
            self.set_stats(live, 0, event_bytes)
        finally:
            with self.lock:
                self.replaying -= 1
                self.idle.notify_all()

    def set_stats(self, live: dict[bytes, int], other_live: int, event_bytes: int) -> None:
        """Compaction statistics after a replay: ``live`` sizes each live key's newest
        entry; ``other_live`` bytes are live besides (a snapshot's: an over-estimate once
        their keys are written again, so compaction comes later, never wrongly)."""
        sizes = KeyInts(items=live.items())  # compact: about 4 bytes per offset commit key
        live.clear()
        with self.lock:
            self._live = sizes
            self.live_bytes = other_live + sizes.total()
            self.event_bytes = event_bytes
            self.stats_valid = True

    # ----------------------------------------------------------------------------------
    # Writing

    def append(self, records: Sequence[Record]) -> None:
        """Write ``records`` as one batch; fsynced before returning under ``always``."""
        if records:
            self.write_batch(EncodedBatch.encode(records))

    def write_batch(self, batch: EncodedBatch) -> tuple[str, int] | None:
        """Write a pre-encoded batch (one write call), then fsync per the policy; the
        segment file's path and the position its bytes start at (None for no entries).
        On failure the segment is cut back to where the batch started and
        :class:`LogWriteError` raised; the log stays loadable."""
        with self.lock:
            written = self._write_locked(batch)
        self._sync_if_due()
        return written

    def try_write_batch(self, batch: EncodedBatch) -> bool:
        """``write_batch`` unless another thread holds the log (an interval fsync, a
        compaction's swap): False then, and nothing written (the caller writes from a
        thread instead of waiting on the event loop)."""
        lock = self.lock
        if not lock.acquire(blocking=False):
            return False
        try:
            self._write_locked(batch)
        finally:
            lock.release()
        self._sync_if_due()  # (never under the lock: ``sync`` takes it after its own)
        return True

    def _write_locked(self, batch: EncodedBatch) -> tuple[str, int] | None:
        if batch.count == 0:
            return None
        data = batch.data
        handle = self._writable()
        active = self.segments[-1]
        if active.count > 0 and active.size + len(data) > self.segment_bytes:
            handle = self._roll()
            active = self.segments[-1]
        start = active.size
        try:
            write_all(handle, data)
        except OSError as exc:
            self._cut_back(handle, start)
            raise LogWriteError(
                f"append to {active.path} failed: {exc.strerror or exc}", exc.errno
            ) from exc
        if self.fsync_policy == "always":
            try:
                handle.fsync()
            except OSError as exc:
                # After a failed fsync the kernel may have dropped dirty pages: nothing
                # written since the last good fsync can be trusted (PostgreSQL's
                # "fsyncgate"). Cut back and refuse further appends until reopened.
                self._cut_back(handle, start)
                self._failed = f"fsync failed: {exc.strerror or exc}"
                raise LogWriteError(
                    f"fsync of {active.path} failed: {exc.strerror or exc}", exc.errno
                ) from exc
            self.fsync_count += 1
            self._last_sync = time.monotonic()
        else:
            self._dirty = True
        active.size += len(data)
        active.count += batch.count
        building = self._building
        if building is not None and batch.commits:  # both maps in one pass over the keys
            self.live_bytes += building.add_commits(batch, self._live)
            return active.path, start
        added, events = batch.account(self._live)
        self.live_bytes, self.event_bytes = self.live_bytes + added, self.event_bytes + events
        if building is not None:
            building.add_entries(batch.keys, batch.count, data)
        return active.path, start

    def _sync_if_due(self) -> None:
        if (
            self.fsync_policy == "interval"
            and self.interval_sync_inline
            and (time.monotonic() - self._last_sync) * 1000 >= self.fsync_interval_ms
        ):
            self.sync()

    def _writable(self) -> FileHandle:
        if self._active is None:
            raise LogClosedError("the log is closed")
        if self._failed is not None:
            raise LogWriteError(f"the log refuses appends until reopened: {self._failed}")
        return self._active

    def _cut_back(self, handle: FileHandle, size: int) -> None:
        try:
            handle.truncate(size)
        except OSError as exc:
            self._failed = f"could not truncate after a failed write: {exc.strerror or exc}"
            log.error("%s; the next open will repair the tail", self._failed)

    def _roll(self) -> FileHandle:
        """Close the active segment (fsynced whatever the policy, so only the last segment
        can ever have a torn tail) and start a new one."""
        old = self._active
        assert old is not None
        closed, summary = self.segments[-1], self._building
        try:
            old.fsync()
            self.fsync_count += 1
            new = self._create_segment(self.next_index)
        except OSError as exc:
            reason = exc.strerror or str(exc)
            raise LogWriteError(f"cannot start a new segment: {reason}", exc.errno) from exc
        self._dirty = False
        self._active = new
        self._close_unless_syncing(old)
        if summary is not None:  # an optimisation: a failure is logged and ignored
            write_summary(self.fs, self.directory, closed.path, summary)
        return new

    def roll(self) -> None:
        """Start a new segment now if the active one holds entries (used by compaction)."""
        with self.lock:
            self._writable()
            if self.segments[-1].count > 0:
                self._roll()

    def sync(self) -> None:
        """fsync the active segment if anything was written since the last fsync: whatever
        was written before the call is durable when it returns. Appends go on meanwhile
        (the lock is not held across the fsync: one took up to 11 ms here, and every
        answer waited for it); a roll meanwhile leaves the handle for this call to close."""
        with self._one_sync:
            with self.lock:
                handle = self._active
                if not self._dirty or handle is None:
                    return
                self._dirty, self._syncing = False, handle
            try:
                handle.fsync()
            except OSError as exc:
                self._failed = f"fsync failed: {exc.strerror or exc}"
                raise LogWriteError(f"fsync failed: {exc.strerror or exc}", exc.errno) from exc
            finally:
                with self.lock:
                    self._syncing = None
                    if handle is not self._active:  # rolled or closed meanwhile
                        handle.close()
            with self.lock:
                self.fsync_count += 1
                self._last_sync = time.monotonic()

    def _close_unless_syncing(self, handle: FileHandle) -> None:
        if handle is not self._syncing:  # (else ``sync`` closes it once its fsync is done)
            handle.close()

    def fail(self, reason: str) -> None:
        """Refuse further appends (until reopened): the on-disk state needs recovery."""
        with self.lock:
            self._failed = reason
        log.error("log failed: %s", reason)

    @property
    def failed(self) -> str | None:
        """Why the log refuses appends, or None."""
        return self._failed

    @property
    def dirty(self) -> bool:
        """Whether appended entries await an fsync."""
        return self._dirty

    # ----------------------------------------------------------------------------------
    # Compaction support

    def needs_compaction(self, dead_ratio: float, min_bytes: int) -> bool:
        """Whether dead entry bytes reach ``dead_ratio`` x live bytes in a log of at least
        ``min_bytes`` entry bytes (known only after a full :meth:`replay`)."""
        if not self.stats_valid:
            return False
        total = self.total_bytes
        live = self.live_bytes + self.event_bytes
        return total >= min_bytes and total - live >= dead_ratio * live

    def replace_segments(
        self, lo: int, hi: int, swap_path: str, count: int, dropped_event_bytes: int = 0,
        summary: SegmentSummary | None = None,
    ) -> None:
        """Install committed compaction output covering entries [lo, hi): delete the old
        segments (and their summaries), rename the output into place, fsync the directory,
        then write the output's ``summary`` if given."""
        with self.lock:
            self._live_index = None
            old = [s for s in self.segments if lo <= s.base < hi]
            if old and old[-1] is self.segments[-1]:
                raise ValueError("compaction must not replace the active segment")
            for seg in old:
                remove_summary(self.fs, seg.path)
                self.fs.unlink(seg.path)
            final = self._path(segment_name(lo))
            self.fs.rename(swap_path, final)
            self.fs.fsync_dir(self.directory)
            size = self.fs.size(final)
            keep = [s for s in self.segments if not lo <= s.base < hi]
            self.segments = sorted([Segment(lo, final, size, count), *keep], key=lambda s: s.base)
            self.event_bytes = max(0, self.event_bytes - dropped_event_bytes)
            if summary is not None and summary.size == size:
                write_summary(self.fs, self.directory, final, summary)

    def delete_oldest(self, count: int) -> list[Segment]:
        """Delete the ``count`` oldest segments (retention; never the active one), files
        unlinked and the directory fsynced; the segments deleted."""
        with self.lock:
            if count <= 0:
                return []
            if count >= len(self.segments):
                raise ValueError("retention must not delete the active segment")
            self._live_index = None
            doomed = self.segments[:count]
            for seg in doomed:
                remove_summary(self.fs, seg.path)
                self.fs.unlink(seg.path)
            self.fs.fsync_dir(self.directory)
            self.segments = self.segments[count:]
            return doomed

    # ----------------------------------------------------------------------------------
    # Closing

    def close(self) -> None:
        """fsync (whatever the policy), close the active segment and release the lock."""
        with self.lock:
            if self._active is not None:
                try:
                    if self._dirty and self._failed is None:
                        self._active.fsync()
                        self.fsync_count += 1
                        self._dirty = False
                finally:
                    self._close_unless_syncing(self._active)
                    self._active = None
            self._release_lock()

    def _release_lock(self) -> None:
        if self._lock_fd is not None:
            self.fs.unlock(self._lock_fd)
            self._lock_fd = None

    def __enter__(self) -> Log:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

