"""The live snapshot (``storage.live_snapshot``, ``storage.snapshot_log``): a restart that
starts from it leaves the state a replay of the whole log leaves; a missing, torn, corrupt
or stale one is ignored with one log line (issue 33)."""

from __future__ import annotations

import errno
import logging
import os
import pathlib
import shutil
from collections.abc import Iterable
from unittest.mock import patch

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from storage_strategies import event_keys, event_values, group_values, offset_commit_values

from coordinator.core.store import HardState, HardStateSnapshot
from storage import live_snapshot
from storage import snapshot_log as snapshot_log_module
from storage.compaction import CompactionPolicy, compact
from storage.errors import LogWriteError
from storage.live_snapshot import SNAPSHOT_FILE, read_snapshot
from storage.log import Log
from storage.records import (
    GroupMetadataKey,
    OffsetCommitKey,
    OffsetCommitValue,
    Record,
    TransactionStateKey,
    TransactionStateValue,
)
from storage.segment import HEADER_SIZE
from storage.snapshot_log import replay_from_snapshot, snapshot_at_close, snapshot_log

GROUPS = ["g1", "g2", "g3"]
commit_keys = st.builds(OffsetCommitKey, st.sampled_from(GROUPS), st.sampled_from(["t", "u"]),
                        st.integers(0, 3))
txn_records = st.builds(
    lambda pid: Record(TransactionStateKey("tx"),
                       TransactionStateValue(pid, 0, 60_000, 0, (), 0, 0, -1, -1, 0)),
    st.integers(0, 5),
)
#: commits, deletions (a tombstone: what OffsetDelete and offset expiration write), group
#: records written and deleted, transaction states, RebalanceEvent history
log_records = st.one_of(
    st.builds(Record, commit_keys, offset_commit_values),
    st.builds(Record, commit_keys, st.none()),
    st.builds(Record, st.builds(GroupMetadataKey, st.sampled_from(GROUPS)),
              st.none() | group_values),
    txn_records,
    st.builds(Record, event_keys, event_values),
)
#: batches of records, each followed (True) or not by a snapshot
histories = st.lists(st.tuples(st.lists(log_records, min_size=1, max_size=6), st.booleans()),
                     min_size=1, max_size=8)


def _state(packed: dict[str, object], records: Iterable[Record]
           ) -> tuple[HardStateSnapshot, list[Record]]:
    """Hard state after applying ``packed`` then ``records``, and the transaction-state
    records met (the transaction shard's, in order)."""
    state = HardState()
    state.adopt_packed(packed)  # type: ignore[arg-type]
    txns = []
    for record in records:
        if isinstance(record.key, TransactionStateKey):
            txns.append(record)
        else:
            state.apply(record)
    return state.snapshot(), txns


def _full(path: str) -> tuple[HardStateSnapshot, list[Record]]:
    with Log.open(path) as log:
        return _state({}, log.replay())


def _from_snapshot(path: str) -> tuple[HardStateSnapshot, list[Record]]:
    with Log.open(path) as log:
        loaded = replay_from_snapshot(log)
        assert loaded is not None
        return _state(dict(loaded.groups), loaded.records)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(history=histories, segment_bytes=st.sampled_from([200, 600, 1 << 20]),
       told_apart_at=st.sampled_from([1, live_snapshot.TOLD_APART_AT]))
def test_snapshot_then_tail_equals_full_replay(tmp_path_factory: pytest.TempPathFactory,
                                               history: list[tuple[list[Record], bool]],
                                               segment_bytes: int, told_apart_at: int) -> None:
    """Snapshots written after any prefix (each built from the one before), then more
    records: snapshot + tail gives what the whole log gives, for hard state and for the
    transaction shard's records (a group's entries told apart at the end of a build, or
    after each entry: ``TOLD_APART_AT`` 1)."""
    with patch.object(live_snapshot, "TOLD_APART_AT", told_apart_at):
        _snapshot_then_tail(tmp_path_factory, history, segment_bytes)


def _snapshot_then_tail(tmp_path_factory: pytest.TempPathFactory,
                        history: list[tuple[list[Record], bool]], segment_bytes: int) -> None:
    path = str(tmp_path_factory.mktemp("log"))
    wrote = False
    with Log.open(path, segment_bytes=segment_bytes) as log:
        for batch, snapshot in history:
            log.append(batch)
            if snapshot:
                assert snapshot_log(log) is not None
                wrote = True
    if not wrote:
        with Log.open(path, segment_bytes=segment_bytes) as log:
            assert snapshot_log(log) is not None
    assert _from_snapshot(path) == _full(path)


def _commits(log: Log, groups: int, partitions: int, offset: int = 0) -> None:
    log.append([Record(OffsetCommitKey(f"g{g}", "t", p), OffsetCommitValue(offset + p))
                for g in range(groups) for p in range(partitions)])


def test_groups_stay_packed_until_asked_for(tmp_path: object) -> None:
    path = str(tmp_path)
    with Log.open(path) as log:
        _commits(log, 3, 4)
        snapshot_log(log)
        _commits(log, 1, 2, offset=100)  # the tail: g0's partitions 0 and 1 again
        loaded = replay_from_snapshot(log)
        assert loaded is not None
        state = HardState()
        state.adopt_packed(loaded.groups)
        for record in loaded.records:
            state.apply(record)
    # the tail unpacked g0 (its packed records first, then the tail's); g1 and g2 wait
    assert set(state.packed) == {"g1", "g2"}
    assert state.offset_group_ids() == {"g0", "g1", "g2"}
    assert {tp: v.offset for tp, v in state.group_offsets("g0").items()} == {
        ("t", 0): 100, ("t", 1): 101, ("t", 2): 2, ("t", 3): 3}
    assert state.has_offsets("g2") and "g2" not in state.offsets
    assert state.group_offsets("g1")[("t", 3)].offset == 3
    assert set(state.packed) == {"g2"}


def test_a_deleted_group_leaves_the_snapshot(tmp_path: object) -> None:
    path = str(tmp_path)
    with Log.open(path) as log:
        _commits(log, 2, 2)
        log.append([Record(OffsetCommitKey("g1", "t", p), None) for p in range(2)])
        snapshot = snapshot_log(log)
    assert snapshot is not None and set(snapshot.groups) == {"g0"}


def _written(path: str) -> None:
    with Log.open(path, segment_bytes=400) as log:
        _commits(log, 3, 4)
        snapshot_log(log)
        _commits(log, 1, 1, offset=50)


def _fallback(path: str, caplog: pytest.LogCaptureFixture, reason: str) -> None:
    """The snapshot is ignored with one warning naming ``reason``; replay_live still gives
    the whole log's state."""
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="storage"), Log.open(path) as log:
        assert replay_from_snapshot(log) is None
        state = _state({}, log.replay_live())
    lines = [r.getMessage() for r in caplog.records if SNAPSHOT_FILE in r.getMessage()]
    assert len(lines) == 1 and reason in lines[0], lines
    assert state == _full(path)


def test_missing_snapshot_falls_back(tmp_path: object, caplog: pytest.LogCaptureFixture) -> None:
    path = str(tmp_path)
    _written(path)
    os.unlink(os.path.join(path, SNAPSHOT_FILE))
    _fallback(path, caplog, "no live.snapshot")


def test_truncated_snapshot_falls_back(tmp_path: object,
                                       caplog: pytest.LogCaptureFixture) -> None:
    path = str(tmp_path)
    _written(path)
    where = os.path.join(path, SNAPSHOT_FILE)
    os.truncate(where, os.path.getsize(where) - 7)
    _fallback(path, caplog, "checksum mismatch")
    os.truncate(where, 10)
    _fallback(path, caplog, "truncated")


def test_corrupt_snapshot_falls_back(tmp_path: object, caplog: pytest.LogCaptureFixture) -> None:
    path = str(tmp_path)
    _written(path)
    where = os.path.join(path, SNAPSHOT_FILE)
    with open(where, "r+b") as f:
        f.seek(os.path.getsize(where) // 2)
        byte = f.read(1)
        f.seek(-1, os.SEEK_CUR)
        f.write(bytes([byte[0] ^ 0x40]))
    _fallback(path, caplog, "checksum mismatch")


def test_stale_snapshot_falls_back(tmp_path: pathlib.Path,
                                   caplog: pytest.LogCaptureFixture) -> None:
    """A covered segment whose bytes differ (same sizes: another log's snapshot), or that
    is gone."""
    logs = []
    for first_offset in (1, 2):
        path = str(tmp_path / str(first_offset))
        with Log.open(path, segment_bytes=400) as log:
            for offset in (first_offset, 7, 8, 9, 10, 11, 12, 13):
                log.append([Record(OffsetCommitKey("g", "t", offset), OffsetCommitValue(offset))])
            snapshot_log(log)
            _commits(log, 1, 1, offset=50)
        logs.append(path)
    assert len([n for n in os.listdir(logs[0]) if n.endswith(".log")]) >= 2
    shutil.copy(os.path.join(logs[1], SNAPSHOT_FILE), os.path.join(logs[0], SNAPSHOT_FILE))
    _fallback(logs[0], caplog, "bytes of segment 0 it covers changed")
    first = sorted(n for n in os.listdir(logs[1]) if n.endswith(".log"))[1]
    os.unlink(os.path.join(logs[1], first))
    _fallback(logs[1], caplog, "it covers is gone")


def test_snapshot_covers_only_durable_bytes_it_names(tmp_path: object) -> None:
    """The snapshot names each covered segment's size: the tail starts right after."""
    path = str(tmp_path)
    with Log.open(path) as log:
        _commits(log, 1, 2)
        snapshot = snapshot_log(log)
        assert snapshot is not None
        assert snapshot.covered[-1][1] == log.segments[-1].size > HEADER_SIZE
    fs_snapshot = read_snapshot(Log.open(path).fs, path)
    assert fs_snapshot is not None and fs_snapshot.covered == snapshot.covered


def test_compaction_makes_the_snapshot_stale_and_the_next_one_starts_over(
        tmp_path: pathlib.Path, caplog: pytest.LogCaptureFixture) -> None:
    path = str(tmp_path)
    with Log.open(path, segment_bytes=300) as log:
        for offset in range(12):  # one partition overwritten: compaction drops most
            _commits(log, 1, 1, offset=offset)
        snapshot_log(log)
        log.roll()
        assert compact(log, CompactionPolicy(tombstone_retention_ms=10**12)) is not None
    _fallback(path, caplog, "it covers")
    with Log.open(path) as log:
        assert snapshot_log(log) is not None
    assert _from_snapshot(path) == _full(path)


def test_a_clean_stop_closes_a_large_active_segment(tmp_path: pathlib.Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """So the next open checks no entry one by one (the last segment is empty)."""
    monkeypatch.setattr(snapshot_log_module, "ROLL_AT_CLOSE_BYTES", 200)
    path = str(tmp_path)
    with Log.open(path) as log:
        _commits(log, 1, 1)
        snapshot_at_close(log)  # 1 entry: too small to close
        assert len(log.segments) == 1
        _commits(log, 2, 3)
        snapshot_at_close(log)
        assert [seg.size for seg in log.segments][1:] == [HEADER_SIZE]
    assert any(n.endswith(".log.summary") for n in os.listdir(path))
    assert _from_snapshot(path) == _full(path)


def test_a_snapshot_that_cannot_be_written_is_logged_and_ignored(
        tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    path = str(tmp_path)

    def fail(*_: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    with Log.open(path) as log:
        _commits(log, 2, 2)
        monkeypatch.setattr(live_snapshot, "write_atomically", fail)
        assert snapshot_log(log) is None
        monkeypatch.setattr(log, "sync", lambda: (_ for _ in ()).throw(
            LogWriteError("fsync failed", errno.EIO)))
        assert snapshot_at_close(log) is None
    assert os.listdir(path).count(SNAPSHOT_FILE) == 0
    assert any("No space left" in r.getMessage() for r in caplog.records)
    assert any("fsync failed" in r.getMessage() for r in caplog.records)
