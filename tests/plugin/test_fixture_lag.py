"""The test double shows lag (issue 15 item 19): ``describe_group()`` carries each committed
partition's offset, log-end offset and lag, with a real confluent-kafka client."""

from __future__ import annotations

import pytest

from coordinator.testing import KcoordServer

confluent_kafka = pytest.importorskip("confluent_kafka")


def test_describe_group_has_offsets_and_lag(kcoord: KcoordServer) -> None:
    kcoord.create_topic("lagged", 2)
    producer = confluent_kafka.Producer({"bootstrap.servers": kcoord.bootstrap})
    for i in range(9):
        producer.produce("lagged", value=b"v", partition=i % 2)
    assert producer.flush(10) == 0
    consumer = confluent_kafka.Consumer({"bootstrap.servers": kcoord.bootstrap,
                                         "group.id": "lagging"})
    consumer.commit(offsets=[confluent_kafka.TopicPartition("lagged", 0, 2)],
                    asynchronous=False)
    consumer.close()
    described = kcoord.describe_group("lagging")
    assert described is not None
    assert described["offsets"] == [
        {"topic": "lagged", "partition": 0, "committed": 2, "log_end_offset": 5, "lag": 3}]
