"""async_log: serialised appends off the event loop, the interval flusher, errors, close.
(Group commit is the coordinator runtime's: tests/server/test_runtime.py.)"""

from __future__ import annotations

import errno
import threading

import pytest
import trio

from storage.async_log import AsyncLog, open_async_log
from storage.batch import EncodedBatch
from storage.errors import LogClosedError, LogWriteError
from storage.fs import FaultPlan, FaultyFileSystem
from storage.log import Log
from storage.records import OffsetCommitKey, OffsetCommitValue, Record


def commit(task: int, i: int) -> Record:
    return Record(OffsetCommitKey(f"g{task}", "t", i % 3), OffsetCommitValue(i, -1, "", i))


def reopen(data_dir: str) -> list[Record]:
    with Log.open(data_dir) as log:
        return list(log.replay())


async def test_concurrent_appends_are_serialised_each_with_its_fsync(data_dir: str) -> None:
    tasks, per_task = 20, 5
    fs = FaultyFileSystem()  # no faults: it counts fsync calls
    async with open_async_log(data_dir, fsync="always", fs=fs) as alog:
        fs.fsync_calls = 0

        async def committer(task: int) -> None:
            for i in range(per_task):
                await alog.append([commit(task, i)])

        async with trio.open_nursery() as nursery:
            for task in range(tasks):
                nursery.start_soon(committer, task)
        assert alog.appends == tasks * per_task
        # No batching here: every append is one write and one fsync (the runtime batches).
        assert fs.fsync_calls == alog.log.fsync_count == tasks * per_task
    records = reopen(data_dir)
    assert len(records) == tasks * per_task
    for task in range(tasks):  # each task's records are durable and in its order
        mine = [r for r in records if r.key.group == f"g{task}"]
        assert mine == [commit(task, i) for i in range(per_task)]


async def test_acknowledged_appends_survive_power_loss(data_dir: str) -> None:
    fs = FaultyFileSystem()
    alog = AsyncLog(Log.open(data_dir, fsync="always", fs=fs))
    acked: list[Record] = []

    async def committer(task: int) -> None:
        for i in range(5):
            record = commit(task, i)
            await alog.append([record])
            acked.append(record)

    async with trio.open_nursery() as nursery:
        for task in range(20):
            nursery.start_soon(committer, task)
    fs.crash()  # no close, no final fsync: the process dies here ...
    fs.lose_unsynced()  # ... and the machine loses what was not fsynced
    recovered = reopen(data_dir)
    assert sorted(map(repr, recovered)) == sorted(map(repr, acked))


async def test_append_returns_after_fsync(data_dir: str) -> None:
    async with open_async_log(data_dir, fsync="always") as alog:
        await alog.append([commit(0, 0)])
        assert alog.log.fsync_count == 1 and not alog.log.dirty


async def test_interval_policy_flushes_in_the_background(data_dir: str) -> None:
    async with open_async_log(data_dir, fsync="interval", fsync_interval_ms=20) as alog:
        await alog.append([commit(0, 0)])
        assert alog.log.dirty
        with trio.fail_after(5):
            while alog.log.dirty:
                await trio.sleep(0.01)
        assert alog.log.fsync_count >= 1
    assert reopen(data_dir) == [commit(0, 0)]


async def test_never_policy_fsyncs_only_at_close(data_dir: str) -> None:
    async with open_async_log(data_dir, fsync="never") as alog:
        for i in range(5):
            await alog.append([commit(0, i)])
        assert alog.log.fsync_count == 0
    assert alog.log.fsync_count == 1
    assert len(reopen(data_dir)) == 5


async def test_write_error_fails_that_append_only(data_dir: str) -> None:
    fs = FaultyFileSystem()
    errors: list[BaseException] = []
    async with open_async_log(data_dir, fsync="always", fs=fs) as alog:
        await alog.append([commit(0, 0)])
        fs.arm(FaultPlan(write_errors={0: errno.ENOSPC}))

        async def committer(task: int) -> None:
            try:
                await alog.append([commit(task, 1)])
            except LogWriteError as exc:
                errors.append(exc)

        async with trio.open_nursery() as nursery:
            for task in range(10):
                nursery.start_soon(committer, task)
        # The first write hit ENOSPC (nothing of it is in the log); the others went through.
        assert len(errors) == 1
        assert getattr(errors[0], "errno", None) == errno.ENOSPC
        await alog.append([commit(99, 2)])  # the log still works
    records = reopen(data_dir)
    assert records[0] == commit(0, 0) and records[-1] == commit(99, 2)
    assert len(records) == 1 + 9 + 1


async def test_cancelled_appender_does_not_strand_others(data_dir: str) -> None:
    async with open_async_log(data_dir, fsync="always") as alog:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(alog.append, [commit(0, 0)])
            nursery.start_soon(alog.append, [commit(1, 0)])
            await trio.sleep(0)
            nursery.cancel_scope.cancel()
        await alog.append([commit(2, 0)])
    # The shielded writer finished what it had taken; nothing is lost or duplicated.
    records = reopen(data_dir)
    assert records[-1] == commit(2, 0) and len(records) == len(set(map(repr, records)))


async def test_closed_async_log_refuses_appends(data_dir: str) -> None:
    async with open_async_log(data_dir) as alog:
        pass
    with pytest.raises(LogClosedError):
        await alog.append([commit(0, 0)])
    Log.open(data_dir).close()  # the lock was released


async def test_compaction_runs_beside_appends(data_dir: str) -> None:
    async with open_async_log(data_dir, fsync="never", segment_bytes=4096) as alog:
        for i in range(300):
            await alog.append([commit(0, i)])
        async with trio.open_nursery() as nursery:
            nursery.start_soon(alog.compact)
            for i in range(300, 400):
                await alog.append([commit(0, i)])
    records = reopen(data_dir)
    latest = {r.key: r.value for r in records}
    assert latest == {commit(0, i).key: commit(0, i).value for i in range(397, 400)}


async def test_wrapping_an_open_log(data_dir: str) -> None:
    log = Log.open(data_dir)
    alog = AsyncLog(log)
    await alog.append([commit(0, 0)])
    await alog.sync()
    await alog.aclose()
    assert reopen(data_dir) == [commit(0, 0)]


async def test_event_loop_appends_never_wait_for_the_interval_fsync(data_dir: str) -> None:
    """Under the flusher, an append past the interval does not fsync itself, and while a
    thread holds the log (a roll's fsync, a compaction's swap) ``try_write_batch`` writes
    nothing and says so (the caller appends from a thread instead)."""
    async with open_async_log(data_dir, fsync="interval", fsync_interval_ms=3_600_000) as alog:
        log_ = alog.log
        assert not log_.interval_sync_inline
        log_.fsync_interval_ms = 0  # every append is past the interval now
        assert log_.try_write_batch(EncodedBatch.encode([commit(0, 0)]))
        assert log_.fsync_count == 0 and log_.dirty
        held = threading.Event()
        release = threading.Event()

        def hold() -> None:
            with log_.lock:
                held.set()
                release.wait(10)

        holder = threading.Thread(target=hold)
        holder.start()
        try:
            assert held.wait(10)
            assert not log_.try_write_batch(EncodedBatch.encode([commit(0, 1)]))
        finally:
            release.set()
            holder.join(10)
        assert log_.try_write_batch(EncodedBatch.encode([commit(0, 2)]))
    assert reopen(data_dir) == [commit(0, 0), commit(0, 2)]


def test_appends_go_on_during_an_interval_fsync_and_a_roll_leaves_its_handle(
        data_dir: str) -> None:
    """The interval flusher's fsync does not hold the log: an append on the event loop
    goes in while it runs, and a roll meanwhile leaves the handle being fsynced open for
    the fsync to finish (then closed); what was written before the fsync began is durable,
    the rest at the next one."""
    fs = FaultyFileSystem()
    in_fsync, release = threading.Event(), threading.Event()
    with Log.open(data_dir, fsync="interval", fsync_interval_ms=3_600_000, fs=fs) as log_:
        log_.interval_sync_inline = False  # as under the flusher
        log_.append([commit(0, 0)])
        handle = log_._active
        syncer = threading.Thread(target=log_.sync)

        def on_op(name: str) -> None:
            if name == "fsync" and threading.current_thread() is syncer:
                in_fsync.set()
                assert release.wait(10)

        fs.on_op = on_op
        syncer.start()
        try:
            assert in_fsync.wait(10)
            assert log_.try_write_batch(EncodedBatch.encode([commit(0, 1)]))
            log_.roll()
            assert handle is not None and not handle.closed  # type: ignore[attr-defined]
        finally:
            release.set()
            syncer.join(10)
        assert not syncer.is_alive() and handle.closed  # type: ignore[attr-defined]
        assert log_.fsync_count == 2 and not log_.dirty
        log_.append([commit(0, 2)])
    assert reopen(data_dir) == [commit(0, 0), commit(0, 1), commit(0, 2)]


def test_a_log_without_a_flusher_fsyncs_past_the_interval_itself(data_dir: str) -> None:
    with Log.open(data_dir, fsync="interval", fsync_interval_ms=0) as log_:
        assert log_.interval_sync_inline
        log_.append([commit(0, 0)])
        assert log_.fsync_count == 1 and not log_.dirty
