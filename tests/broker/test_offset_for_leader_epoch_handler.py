"""OffsetForLeaderEpoch on one broker, every version it serves, through the real codec and
kio: the end offset of each epoch, UNKNOWN_TOPIC_OR_PARTITION, the current-leader-epoch check
(one broker leads at epoch 0), and ``replica_id`` changing nothing."""

from __future__ import annotations

from typing import Any

import pytest
from broker_support import VERSIONS, FakeState, call, make_batch

from wire import ErrorCode
from wire.constants import ApiKey
from wire.records import parse_batches

KEY = ApiKey.OFFSET_FOR_LEADER_EPOCH


def request(*asked: tuple[str, int, int, int], replica_id: int = -1) -> dict[str, Any]:
    """(topic, partition, current leader epoch, leader epoch) per partition."""
    topics: dict[str, list[dict[str, int]]] = {}
    for name, partition, current, epoch in asked:
        topics.setdefault(name, []).append(
            {"partition": partition, "current_leader_epoch": current, "leader_epoch": epoch})
    return {"replica_id": replica_id,
            "topics": [{"topic": n, "partitions": p} for n, p in topics.items()]}


async def ask(state: FakeState, version: int, *asked: tuple[str, int, int, int],
              replica_id: int = -1) -> list[tuple[str, int, int, int, int]]:
    got = await call(state, KEY, version, request(*asked, replica_id=replica_id))
    assert got is not None and got.throttle_time_ms == 0
    return [(t.topic, p.partition, p.error_code, p.leader_epoch, p.end_offset)
            for t in got.topics for p in t.partitions]


def append(state: FakeState, index: int, epoch: int, count: int) -> None:
    log = state.topics.partition("t", index)
    assert log is not None
    log.leader_epoch = epoch
    for i in range(count):
        data = make_batch([b"%d" % i])
        (header,) = parse_batches(data)
        log.append(data, header)


def test_every_served_version() -> None:
    assert list(VERSIONS[KEY]) == [2, 3, 4]


@pytest.mark.parametrize("version", VERSIONS[KEY])
async def test_offset_for_leader_epoch(state: FakeState, version: int) -> None:
    state.topics.create_topic("t", 2)
    append(state, 0, 0, 3)
    assert await ask(state, version, ("t", 0, 0, 0), ("t", 0, -1, 0), ("t", 1, 0, 0),
                     ("t", 0, -1, 1), ("t", 0, -1, -1), ("t", 7, -1, 0),
                     ("nope", 0, -1, 0)) == [
        ("t", 0, 0, 0, 3),  # the current epoch: the log end offset
        ("t", 0, 0, 0, 3),  # current_leader_epoch -1: not checked
        ("t", 1, 0, 0, 0),  # an empty partition
        ("t", 0, 0, -1, -1),  # an epoch newer than every known: undefined
        ("t", 0, 0, -1, -1),  # the undefined epoch
        ("t", 7, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1, -1),
        ("nope", 0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1, -1),
    ]


@pytest.mark.parametrize("version", VERSIONS[KEY])
async def test_a_newer_current_leader_epoch_is_unknown_to_one_broker(
    state: FakeState, version: int
) -> None:
    state.topics.create_topic("t", 1)
    assert await ask(state, version, ("t", 0, 1, 0)) == [
        ("t", 0, ErrorCode.UNKNOWN_LEADER_EPOCH, -1, -1)]


async def test_epochs_a_log_carries_from_a_cluster_end_where_the_next_one_starts(
    state: FakeState,
) -> None:
    # Batches stamped 0, 2 and 3 (a data directory a cluster wrote): one broker still
    # answers each epoch's end from the stamps.
    state.topics.create_topic("t", 1)
    append(state, 0, 0, 2)
    append(state, 0, 2, 3)
    append(state, 0, 3, 1)
    assert await ask(state, 4, ("t", 0, -1, 0), ("t", 0, -1, 1), ("t", 0, -1, 2)) == [
        ("t", 0, 0, 0, 2), ("t", 0, 0, 0, 2), ("t", 0, 0, 2, 5)]


@pytest.mark.parametrize("replica_id", [-2, -1, 0, 5])
async def test_replica_id_changes_nothing(state: FakeState, replica_id: int) -> None:
    state.topics.create_topic("t", 1)
    append(state, 0, 0, 2)
    assert await ask(state, 3, ("t", 0, 0, 0), replica_id=replica_id) == [("t", 0, 0, 0, 2)]
