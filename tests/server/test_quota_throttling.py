"""Byte-rate quotas enforced over raw frames (issue 30 item 6), on trio's MockClock (time
moves only when a test jumps it, so throttle times compare exactly): a producer over its
``producer_byte_rate`` gets Kafka's throttle_time_ms and its connection is muted for it (an
old Produce version's answer is delayed instead), a consumer over its ``consumer_byte_rate``
gets an empty throttled answer and its data on a later fetch, capped at one quota window;
clients without a quota are never throttled."""

from __future__ import annotations

from typing import Any

import trio
import trio.testing
from raw_client import batch, jump

from wire import ApiKey

ALTER = ApiKey.ALTER_CLIENT_QUOTAS


async def set_quota(client: Any, entity: dict[str, str | None], key: str, value: float) -> None:
    answer = await client.request(ALTER, 1, {"validate_only": False, "entries": [{
        "entity": [{"entity_type": t, "entity_name": n} for t, n in entity.items()],
        "ops": [{"key": key, "value": value, "remove": False}]}]})
    assert [e.error_code for e in answer.entries] == [0]


def produce_body(topic: str, records: bytes) -> dict[str, Any]:
    return {"transactional_id": None, "acks": -1, "timeout_ms": 5_000, "topic_data": [
        {"name": topic, "partition_data": [{"index": 0, "records": records}]}]}


def records_of(size: int) -> bytes:
    return batch([b"x" * size], -1, -1, -1, transactional=False)


async def test_a_producer_over_its_quota_is_throttled_and_muted(
        start_server: Any, connect: Any, mock_clock: trio.testing.MockClock) -> None:
    running = await start_server({}, topics=(("t", 1),))
    client = await connect(running.port)
    await set_quota(client, {"client-id": "raw-client"}, "producer_byte_rate", 1000.0)
    records = records_of(20_000)
    first = await client.request(ApiKey.PRODUCE, 9, produce_body("t", records))
    assert first.responses[0].partition_responses[0].error_code == 0
    # All at one instant: rate = bytes / 10 s (the eleven windows' minimum span), throttle =
    # (rate - 1000) / 1000 * 10 s = bytes - 10000 ms.
    assert first.throttle_time_ms == len(records) - 10_000
    answered: list[Any] = []

    async def produce_again() -> None:
        answered.append(await client.request(ApiKey.PRODUCE, 9,
                                             produce_body("t", records_of(10))))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(produce_again)
        await jump(first.throttle_time_ms / 1000 - 0.5)
        assert answered == []  # muted
        await jump(0.6)
    assert answered[0].responses[0].partition_responses[0].error_code == 0


async def test_an_old_produce_version_gets_its_answer_late(
        start_server: Any, connect: Any, mock_clock: trio.testing.MockClock) -> None:
    running = await start_server({}, topics=(("t", 1),))
    client = await connect(running.port)
    await set_quota(client, {"user": None}, "producer_byte_rate", 1000.0)  # ANONYMOUS's
    answered: list[Any] = []
    records = records_of(15_000)

    async def produce() -> None:
        answered.append(await client.request(ApiKey.PRODUCE, 5, produce_body("t", records)))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(produce)
        await jump(0)
        assert answered == []  # v5: Kafka delays the answer by the throttle time
        await jump((len(records) - 10_000) / 1000 + 0.01)
    assert answered[0].throttle_time_ms == len(records) - 10_000


def fetch_body(topic_id: Any, offset: int) -> dict[str, Any]:
    return {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1 << 20,
            "isolation_level": 0, "session_id": 0, "session_epoch": -1,
            "topics": [{"topic_id": topic_id, "partitions": [{
                "partition": 0, "current_leader_epoch": -1, "fetch_offset": offset,
                "last_fetched_epoch": -1, "log_start_offset": -1,
                "partition_max_bytes": 1 << 20}]}],
            "forgotten_topics_data": [], "rack_id": ""}


async def test_a_consumer_over_its_quota_gets_an_empty_throttled_answer(
        start_server: Any, connect: Any, mock_clock: trio.testing.MockClock) -> None:
    running = await start_server({}, topics=(("t", 1),))
    client = await connect(running.port)
    topic_id = running.server.topics.get("t").topic_id
    for _ in range(3):
        await client.request(ApiKey.PRODUCE, 9, produce_body("t", records_of(6_000)))
    unlimited = await client.request(ApiKey.FETCH, 13, fetch_body(topic_id, 0))
    assert len(unlimited.responses[0].partitions[0].records) > 18_000  # no quota yet
    await set_quota(client, {"client-id": None}, "consumer_byte_rate", 1000.0)
    # Capped at one window's bytes (1000 B/s x 10 s): the first batch only.
    first = await client.request(ApiKey.FETCH, 13, fetch_body(topic_id, 0))
    (part,) = first.responses[0].partitions
    assert 6_000 < len(part.records) < 10_000 and first.throttle_time_ms == 0
    second = await client.request(ApiKey.FETCH, 13, fetch_body(topic_id, 1))
    assert second.throttle_time_ms > 0 and list(second.responses) == []
    await jump(second.throttle_time_ms / 1000)
    await jump(10)  # the first fetch's bytes leave the window
    third = await client.request(ApiKey.FETCH, 13, fetch_body(topic_id, 1))
    assert third.throttle_time_ms == 0
    assert len(third.responses[0].partitions[0].records) > 6_000


async def test_clients_without_a_quota_are_not_throttled(
        start_server: Any, connect: Any, mock_clock: trio.testing.MockClock) -> None:
    running = await start_server({}, topics=(("t", 1),))
    client = await connect(running.port)
    await set_quota(client, {"client-id": "someone-else"}, "producer_byte_rate", 1.0)
    answer = await client.request(ApiKey.PRODUCE, 9, produce_body("t", records_of(50_000)))
    assert answer.throttle_time_ms == 0
