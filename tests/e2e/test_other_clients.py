"""confluent-kafka (librdkafka), aiokafka and kcat: each forms a group, consumes, commits."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import time

import pytest
from e2e_support import KcoordProcess, wait_until
from kafka.admin import KafkaAdminClient

ALL12 = set(range(12))


def committed_offsets(kcoord: KcoordProcess, group: str) -> dict[int, int]:
    """The group's committed offsets on t12, read with kafka-python's admin client."""
    client = KafkaAdminClient(bootstrap_servers=kcoord.bootstrap, request_timeout_ms=10_000)
    try:
        offsets = client.list_group_offsets({group: None})[group]
        return {tp.partition: om.offset for tp, om in offsets.items() if tp.topic == "t12"}
    finally:
        client.close()


def test_confluent_kafka_group_consumes_and_commits(kcoord: KcoordProcess) -> None:
    confluent_kafka = pytest.importorskip("confluent_kafka")
    common = {"bootstrap.servers": kcoord.bootstrap, "broker.address.family": "v4"}
    consumers = [
        confluent_kafka.Consumer(
            {
                **common,
                "group.id": "librdkafka",
                "client.id": f"ck-{i}",
                "auto.offset.reset": "earliest",
                "enable.auto.commit": False,
                "session.timeout.ms": 6000,
                "heartbeat.interval.ms": 500,
                "isolation.level": "read_committed",  # librdkafka's default, said explicitly
            }
        )
        for i in range(2)
    ]
    received: list[tuple[int, int, bytes]] = []
    try:
        for c in consumers:
            c.subscribe(["t12"])

        def poll_all() -> None:
            for c in consumers:
                msg = c.poll(0.05)
                if msg is not None and msg.error() is None:
                    received.append((msg.partition(), msg.offset(), msg.value()))

        def balanced() -> bool:
            poll_all()
            owned = [tp.partition for c in consumers for tp in c.assignment()]
            return all(c.assignment() for c in consumers) and sorted(owned) == sorted(ALL12)

        wait_until(balanced, 30, what="two librdkafka consumers sharing 12 partitions")
        producer = confluent_kafka.Producer({**common, "linger.ms": 5})
        for i in range(120):
            producer.produce("t12", key=str(i).encode(), value=f"ck-{i}".encode())
        assert producer.flush(30) == 0

        def all_received() -> bool:
            poll_all()
            return len(received) >= 120

        wait_until(all_received, 30, what="120 messages")
        assert sorted(v for _, _, v in received) == sorted(f"ck-{i}".encode() for i in range(120))
        for c in consumers:
            c.commit(asynchronous=False)
        # OffsetFetch with require_stable (librdkafka's default) reads the commits back.
        ends: dict[int, int] = {}
        for p, o, _ in received:
            ends[p] = max(ends.get(p, 0), o + 1)
        partitions = [confluent_kafka.TopicPartition("t12", p) for p in ends]
        committed = consumers[0].committed(partitions, timeout=10)
        assert {tp.partition: tp.offset for tp in committed} == ends
    finally:
        for c in consumers:
            c.close()
    assert committed_offsets(kcoord, "librdkafka") == ends


def test_aiokafka_group_consumes_and_commits(kcoord: KcoordProcess) -> None:
    aiokafka = pytest.importorskip("aiokafka")
    from aiokafka.coordinator.assignors.range import RangePartitionAssignor
    from aiokafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor

    async def run() -> dict[int, int]:
        producer = aiokafka.AIOKafkaProducer(bootstrap_servers=kcoord.bootstrap)
        await producer.start()
        try:
            for i in range(60):
                await producer.send("t12", key=str(i).encode(), value=f"aio-{i}".encode())
            await producer.flush()
        finally:
            await producer.stop()
        consumers = [
            aiokafka.AIOKafkaConsumer(
                "t12",
                bootstrap_servers=kcoord.bootstrap,
                group_id="aiokafka",
                enable_auto_commit=False,
                auto_offset_reset="earliest",
                session_timeout_ms=6000,
                heartbeat_interval_ms=500,
                # Several assignors: aiokafka sends one JoinGroup per prefix of this list.
                partition_assignment_strategy=(RangePartitionAssignor, RoundRobinPartitionAssignor),
            )
            for _ in range(2)
        ]
        seen: set[tuple[int, int]] = set()
        ends: dict[int, int] = {}
        try:
            for c in consumers:
                await c.start()
            deadline = time.monotonic() + 40
            while len(seen) < 60:
                assert time.monotonic() < deadline, f"only {len(seen)} of 60 messages"
                for c in consumers:
                    batches = await c.getmany(timeout_ms=100)
                    for tp, msgs in batches.items():
                        for m in msgs:
                            seen.add((tp.partition, m.offset))
                            ends[tp.partition] = max(ends.get(tp.partition, 0), m.offset + 1)
                    if batches:
                        await c.commit()
            assignments = [c.assignment() for c in consumers]
            assert sorted(tp.partition for a in assignments for tp in a) == sorted(ALL12)
        finally:
            for c in consumers:
                await c.stop()
        return ends

    ends = asyncio.run(run())
    assert committed_offsets(kcoord, "aiokafka") == ends
    assert sum(ends.values()) == 60


def test_kcat_group_consumes_and_commits(kcoord: KcoordProcess) -> None:
    kcat = shutil.which("kcat") or shutil.which("kafkacat")
    if kcat is None:
        pytest.skip("kcat is not installed (apt-get install kcat)")
    lines = "".join(f"{i}:kcat-{i}\n" for i in range(48))
    produced = subprocess.run(
        [kcat, "-b", kcoord.bootstrap, "-P", "-t", "t12", "-K:"],
        input=lines,
        text=True,
        capture_output=True,
        timeout=60,
    )
    assert produced.returncode == 0, produced.stderr
    consumed: list[str] = []
    deadline = time.monotonic() + 60
    # A balanced consumer (-G) exits at the end of its partitions (-e), committing on close.
    while len(consumed) < 48 and time.monotonic() < deadline:
        result = subprocess.run(
            [
                kcat,
                "-b",
                kcoord.bootstrap,
                "-G",
                "kcat-group",
                "-e",
                "-q",
                "-f",
                "%p %o %s\n",
                "-X",
                "session.timeout.ms=6000",
                "-X",
                "heartbeat.interval.ms=500",
                "-X",
                "auto.offset.reset=earliest",
                "t12",
            ],
            text=True,
            capture_output=True,
            timeout=60,
        )
        assert result.returncode == 0, result.stderr
        consumed += [line for line in result.stdout.splitlines() if line]
    values = sorted(line.split(" ", 2)[2] for line in consumed)
    assert values == sorted(f"kcat-{i}" for i in range(48))
    ends: dict[int, int] = {}
    for line in consumed:
        p, o, _ = line.split(" ", 2)
        ends[int(p)] = max(ends.get(int(p), 0), int(o) + 1)
    assert committed_offsets(kcoord, "kcat-group") == ends
