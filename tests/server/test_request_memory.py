"""Partially received requests are bounded (issue 15 item 3): all connections together hold
at most ``queued.max.request.bytes`` of requests being received (a connection waits, reading
nothing, until memory frees); a started request must arrive whole within the frame
deadline; and a large frame is copied once out of the read buffer."""

from __future__ import annotations

import warnings
from typing import Any

import trio
import trio.testing

from coordinator.server.app import RunningServer
from coordinator.server.receiving import FRAME_DEADLINE_S
from coordinator.server.request_memory import RESERVE_STEP
from wire import FrameReader

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from kafka.record.default_records import DefaultRecordBatchBuilder

FRAME_BYTES = 700_000


def big_produce(client: Any) -> bytes:
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False,
                                        producer_id=-1, producer_epoch=-1, base_sequence=-1,
                                        batch_size=1 << 21)
    builder.append(0, timestamp=1_000, key=None, value=b"v" * FRAME_BYTES, headers=[])
    _, frame = client.frame(0, 9, {
        "transactional_id": None, "acks": 1, "timeout_ms": 5_000,
        "topic_data": [{"name": "t", "partition_data": [
            {"index": 0, "records": bytes(builder.build())}]}]})
    data: bytes = frame
    return data


async def wait_for(condition: Any) -> None:
    with trio.fail_after(10):
        while not condition():
            await trio.sleep(0.001)


async def test_requests_being_received_share_a_bounded_memory(
    start_server: Any, connect: Any
) -> None:
    server: RunningServer = await start_server({
        "queued.max.request.bytes": "1000000", "socket.request.max.bytes": "1000000"})
    memory = server.server.request_memory
    a, b = await connect(server.port), await connect(server.port)
    frame_a, frame_b = big_produce(a), big_produce(b)
    half = len(frame_a) // 2
    # A connection holds what its peer sent, a step ahead: not the whole announced size.
    await a.stream.send_all(frame_a[:half])
    await wait_for(lambda: memory.used >= half)
    await trio.sleep(0.05)
    assert half <= memory.used <= half + RESERVE_STEP
    # b's half fits beside a's; together they stay within the pool (plus one request).
    await b.stream.send_all(frame_b[:half])
    await wait_for(lambda: memory.used >= 2 * half)
    await a.stream.send_all(frame_a[half:])
    await b.stream.send_all(frame_b[half:])
    _, answer_a = await a.recv(0, 9)
    _, answer_b = await b.recv(0, 9)
    assert answer_a.responses[0].partition_responses[0].error_code == 0
    assert answer_b.responses[0].partition_responses[0].error_code == 0
    await wait_for(lambda: memory.used == 0 and memory.holders == 0)


async def test_slow_senders_do_not_hold_the_pool_from_a_request_arriving_in_pieces(
    start_server: Any, connect: Any, autojump_clock: Any
) -> None:
    """Issue 32 item 3: two connections announcing pool-sized requests and trickling a byte
    a second held the whole pool, so a Produce arriving in pieces waited for their frame
    deadline (59 s)."""
    server: RunningServer = await start_server({
        "queued.max.request.bytes": "1000000", "socket.request.max.bytes": "1000000"})
    memory = server.server.request_memory
    slow = [await connect(server.port) for _ in range(2)]
    for client in slow:
        await client.stream.send_all((999_000).to_bytes(4, "big") + b"\x00\x00")
    await wait_for(lambda: memory.used > 0)
    await trio.sleep(0.5)  # both size prefixes read
    fast = await connect(server.port)
    frame = big_produce(fast)
    began = trio.current_time()
    async with trio.open_nursery() as nursery:
        async def trickle(client: Any) -> None:
            while True:
                await trio.sleep(1)
                await client.stream.send_all(b"\x00")

        for client in slow:
            nursery.start_soon(trickle, client)
        for i in range(0, len(frame), 100_000):  # in pieces, a tenth of a second apart
            await fast.stream.send_all(frame[i : i + 100_000])
            await trio.sleep(0.1)
        _, answer = await fast.recv(0, 9)
        nursery.cancel_scope.cancel()
    assert answer.responses[0].partition_responses[0].error_code == 0
    assert trio.current_time() - began < 5
    assert memory.used <= 2 * (RESERVE_STEP + 6)  # the slow ones hold what they sent


async def test_the_frame_deadline_counts_from_the_first_byte(
    server: RunningServer, connect: Any, autojump_clock: Any
) -> None:
    """The start of a request that came along with a long-polling Fetch: its deadline runs
    from when its first byte arrived, not from when the Fetch was answered."""
    client = await connect(server.port)
    _, fetch = client.frame(1, 12, {
        "replica_id": -1, "max_wait_ms": 40_000, "min_bytes": 1, "max_bytes": 1 << 20,
        "isolation_level": 0, "session_id": 0, "session_epoch": -1,
        "topics": [{"topic": "t", "partitions": [{
            "partition": 0, "current_leader_epoch": -1, "fetch_offset": 0,
            "last_fetched_epoch": -1, "log_start_offset": -1,
            "partition_max_bytes": 1 << 20}]}],
        "forgotten_topics_data": [], "rack_id": ""})
    began = trio.current_time()
    next_request = big_produce(client)
    await client.stream.send_all(fetch + next_request[:10])
    async with trio.open_nursery() as nursery:
        async def trickle() -> None:  # a byte a second
            for i in range(10, 200):
                await trio.sleep(1)
                await client.stream.send_all(next_request[i : i + 1])

        nursery.start_soon(trickle)
        _, answer = await client.recv(1, 12)
        assert answer.error_code == 0
        assert await client.closed_by_server()
        nursery.cancel_scope.cancel()
    assert trio.current_time() - began < FRAME_DEADLINE_S + 5


async def test_a_request_must_arrive_whole_within_the_deadline(
    server: RunningServer, connect: Any, autojump_clock: Any
) -> None:
    slow = await connect(server.port)
    frame = big_produce(slow)
    began = trio.current_time()
    await slow.stream.send_all(frame[:10])
    for i in range(10, 40):  # a byte a second keeps the idle timer happy, not the deadline
        await trio.sleep(1)
        await slow.stream.send_all(frame[i : i + 1])
    assert await slow.closed_by_server()
    assert FRAME_DEADLINE_S <= trio.current_time() - began < FRAME_DEADLINE_S + 5
    assert server.server.request_memory.used == 0
    healthy = await connect(server.port)
    answer = await healthy.request(18, 3, {"client_software_name": "t",
                                          "client_software_version": "1"})
    assert answer.error_code == 0


def test_a_frame_is_returned_whole_and_the_buffer_reused() -> None:
    reader = FrameReader(1 << 20)
    payload = bytes(range(256)) * 1000
    framed = len(payload).to_bytes(4, "big") + payload
    reader.receive_data(framed[:100_000])
    assert reader.pending_size() == len(payload)
    reader.receive_data(framed[100_000:] + framed[:4])
    assert reader.next_frame() == payload
    assert reader.buffered == 4 and reader.pending_size() == len(payload)


async def test_holders_that_fill_the_pool_cannot_deadlock() -> None:
    """Each holds part of its request and needs more than the pool has left: one of them
    finishes past the pool (the overdraft), then the other."""
    from coordinator.server.request_memory import RequestMemory

    memory = RequestMemory(100)
    a, b = memory.reservation(), memory.reservation()
    await a.grow(50)
    await b.grow(50)
    with trio.fail_after(1):
        await a.grow(90)  # the pool is full: a takes the overdraft
        async with trio.open_nursery() as nursery:
            nursery.start_soon(b.grow, 90)  # waits: one overdraft at a time
            await trio.testing.wait_all_tasks_blocked()
            assert b.held == 50 and memory.used == 140
            a.release()
    assert b.held == 90 and memory.used == 90
    b.release()
    assert memory.used == 0 and memory.holders == 0
