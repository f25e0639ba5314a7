"""``share.isolation.level=read_committed`` over real TCP: a share group is handed records up
to the last stable offset only; aborted transactions' records and transaction markers are
archived, never delivered; a long poll wakes when a transaction commits."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import trio
from share_wire import (
    ACCEPT,
    AsyncClient,
    acquired,
    values_by_offset,
)

from coordinator.server.app import RunningServer, serve
from coordinator.server.options import build_options

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
from raw_client import RawClient, TxnClient

GROUP = "committed-queue"


async def test_read_committed_skips_aborted_records_and_markers(
    nursery: trio.Nursery, autojump_clock: Any
) -> None:
    options = build_options({}, host="127.0.0.1", port=0, data_dir=None, topics=(("t", 1),))
    running: RunningServer = await nursery.start(serve, options)
    shares = running.server.shares
    shares.auto_offset_reset = lambda _group: "earliest"
    shares.read_committed = lambda _group: True
    topic = running.server.topics.get("t")
    assert topic is not None
    consumer = await AsyncClient.connect(running.port)
    raw = await RawClient.connect(running.port)
    try:
        plain = await consumer.produce("t", 0, [b"a", b"b"])  # 0, 1
        assert plain.responses[0].partition_responses[0].error_code == 0
        aborted, open_txn = TxnClient(raw, "aborts"), TxnClient(raw, "commits")
        for txn in (aborted, open_txn):
            assert (await txn.init()).error_code == 0
            assert await txn.add("t", 0) == {0: 0}
        assert (await aborted.produce("t", 0, b"x1", b"x2")).error_code == 0  # 2, 3
        assert await aborted.end(commit=False) == 0  # marker at 4
        assert (await open_txn.produce("t", 0, b"y")).error_code == 0  # 5, still open

        def fetch(epoch: int, **kwargs: Any) -> Any:
            return consumer.share_fetch(GROUP, "m", epoch, topic.topic_id, **kwargs)

        first = await fetch(0)
        assert acquired(first) == [(0, 1, 1)]  # up to the LSO (5); 2-4 archived
        assert values_by_offset(first) == {0: b"a", 1: b"b"}

        answers: list[Any] = []

        async def poll() -> None:
            answers.append(await fetch(1, acks={0: [(0, 1, ACCEPT)]}, max_wait_ms=10_000))

        async with trio.open_nursery() as polls:
            polls.start_soon(poll)
            await trio.sleep(2)
            assert not answers  # nothing committed past the LSO yet
            assert await open_txn.end(commit=True) == 0  # marker at 6
        assert acquired(answers[0]) == [(5, 5, 1)]
        assert values_by_offset(answers[0]) == {5: b"y"}
        await fetch(2, acks={0: [(5, 5, ACCEPT)]})
        (share,) = shares.manager.partitions.values()
        assert share.start_offset == 7  # the aborted records and both markers are done
    finally:
        await trio.aclose_forcefully(consumer.stream)
        await trio.aclose_forcefully(raw.stream)
