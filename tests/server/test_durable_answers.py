"""Persist, then apply, end to end: a real server over a real storage log on a faulty disk.

A failed write answers the clients with Kafka's error (NOT_COORDINATOR for a disk error),
changes nothing the log does not have, and a restart from the same log rebuilds exactly the
live hard state. Also: the runtime's queue is the one group commit (concurrent commits share
appends), and a failed batch fails every request in it.
"""

from __future__ import annotations

import errno
from pathlib import Path
from typing import Any

import pytest
import trio
from raw_client import OFFSET_COMMIT, OFFSET_FETCH, CountingSink, join, sync

from coordinator.config import CoordinatorConfig
from coordinator.core import GroupCoordinator
from coordinator.server.app import RunningServer, serve
from coordinator.server.options import build_options
from coordinator.server.sink import LogSink
from storage.async_log import AsyncLog
from storage.fs import FaultPlan, FaultyFileSystem
from storage.log import Log

pytestmark = pytest.mark.trio

NOT_COORDINATOR = 16
DELETE_GROUPS, OFFSET_DELETE, DESCRIBE_GROUPS = 42, 47, 15


def _commit(group: str, offset: int, partition: int = 0, joined: Any = None) -> dict[str, Any]:
    return {
        "group_id": group,
        "generation_id_or_member_epoch": -1 if joined is None else joined.generation_id,
        "member_id": "" if joined is None else joined.member_id,
        "topics": [{"name": "t", "partitions": [
            {"partition_index": partition, "committed_offset": offset}]}],
    }


async def _fetch(client: Any, group: str, partition: int = 0) -> int:
    body = {"groups": [{"group_id": group,
                        "topics": [{"name": "t", "partition_indexes": [partition]}]}]}
    response = await client.request(OFFSET_FETCH, 8, body)
    return int(response.groups[0].topics[0].partitions[0].committed_offset)


def _replayed(directory: str) -> GroupCoordinator:
    fresh = GroupCoordinator(CoordinatorConfig(), lambda: "uuid")
    with Log.open(directory) as log:
        for record in log.replay():
            fresh.replay(record)
    fresh.on_loaded(0)
    return fresh


async def test_failed_writes_answer_errors_and_live_state_equals_the_log(
    nursery: trio.Nursery, connect: Any, tmp_path: Path
) -> None:
    directory = str(tmp_path / "data")
    fs = FaultyFileSystem()
    alog = AsyncLog(Log.open(directory, fsync="always", fs=fs))
    options = build_options({"group.initial.rebalance.delay.ms": "0"}, host="127.0.0.1",
                            port=0, data_dir=None, topics=(("t", 4),),
                            sink=LogSink(alog, "always"))
    with trio.CancelScope() as run:
        async with trio.open_nursery() as inner:
            running: RunningServer = await inner.start(serve, options)
            client = await connect(running.port)
            joined = await join(client, "members", session_timeout_ms=30_000)
            assert (await sync(client, "members", joined, b"mine")).error_code == 0
            ok = await client.request(OFFSET_COMMIT, 8, _commit("members", 1, joined=joined))
            assert ok.topics[0].partitions[0].error_code == 0
            assert (await client.request(OFFSET_COMMIT, 8, _commit("empty", 7))).topics[
                0].partitions[0].error_code == 0

            fs.arm(FaultPlan(write_errors={0: errno.ENOSPC}))  # the next write fails
            failed = await client.request(OFFSET_COMMIT, 8, _commit("members", 2, joined=joined))
            assert failed.topics[0].partitions[0].error_code == NOT_COORDINATOR
            assert await _fetch(client, "members") == 1

            fs.arm(FaultPlan(write_errors={0: errno.EIO}))
            deleted = await client.request(DELETE_GROUPS, 2, {"groups_names": ["empty"]})
            assert [r.error_code for r in deleted.results] == [NOT_COORDINATOR]
            described = await client.request(DESCRIBE_GROUPS, 5, {"groups": ["empty"]})
            assert described.groups[0].group_state == "Empty"  # it came back
            assert await _fetch(client, "empty") == 7

            fs.arm(FaultPlan(write_errors={0: errno.ENOSPC}))
            body = {"group_id": "empty", "topics": [
                {"name": "t", "partitions": [{"partition_index": 0}]}]}
            assert (await client.request(OFFSET_DELETE, 0, body)).error_code == NOT_COORDINATOR
            assert await _fetch(client, "empty") == 7

            runtime = running.runtime
            assert runtime.append_failures == 3
            live = runtime.coordinator.hard_state()
            live_groups = runtime.coordinator.persisted_group_ids()
            assert live_groups <= set(runtime.coordinator.group_ids())
            run.cancel()
    await alog.aclose()
    fresh = _replayed(directory)
    assert fresh.hard_state() == live
    assert fresh.persisted_group_ids() == live_groups == {"members", "empty"}


async def test_concurrent_commits_share_appends_and_a_failed_batch_fails_them_all(
    start_server: Any, connect: Any
) -> None:
    sink = CountingSink()
    running = await start_server(sink=sink)
    clients = [await connect(running.port) for _ in range(8)]

    async def commit_all(offset: int, results: list[int]) -> None:
        async def one(i: int, client: Any) -> None:
            response = await client.request(OFFSET_COMMIT, 8, _commit(f"g{i}", offset))
            results.append(int(response.topics[0].partitions[0].error_code))

        async with trio.open_nursery() as nursery:
            for i, client in enumerate(clients):
                nursery.start_soon(one, i, client)

    results: list[int] = []
    with trio.fail_after(10):
        await commit_all(1, results)
    assert results == [0] * 8
    assert len(sink.appends) < 8  # group commit: several commits per append
    assert sum(sink.appends) == 8

    sink.fail_with = lambda records: OSError(errno.EIO, "disk gone")
    failed: list[int] = []
    with trio.fail_after(10):
        await commit_all(2, failed)
    assert failed == [NOT_COORDINATOR] * 8
    sink.fail_with = None
    coordinator = running.runtime.coordinator
    assert {g: o[("t", 0)].offset for g, o in coordinator.hard_state().offsets.items()} == {
        f"g{i}": 1 for i in range(8)}
