"""OffsetForLeaderEpoch across failovers (``--brokers 3``), raw frames over real TCP: each epoch
ends where the next one starts (the current one at the log end, before a batch carries it);
a stale current leader epoch is FENCED_LEADER_EPOCH, a newer one UNKNOWN_LEADER_EPOCH, a
broker not leading NOT_LEADER_OR_FOLLOWER; the history survives a restart (read again off the
stored batches' stamps and ``cluster.json``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import trio
from raw_client import PRODUCE, RawClient, batch

from coordinator.server.app import RunningServer, serve
from coordinator.server.options import build_options
from wire import ErrorCode
from wire.constants import ApiKey

pytestmark = pytest.mark.trio

FENCED, UNKNOWN = ErrorCode.FENCED_LEADER_EPOCH, ErrorCode.UNKNOWN_LEADER_EPOCH
NOT_LEADER = ErrorCode.NOT_LEADER_OR_FOLLOWER
PROPS = {"group.initial.rebalance.delay.ms": "0", "default.replication.factor": "3"}


async def produce(client: RawClient, count: int) -> None:
    for i in range(count):
        answer = await client.request(PRODUCE, 9, {
            "transactional_id": None, "acks": -1, "timeout_ms": 5_000,
            "topic_data": [{"name": "t", "partition_data": [
                {"index": 0, "records": batch([b"%d" % i], -1, -1, -1, transactional=False)}]}]})
        assert answer.responses[0].partition_responses[0].error_code == 0


async def end_offset(client: RawClient, current: int, epoch: int,
                     version: int = 4) -> tuple[int, int, int]:
    """(error code, leader epoch, end offset) of partition 0 of ``t``."""
    answer = await client.request(ApiKey.OFFSET_FOR_LEADER_EPOCH, version, {
        "replica_id": -1, "topics": [{"topic": "t", "partitions": [
            {"partition": 0, "current_leader_epoch": current, "leader_epoch": epoch}]}]})
    (topic,) = answer.topics
    (p,) = topic.partitions
    assert (topic.topic, p.partition) == ("t", 0)
    return p.error_code, p.leader_epoch, p.end_offset


async def test_each_epoch_ends_where_the_next_starts_across_failovers(
    start_server: Any, connect: Any
) -> None:
    running = await start_server(PROPS, brokers=3, topics=(("t", 1),))
    ports = running.brokers.ports
    first = await connect(ports[0])
    await produce(first, 2)
    assert await end_offset(first, 0, 0) == (0, 0, 2)
    assert await end_offset(await connect(ports[1]), 0, 0) == (NOT_LEADER, -1, -1)

    await running.brokers.stop(0)  # broker 1 leads at epoch 1, nothing stamped with it yet
    second = await connect(ports[1])
    for version in (2, 3, 4):
        assert await end_offset(second, 1, 0, version) == (0, 0, 2)
        assert await end_offset(second, 1, 1, version) == (0, 1, 2)
    assert await end_offset(second, 0, 0) == (FENCED, -1, -1)
    assert await end_offset(second, 2, 0) == (UNKNOWN, -1, -1)
    assert await end_offset(await connect(ports[2]), 1, 0) == (NOT_LEADER, -1, -1)
    assert await end_offset(second, 1, 2) == (0, -1, -1)  # newer than every known epoch

    await produce(second, 3)
    assert await end_offset(second, 1, 0) == (0, 0, 2)
    assert await end_offset(second, 1, 1) == (0, 1, 5)

    await running.brokers.stop(1)  # broker 2 leads at epoch 2
    third = await connect(ports[2])
    assert [await end_offset(third, 2, epoch) for epoch in (0, 1, 2)] == [
        (0, 0, 2), (0, 1, 5), (0, 2, 5)]


async def test_the_history_survives_a_restart(tmp_path: Path, connect: Any) -> None:
    options = build_options(PROPS, host="127.0.0.1", port=0, data_dir=str(tmp_path),
                            brokers=3, topics=(("t", 1),))
    answers = []
    for run in range(2):
        with trio.fail_after(60):
            async with trio.open_nursery() as nursery:
                running: RunningServer = await nursery.start(serve, options)
                ports = running.brokers.ports
                if run == 0:
                    await produce(await connect(ports[0]), 2)
                    await running.brokers.stop(0)
                    await produce(await connect(ports[1]), 1)
                    await running.brokers.stop(1)
                # Broker 2 leads at epoch 2 (cluster.json), with no batch stamped 2.
                leader = await connect(ports[2])
                answers.append([await end_offset(leader, 2, epoch) for epoch in range(3)])
                nursery.cancel_scope.cancel()
    assert answers[0] == answers[1] == [(0, 0, 2), (0, 1, 3), (0, 2, 3)]
