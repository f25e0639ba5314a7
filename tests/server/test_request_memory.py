"""Partially received requests are bounded (issue 15 item 3): all connections together hold
at most ``queued.max.request.bytes`` of requests being received (a connection waits, reading
nothing, until memory frees); a started request must arrive whole within the frame
deadline; and a large frame is copied once out of the read buffer."""

from __future__ import annotations

import warnings
from typing import Any

import trio

from coordinator.server.app import RunningServer
from coordinator.server.connection import FRAME_DEADLINE_S
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
    await a.stream.send_all(frame_a[: len(frame_a) // 2])
    await wait_for(lambda: memory.used == len(frame_a) - 4)
    # b's size prefix (and a little more) arrives; its frame does not fit beside a's, so
    # the server reads nothing more of it until a's frame is done.
    await b.stream.send_all(frame_b[:100])
    await wait_for(lambda: memory.waits == 1)
    assert memory.used == len(frame_a) - 4
    await a.stream.send_all(frame_a[len(frame_a) // 2 :])
    _, answer_a = await a.recv(0, 9)
    assert answer_a.responses[0].partition_responses[0].error_code == 0
    await wait_for(lambda: memory.used == len(frame_b) - 4)  # now b holds the memory
    await b.stream.send_all(frame_b[100:])
    _, answer_b = await b.recv(0, 9)
    assert answer_b.responses[0].partition_responses[0].error_code == 0
    await wait_for(lambda: memory.used == 0)


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
