"""Durable topics (issue 12) with real clients over TCP: after SIGKILL, a restarted kcoord
has the same topics (ids, partitions), every acknowledged record and the high watermarks,
and a consumer group resumes from its committed offsets and reads exactly the rest."""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from e2e_support import raw_request, wait_until

confluent_kafka = pytest.importorskip("confluent_kafka")


def topic_id(bootstrap: str, name: str) -> uuid.UUID:
    """The topic's id from a raw Metadata v12 request."""
    response = raw_request(bootstrap, 3, 12, {
        "topics": [{"name": name, "topic_id": uuid.UUID(int=0)}],
        "allow_auto_topic_creation": False, "include_topic_authorized_operations": False})
    (topic,) = response.topics
    assert topic.error_code == 0
    found: uuid.UUID = topic.topic_id
    return found


def consume(bootstrap: str, group: str, want: int, timeout: float = 30) -> list[int]:
    consumer = confluent_kafka.Consumer({
        "bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
        "enable.auto.commit": False})
    consumer.subscribe(["d3"])
    got: list[int] = []
    try:
        def enough() -> bool:
            message = consumer.poll(0.1)
            if message is not None and not message.error():
                got.append(int(message.value()))
            return len(got) >= want

        wait_until(enough, timeout=timeout, interval=0, what=f"{want} records")
        consumer.commit(asynchronous=False)
        # nothing beyond what was asked for is there
        end = time.monotonic() + 1.5
        while time.monotonic() < end:
            message = consumer.poll(0.1)
            if message is not None and not message.error():
                got.append(int(message.value()))
    finally:
        consumer.close()
    return got


@pytest.mark.slow  # SIGKILLs and restarts of real servers: CI's restart step
def test_topics_and_records_survive_sigkill(start_kcoord: Any, tmp_path: Path) -> None:
    data = tmp_path / "durable"
    server = start_kcoord(data_dir=data, topics=["d3:3"])
    producer = confluent_kafka.Producer({"bootstrap.servers": server.bootstrap, "acks": "all",
                                         "linger.ms": 5})
    for i in range(300):
        producer.produce("d3", value=str(i).encode(), partition=i % 3)
    assert producer.flush(20) == 0  # every record acknowledged
    before_id = topic_id(server.bootstrap, "d3")
    first = consume(server.bootstrap, "g-d", 300)
    assert sorted(first) == list(range(300))
    server.kill()  # SIGKILL: no flush, no close

    restarted = start_kcoord(data_dir=data)  # no --topic: the topic comes from disk
    assert topic_id(restarted.bootstrap, "d3") == before_id
    consumer: Any = confluent_kafka.Consumer({"bootstrap.servers": restarted.bootstrap,
                                             "group.id": "probe"})
    try:
        ends = [consumer.get_watermark_offsets(confluent_kafka.TopicPartition("d3", p),
                                               timeout=10)[1] for p in range(3)]
    finally:
        consumer.close()
    assert ends == [100, 100, 100]
    producer = confluent_kafka.Producer({"bootstrap.servers": restarted.bootstrap})
    for i in range(300, 310):
        producer.produce("d3", value=str(i).encode(), partition=i % 3)
    assert producer.flush(20) == 0
    # the group resumes where it committed: exactly the 10 new records
    assert sorted(consume(restarted.bootstrap, "g-d", 10)) == list(range(300, 310))
    # a new group reads everything, old and new
    assert sorted(consume(restarted.bootstrap, "g-new", 310)) == list(range(310))


def test_topic_storage_memory_keeps_records_in_the_process_only(
    start_kcoord: Any, tmp_path: Path
) -> None:
    """``--topic-storage memory``: topics and records are not written to the data directory
    and a restart starts without them, while committed offsets stay durable."""
    data = tmp_path / "memory-topics"
    server = start_kcoord(data_dir=data, topics=["m:1"], extra_args=["--topic-storage", "memory"])
    producer = confluent_kafka.Producer({"bootstrap.servers": server.bootstrap})
    producer.produce("m", value=b"gone")
    assert producer.flush(10) == 0
    consumer = confluent_kafka.Consumer({"bootstrap.servers": server.bootstrap,
                                         "group.id": "mem"})
    consumer.commit(offsets=[confluent_kafka.TopicPartition("m", 0, 1)], asynchronous=False)
    consumer.close()
    assert not (data / "topics").exists()
    server.kill()
    again = start_kcoord(data_dir=data, topics=["m:1"], extra_args=["--topic-storage", "memory"])
    listed = raw_request(again.bootstrap, 2, 5, {"replica_id": -1, "isolation_level": 0,
                                                  "topics": [{"name": "m", "partitions": [
                                                      {"partition_index": 0,
                                                       "current_leader_epoch": -1,
                                                       "timestamp": -1}]}]})
    assert listed.topics[0].partitions[0].offset == 0  # the record went with the process
    consumer = confluent_kafka.Consumer({"bootstrap.servers": again.bootstrap,
                                         "group.id": "mem"})
    try:
        (tp,) = consumer.committed([confluent_kafka.TopicPartition("m", 0)], 10)
    finally:
        consumer.close()
    assert tp.offset == 1
