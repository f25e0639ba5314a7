"""Answers that are never read (issue 32 item 4): ten connections sending Fetch with
``max_bytes`` 2^31-1 and never reading held 1.1 GiB for up to ``connections.max.idle.ms``.
All answers being written together are bounded (``kcoord.queued.max.response.bytes``; a
Fetch asks for no more than is free, one batch at least), and a connection whose answer
sits unread for ``socket.send.timeout.ms`` is closed."""

from __future__ import annotations

import socket
import warnings
from typing import Any

import trio

from coordinator.server.app import RunningServer

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from kafka.record.default_records import DefaultRecordBatchBuilder

BATCH_BYTES = 500_000
BATCHES = 6
POOL = 1_000_000
READERS = 4


def _batch() -> bytes:
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False,
                                        producer_id=-1, producer_epoch=-1, base_sequence=-1,
                                        batch_size=1 << 21)
    builder.append(0, timestamp=1_000, key=None, value=b"v" * BATCH_BYTES, headers=[])
    return bytes(builder.build())


def _fetch(max_bytes: int) -> dict[str, Any]:
    return {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": max_bytes,
            "isolation_level": 0, "session_id": 0, "session_epoch": -1,
            "topics": [{"topic": "t", "partitions": [{
                "partition": 0, "current_leader_epoch": -1, "fetch_offset": 0,
                "last_fetched_epoch": -1, "log_start_offset": -1,
                "partition_max_bytes": max_bytes}]}],
            "forgotten_topics_data": [], "rack_id": ""}


async def test_unread_fetch_answers_are_bounded_and_their_connections_closed(
    start_server: Any, connect: Any, autojump_clock: Any
) -> None:
    server: RunningServer = await start_server({
        "kcoord.queued.max.response.bytes": str(POOL), "socket.send.buffer.bytes": "4096",
        "socket.send.timeout.ms": "20000"})
    producer = await connect(server.port)
    for _ in range(BATCHES):
        answer = await producer.request(0, 9, {
            "transactional_id": None, "acks": 1, "timeout_ms": 5_000,
            "topic_data": [{"name": "t", "partition_data": [{"index": 0, "records": _batch()}]}]})
        assert answer.responses[0].partition_responses[0].error_code == 0
    memory = server.server.answer_limits.memory
    began = trio.current_time()
    silent = []
    for _ in range(READERS):
        client = await connect(server.port)
        client.stream.socket.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        await client.send(1, 12, _fetch(2**31 - 1))
        silent.append(client)
    await trio.sleep(1)
    assert len(server.server.connections) == READERS + 1
    # Unbounded, each would hold all six batches (3 MB); now the pool plus a batch each.
    assert memory.peak <= POOL + READERS * (BATCH_BYTES + 1_000)
    with trio.fail_after(60):
        while len(server.server.connections) > 1:
            await trio.sleep(0.5)
    assert 20 <= trio.current_time() - began < 25
    assert memory.used == 0
    # A reader that reads gets everything, in as many answers as the pool allows.
    reader = await connect(server.port)
    got = await reader.request(1, 12, _fetch(2**31 - 1))
    records = got.responses[0].partitions[0].records
    assert got.error_code == 0 and len(records) >= BATCH_BYTES
