"""DescribeShareGroupOffsets, AlterShareGroupOffsets and DeleteShareGroupOffsets over real
TCP against an in-process server (raw frames), as Kafka 4.2's KafkaApis and group and share
coordinators answer them; ShareFetch shows what the changed state delivers."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
import trio
from share_offsets_wire import (
    alter_request,
    delete_request,
    describe_request,
    heartbeat_request,
    offsets_of,
)
from share_server import start_share_server
from share_wire import (
    ACCEPT,
    AsyncClient,
    acquired,
)

from coordinator.server.app import RunningServer
from coordinator.testing.group_views import describe_with_offsets
from wire.constants import ErrorCode

GROUP = "offsets-queue"
MEMBER = "0" * 21 + "1"
ZERO = uuid.UUID(int=0)


class Broker:
    """A running server with topic ``t`` (2 partitions) and one admin connection."""

    def __init__(self, running: RunningServer, client: AsyncClient) -> None:
        self.running = running
        self.client = client
        topic = running.server.topics.get("t")
        assert topic is not None
        self.topic_id: uuid.UUID = topic.topic_id

    async def call(self, api: int, version: int, body: Any) -> Any:
        return await self.client.request(api, version, body)

    async def produce(self, count: int) -> None:
        values = [b"v%d" % i for i in range(count)]
        answer = await self.client.produce("t", 0, values)
        assert answer.responses[0].partition_responses[0].error_code == 0

    async def heartbeat(self, epoch: int) -> Any:
        answer = await self.call(*heartbeat_request(GROUP, MEMBER, epoch))
        assert answer.error_code == 0, answer
        return answer

    async def consume(self, accept: tuple[tuple[int, int], ...]) -> list[tuple[int, int, int]]:
        """One share session: fetch, accept ``accept``'s ranges, close (the rest released)."""
        fetched = await self.client.share_fetch(GROUP, MEMBER, 0, self.topic_id)
        got = acquired(fetched)
        acks = {0: [(first, last, ACCEPT) for first, last in accept]}
        closed = await self.client.share_acknowledge(GROUP, MEMBER, -1, self.topic_id, acks)
        assert closed.error_code == 0, closed
        return got

    async def describe(self, topics: Any = None, version: int = 1) -> dict[Any, Any]:
        return offsets_of(await self.call(*describe_request(GROUP, topics, version)))


@pytest.fixture
async def broker(nursery: trio.Nursery) -> AsyncIterator[Broker]:
    running, _ = await start_share_server(nursery, (("t", 2), ("u", 1)))
    client = await AsyncClient.connect(running.port)
    yield Broker(running, client)
    await trio.aclose_forcefully(client.stream)


async def test_describe_answers_start_offset_and_lag_of_share_state(
    broker: Broker, autojump_clock: Any
) -> None:
    assert await broker.describe({"t": [0]}) == {("t", 0): (-1, -1)}  # no group, no state
    await broker.heartbeat(0)
    await broker.produce(6)
    # 0-1 and 3 accepted: the start moves to 2, offset 3's delivery is complete.
    assert await broker.consume(((0, 1), (3, 3))) == [(0, 5, 1)]
    # Lag: high watermark 6 - start 2 - one complete record (KIP-1226).
    assert await broker.describe({"t": [0, 1, 9]}) == {
        ("t", 0): (2, 3), ("t", 1): (-1, -1), ("t", 9): (-1, -1)}
    assert await broker.describe({"t": [0]}, version=0) == {("t", 0): (2, -1)}
    # Null topics: every partition the group initialized (both of t's, by the assignment).
    assert await broker.describe(None) == {("t", 0): (2, 3), ("t", 1): (-1, -1)}
    assert await broker.describe({}) == {}
    # The test double and the HTTP control API show the same (GET /groups/{id}).
    shown = describe_with_offsets(broker.running.server, GROUP)
    assert shown is not None and shown["share_offsets"] == [
        {"topic": "t", "partition": 0, "start_offset": 2, "log_end_offset": 6, "lag": 3}]
    answer = await broker.call(*describe_request(GROUP, {"nope": [0], "t": [0]}))
    (group,) = answer.groups
    assert [(t.topic_name, t.topic_id) for t in group.topics] == [
        ("t", broker.topic_id), ("nope", ZERO)]  # unknown topics after the known ones
    assert group.topics[1].partitions[0].start_offset == -1


async def test_alter_needs_an_empty_share_group(broker: Broker, autojump_clock: Any) -> None:
    request = alter_request(GROUP, {"t": {0: 1}})
    missing = await broker.call(*request)
    assert (missing.error_code, missing.responses) == (ErrorCode.GROUP_ID_NOT_FOUND, [])
    await broker.heartbeat(0)
    busy = await broker.call(*request)
    assert (busy.error_code, busy.error_message, busy.responses) == (
        ErrorCode.NON_EMPTY_GROUP, "The group is not empty.", [])
    invalid = await broker.call(*alter_request("", {"t": {0: 1}}))
    assert invalid.error_code == ErrorCode.INVALID_GROUP_ID


async def test_alter_sets_the_start_offset_and_starts_afresh(
    broker: Broker, autojump_clock: Any
) -> None:
    await broker.heartbeat(0)
    await broker.produce(6)
    await broker.consume(((0, 3),))
    await broker.heartbeat(-1)  # the group is Empty
    answer = await broker.call(*alter_request(
        GROUP, {"nope": {0: 0}, "t": {0: 1, 7: 0}, "u": {0: 0}}))
    assert answer.error_code == 0
    errors = {(t.topic_name, p.partition_index): p.error_code
              for t in answer.responses for p in t.partitions}
    assert errors == {("nope", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ("t", 0): 0,
                      ("t", 7): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ("u", 0): 0}
    assert [t.topic_name for t in answer.responses] == ["nope", "t", "u"]
    assert await broker.describe({"t": [0], "u": [0]}) == {("t", 0): (1, 5), ("u", 0): (0, 0)}
    # A fresh start: the records accepted before at or above 1 are delivered again.
    await broker.heartbeat(0)
    assert await broker.consume(()) == [(1, 5, 1)]
    # u was recorded as initialized: the group's null-topics describe lists it.
    assert ("u", 0) in await broker.describe(None)


async def test_delete_removes_the_share_state_of_initialized_topics(
    broker: Broker, autojump_clock: Any
) -> None:
    await broker.heartbeat(0)
    await broker.produce(4)
    await broker.consume(((0, 1),))
    busy = await broker.call(*delete_request(GROUP, ["t"]))
    assert busy.error_code == ErrorCode.NON_EMPTY_GROUP
    await broker.heartbeat(-1)
    answer = await broker.call(*delete_request(GROUP, ["t", "u", "nope"]))
    assert answer.error_code == 0
    topics = answer.responses
    assert [(t.topic_name, t.topic_id, t.error_code, t.error_message) for t in topics] == [
        ("t", broker.topic_id, 0, None),
        ("u", ZERO, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
         "There is no offset information to delete."),
        ("nope", ZERO, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
         "This server does not host this topic-partition.")]
    assert broker.running.server.shares.manager.partitions == {}
    assert await broker.describe(None) == {}
    again = await broker.call(*delete_request(GROUP, ["t"]))
    assert again.responses[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    # The next member starts the share partition again (earliest here): all four come.
    await broker.heartbeat(0)
    assert await broker.consume(()) == [(0, 3, 1)]
