"""A share consumer's connection closing releases what its member holds at once (Kafka's
ShareSessionCache ConnectionDisconnectListener and SharePartitionManager.releaseSession),
not when the acquisition locks expire: over real TCP against an in-process server, in
virtual time."""

from __future__ import annotations

from typing import Any

import trio
from share_server import start_share_server
from share_wire import (
    ACCEPT,
    AsyncClient,
    acquired,
)

from coordinator.server.app import RunningServer
from wire.constants import ErrorCode

GROUP = "disconnects"


async def _closed_and_released(running: RunningServer) -> None:
    """Until the share shard has removed every session (the close is seen by the
    connection's task, then the release appended)."""
    with trio.fail_after(5):
        while running.server.shares.manager.sessions.sessions:
            await trio.sleep(0.001)


async def test_a_closed_connection_releases_its_members_records_at_once(
    nursery: trio.Nursery, autojump_clock: Any
) -> None:
    running, topic_id = await start_share_server(nursery)
    producer = await AsyncClient.connect(running.port)
    produced = await producer.produce("t", 0, [b"a", b"b", b"c"])
    assert produced.responses[0].partition_responses[0].error_code == 0
    first = await AsyncClient.connect(running.port)
    got = await first.share_fetch(GROUP, "m1", 0, topic_id)
    assert acquired(got) == [(0, 2, 1)]
    started = trio.current_time()
    await first.stream.aclose()
    await _closed_and_released(running)
    second = await AsyncClient.connect(running.port)
    again = await second.share_fetch(GROUP, "m2", 0, topic_id)
    # Released, not expired: well before the 30 s acquisition lock; delivered once before.
    assert acquired(again) == [(0, 2, 2)]
    assert trio.current_time() - started < 1
    done = await second.share_acknowledge(
        GROUP, "m2", 1, topic_id, {0: [(0, 2, ACCEPT)]})
    assert done.error_code == ErrorCode.NONE
    for client in (producer, second):
        await trio.aclose_forcefully(client.stream)


async def test_a_closed_connection_without_share_sessions_changes_nothing(
    nursery: trio.Nursery, autojump_clock: Any
) -> None:
    running, topic_id = await start_share_server(nursery)
    producer = await AsyncClient.connect(running.port)
    await producer.produce("t", 0, [b"a"])
    holder = await AsyncClient.connect(running.port)
    got = await holder.share_fetch(GROUP, "m1", 0, topic_id)
    assert acquired(got) == [(0, 0, 1)]
    await producer.stream.aclose()  # another connection: the holder keeps its records
    await trio.sleep(1)
    (share,) = running.server.shares.manager.partitions.values()
    assert share.acquired_by("m1") == [0]
    assert len(running.server.shares.manager.sessions.sessions) == 1
    await trio.aclose_forcefully(holder.stream)
