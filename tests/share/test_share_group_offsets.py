"""AlterShareGroupOffsets and DeleteShareGroupOffsets in the group core (on the fake-clock
harness) and the share shard's start-offset writes and summaries (the manager harness):
persisted, then applied; a failed append changes nothing and answers the mapped error;
live state equals what the log replays to."""

from __future__ import annotations

from typing import Any

from manager_harness import MEMBER_1, ManagerHarness, key
from share_group_harness import GROUP, ShareHarness, ctx

from coordinator.core.share_group.offsets import (
    AlterShareOffsetsOutcome,
    handle_alter_share_group_offsets,
    handle_delete_share_group_offsets,
)
from coordinator.share.offsets import (
    PartitionSummary,
    ReadSummaries,
    WriteStartOffsets,
    handle_read_summaries,
    handle_write_start_offsets,
)
from storage.records import ShareGroupStatePartitionMetadataKey, ShareSnapshotKey, ShareUpdateKey
from wire.constants import ErrorCode


def _alter(h: ShareHarness, offsets: dict[str, dict[int, int]], group: str = GROUP) -> Any:
    token = h.token()
    h.apply(handle_alter_share_group_offsets(h.coordinator, ctx(0), {
        "group_id": group, "topics": [
            {"topic_name": name, "partitions": [
                {"partition_index": p, "start_offset": o} for p, o in parts.items()]}
            for name, parts in offsets.items()]}, token, h.now))
    return h.reply(token)


def _delete(h: ShareHarness, topics: list[str], group: str = GROUP) -> Any:
    token = h.token()
    h.apply(handle_delete_share_group_offsets(h.coordinator, ctx(0), {
        "group_id": group, "topics": [{"topic_name": name} for name in topics]}, token, h.now))
    return h.reply(token)


def _initialized(h: ShareHarness) -> dict[str, frozenset[int]]:
    return {name: parts for name, parts in h.share_group().initialized.values()}


def test_alter_share_group_offsets_records_the_partitions_initialized() -> None:
    h = ShareHarness()
    h.share_join("m1", ["foo"])
    assert _alter(h, {"bar": {0: 3}})["error_code"] == ErrorCode.NON_EMPTY_GROUP
    h.share_heartbeat("m1", -1)
    start = len(h.records)
    outcome = _alter(h, {"bar": {0: 3, 2: 4, 3: 0}, "nope": {0: 1}})
    assert isinstance(outcome, AlterShareOffsetsOutcome)
    bar_id = h.coordinator.topics_image.by_name["bar"][0]
    assert outcome.start_offsets == {(bar_id, 0): 3, (bar_id, 2): 4}
    assert outcome.state_epoch == h.share_group().group_epoch
    errors = {(t["topic_name"], p["partition_index"]): p["error_code"]
              for t in outcome.responses for p in t["partitions"]}
    unknown = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert errors == {("bar", 0): 0, ("bar", 2): 0, ("bar", 3): unknown, ("nope", 0): unknown}
    assert [r.key for r in h.records[start:]] == [ShareGroupStatePartitionMetadataKey(GROUP)]
    assert _initialized(h) == {"foo": frozenset(range(6)), "bar": frozenset({0, 2})}
    h.assert_share_live_equals_replay()
    assert _alter(h, {"bar": {0: 3}}, group="unknown")["error_code"] == (
        ErrorCode.GROUP_ID_NOT_FOUND)


def test_alter_share_group_offsets_failed_append_changes_nothing() -> None:
    h = ShareHarness()
    h.share_join("m1", ["foo"])
    h.share_heartbeat("m1", -1)
    h.fail_appends(ErrorCode.KAFKA_STORAGE_ERROR)
    answer = _alter(h, {"bar": {1: 3}})
    assert (answer["error_code"], len(answer["responses"])) == (ErrorCode.NOT_COORDINATOR, 0)
    assert _initialized(h) == {"foo": frozenset(range(6))}
    h.assert_share_live_equals_replay()


def test_delete_share_group_offsets_tombstones_the_initialized_topics() -> None:
    h = ShareHarness()
    h.share_join("m1", ["foo", "bar"])
    assert _delete(h, ["foo"])["error_code"] == ErrorCode.NON_EMPTY_GROUP
    h.share_heartbeat("m1", -1)
    forgotten: list[Any] = []
    h.coordinator.share_state_deleted = forgotten.extend
    start = len(h.records)
    answer = _delete(h, ["bar", "nope"])
    assert [(t["topic_name"], t["error_code"]) for t in answer["responses"]] == [
        ("bar", 0), ("nope", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)]
    written = h.records[start:]
    assert {(type(r.key), r.key.partition) for r in written[:-1]} == {
        (kind, p) for kind in (ShareSnapshotKey, ShareUpdateKey) for p in range(3)}
    assert all(r.value is None for r in written[:-1])
    assert written[-1].key == ShareGroupStatePartitionMetadataKey(GROUP)
    assert forgotten == written[:-1]  # the share shard is told once they are durable
    assert _initialized(h) == {"foo": frozenset(range(6))}
    h.assert_share_live_equals_replay()
    again = _delete(h, ["bar"])["responses"][0]
    assert (again["error_code"], again["error_message"]) == (
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "There is no offset information to delete.")


def test_delete_share_group_offsets_failed_append_keeps_the_topics() -> None:
    h = ShareHarness()
    h.share_join("m1", ["foo"])
    h.share_heartbeat("m1", -1)
    h.fail_appends(ErrorCode.KAFKA_STORAGE_ERROR)
    assert _delete(h, ["foo"])["error_code"] == ErrorCode.NOT_COORDINATOR
    assert _initialized(h) == {"foo": frozenset(range(6))}
    h.assert_share_live_equals_replay()


# --------------------------------------------------------------------------- share shard


def _write(m: ManagerHarness, offsets: dict[Any, int], state_epoch: int = 3) -> Any:
    (answer,) = m._finish(handle_write_start_offsets(
        m.shard, None, WriteStartOffsets(offsets, state_epoch), 1, m.now))
    return answer


def _summary(m: ManagerHarness, *keys: Any) -> dict[Any, PartitionSummary | None]:
    (answer,) = m._finish(handle_read_summaries(m.shard, None, ReadSummaries(keys), 1, m.now))
    assert isinstance(answer, dict)
    return answer


def test_write_start_offsets_starts_the_share_partition_afresh() -> None:
    m = ManagerHarness()
    m.end_offsets[key()] = 10
    assert m.acquire(MEMBER_1) == {key(): [(0, 9, 1)]}
    m.session("fetch", MEMBER_1, 0, [key()])
    m.session("acknowledge", MEMBER_1, 1, acks={key(): [(0, 1, 1), (4, 4, 1)]})
    assert _summary(m, key(), key(1)) == {key(): PartitionSummary(2, 0, 0, 1), key(1): None}
    epoch = m.shard.coordinator.store.partitions[key()].snapshot_epoch
    assert _write(m, {key(): 3}) == 1
    log = m.shard.coordinator.store.partitions[key()]
    assert (log.snapshot_epoch, log.current.start_offset, log.current.state_epoch) == (
        epoch + 1, 3, 3)
    assert m.shard.partitions[key()].acquired_by(MEMBER_1) == []  # nothing in flight
    assert m.acquire(MEMBER_1) == {key(): [(3, 9, 1)]}  # 4 (accepted before) comes again
    again = m.restart()
    assert _summary(again, key()) == {key(): PartitionSummary(3, 0, 3, 0)}


def test_write_start_offsets_failed_append_keeps_the_live_partition() -> None:
    m = ManagerHarness()
    m.end_offsets[key()] = 5
    assert m.acquire(MEMBER_1) == {key(): [(0, 4, 1)]}
    before = m.shard.partitions[key()]
    m.fail_next_append = True
    answer = _write(m, {key(): 2})
    assert answer.error == ErrorCode.KAFKA_STORAGE_ERROR
    assert m.shard.partitions[key()] is before
    assert before.acquired_by(MEMBER_1) == [0, 1, 2, 3, 4]
    assert _summary(m, key()) == {key(): PartitionSummary(0, 0, 0, 0)}


def test_a_negative_start_offset_leaves_no_share_state() -> None:
    m = ManagerHarness()
    m.end_offsets[key()] = 5
    m.acquire(MEMBER_1)
    assert _write(m, {key(): -1}) == 1
    assert key() not in m.shard.partitions
    assert _summary(m, key()) == {key(): None}
    assert _summary(m.restart(), key()) == {key(): None}
    # The next acquisition starts it again where share.auto.offset.reset says.
    assert m.acquire(MEMBER_1, start_offset_if_new=4) == {key(): [(4, 4, 1)]}
