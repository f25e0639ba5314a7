"""Leader epochs through librdkafka (issue 30 item 4): a consumed message carries its batch's
leader epoch (0 on one broker), and a committed offset keeps the epoch it was committed
with, as OffsetFetch returns it."""

from __future__ import annotations

import time
from typing import Any

import pytest

confluent_kafka = pytest.importorskip("confluent_kafka")

TIMEOUT = 20


def test_messages_and_commits_carry_the_leader_epoch(start_kcoord: Any) -> None:
    server = start_kcoord(topics=["epochs:1"])
    producer = confluent_kafka.Producer({"bootstrap.servers": server.bootstrap})
    producer.produce("epochs", b"v")
    assert producer.flush(TIMEOUT) == 0
    consumer = confluent_kafka.Consumer({
        "bootstrap.servers": server.bootstrap, "group.id": "epochs",
        "auto.offset.reset": "earliest", "enable.auto.commit": False})
    try:
        consumer.subscribe(["epochs"])
        deadline = time.monotonic() + TIMEOUT
        message = None
        while message is None and time.monotonic() < deadline:
            message = consumer.poll(1.0)
        assert message is not None and message.error() is None
        assert message.leader_epoch() == 0
        consumer.commit(message=message, asynchronous=False)
        (committed,) = consumer.committed(
            [confluent_kafka.TopicPartition("epochs", 0)], timeout=TIMEOUT)
        assert (committed.offset, committed.leader_epoch) == (1, 0)
    finally:
        consumer.close()
