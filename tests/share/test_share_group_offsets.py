"""AlterShareGroupOffsets and DeleteShareGroupOffsets in the group core (on the fake-clock
harness) and the share shard's start-offset writes and summaries (the manager harness):
persisted, then applied; a failed append changes nothing and answers the mapped error;
live state equals what the log replays to."""

from __future__ import annotations

from typing import Any

from manager_harness import MEMBER_1, ManagerHarness, key
from share_group_harness import GROUP, ShareHarness, ctx

from coordinator.core.share_group.offsets import (
    NO_OFFSETS_MESSAGE,
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

UNKNOWN_TOPIC = "This server does not host this topic-partition."


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


def _empty_share_group(topics: list[str]) -> ShareHarness:
    """A share group whose one member joined (initializing ``topics``' partitions) and left."""
    h = ShareHarness()
    h.share_join("m1", topics)
    h.share_heartbeat("m1", -1)
    return h


def _topics(answer: Any) -> list[tuple[str, int, str | None]]:
    return [(t["topic_name"], t["error_code"], t["error_message"]) for t in answer["responses"]]


def test_initiate_delete_share_group_offsets_group_not_found() -> None:
    h = ShareHarness()
    answer = _delete(h, ["foo"], group="unknown")
    assert (answer["error_code"], len(answer["responses"])) == (ErrorCode.GROUP_ID_NOT_FOUND, 0)


def test_initiate_delete_share_group_offsets_non_empty_share_group() -> None:
    h = ShareHarness()
    h.share_join("m1", ["foo"])
    start = len(h.records)
    answer = _delete(h, ["foo"])
    assert (answer["error_code"], answer["error_message"]) == (
        ErrorCode.NON_EMPTY_GROUP, "The group is not empty.")
    assert h.records[start:] == []


def test_initiate_delete_share_group_offsets_empty_result() -> None:
    h = _empty_share_group(["foo"])
    start = len(h.records)
    # bar exists but the group never initialized it: nothing to delete, nothing written.
    assert _topics(_delete(h, ["bar"])) == [
        ("bar", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, NO_OFFSETS_MESSAGE)]
    assert h.records[start:] == []


def test_initiate_delete_share_group_offsets_success() -> None:
    h = _empty_share_group(["foo", "bar"])
    forgotten: list[Any] = []
    h.coordinator.share_state_deleted = forgotten.extend
    start = len(h.records)
    answer = _delete(h, ["foo", "bar"])
    assert answer["error_code"] == ErrorCode.NONE
    assert _topics(answer) == [("foo", 0, None), ("bar", 0, None)]
    written = h.records[start:]
    assert {(type(r.key), r.key.topic_id, r.key.partition) for r in written[:-1]} == {
        (kind, h.coordinator.topics_image.by_name[name][0], p)
        for kind in (ShareSnapshotKey, ShareUpdateKey)
        for name, count in (("foo", 6), ("bar", 3)) for p in range(count)}
    assert all(r.value is None for r in written[:-1])
    assert written[-1].key == ShareGroupStatePartitionMetadataKey(GROUP)
    assert forgotten == written[:-1]  # the share shard is told once they are durable
    assert _initialized(h) == {}
    h.assert_share_live_equals_replay()


def test_initiate_delete_share_group_offsets_success_with_error_topics() -> None:
    h = _empty_share_group(["foo", "bar"])
    answer = _delete(h, ["bar", "nope"])
    assert _topics(answer) == [("bar", 0, None),
                               ("nope", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_TOPIC)]
    assert _initialized(h) == {"foo": frozenset(range(6))}
    h.assert_share_live_equals_replay()


def test_share_partitions_eligible_for_offset_deletion_success() -> None:
    h = _empty_share_group(["foo", "bar"])
    start = len(h.records)
    _delete(h, ["foo"])
    tombstoned = {(type(r.key), r.key.partition) for r in h.records[start:-1]}
    assert tombstoned == {(kind, p) for kind in (ShareSnapshotKey, ShareUpdateKey)
                          for p in range(6)}
    assert _initialized(h) == {"bar": frozenset(range(3))}


def test_share_partitions_eligible_for_offset_deletion_error_topics() -> None:
    h = _empty_share_group(["foo"])
    start = len(h.records)
    assert _topics(_delete(h, ["nope"])) == [
        ("nope", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_TOPIC)]
    assert h.records[start:] == []


def test_share_partitions_eligible_for_offset_deletion_uninitialized_topics() -> None:
    h = _empty_share_group(["foo"])
    assert _topics(_delete(h, ["bar"])) == [
        ("bar", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, NO_OFFSETS_MESSAGE)]
    assert _initialized(h) == {"foo": frozenset(range(6))}


def test_share_partitions_eligible_for_offset_deletion_uninitialized_and_error_topics() -> None:
    h = _empty_share_group(["foo"])
    # Kafka's order: the deleted topics, then the refused ones.
    assert _topics(_delete(h, ["foo", "bar", "nope", "foo"])) == [
        ("foo", 0, None), ("foo", 0, None),
        ("bar", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, NO_OFFSETS_MESSAGE),
        ("nope", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_TOPIC)]
    assert _initialized(h) == {}
    h.assert_share_live_equals_replay()


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


def _accepted(m: ManagerHarness) -> None:
    """Ten records acquired; 0-1 and 4 accepted: the start is 2, one more complete."""
    m.end_offsets[key()] = 10
    assert m.acquire(MEMBER_1) == {key(): [(0, 9, 1)]}
    m.session("fetch", MEMBER_1, 0, [key()])
    m.session("acknowledge", MEMBER_1, 1, acks={key(): [(0, 1, 1), (4, 4, 1)]})


def test_read_state_summary_success() -> None:
    m = ManagerHarness()
    _accepted(m)
    assert _summary(m, key(), key(1)) == {key(): PartitionSummary(2, 0, 0, 1), key(1): None}
    assert _summary(m.restart(), key()) == {key(): PartitionSummary(2, 0, 0, 1)}


def test_initialize_state_success() -> None:
    m = ManagerHarness()
    _accepted(m)
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


def test_delete_state_unintialized_record() -> None:
    m = ManagerHarness()
    assert _write(m, {key(): -1}) == 1
    assert _summary(m, key()) == {key(): None}
    assert key() not in m.shard.partitions


def test_delete_state_success() -> None:
    m = ManagerHarness()
    m.end_offsets[key()] = 5
    m.acquire(MEMBER_1)
    assert _write(m, {key(): -1}) == 1
    assert key() not in m.shard.partitions
    assert _summary(m, key()) == {key(): None}
    assert _summary(m.restart(), key()) == {key(): None}
    # The next acquisition starts it again where share.auto.offset.reset says.
    assert m.acquire(MEMBER_1, start_offset_if_new=4) == {key(): [(4, 4, 1)]}
