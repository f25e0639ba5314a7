"""ShareFetch's ``max_bytes``: acquisition stays within the whole batches that fit, read
from each partition's first available offset and shared evenly among the session's
partitions; a first batch larger than the limit still comes (KIP-74). Over real TCP
against an in-process server."""

from __future__ import annotations

from typing import Any

import trio
from share_server import start_share_server
from share_wire import (
    RELEASE,
    AsyncClient,
    acquired,
)

GROUP = "bytes"


async def _batches(client: AsyncClient, topic: str, partition: int, count: int) -> None:
    """Produce ``count`` batches of 4 records each."""
    for i in range(count):
        values = [b"%d-%d" % (i, j) + b"x" * 100 for j in range(4)]
        answer = await client.produce(topic, partition, values)
        assert answer.responses[0].partition_responses[0].error_code == 0


async def test_max_bytes_bounds_the_batches_acquired(
    nursery: trio.Nursery, autojump_clock: Any
) -> None:
    running, topic_id = await start_share_server(nursery)
    client = await AsyncClient.connect(running.port)
    await _batches(client, "t", 0, 5)
    log = running.server.topics.partition("t", 0)
    assert log is not None
    size = len(log.batches[0].data)
    assert all(len(b.data) == size for b in log.batches)
    # Two batches and a bit: the first two batches' records only.
    got = await client.share_fetch(
        GROUP, "m1", 0, topic_id, max_records=100, max_bytes=2 * size + size // 2)
    assert acquired(got) == [(0, 7, 1)]
    assert len(got.responses[0].partitions[0].records) == 2 * size
    # One byte: still the first batch (KIP-74), read from the first available offset.
    other = await AsyncClient.connect(running.port)
    one = await other.share_fetch(
        GROUP, "m2", 0, topic_id, max_bytes=1)
    assert acquired(one) == [(8, 11, 1)]
    # Records released in an earlier batch are read first: the budget starts there.
    released = await client.share_fetch(
        GROUP, "m1", 1, topic_id, acks={0: [(0, 7, RELEASE)]}, max_bytes=size)
    assert acquired(released) == [(0, 3, 2)]
    for each in (client, other):
        await trio.aclose_forcefully(each.stream)


async def test_max_bytes_is_shared_evenly_among_partitions(
    nursery: trio.Nursery, autojump_clock: Any
) -> None:
    running, topic_id = await start_share_server(nursery, (("t", 2),))
    client = await AsyncClient.connect(running.port)
    await _batches(client, "t", 0, 3)
    await _batches(client, "t", 1, 3)
    log = running.server.topics.partition("t", 0)
    assert log is not None
    size = len(log.batches[0].data)
    got = await client.share_fetch(
        GROUP, "m1", 0, topic_id, partitions=(0, 1), max_records=100, max_bytes=4 * size)
    assert acquired(got, 0) == [(0, 7, 1)]
    assert acquired(got, 1) == [(0, 7, 1)]
    await trio.aclose_forcefully(client.stream)
