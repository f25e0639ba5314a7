"""Pipelined requests on one connection share appends (issue 14 item 5).

A client that sends many OffsetCommits without waiting gets them submitted while the first
waits for its append, so one append (one fsync under ``--fsync always``) covers several;
the answers still come in request order, each only after its append, and a request that
is not pipelined (OffsetFetch) sees every earlier commit. Heartbeats, classic or
ConsumerGroupHeartbeat, pipeline beside the commits. A failed append fails each
pipelined commit it held, in order, and the connection goes on.
"""

from __future__ import annotations

import errno
from pathlib import Path
from typing import Any

import pytest
import trio
from raw_client import (
    HEARTBEAT,
    OFFSET_COMMIT,
    OFFSET_FETCH,
    CountingSink,
    heartbeat_body,
    join,
    sync,
)

from coordinator.server.sink import LogSink
from storage.async_log import AsyncLog
from storage.log import Log

pytestmark = pytest.mark.trio

NOT_COORDINATOR = 16
CONSUMER_GROUP_HEARTBEAT = 68
COMMITS = 40


def _commit(group: str, offset: int, generation: int = -1, member: str = "") -> dict[str, Any]:
    return {
        "group_id": group,
        "generation_id_or_member_epoch": generation,
        "member_id": member,
        "topics": [{"name": "t", "partitions": [
            {"partition_index": 0, "committed_offset": offset}]}],
    }


def _fetch_body(group: str) -> dict[str, Any]:
    return {"groups": [{"group_id": group, "topics": [{"name": "t", "partition_indexes": [0]}]}]}


async def _send_pipelined(client: Any, frames: list[tuple[int, int, Any]]) -> list[int]:
    """Send every frame in one write; the correlation ids in order."""
    corrs = []
    data = b""
    for api_key, version, body in frames:
        corr, frame = client.frame(api_key, version, body)
        corrs.append(corr)
        data += frame
    await client.stream.send_all(data)
    return corrs


async def _interleaved_answers(client: Any, frames: list[tuple[int, int, Any]]) -> list[Any]:
    """Send commits interleaved with heartbeats in one write; check the answers come in
    request order and every commit succeeded; the heartbeats' answers."""
    corrs = await _send_pipelined(client, frames)
    got = []
    heartbeats = []
    for api_key, version, _ in frames:
        corr, response = await client.recv(api_key, version)
        got.append(corr)
        if api_key == OFFSET_COMMIT:
            assert response.topics[0].partitions[0].error_code == 0
        else:
            heartbeats.append(response)
    assert got == corrs
    return heartbeats


async def test_pipelined_commits_share_appends_and_answer_in_order(
    start_server: Any, connect: Any
) -> None:
    sink = CountingSink(0.05)
    running = await start_server(sink=sink)
    client = await connect(running.port)
    frames = [(OFFSET_COMMIT, 8, _commit("g", offset)) for offset in range(1, COMMITS + 1)]
    frames.append((OFFSET_FETCH, 8, _fetch_body("g")))
    with trio.fail_after(20):
        corrs = await _send_pipelined(client, frames)
        got = []
        for _ in range(COMMITS):
            corr, response = await client.recv(OFFSET_COMMIT, 8)
            got.append(corr)
            assert response.topics[0].partitions[0].error_code == 0
            # Answered only once its append completed.
            assert sum(sink.appends) >= len(got) and len(sink.records) >= len(got)
        corr, fetched = await client.recv(OFFSET_FETCH, 8)
    got.append(corr)
    assert got == corrs
    assert fetched.groups[0].topics[0].partitions[0].committed_offset == COMMITS
    assert sum(sink.appends) == COMMITS
    assert len(sink.appends) < COMMITS // 2  # commits of one connection shared appends


async def test_a_failed_append_fails_each_pipelined_commit_in_order_and_the_connection_goes_on(
    start_server: Any, connect: Any
) -> None:
    sink = CountingSink(0.05)
    running = await start_server(sink=sink)
    client = await connect(running.port)
    sink.fail_with = lambda records: OSError(errno.EIO, "disk gone")
    with trio.fail_after(20):
        corrs = await _send_pipelined(
            client, [(OFFSET_COMMIT, 8, _commit("g", offset)) for offset in range(1, 9)])
        got = []
        for _ in corrs:
            corr, response = await client.recv(OFFSET_COMMIT, 8)
            got.append((corr, response.topics[0].partitions[0].error_code))
        assert got == [(corr, NOT_COORDINATOR) for corr in corrs]
        sink.fail_with = None
        ok = await client.request(OFFSET_COMMIT, 8, _commit("g", 9))
        assert ok.topics[0].partitions[0].error_code == 0
        fetched = await client.request(OFFSET_FETCH, 8, _fetch_body("g"))
    assert fetched.groups[0].topics[0].partitions[0].committed_offset == 9
    assert running.runtime.append_failures >= 1


async def test_pipelined_heartbeats_and_commits_of_a_member_answer_in_order(
    start_server: Any, connect: Any
) -> None:
    sink = CountingSink(0.05)
    running = await start_server(sink=sink)
    client = await connect(running.port)
    with trio.fail_after(20):
        joined = await join(client, "m", session_timeout_ms=30_000)
        assert (await sync(client, "m", joined, b"a")).error_code == 0
        beat = heartbeat_body("m", joined.generation_id, joined.member_id)
        frames: list[tuple[int, int, Any]] = []
        for offset in range(1, 11):
            frames.append((OFFSET_COMMIT, 8,
                           _commit("m", offset, joined.generation_id, joined.member_id)))
            frames.append((HEARTBEAT, 4, beat))
        heartbeats = await _interleaved_answers(client, frames)
    assert [beat.error_code for beat in heartbeats] == [0] * 10


async def test_pipelined_commits_under_fsync_always_share_fsyncs(
    start_server: Any, connect: Any, tmp_path: Path
) -> None:
    alog = AsyncLog(Log.open(str(tmp_path / "data"), fsync="always"))
    try:
        running = await start_server(sink=LogSink(alog, "always"))
        client = await connect(running.port)
        before = alog.log.fsync_count
        with trio.fail_after(20):
            corrs = await _send_pipelined(
                client, [(OFFSET_COMMIT, 8, _commit("g", o)) for o in range(1, COMMITS + 1)])
            got = [(await client.recv(OFFSET_COMMIT, 8))[0] for _ in corrs]
        assert got == corrs
        fsyncs = alog.log.fsync_count - before
        assert 1 <= fsyncs < COMMITS
    finally:
        await alog.aclose()
    with Log.open(str(tmp_path / "data")) as log:
        offsets = [r.value.offset for r in log.replay() if hasattr(r.value, "offset")]
    assert offsets[-COMMITS:] == list(range(1, COMMITS + 1))


async def test_pipelined_consumer_group_heartbeats_and_commits_answer_in_order(
    start_server: Any, connect: Any
) -> None:
    sink = CountingSink(0.05)
    running = await start_server(sink=sink)
    client = await connect(running.port)
    member = "m-" + "x" * 20
    with trio.fail_after(20):
        joined = await client.request(CONSUMER_GROUP_HEARTBEAT, 1, {
            "group_id": "c", "member_id": member, "member_epoch": 0,
            "rebalance_timeout_ms": 30_000, "subscribed_topic_names": ["t"],
            "topic_partitions": [],
        })
        assert joined.error_code == 0 and joined.member_epoch > 0
        epoch = joined.member_epoch
        steady = {"group_id": "c", "member_id": member, "member_epoch": epoch}
        frames: list[tuple[int, int, Any]] = []
        for offset in range(1, 11):
            frames.append((OFFSET_COMMIT, 9, _commit("c", offset, epoch, member)))
            frames.append((CONSUMER_GROUP_HEARTBEAT, 1, steady))
        heartbeats = await _interleaved_answers(client, frames)
        fetched = await client.request(OFFSET_FETCH, 8, _fetch_body("c"))
    assert [(beat.error_code, beat.member_epoch) for beat in heartbeats] == [(0, epoch)] * 10
    assert fetched.groups[0].topics[0].partitions[0].committed_offset == 10
    # The heartbeats did not hold the commits back: commits behind them shared appends.
    assert sum(sink.appends) >= 10 and len(sink.appends) < 10
