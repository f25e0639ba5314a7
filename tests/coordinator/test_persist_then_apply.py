"""Persist, then apply: a failed append of any record kind leaves the live coordinator exactly
as a restart would rebuild it from the log, the client hears Kafka's error, and nothing else
changes.

The records go to a real ``storage.log.Log`` over the fault-injecting file layer
(``FaultyFileSystem``): an ENOSPC on the next write is Kafka's KAFKA_STORAGE_ERROR, which
group and offset operations both answer as NOT_COORDINATOR. After each failure the log is
closed, reopened and replayed into a fresh coordinator, and compared with the live one.
"""

from __future__ import annotations

import errno
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from harness import (
    FOLLOWER_INSTANCE_ID,
    GROUP_ID,
    PROTOCOL_SUPERSET,
    PROTOCOL_TYPE,
    PROTOCOLS,
    UNKNOWN_MEMBER_ID,
    Harness,
    ctx,
    partition,
)

from coordinator.config import CoordinatorConfig
from coordinator.core import ErrorCode, GroupCoordinator, RetentionTimerKey
from coordinator.core.delete_groups import handle_delete_groups
from coordinator.core.offset_commit import handle_offset_commit
from coordinator.core.offset_delete import handle_offset_delete
from storage.fs import FaultPlan, FaultyFileSystem
from storage.log import Log
from storage.records import GroupMetadataKey, OffsetCommitKey, RebalanceEventKey, Record

NOT_COORDINATOR = ErrorCode.NOT_COORDINATOR
V0, V2, V8 = ctx(0), ctx(2), ctx(8)


class DiskHarness(Harness):
    """The coordinator harness with every append written to a real log on a faulty disk."""

    log: Log
    fs: FaultyFileSystem
    directory: str

    def write(self, records: Sequence[Record]) -> None:
        self.log.append(records)

    def fail_next_write(self, code: int = errno.ENOSPC) -> None:
        """The next write to the log fails with ``OSError(code)``."""
        self.fs.arm(FaultPlan(write_errors={0: code}))


@pytest.fixture
def d(tmp_path: Path) -> Iterator[DiskHarness]:
    h = DiskHarness()
    h.fs = FaultyFileSystem()
    h.directory = str(tmp_path / "data")
    h.log = Log.open(h.directory, fsync="always", fs=h.fs)
    h.apply(h.coordinator.on_loaded(h.now))
    yield h
    h.log.close()


def restarted(h: DiskHarness) -> GroupCoordinator:
    """What a restart rebuilds: the log reopened and replayed into a fresh coordinator."""
    h.log.close()
    h.log = Log.open(h.directory, fsync="always", fs=h.fs)
    replayed = list(h.log.replay())
    assert replayed == h.records  # exactly what was appended, nothing of the failed write
    fresh = GroupCoordinator(h.config, lambda: "uuid")
    for record in replayed:
        fresh.replay(record)
    fresh.on_loaded(h.now)
    return fresh


def assert_live_equals_replay(h: DiskHarness) -> None:
    """Live hard state is the log's; the groups with persisted state are the ones a restart
    loads, and every one of them is live."""
    fresh = restarted(h)
    live = h.coordinator
    assert live.hard_state() == fresh.hard_state()
    assert live.persisted_group_ids() == fresh.persisted_group_ids() == set(fresh.group_ids())
    assert fresh.persisted_group_ids() <= set(live.group_ids())


def views(h: Harness) -> dict[str, Any]:
    """Every live group's observable state."""
    return {g: h.coordinator.describe(g) for g in h.coordinator.group_ids()}


def stable_group_with_offsets(h: Harness) -> tuple[str, int]:
    """One dynamic member, Stable, with two committed offsets: (member id, generation)."""
    join = h.dynamic_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    assert h.sync_group_leader(GROUP_ID, join.generation_id, join.member_id,
                               {join.member_id: b"a"}).error_code == ErrorCode.NONE
    errors = h.commit_offsets(GROUP_ID, join.member_id, join.generation_id,
                              {("t", 0): 10, ("t", 1): 11})
    assert set(errors.values()) == {ErrorCode.NONE}
    return join.member_id, join.generation_id


def empty_group_with_offsets(h: Harness) -> None:
    """A group that had a member (so a GroupMetadata record), now Empty with offsets."""
    member_id, _ = stable_group_with_offsets(h)
    h.single_leave_group(GROUP_ID, member_id)
    assert h.state() == "Empty"


# --------------------------------------------------------------------------- offset commits


def test_failed_offset_commit_answers_not_coordinator_and_applies_nothing(d: DiskHarness) -> None:
    member_id, generation = stable_group_with_offsets(d)
    before, hard = views(d), d.coordinator.hard_state()
    d.fail_next_write()
    errors = d.commit_offsets(GROUP_ID, member_id, generation,
                              {("t", 0): 20, ("u", 0): (5, "x" * 5000)})
    # Per partition: the mapped error, except where the partition had its own.
    assert errors == {("t", 0): NOT_COORDINATOR, ("u", 0): ErrorCode.OFFSET_METADATA_TOO_LARGE}
    assert d.coordinator.hard_state() == hard
    assert views(d) == before
    assert d.fetch_offsets(GROUP_ID, [("t", 0)])[1][("t", 0)][0] == 10
    assert_live_equals_replay(d)
    # The disk is fine again: the next commit goes through.
    assert d.commit_offsets(GROUP_ID, member_id, generation, {("t", 0): 21}) == {
        ("t", 0): ErrorCode.NONE}
    assert_live_equals_replay(d)


def test_failed_simple_commit_does_not_leave_a_group_behind(d: DiskHarness) -> None:
    d.fail_next_write()
    assert d.commit_offsets("simple", "", -1, {("t", 0): 1}) == {("t", 0): NOT_COORDINATOR}
    assert d.maybe_group("simple") is None
    assert_live_equals_replay(d)


# --------------------------------------------------------------------------- group metadata


def test_failed_leader_sync_answers_not_coordinator_and_rebalances(d: DiskHarness) -> None:
    join = d.dynamic_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    hard = d.coordinator.hard_state()
    d.fail_next_write()
    sync = d.sync_group_leader(GROUP_ID, join.generation_id, join.member_id,
                               {join.member_id: b"a"})
    assert sync.error_code == NOT_COORDINATOR
    assert d.coordinator.hard_state() == hard
    group = d.group()
    assert group.state.value == "PreparingRebalance"  # Kafka rebalances after the error
    assert group.members[join.member_id].assignment == b""
    assert_live_equals_replay(d)


def test_failed_static_replacement_reverts_and_answers_not_coordinator(d: DiskHarness) -> None:
    rr = d.static_members_join_and_rebalance()
    before, hard = views(d), d.coordinator.hard_state()
    d.fail_next_write()
    result = d.static_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, FOLLOWER_INSTANCE_ID,
                                 PROTOCOL_TYPE, PROTOCOL_SUPERSET, clock_advance=0)
    assert result.error_code == NOT_COORDINATOR
    assert result.member_id == UNKNOWN_MEMBER_ID
    assert d.coordinator.hard_state() == hard
    assert views(d) == before
    assert d.heartbeat(GROUP_ID, rr.follower_id, rr.generation,
                       FOLLOWER_INSTANCE_ID) == ErrorCode.NONE
    assert_live_equals_replay(d)


def test_failed_empty_group_record_keeps_the_leave_answer(d: DiskHarness) -> None:
    """The last member leaves: the Empty group's record fails to append. Like Kafka (the
    store callback only logs), the LeaveGroup is answered NONE and the group stays Empty in
    memory; the log, and so a restart, still has the last record."""
    member_id, generation = stable_group_with_offsets(d)
    hard = d.coordinator.hard_state()
    d.fail_next_write()
    result = d.single_leave_group(GROUP_ID, member_id)
    assert result.error_code == ErrorCode.NONE
    assert [m.error_code for m in result.members] == [ErrorCode.NONE]
    assert d.coordinator.hard_state() == hard
    assert d.state() == "Empty" and d.group().generation_id == generation + 1
    assert_live_equals_replay(d)


# --------------------------------------------------------------------------- tombstones


def test_failed_delete_groups_brings_the_group_back(d: DiskHarness) -> None:
    empty_group_with_offsets(d)
    before, hard = views(d), d.coordinator.hard_state()
    d.fail_next_write()
    assert d.delete_groups([GROUP_ID, "missing"]) == {
        GROUP_ID: NOT_COORDINATOR, "missing": ErrorCode.GROUP_ID_NOT_FOUND}
    assert d.coordinator.hard_state() == hard
    assert views(d) == before
    assert_live_equals_replay(d)
    assert d.delete_groups([GROUP_ID]) == {GROUP_ID: ErrorCode.NONE}  # now it works
    assert d.maybe_group() is None
    assert_live_equals_replay(d)


def test_failed_offset_delete_brings_the_group_back(d: DiskHarness) -> None:
    empty_group_with_offsets(d)
    before, hard = views(d), d.coordinator.hard_state()
    d.fail_next_write()
    error, partitions = d.delete_offsets(GROUP_ID, [("t", 0), ("t", 1)])
    assert (error, partitions) == (NOT_COORDINATOR, {})
    assert d.coordinator.hard_state() == hard
    assert views(d) == before
    assert_live_equals_replay(d)


RETENTION = CoordinatorConfig(group_min_session_timeout_ms=10, offsets_retention_minutes=1,
                              offsets_retention_check_interval_ms=1000,
                              group_initial_rebalance_delay_ms=50)


def test_failed_expiration_brings_the_group_back_and_retries(tmp_path: Path) -> None:
    h = DiskHarness(config=RETENTION)
    h.fs = FaultyFileSystem()
    h.directory = str(tmp_path / "data")
    h.log = Log.open(h.directory, fsync="always", fs=h.fs)
    try:
        h.apply(h.coordinator.on_loaded(h.now))
        assert h.commit_offsets("simple", "", -1, {("t", 0): 1}) == {("t", 0): ErrorCode.NONE}
        before, hard = views(h), h.coordinator.hard_state()
        h.fail_next_write()
        h.sleep(60_000)  # the scan that expires the offset and drops the group fails
        assert h.coordinator.hard_state() == hard
        assert views(h) == before
        assert RetentionTimerKey() in h.timers  # the scan is re-armed
        assert_live_equals_replay(h)
        h.sleep(1001)  # the next scan succeeds
        assert h.maybe_group("simple") is None
        assert "simple" not in h.coordinator.hard_state().offsets
        assert_live_equals_replay(h)
    finally:
        h.log.close()


# --------------------------------------------------------------------------- history records


def test_failed_history_append_fails_nothing_and_is_counted(d: DiskHarness) -> None:
    """An append carrying only RebalanceEvent records fails: the request succeeds, the group
    changes as it would have, and the lost events are counted."""
    first = d.dynamic_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    d.sync_group_leader(GROUP_ID, first.generation_id, first.member_id, {first.member_id: b""})
    pending = d.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS,
                                require_known_member_id=True)
    new_id = d.reply(pending).member_id  # MEMBER_ID_REQUIRED: nothing written
    hard = d.coordinator.hard_state()
    start = len(d.results)
    d.fail_next_write()
    rejoin = d.send_join_group(GROUP_ID, new_id, PROTOCOL_TYPE, PROTOCOLS,
                               require_known_member_id=True)
    lost = [r for result in d.results[start:] for r in result.records]
    assert lost and all(isinstance(r.key, RebalanceEventKey) for r in lost)
    assert d.coordinator.dropped_events == len(lost)
    assert d.state() == "PreparingRebalance"  # the member joined, the rebalance started
    assert new_id in d.group().members
    assert not d.answered(rejoin)  # parked as usual: the lost history changed nothing
    assert d.coordinator.hard_state() == hard
    assert_live_equals_replay(d)


# --------------------------------------------------------------------------- writes in flight


def test_delete_groups_tombstones_a_commit_in_flight(d: DiskHarness) -> None:
    """Deleting a group tombstones the offsets being committed too, so a commit that lands
    before the tombstones cannot resurrect the group's offsets."""
    assert d.commit_offsets("simple", "", -1, {("t", 0): 1}) == {("t", 0): ErrorCode.NONE}
    with d.hold_appends():
        commit = d.token()
        d.apply(handle_offset_commit(
            d.coordinator, V8, _commit("simple", ("t", 1), 5), commit, d.now))
        token = d.token()
        d.apply(handle_delete_groups(d.coordinator, V2, {"groups_names": ["simple"]}, token, d.now))
    tombstones = {(r.key.topic, r.key.partition) for result in d.in_flight
                  for r in result.records
                  if isinstance(r.key, OffsetCommitKey) and r.value is None}
    assert tombstones == {("t", 0), ("t", 1)}
    d.release()
    assert d.reply(commit).topics[0].partitions[0].error_code == ErrorCode.NONE
    assert d.reply(token).results[0].error_code == ErrorCode.NONE
    assert "simple" not in d.coordinator.hard_state().offsets
    assert_live_equals_replay(d)


def test_a_failed_delete_after_a_landed_commit_keeps_both(d: DiskHarness) -> None:
    assert d.commit_offsets("simple", "", -1, {("t", 0): 1}) == {("t", 0): ErrorCode.NONE}
    with d.hold_appends():
        d.apply(handle_offset_commit(d.coordinator, V8, _commit("simple", ("t", 1), 5), d.token(),
                                            d.now))
        token = d.token()
        d.apply(handle_delete_groups(d.coordinator, V2, {"groups_names": ["simple"]}, token, d.now))
    d.release(count=1)  # the commit lands
    d.fail_next_write()
    d.release()  # the tombstones do not
    assert d.reply(token).results[0].error_code == NOT_COORDINATOR
    assert d.coordinator.committed_offsets("simple").keys() == {("t", 0), ("t", 1)}
    assert d.maybe_group("simple") is not None
    assert_live_equals_replay(d)


def test_has_offsets_counts_a_commit_in_flight(d: DiskHarness) -> None:
    """OffsetDelete of a group's last committed offset does not drop the group while
    another commit of it is in flight (Kafka's hasOffsets counts pending commits)."""
    assert d.commit_offsets("simple", "", -1, {("t", 0): 1}) == {("t", 0): ErrorCode.NONE}
    with d.hold_appends():
        d.apply(handle_offset_commit(d.coordinator, V8, _commit("simple", ("t", 1), 5), d.token(),
                                            d.now))
        token = d.token()
        d.apply(handle_offset_delete(d.coordinator,
            V0, {"group_id": "simple", "topics": [
                {"name": "t", "partitions": [{"partition_index": 0}]}]}, token, d.now))
    assert d.maybe_group("simple") is not None  # not dropped: an offset is on its way
    d.release()
    assert d.reply(token).error_code == ErrorCode.NONE
    assert d.coordinator.committed_offsets("simple").keys() == {("t", 1)}
    assert_live_equals_replay(d)


def test_offset_delete_of_the_last_offset_drops_the_group_it_emptied(d: DiskHarness) -> None:
    """Within one handler, the drop decision sees the handler's own tombstones."""
    assert d.commit_offsets("simple", "", -1, {("t", 0): 1}) == {("t", 0): ErrorCode.NONE}
    error, partitions = d.delete_offsets("simple", [("t", 0)])
    assert (error, partitions) == (ErrorCode.NONE, {("t", 0): ErrorCode.NONE})
    assert d.maybe_group("simple") is None
    assert_live_equals_replay(d)


def test_a_commit_is_not_visible_before_its_append(d: DiskHarness) -> None:
    assert d.commit_offsets("simple", "", -1, {("t", 0): 1}) == {("t", 0): ErrorCode.NONE}
    with d.hold_appends():
        commit = d.token()
        d.apply(handle_offset_commit(
            d.coordinator, V8, _commit("simple", ("t", 0), 2), commit, d.now))
    assert not d.answered(commit)
    assert d.coordinator.committed_offsets("simple")[("t", 0)].offset == 1
    d.release()
    assert d.coordinator.committed_offsets("simple")[("t", 0)].offset == 2


def _commit(group: str, tp: tuple[str, int], offset: int) -> Any:
    return {"group_id": group, "generation_id_or_member_epoch": -1, "member_id": "",
            "group_instance_id": None, "retention_time_ms": -1,
            "topics": [{"name": tp[0], "partitions": [partition(tp[1], offset)]}]}


def test_group_metadata_key_is_what_fails_in_a_sync(d: DiskHarness) -> None:
    """(The sync's append carries the group record: the failure above is that kind.)"""
    join = d.dynamic_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    with d.hold_appends():
        d.send_sync_group(GROUP_ID, join.generation_id, join.member_id, {join.member_id: b""})
    kinds = {type(r.key) for result in d.in_flight for r in result.records}
    assert GroupMetadataKey in kinds
    d.release()


def test_a_call_that_raises_leaves_no_write_in_flight(d: DiskHarness) -> None:
    """Records of a call that never returned its Result will not be appended: the next
    call does not count them (they would otherwise keep a group alive forever)."""
    fx = d.coordinator.effects()
    fx.persist(Record(OffsetCommitKey("ghost", "t", 0), None))
    fx.persist(Record(OffsetCommitKey("ghost", "t", 0), _value(3)))
    assert d.coordinator.has_offsets("ghost")  # the call in progress sees its own writes
    # ... and raises here, never returning its Result. The next call starts clean:
    d.coordinator.effects()
    assert not d.coordinator.has_offsets("ghost")
    assert d.coordinator.offset_keys("ghost") == []
    assert d.commit_offsets("ghost", "", -1, {("t", 0): 4}) == {("t", 0): ErrorCode.NONE}
    assert d.coordinator.committed_offsets("ghost")[("t", 0)].offset == 4
    assert not d.coordinator.pending  # settled: nothing left in flight
    assert_live_equals_replay(d)


def _value(offset: int) -> Any:
    from storage.records import OffsetCommitValue

    return OffsetCommitValue(offset=offset)
