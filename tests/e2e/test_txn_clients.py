"""Kafka transactions with real clients over TCP (issue 12): exactly-once consume ->
transform -> produce with confluent-kafka (librdkafka), a zombie fenced by its successor,
kafka-python's and aiokafka's transactional producers, and a SIGKILL with a transaction open.

What the nearest doubles get wrong is pinned here (``kip848-and-transactions.md`` §4):
read_committed consumers never see aborted records, transactional offsets are stored, and
a second producer with the same transactional.id fences the first."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from e2e_support import wait_until

confluent_kafka = pytest.importorskip("confluent_kafka")
TopicPartition = confluent_kafka.TopicPartition


def producer(bootstrap: str, **config: Any) -> Any:
    return confluent_kafka.Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, **config})


def read_all(bootstrap: str, topic: str, partitions: int, isolation: str, want: int,
             quiet_s: float = 1.0, timeout: float = 30) -> list[bytes]:
    """Every value of ``topic`` from the start (at least ``want``, then ``quiet_s`` more)."""
    consumer = confluent_kafka.Consumer({
        "bootstrap.servers": bootstrap, "group.id": f"reader-{time.monotonic_ns()}",
        "isolation.level": isolation, "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    got: list[bytes] = []

    def poll() -> bool:
        message = consumer.poll(0.1)
        if message is not None and not message.error():
            got.append(message.value())
        return len(got) >= want

    try:
        wait_until(poll, timeout=timeout, interval=0, what=f"{want} records of {topic}")
        end = time.monotonic() + quiet_s
        while time.monotonic() < end:
            poll()
    finally:
        consumer.close()
    return got


def committed(bootstrap: str, group: str, topic: str, partitions: int) -> list[int]:
    consumer = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        found = consumer.committed([TopicPartition(topic, p) for p in range(partitions)], 10)
    finally:
        consumer.close()
    return [tp.offset for tp in found]


def test_exactly_once_consume_transform_produce(start_kcoord: Any) -> None:
    server = start_kcoord(topics=["eos-in:2", "eos-out:2"])
    bootstrap = server.bootstrap
    source = producer(bootstrap)
    for i in range(100):
        source.produce("eos-in", value=b"%d" % i, partition=i % 2)
    assert source.flush(10) == 0

    consumer = confluent_kafka.Consumer({
        "bootstrap.servers": bootstrap, "group.id": "eos", "auto.offset.reset": "earliest",
        "enable.auto.commit": False, "isolation.level": "read_committed"})
    consumer.subscribe(["eos-in"])
    txn = producer(bootstrap, **{"transactional.id": "eos-1"})
    txn.init_transactions(15)
    # One transaction is aborted first: its records must never reach read_committed readers.
    txn.begin_transaction()
    txn.produce("eos-out", value=b"poison", partition=0)
    txn.produce("eos-out", value=b"poison", partition=1)
    assert txn.flush(10) == 0  # in the log before the abort (an abort purges what is queued)
    txn.abort_transaction(15)

    seen = 0
    deadline = time.monotonic() + 60
    while seen < 100:
        assert time.monotonic() < deadline, f"only {seen} records consumed"
        messages = [m for m in consumer.consume(20, 0.5) if not m.error()]
        if not messages:
            continue
        txn.begin_transaction()
        for message in messages:
            txn.produce("eos-out", value=b"x" + message.value(), partition=message.partition())
        txn.send_offsets_to_transaction(
            consumer.position(consumer.assignment()), consumer.consumer_group_metadata(), 15)
        txn.commit_transaction(15)
        seen += len(messages)
    consumer.close()

    out = read_all(bootstrap, "eos-out", 2, "read_committed", 100)
    assert sorted(out) == sorted(b"x%d" % i for i in range(100))
    raw = read_all(bootstrap, "eos-out", 2, "read_uncommitted", 102)
    assert raw.count(b"poison") == 2  # written, then aborted: hidden only from read_committed
    assert committed(bootstrap, "eos", "eos-in", 2) == [50, 50]


def test_a_second_instance_fences_the_zombie(start_kcoord: Any) -> None:
    server = start_kcoord(topics=["fence:1"])
    zombie = producer(server.bootstrap, **{"transactional.id": "fenced"})
    zombie.init_transactions(15)
    zombie.begin_transaction()
    zombie.produce("fence", value=b"zombie")
    assert zombie.flush(10) == 0

    successor = producer(server.bootstrap, **{"transactional.id": "fenced"})
    successor.init_transactions(15)  # aborts the zombie's open transaction, bumps the epoch
    successor.begin_transaction()
    successor.produce("fence", value=b"successor")
    successor.commit_transaction(15)

    with pytest.raises(confluent_kafka.KafkaException) as failed:
        zombie.commit_transaction(15)
    assert failed.value.args[0].code() == confluent_kafka.KafkaError._FENCED
    assert read_all(server.bootstrap, "fence", 1, "read_committed", 1) == [b"successor"]


def test_kafka_python_and_aiokafka_transactions(start_kcoord: Any) -> None:
    import asyncio

    import aiokafka
    import kafka

    server = start_kcoord(topics=["other:1"])
    kp = kafka.KafkaProducer(bootstrap_servers=server.bootstrap, transactional_id="kp-tx")
    kp.init_transactions()
    kp.begin_transaction()
    kp.send("other", b"kp-aborted")
    kp.flush()
    kp.abort_transaction()
    kp.begin_transaction()
    kp.send("other", b"kp-committed")
    kp.commit_transaction()
    kp.close()

    async def aio() -> None:
        producer = aiokafka.AIOKafkaProducer(bootstrap_servers=server.bootstrap,
                                             transactional_id="aio-tx")
        await producer.start()
        try:
            async with producer.transaction():
                await producer.send_and_wait("other", b"aio-committed")
            await producer.begin_transaction()
            await producer.send_and_wait("other", b"aio-aborted")
            await producer.abort_transaction()
        finally:
            await producer.stop()

    asyncio.run(aio())
    assert sorted(read_all(server.bootstrap, "other", 1, "read_committed", 2)) == [
        b"aio-committed", b"kp-committed"]


@pytest.mark.slow  # SIGKILLs and restarts of real servers: CI's restart step
def test_an_open_transaction_survives_sigkill_and_commits(
    start_kcoord: Any, tmp_path: Path
) -> None:
    data = tmp_path / "txn-data"
    server = start_kcoord(data_dir=data, topics=["crash-in:1", "crash:1"])
    source = producer(server.bootstrap)
    source.produce("crash-in", value=b"input")
    assert source.flush(10) == 0
    done = producer(server.bootstrap, **{"transactional.id": "before"})
    done.init_transactions(15)
    done.begin_transaction()
    done.produce("crash", value=b"committed")
    done.commit_transaction(15)
    open_txn = producer(server.bootstrap, **{"transactional.id": "open"})
    open_txn.init_transactions(15)
    open_txn.begin_transaction()
    open_txn.produce("crash", value=b"in-flight")
    assert open_txn.flush(10) == 0
    consumer = confluent_kafka.Consumer({"bootstrap.servers": server.bootstrap,
                                         "group.id": "crash-eos"})
    open_txn.send_offsets_to_transaction([TopicPartition("crash-in", 0, 1)],
                                         consumer.consumer_group_metadata(), 15)
    consumer.close()
    server.kill()

    again = start_kcoord(data_dir=data, topics=["crash-in:1", "crash:1"], port=server.port)
    # The producer outlived the broker: its transaction, records and offsets are still
    # there, and its commit goes through.
    open_txn.commit_transaction(30)
    assert read_all(again.bootstrap, "crash", 1, "read_committed", 2) == [
        b"committed", b"in-flight"]
    assert committed(again.bootstrap, "crash-eos", "crash-in", 1) == [1]


@pytest.mark.slow  # SIGKILLs and restarts of real servers: CI's restart step
def test_a_hung_transaction_is_aborted_by_its_timeout_across_a_restart(
    start_kcoord: Any, tmp_path: Path
) -> None:
    data = tmp_path / "hung-data"
    config = {"transaction.abort.timed.out.transaction.cleanup.interval.ms": "200"}
    server = start_kcoord(data_dir=data, topics=["hung:1"], config=config)
    hung = producer(server.bootstrap, **{"transactional.id": "hung",
                                         "transaction.timeout.ms": 3000})
    hung.init_transactions(15)
    hung.begin_transaction()
    hung.produce("hung", value=b"never-committed")
    assert hung.flush(10) == 0
    server.kill()

    again = start_kcoord(data_dir=data, topics=["hung:1"], config=config)
    after = producer(again.bootstrap, **{"transactional.id": "after"})
    after.init_transactions(15)
    after.begin_transaction()
    after.produce("hung", value=b"after-restart")
    after.commit_transaction(15)
    # read_committed readers move past the hung transaction once its timeout aborts it.
    assert read_all(again.bootstrap, "hung", 1, "read_committed", 1) == [b"after-restart"]
    # Fencing holds across the restart: the timeout's abort bumped the epoch.
    successor = producer(again.bootstrap, **{"transactional.id": "hung"})
    successor.init_transactions(15)
    with pytest.raises(confluent_kafka.KafkaException):
        hung.begin_transaction()
        hung.produce("hung", value=b"zombie")
        hung.commit_transaction(15)
    assert read_all(again.bootstrap, "hung", 1, "read_committed", 1) == [b"after-restart"]


def test_a_read_committed_consumer_waits_for_staged_offsets(start_kcoord: Any) -> None:
    """librdkafka's read_committed consumers fetch offsets with RequireStable: while a
    transaction holds the group's offsets the answer is UNSTABLE_OFFSET_COMMIT and the
    consumer waits; after the commit it starts at the transaction's offsets."""
    server = start_kcoord(topics=["stable:1"])
    source = producer(server.bootstrap)
    for i in range(10):
        source.produce("stable", value=b"%d" % i)
    assert source.flush(10) == 0
    txn = producer(server.bootstrap, **{"transactional.id": "stable-tx"})
    txn.init_transactions(15)
    txn.begin_transaction()
    group = confluent_kafka.Consumer({"bootstrap.servers": server.bootstrap,
                                      "group.id": "stable-group"})
    txn.send_offsets_to_transaction([TopicPartition("stable", 0, 6)],
                                    group.consumer_group_metadata(), 15)
    group.close()

    consumer = confluent_kafka.Consumer({
        "bootstrap.servers": server.bootstrap, "group.id": "stable-group",
        "isolation.level": "read_committed", "auto.offset.reset": "earliest",
        "enable.auto.commit": False})
    consumer.subscribe(["stable"])
    try:
        early = [m for m in consumer.consume(10, 3.0) if not m.error()]
        assert early == []  # the offset fetch is retried while the transaction is open
        txn.commit_transaction(15)
        got: list[bytes] = []

        def polled() -> bool:
            got.extend(m.value() for m in consumer.consume(10, 0.2) if not m.error())
            return len(got) >= 4

        wait_until(polled, timeout=30, interval=0, what="the records after offset 6")
        assert got == [b"6", b"7", b"8", b"9"]
    finally:
        consumer.close()
