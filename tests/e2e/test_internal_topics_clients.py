"""The internal topics with real clients over TCP (issue 30 item 5): aiokafka's
``test_consumer.py::test_exclude_internal_topics`` behaviour (a consumer subscribed by the
pattern ``.*`` gets ``__consumer_offsets`` only with ``exclude_internal_topics`` false),
and confluent-kafka's ``list_topics()`` listing both internal topics with 50 partitions."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

INTERNAL = {"__consumer_offsets", "__transaction_state"}


@pytest.mark.parametrize("exclude", [True, False])
def test_aiokafka_pattern_subscription_and_internal_topics(kcoord: Any, exclude: bool) -> None:
    aiokafka = pytest.importorskip("aiokafka")

    async def run() -> set[str]:
        consumer = aiokafka.AIOKafkaConsumer(
            bootstrap_servers=kcoord.bootstrap, group_id=f"pattern-{exclude}",
            metadata_max_age_ms=200, auto_offset_reset="earliest",
            exclude_internal_topics=exclude, request_timeout_ms=10000)
        consumer.subscribe(pattern=".*")
        await consumer.start()
        try:
            for _ in range(100):  # bounded: 100 x 0.1 s
                if "t12" in consumer.subscription():
                    break
                await asyncio.sleep(0.1)
            return set(consumer.subscription())
        finally:
            await consumer.stop()

    subscribed = asyncio.run(asyncio.wait_for(run(), 60))
    assert "t12" in subscribed
    if exclude:
        assert not subscribed & INTERNAL
    else:
        assert subscribed >= INTERNAL


def test_confluent_list_topics_shows_them_internal(kcoord: Any) -> None:
    admin_module = pytest.importorskip("confluent_kafka.admin")
    admin = admin_module.AdminClient({"bootstrap.servers": kcoord.bootstrap})
    listed = admin.list_topics(timeout=10)
    assert INTERNAL | {"t12"} <= set(listed.topics)
    for name in INTERNAL:
        topic = listed.topics[name]
        assert topic.error is None and len(topic.partitions) == 50
        assert {p.leader for p in topic.partitions.values()} == {0}
    one = admin.list_topics("__consumer_offsets", timeout=10)
    assert len(one.topics["__consumer_offsets"].partitions) == 50
