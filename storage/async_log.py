"""The log for the Trio server: writes off the event loop, interval fsync, compaction.

``await alog.append(records)`` writes the records in one ``write`` (and, under
``fsync="always"``, one ``os.fsync``) in a worker thread and returns once that is done.
Appends are serialised, not batched: gathering concurrent requests' records into one
append is the caller's job (the coordinator runtime's group-commit queue is the only one).
Under ``interval`` a background task fsyncs every ``fsync_interval_ms``; under ``never``
nothing does (close still fsyncs).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import trio

from storage.records import Record

from .batch import EncodedBatch
from .compaction import CompactionPolicy, CompactionResult, compact, maybe_compact
from .compaction_process import rewrite_in_child
from .errors import LogClosedError, LogWriteError
from .live_snapshot import LiveSnapshot
from .log import Log
from .snapshot_log import snapshot_at_close, snapshot_log
from .snapshot_process import build_in_child

__all__ = ["AsyncLog", "open_async_log"]

log = logging.getLogger(__name__)


class AsyncLog:
    """A :class:`Log` shared by Trio tasks. All disk work runs in worker threads."""

    def __init__(self, log_: Log) -> None:
        self.log = log_
        self.appends = 0
        self._writer = trio.Lock()
        self._compacting = trio.Lock()
        self._closed = False
        #: whether closing writes a live snapshot (the coordinator's log)
        self.snapshot_at_close = False

    async def append(self, records: Sequence[Record]) -> None:
        """Append ``records`` in one write; returns when they are written (and fsynced
        under ``always``). Raises LogWriteError (nothing of this append is in the log) or
        RecordTooLargeError (nothing was written)."""
        if not records:
            return
        batch = EncodedBatch.encode(records)
        if self._closed:
            raise LogClosedError("the log is closed")
        self.appends += 1
        # Shielded: a cancelled caller must not leave a write whose outcome nobody knows.
        with trio.CancelScope(shield=True):
            async with self._writer:
                await trio.to_thread.run_sync(self.log.write_batch, batch)

    async def sync(self) -> None:
        """fsync now if anything awaits one."""
        await trio.to_thread.run_sync(self.log.sync)

    async def run_interval_flusher(
        self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """fsync every ``fsync_interval_ms`` while there is something to fsync."""
        self.log.interval_sync_inline = False  # this task fsyncs, off the event loop
        task_status.started()
        interval = self.log.fsync_interval_ms / 1000
        while True:
            await trio.sleep(interval)
            if self.log.dirty and self.log.failed is None:
                try:
                    with trio.CancelScope(shield=True):
                        await self.sync()
                except LogWriteError as exc:
                    log.error("interval fsync failed; appends now fail: %s", exc)

    async def compact(
        self, policy: CompactionPolicy | None = None, *, now_ms: int | None = None
    ) -> CompactionResult | None:
        """Compact the closed segments, waited for in a worker thread, the rewrite in a
        child process (``storage.compaction_process``); appends continue."""
        async with self._compacting:
            return await trio.to_thread.run_sync(partial(
                compact, self.log, policy, now_ms=now_ms, rewrite=rewrite_in_child))

    async def maybe_compact(
        self, policy: CompactionPolicy | None = None, *, now_ms: int | None = None
    ) -> CompactionResult | None:
        """Compact if dead records outweigh live ones per ``policy``."""
        async with self._compacting:
            return await trio.to_thread.run_sync(
                partial(maybe_compact, self.log, policy, now_ms=now_ms, rewrite=rewrite_in_child)
            )

    async def write_snapshot(self) -> LiveSnapshot | None:
        """Write the log's live snapshot (``storage.snapshot_log``) from a child process,
        waited for in a worker thread (``storage.snapshot_process``: not on the GIL the
        event loop needs)."""
        async with self._compacting:
            return await trio.to_thread.run_sync(partial(snapshot_log, self.log,
                                                         build=build_in_child))

    async def aclose(self) -> None:
        """Wait for the write in progress, fsync, (write a snapshot,) close the log and
        release its lock."""
        self._closed = True
        with trio.CancelScope(shield=True):
            async with self._writer, self._compacting:
                if self.snapshot_at_close and self.log.failed is None:
                    await trio.to_thread.run_sync(snapshot_at_close, self.log)
                await trio.to_thread.run_sync(self.log.close)
        log.info("log closed: %d appends, %d fsyncs (fsync %s)", self.appends,
                 self.log.fsync_count, self.log.fsync_policy)


@asynccontextmanager
async def open_async_log(
    directory: str, *, snapshot_at_close: bool = False, **options: Any
) -> AsyncIterator[AsyncLog]:
    """Open (and recover) the log in a worker thread; run the interval flusher when the
    policy asks for it; close on exit (writing a live snapshot first with
    ``snapshot_at_close``). ``options`` are :meth:`Log.open`'s."""
    log_ = await trio.to_thread.run_sync(partial(Log.open, directory, **options))
    alog = AsyncLog(log_)
    alog.snapshot_at_close = snapshot_at_close
    try:
        async with trio.open_nursery() as nursery:
            if log_.fsync_policy == "interval":
                await nursery.start(alog.run_interval_flusher)
            try:
                yield alog
            finally:
                nursery.cancel_scope.cancel()
    finally:
        await alog.aclose()
