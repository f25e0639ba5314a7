"""A restart on a data directory starts from the live snapshot the last clean stop wrote
(``storage.snapshot_log``, issue 33): the groups' offsets stay packed until asked for, the
log after the snapshot is replayed, and OffsetFetch answers what was committed."""

from __future__ import annotations

import logging
import os
from typing import Any

import pytest
import trio
from raw_client import OFFSET_COMMIT, OFFSET_FETCH

from coordinator.server.app import RunningServer, serve
from coordinator.server.options import build_options
from storage.live_snapshot import SNAPSHOT_FILE


def _options(data_dir: str) -> Any:
    return build_options({}, host="127.0.0.1", port=0, data_dir=data_dir, topics=(("t", 4),))


async def _commit(client: Any, group: str, offsets: dict[int, int]) -> None:
    body = {"group_id": group, "generation_id_or_member_epoch": -1, "member_id": "",
            "topics": [{"name": "t", "partitions": [
                {"partition_index": p, "committed_offset": o} for p, o in offsets.items()]}]}
    answer = await client.request(OFFSET_COMMIT, 8, body)
    assert [p.error_code for p in answer.topics[0].partitions] == [0] * len(offsets)


async def _fetch(client: Any, group: str) -> dict[int, int]:
    answer = await client.request(OFFSET_FETCH, 8, {"groups": [
        {"group_id": group, "topics": [{"name": "t", "partition_indexes": [0, 1, 2, 3]}]}]})
    return {p.partition_index: p.committed_offset for p in answer.groups[0].topics[0].partitions}


async def _run(data_dir: str, connect: Any, body: Any) -> None:
    with trio.CancelScope() as run:
        async with trio.open_nursery() as nursery:
            running: RunningServer = await nursery.start(serve, _options(data_dir))
            await body(running, await connect(running.port))
            run.cancel()


async def test_restart_starts_from_the_snapshot(tmp_path: Any, connect: Any,
                                                caplog: pytest.LogCaptureFixture) -> None:
    data_dir = str(tmp_path / "data")

    async def first(running: RunningServer, client: Any) -> None:
        await _commit(client, "a", {0: 10, 1: 11, 2: 12})
        await _commit(client, "b", {0: 20})

    await _run(data_dir, connect, first)
    assert os.path.exists(os.path.join(data_dir, SNAPSHOT_FILE))  # written at the stop

    async def second(running: RunningServer, client: Any) -> None:
        store = running.runtime.coordinator.store
        assert set(store.packed) == {"a", "b"} and not store.offsets  # nothing decoded
        assert await _fetch(client, "b") == {0: 20, 1: -1, 2: -1, 3: -1}
        assert set(store.packed) == {"a"}
        await _commit(client, "a", {1: 111, 3: 13})  # unpacks a, then applies the commit

    with caplog.at_level(logging.INFO, logger="coordinator.server.sink"):
        await _run(data_dir, connect, second)
    assert any("replaying from live.snapshot: 2 groups" in r.getMessage()
               for r in caplog.records)

    async def third(running: RunningServer, client: Any) -> None:
        assert await _fetch(client, "a") == {0: 10, 1: 111, 2: 12, 3: 13}
        assert await _fetch(client, "b") == {0: 20, 1: -1, 2: -1, 3: -1}

    os.unlink(os.path.join(data_dir, SNAPSHOT_FILE))  # the full replay agrees
    await _run(data_dir, connect, third)
    await _run(data_dir, connect, third)  # and from the snapshot that stop wrote


async def test_the_log_sink_writes_a_snapshot_while_it_runs(
        tmp_path: Any, autojump_clock: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Once ``SNAPSHOT_TAIL_BYTES`` of log follow the last snapshot, the next minute's
    check writes one (a crash then replays only what follows it)."""
    from coordinator.server import sink as sink_module
    from storage.live_snapshot import load_snapshot
    from storage.records import OffsetCommitKey, OffsetCommitValue, Record

    monkeypatch.setattr(sink_module, "SNAPSHOT_TAIL_BYTES", 1000)
    data_dir = str(tmp_path)
    async with sink_module.open_log_sink(data_dir, "never") as sink:
        list(sink.replay())
        await sink.append([Record(OffsetCommitKey("g", "t", p), OffsetCommitValue(p))
                           for p in range(5)])
        await trio.sleep(sink_module.COMPACTION_CHECK_INTERVAL_S + 1)
        assert not os.path.exists(os.path.join(data_dir, SNAPSHOT_FILE))  # under 1000 bytes
        await sink.append([Record(OffsetCommitKey("g", "t", p), OffsetCommitValue(p))
                           for p in range(50)])
        for _ in range(5):  # the clock jumps while worker threads run: a check or two late
            await trio.sleep(sink_module.COMPACTION_CHECK_INTERVAL_S)
            async with sink._alog._compacting:  # a write, in a worker thread, is done
                snapshot = load_snapshot(sink._alog.log.fs, data_dir)
            if snapshot is not None:
                break
        assert snapshot is not None and set(snapshot.groups) == {"g"}
        assert sink.snapshot_bytes == sum(size for _, size, _ in snapshot.covered)
