"""Real clients validate their position after a leader change (KIP-320) over real TCP: three
brokers in one kcoord, partition 0 of ``t`` on all three, first led by broker 0 at epoch 0.
A consumer reads the first records, broker 0 stops (broker 1 leads at epoch 1), more records
are produced, and the consumer -- which asks the new leader with OffsetForLeaderEpoch where
epoch 0 ended before fetching again -- reads on from its position: every record once, in
order, no offset reset, no truncation reported, and the request was answered."""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable

import pytest
from e2e_support import started
from kafka import KafkaConsumer, KafkaProducer, TopicPartition

from coordinator.testing.double import KcoordServer
from wire.constants import ApiKey

BEFORE, AFTER = 5, 5
TIMEOUT_S = 30.0
CONFIG = {"default.replication.factor": "3"}

def cluster() -> contextlib.AbstractContextManager[KcoordServer]:
    return started(KcoordServer(CONFIG, brokers=3, topics={"t": 1}))


def produce(server: KcoordServer, first: int, count: int) -> None:
    producer = KafkaProducer(bootstrap_servers=server.bootstraps, acks="all",
                             retry_backoff_ms=50, reconnect_backoff_ms=50)
    for i in range(first, first + count):
        producer.send("t", f"m{i}".encode(), partition=0)
    producer.flush(TIMEOUT_S)
    producer.close()


def read_until(poll: Callable[[], list[bytes]], seen: list[bytes], count: int) -> None:
    deadline = time.monotonic() + TIMEOUT_S
    while len(seen) < count:
        assert time.monotonic() < deadline, f"read {len(seen)} of {count} records"
        seen.extend(poll())


def validated(server: KcoordServer, client_id: str) -> bool:
    """Whether an OffsetForLeaderEpoch of ``client_id`` reached a broker."""
    return any(ApiKey.OFFSET_FOR_LEADER_EPOCH in c["last_at"]
               for c in server.connection_tallies(client_id))


def fail_over_while_reading(server: KcoordServer, poll: Callable[[], list[bytes]]) -> list[bytes]:
    seen: list[bytes] = []
    produce(server, 0, BEFORE)
    read_until(poll, seen, BEFORE)
    server.stop_broker(0)
    produce(server, BEFORE, AFTER)
    read_until(poll, seen, BEFORE + AFTER)
    return seen


EXPECTED = [f"m{i}".encode() for i in range(BEFORE + AFTER)]


def test_kafka_python_validates_its_position_after_a_leader_change(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="kafka.consumer")
    with cluster() as server:
        consumer = KafkaConsumer(
            bootstrap_servers=server.bootstraps, client_id="kp-validate",
            auto_offset_reset="earliest", enable_auto_commit=False,
            metadata_max_age_ms=500, retry_backoff_ms=50, reconnect_backoff_ms=50)
        try:
            consumer.assign([TopicPartition("t", 0)])

            def poll() -> list[bytes]:
                batches = consumer.poll(timeout_ms=200)
                return [r.value for records in batches.values() for r in records]

            seen = fail_over_while_reading(server, poll)
            position = consumer._subscription.assignment[TopicPartition("t", 0)].position
        finally:
            consumer.close()
        assert validated(server, "kp-validate")
    assert seen == EXPECTED  # every record once: the position was neither reset nor moved
    assert (position.offset, position.leader_epoch) == (BEFORE + AFTER, 1)
    complaints = [r.getMessage() for r in caplog.records
                  if ("OffsetForLeaderEpoch" in r.getMessage() and r.levelno >= logging.WARNING)
                  or "Truncation detected" in r.getMessage()]
    # The records hold kafka-python's connections (and a dropped socket) in their arguments,
    # and pytest keeps a test's records to the end of the session: let them go here.
    caplog.clear()
    assert not complaints


def test_confluent_kafka_validates_its_position_after_a_leader_change() -> None:
    confluent_kafka = pytest.importorskip("confluent_kafka")
    errors: list[str] = []
    with cluster() as server:
        consumer = confluent_kafka.Consumer({
            "bootstrap.servers": ",".join(server.bootstraps), "group.id": "ck-validate",
            "client.id": "ck-validate", "auto.offset.reset": "earliest",
            "enable.auto.commit": False, "topic.metadata.refresh.interval.ms": 500,
            "error_cb": lambda error: errors.append(str(error)),
        })
        try:
            consumer.assign([confluent_kafka.TopicPartition(
                "t", 0, confluent_kafka.OFFSET_BEGINNING)])

            def poll() -> list[bytes]:
                messages = consumer.consume(num_messages=50, timeout=0.2)
                failed = [m.error() for m in messages if m.error() is not None]
                assert not failed, failed
                return [m.value() for m in messages]

            seen = fail_over_while_reading(server, poll)
            (position,) = consumer.position([confluent_kafka.TopicPartition("t", 0)])
        finally:
            consumer.close()
        assert validated(server, "ck-validate")
    assert seen == EXPECTED
    assert (position.offset, position.leader_epoch) == (BEFORE + AFTER, 1)
    # librdkafka reports the stopped broker's connection, never a failed validation.
    assert not [e for e in errors if "OffsetForLeaderEpoch" in e or "truncat" in e.lower()]
