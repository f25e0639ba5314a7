"""DeleteRecords (issue 12): the log start offset moves forward with Kafka's errors; Fetch
below it is OFFSET_OUT_OF_RANGE and ListOffsets "earliest" answers it; a restart keeps it."""

from __future__ import annotations

from pathlib import Path

import pytest
from broker_support import VERSIONS, FakeState, call, make_batch
from test_topic_files import close, open_store, produce

from wire import ErrorCode

API = 21


async def delete_records(state: FakeState, version: int, topic: str,
                         offsets: dict[int, int]) -> dict[int, tuple[int, int]]:
    answer = await call(state, API, version, {"topics": [{"name": topic, "partitions": [
        {"partition_index": p, "offset": o} for p, o in offsets.items()]}], "timeout_ms": 5000})
    assert answer is not None
    (t,) = answer.topics
    return {p.partition_index: (p.error_code, p.low_watermark) for p in t.partitions}


async def earliest(state: FakeState, topic: str, partition: int) -> int:
    answer = await call(state, 2, 5, {"replica_id": -1, "isolation_level": 0, "topics": [
        {"name": topic, "partitions": [
            {"partition_index": partition, "current_leader_epoch": -1, "timestamp": -2}]}]})
    assert answer is not None
    offset: int = answer.topics[0].partitions[0].offset
    return offset


async def fetch_error(state: FakeState, topic: str, partition: int, offset: int) -> int:
    answer = await call(state, 1, 11, {
        "replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1 << 20,
        "isolation_level": 0, "session_id": 0, "session_epoch": -1,
        "topics": [{"topic": topic, "partitions": [{
            "partition": partition, "current_leader_epoch": -1, "fetch_offset": offset,
            "log_start_offset": -1, "partition_max_bytes": 1 << 20}]}],
        "forgotten_topics_data": [], "rack_id": ""})
    assert answer is not None
    code: int = answer.responses[0].partitions[0].error_code
    return code


def fill(state: FakeState) -> None:
    state.topics.create_topic("t", 2)
    for values in ([b"a", b"b"], [b"c"], [b"d", b"e", b"f"]):
        produce(state.topics, "t", 0, make_batch(values))


@pytest.mark.parametrize("version", VERSIONS[API])
async def test_the_log_start_moves_forward(state: FakeState, version: int) -> None:
    fill(state)
    assert await delete_records(state, version, "t", {0: 3}) == {0: (0, 3)}
    assert await earliest(state, "t", 0) == 3
    assert await fetch_error(state, "t", 0, 2) == ErrorCode.OFFSET_OUT_OF_RANGE
    assert await fetch_error(state, "t", 0, 3) == ErrorCode.NONE
    # A lower offset changes nothing; -1 means the high watermark.
    assert await delete_records(state, version, "t", {0: 1}) == {0: (0, 3)}
    assert await delete_records(state, version, "t", {0: -1}) == {0: (0, 6)}
    partition = state.topics.partition("t", 0)
    assert partition is not None and partition.batches == []


async def test_kafka_errors(state: FakeState) -> None:
    fill(state)
    assert await delete_records(state, 2, "t", {0: 7, 1: -5, 9: 0}) == {
        0: (ErrorCode.OFFSET_OUT_OF_RANGE, -1), 1: (ErrorCode.OFFSET_OUT_OF_RANGE, -1),
        9: (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1)}
    assert await delete_records(state, 2, "missing", {0: 0}) == {
        0: (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1)}
    state.topics.create_topic("compacted", 1, {"cleanup.policy": "compact"})
    assert await delete_records(state, 2, "compacted", {0: -1}) == {
        0: (ErrorCode.POLICY_VIOLATION, -1)}


async def test_the_log_start_survives_a_restart(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    state = FakeState(topics=store)
    fill(state)
    assert await delete_records(state, 2, "t", {0: 2}) == {0: (0, 2)}
    produce(store, "t", 0, make_batch([b"g"]))
    close(store)

    again = open_store(tmp_path)
    partition = again.partition("t", 0)
    assert partition is not None
    assert (partition.log_start_offset, partition.high_watermark) == (2, 7)
    assert await earliest(FakeState(topics=again), "t", 0) == 2
    close(again)
