"""Disk faults through the fault-injecting file system: torn and short writes, ENOSPC, EIO,
failed fsyncs, and a crash at every step of a compaction. After each, the log must load
with every acknowledged record (and, for compaction, the same live set)."""

from __future__ import annotations

import errno
import os

import pytest

from storage.compaction import CompactionPolicy, compact
from storage.errors import LogWriteError
from storage.fs import FaultPlan, FaultyFileSystem, SimulatedCrash
from storage.log import Log
from storage.records import (
    GroupMetadataKey,
    GroupMetadataValue,
    OffsetCommitKey,
    OffsetCommitValue,
    RebalanceEventKey,
    Record,
)


def commit(i: int) -> Record:
    return Record(OffsetCommitKey("g", "t", i % 5), OffsetCommitValue(i, -1, "m", 1000 + i))


def state(records: list[Record]) -> dict[object, object]:
    live: dict[object, object] = {}
    for r in records:
        if isinstance(r.key, RebalanceEventKey):
            continue
        if r.value is None:
            live.pop(r.key, None)
        else:
            live[r.key] = r.value
    return live


def reopen(data_dir: str) -> list[Record]:
    """Load with the real file system, as a restarted process would."""
    with Log.open(data_dir) as log:
        return list(log.replay())


def open_faulty(data_dir: str, **kwargs: object) -> tuple[Log, FaultyFileSystem]:
    fs = FaultyFileSystem()
    return Log.open(data_dir, fs=fs, **kwargs), fs  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------
# Write errors: typed error, log cut back, appends continue.


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EIO])
def test_write_error_is_typed_and_leaves_the_log_loadable(data_dir: str, code: int) -> None:
    log, fs = open_faulty(data_dir)
    log.append([commit(0)])
    fs.arm(FaultPlan(write_errors={0: code}))
    with pytest.raises(LogWriteError) as info:
        log.append([commit(1), commit(2)])
    assert info.value.errno == code
    log.append([commit(3)])  # the disk has room again
    log.close()
    assert reopen(data_dir) == [commit(0), commit(3)]


def test_short_write_then_enospc(data_dir: str) -> None:
    log, fs = open_faulty(data_dir)
    log.append([commit(0)])
    size = os.path.getsize(log.segments[-1].path)
    fs.arm(FaultPlan(short_writes={0: 7}, write_errors={1: errno.ENOSPC}))
    with pytest.raises(LogWriteError) as info:
        log.append([commit(1)])
    assert info.value.errno == errno.ENOSPC
    assert os.path.getsize(log.segments[-1].path) == size  # the 7 bytes were cut back
    log.close()
    with Log.open(data_dir) as clean:
        assert clean.recovery == []
        assert list(clean.replay()) == [commit(0)]


def test_short_write_that_completes_is_not_an_error(data_dir: str) -> None:
    log, fs = open_faulty(data_dir)
    fs.arm(FaultPlan(short_writes={0: 3}))
    log.append([commit(0), commit(1)])
    log.close()
    assert reopen(data_dir) == [commit(0), commit(1)]


def test_write_returning_zero_is_an_error(data_dir: str) -> None:
    log, fs = open_faulty(data_dir)
    fs.arm(FaultPlan(short_writes={0: 0}))
    with pytest.raises(LogWriteError):
        log.append([commit(0)])
    log.close()
    assert reopen(data_dir) == []


def test_fsync_failure_fails_the_batch_and_the_log(data_dir: str) -> None:
    log, fs = open_faulty(data_dir, fsync="always")
    log.append([commit(0)])
    fs.arm(FaultPlan(fsync_errors={0: errno.EIO}))
    with pytest.raises(LogWriteError) as info:
        log.append([commit(1)])
    assert info.value.errno == errno.EIO
    assert log.failed is not None
    # After a failed fsync nothing can be trusted: appends fail until reopened.
    with pytest.raises(LogWriteError, match="until reopened"):
        log.append([commit(2)])
    log.close()
    assert reopen(data_dir) == [commit(0)]


def test_interval_fsync_failure_fails_the_log(data_dir: str) -> None:
    log, fs = open_faulty(data_dir, fsync="interval", fsync_interval_ms=10**6)
    log.append([commit(0)])
    fs.arm(FaultPlan(fsync_errors={0: errno.EIO}))
    with pytest.raises(LogWriteError):
        log.sync()
    with pytest.raises(LogWriteError):
        log.append([commit(1)])
    log.close()
    assert reopen(data_dir) == [commit(0)]  # written, never cut back: loadable


def test_failed_truncate_after_a_failed_write_fails_the_log(data_dir: str) -> None:
    log, fs = open_faulty(data_dir)
    log.append([commit(0)])
    fs.arm(FaultPlan(short_writes={0: 9}, write_errors={1: errno.EIO}))

    def no_truncate(name: str) -> None:
        if name == "truncate":
            raise OSError(errno.EIO, "truncate failed")

    fs.on_op = no_truncate
    with pytest.raises(LogWriteError):
        log.append([commit(1)])
    fs.on_op = None
    assert log.failed is not None
    with pytest.raises(LogWriteError):
        log.append([commit(2)])
    log.close()
    with Log.open(data_dir) as clean:  # the next open repairs the 9-byte tail
        assert [a.dropped_bytes for a in clean.recovery] == [9]
        assert list(clean.replay()) == [commit(0)]


def test_enospc_when_rolling_a_segment(data_dir: str) -> None:
    log, fs = open_faulty(data_dir, segment_bytes=120)
    log.append([commit(0)])
    fs.arm(FaultPlan(write_errors={0: errno.ENOSPC}))  # the new segment's header
    with pytest.raises(LogWriteError):
        log.append([commit(1)])
    log.append([commit(2)])
    log.close()
    assert reopen(data_dir) == [commit(0), commit(2)]


# ------------------------------------------------------------------------------------
# Crashes: torn writes at every point of a run of appends.


def _append_until_crash(log: Log, records: list[Record]) -> list[Record]:
    acked: list[Record] = []
    for r in records:
        try:
            log.append([r])
        except SimulatedCrash:
            break
        acked.append(r)
    return acked


@pytest.mark.parametrize("torn_bytes", [0, 1, 10, 40])
def test_crash_during_appends(tmp_path: object, torn_bytes: int) -> None:
    records = [commit(i) for i in range(12)]
    # Count the operations a clean run takes, then crash at each of them.
    probe = os.path.join(str(tmp_path), "probe")
    log, fs = open_faulty(probe, segment_bytes=200)
    fs.arm(FaultPlan())
    _append_until_crash(log, records)
    total_ops = fs.ops
    log.close()
    for crash_at in range(total_ops):
        data_dir = os.path.join(str(tmp_path), f"run-{crash_at}")
        log, fs = open_faulty(data_dir, segment_bytes=200)
        fs.arm(FaultPlan(crash_at=crash_at, torn_bytes=torn_bytes))
        acked = _append_until_crash(log, records)
        assert fs.crashed
        for power_loss in (False, True):
            if power_loss:
                fs.lose_unsynced()
            recovered = reopen(data_dir)
            # Every acknowledged record is there; at most the one in flight besides.
            assert recovered[: len(acked)] == acked
            assert len(recovered) <= len(acked) + 1


# ------------------------------------------------------------------------------------
# Crashes at every step of a compaction.


def _history() -> list[list[Record]]:
    gv = GroupMetadataValue("consumer", 1, "range", "m", 5, ())
    batches = [[commit(i) for i in range(j, j + 4)] for j in range(0, 24, 4)]
    batches.append([Record(GroupMetadataKey("g"), gv), Record(OffsetCommitKey("g", "t", 1), None)])
    batches.append([commit(99)])
    return batches


def _build(data_dir: str, fs: FaultyFileSystem) -> Log:
    log = Log.open(data_dir, segment_bytes=260, fs=fs)
    for batch in _history():
        log.append(batch)
    return log


@pytest.mark.parametrize("power_loss", [False, True])
def test_crash_at_every_compaction_step(tmp_path: object, power_loss: bool) -> None:
    expected = state([r for b in _history() for r in b])
    policy = CompactionPolicy(tombstone_retention_ms=0)
    probe = os.path.join(str(tmp_path), "probe")
    fs = FaultyFileSystem()
    log = _build(probe, fs)
    fs.arm(FaultPlan())
    assert compact(log, policy) is not None
    steps = list(fs.op_log)
    log.close()
    assert {"rename", "unlink", "fsync_dir"} <= set(steps)
    for crash_at in range(len(steps)):
        data_dir = os.path.join(str(tmp_path), f"run-{crash_at}")
        fs = FaultyFileSystem()
        log = _build(data_dir, fs)
        fs.arm(FaultPlan(crash_at=crash_at))
        with pytest.raises(SimulatedCrash):
            compact(log, policy)
        if power_loss:
            fs.lose_unsynced()
        with Log.open(data_dir, segment_bytes=260) as recovered:
            assert state(list(recovered.replay())) == expected, (crash_at, steps[crash_at])
            names = os.listdir(data_dir)
            # Summaries are kept for existing segments only (an orphan is removed).
            leftovers = [n for n in names if not n.endswith(".log")
                         and not (n.endswith(".summary") and n[:-8] in names)]
            assert leftovers == [".lock"], leftovers
            recovered.append([commit(1000)])
        with Log.open(data_dir, segment_bytes=260) as again:
            final = list(again.replay())
            assert state(final) == {**expected, commit(1000).key: commit(1000).value}
            assert compact(again, policy) is not None  # and it can compact again


def test_compaction_swap_failure_fails_the_log_until_reopened(data_dir: str) -> None:
    fs = FaultyFileSystem()
    log = _build(data_dir, fs)
    expected = state([r for b in _history() for r in b])

    def fail_unlink(name: str) -> None:
        if name == "unlink":
            raise OSError(errno.EIO, "unlink failed")

    fs.on_op = fail_unlink
    with pytest.raises(LogWriteError, match="restart"):
        compact(log)
    fs.on_op = None
    with pytest.raises(LogWriteError):
        log.append([commit(5)])
    log.close()
    with Log.open(data_dir) as recovered:  # open finishes the committed swap
        assert state(list(recovered.replay())) == expected
        assert not [n for n in os.listdir(data_dir) if n.endswith(".swap")]


def test_enospc_while_compacting_leaves_the_log_unchanged(data_dir: str) -> None:
    from storage.errors import CompactionError

    fs = FaultyFileSystem()
    log = _build(data_dir, fs)
    expected = state([r for b in _history() for r in b])
    segments = [s.name for s in log.segments]
    # write 0: the roll's header, 1: the rolled segment's summary, 2: compaction output
    fs.arm(FaultPlan(write_errors={2: errno.ENOSPC}))
    with pytest.raises(CompactionError, match="unchanged"):
        compact(log)
    assert not [n for n in os.listdir(data_dir) if n.endswith((".cleaned", ".swap"))]
    assert [s.name for s in log.segments][: len(segments)] == segments
    log.append([commit(7)])  # appends go on
    assert compact(log) is not None  # and a later compaction works
    log.close()
    assert state(reopen(data_dir)) == {**expected, commit(7).key: commit(7).value}
