"""Where the coordinator runtime puts the records its core emits.

``RecordSink`` is the runtime's view of the log: ``append`` returns once the records are
durable (per the fsync policy), ``replay`` yields what a previous run appended, ``aclose``
flushes and releases. ``MemorySink`` keeps records in a list (tests, and a server started
without a data directory; handing the same instance to a second server simulates a
restart). ``open_log_sink`` puts ``storage.async_log.AsyncLog`` behind the same protocol.
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Protocol

import trio

from storage.async_log import AsyncLog, open_async_log
from storage.batch import EncodedBatch
from storage.live_snapshot import SNAPSHOT_FILE
from storage.policy import FsyncPolicy, RecoverMode
from storage.records import Record
from storage.snapshot_log import replay_from_snapshot

__all__ = ["LogSink", "MemorySink", "PackedGroup", "RecordSink", "open_log_sink"]

log = logging.getLogger(__name__)


# How often the log sink asks storage whether compaction is worth it.
COMPACTION_CHECK_INTERVAL_S = 60.0
#: Log bytes after the last snapshot that make the sink write a new one (about 100,000
#: offset commits: a second of replay).
SNAPSHOT_TAIL_BYTES = 8 * 1024 * 1024


class PackedGroup(Protocol):
    """One group's committed offsets, kept packed until asked for."""

    def records(self) -> list[Record]: ...


class RecordSink(Protocol):
    """The log as the coordinator runtime sees it."""

    #: True when ``replay`` reads files (the runtime then replays in a worker thread).
    blocking_replay: bool

    async def append(self, records: Sequence[Record]) -> None:
        """Persist ``records``; raises when they could not be written."""

    def append_nowait(self, records: Sequence[Record]) -> bool:
        """Persist ``records`` synchronously if that is cheap (no fsync, no thread hop):
        True when done, False when the caller must ``await append`` instead. Only called
        when no other append is in flight."""

    def replay(self) -> Iterable[Record]:
        """Every record appended so far (by previous runs), in order."""

    def packed_offsets(self) -> Mapping[str, PackedGroup]:
        """After ``replay()``: the groups whose committed offsets it left out, packed (their
        records, decoded when the group is first asked for, come before ``replay``'s)."""

    async def aclose(self) -> None:
        """Flush and close; later appends fail."""


class MemorySink:
    """Records in a list: nothing survives the process."""

    blocking_replay = False

    def __init__(self, records: Iterable[Record] = ()) -> None:
        self.records: list[Record] = list(records)
        self.closed = False
        #: Test hook: when set, ``append`` raises what it returns (None: append normally).
        self.fail_with: Callable[[Sequence[Record]], BaseException | None] | None = None

    async def append(self, records: Sequence[Record]) -> None:
        """Keep ``records`` (no I/O, but a checkpoint like any append)."""
        if self.closed:
            raise RuntimeError("the sink is closed")
        if self.fail_with is not None:
            error = self.fail_with(records)
            if error is not None:
                raise error
        self.records.extend(records)
        await trio.lowlevel.checkpoint()

    def append_nowait(self, records: Sequence[Record]) -> bool:
        """Keep ``records`` at once."""
        if self.closed:
            raise RuntimeError("the sink is closed")
        if self.fail_with is not None:
            error = self.fail_with(records)
            if error is not None:
                raise error
        self.records.extend(records)
        return True

    def replay(self) -> Iterable[Record]:
        """The records kept so far."""
        return list(self.records)

    def packed_offsets(self) -> Mapping[str, PackedGroup]:
        """None: every record is replayed."""
        return {}

    async def aclose(self) -> None:
        """Mark closed; a new server may reopen (replay) the same instance."""
        self.closed = True
        await trio.lowlevel.checkpoint()

    def reopen(self) -> MemorySink:
        """A fresh open sink holding the same records (a simulated restart)."""
        return MemorySink(self.records)


class LogSink:
    """``storage.async_log.AsyncLog`` behind the RecordSink protocol."""

    blocking_replay = True

    def __init__(self, alog: AsyncLog, fsync: FsyncPolicy = "always") -> None:
        self._alog = alog
        self._fsync = fsync
        self._packed: Mapping[str, PackedGroup] = {}
        #: log bytes the newest snapshot covers (its tail is what a restart replays)
        self.snapshot_bytes = 0

    @property
    def directory(self) -> str:
        """The data directory."""
        return str(self._alog.log.directory)

    async def append(self, records: Sequence[Record]) -> None:
        """Append in one write (and fsync under ``always``), off the event loop."""
        await self._alog.append(records)

    def append_nowait(self, records: Sequence[Record]) -> bool:
        """Under ``--fsync never`` and ``interval`` an append is one ``write`` into the page
        cache: do it on the event loop rather than paying a worker-thread round trip. While
        the interval flusher's worker thread holds the log (its fsync), or a compaction
        does, the append goes through ``append`` instead of stalling the event loop for
        that fsync. Under ``always`` every append fsyncs: that goes through ``append``."""
        if self._fsync == "always":
            return False
        return self._alog.log.try_write_batch(EncodedBatch.encode(records))

    def replay(self) -> Iterable[Record]:
        """The data directory's live records: from its snapshot and the log after it
        (``storage.snapshot_log``), or each key's newest record and every
        transaction-state record, in log order (``Log.replay_live``); blocking: call from a
        worker thread. Applying them leaves the same state as applying every record."""
        loaded = replay_from_snapshot(self._alog.log)
        if loaded is None:
            self._packed = {}
            return self._alog.log.replay_live()
        self._packed = loaded.groups
        self.snapshot_bytes = self._alog.log.total_bytes - loaded.tail_bytes
        log.info("replaying from %s: %d groups' offsets packed, %d bytes of log after it",
                 SNAPSHOT_FILE, len(loaded.groups), loaded.tail_bytes)
        return loaded.records

    def packed_offsets(self) -> Mapping[str, PackedGroup]:
        """The groups the snapshot holds packed (handed over once: the sink keeps none)."""
        packed, self._packed = self._packed, {}
        return packed

    async def write_snapshot(self) -> None:
        """Write a snapshot of the log now (off the event loop; failures are logged)."""
        snapshot = await self._alog.write_snapshot()
        if snapshot is not None:
            self.snapshot_bytes = sum(size for _, size, _ in snapshot.covered)

    async def aclose(self) -> None:
        """Closed by ``open_log_sink``'s context exit; nothing to do here."""
        await trio.lowlevel.checkpoint()

    async def run_compaction(self) -> None:
        """Ask storage every minute whether the log is worth compacting (off the event
        loop), and write a snapshot when a restart would replay ``SNAPSHOT_TAIL_BYTES`` of
        log after the last one."""
        while True:
            await trio.sleep(COMPACTION_CHECK_INTERVAL_S)
            if self._alog.log.total_bytes - self.snapshot_bytes >= SNAPSHOT_TAIL_BYTES:
                await self.write_snapshot()
            try:
                result = await self._alog.maybe_compact()
            except Exception:
                log.exception("log compaction failed (the log stays as it was)")
                continue
            if result is not None:
                log.info("log compacted: %s", result)
                self.snapshot_bytes = 0  # the snapshot no longer describes the log


@asynccontextmanager
async def open_log_sink(
    directory: str, fsync: FsyncPolicy = "always", recover: RecoverMode = "fail"
) -> AsyncIterator[LogSink]:
    """Open (lock, recover) the log in ``directory``; flush, fsync and unlock on exit.
    ``recover="truncate"`` proceeds past corruption in the middle of a segment (dropping
    what follows it) instead of refusing to start."""
    # Opened without a live index when a snapshot may make it needless (replay_live
    # builds one if the snapshot is of no use after all).
    index = not os.path.exists(os.path.join(directory, SNAPSHOT_FILE))
    async with open_async_log(
        directory, fsync=fsync, recover=recover, live_index=index, snapshot_at_close=True
    ) as alog:
        for action in alog.log.recovery:
            log.warning("log recovery: %s", action)
        sink = LogSink(alog, fsync)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(sink.run_compaction)
            try:
                yield sink
            finally:
                nursery.cancel_scope.cancel()
