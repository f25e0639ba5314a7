"""``kcoord groups list|describe`` against a real kcoord (issue 15 item 19): Kafka's
``kafka-consumer-groups.sh`` columns with committed offsets, log-end offsets and lag, for a
classic and a KIP-848 group, and its exit statuses."""

from __future__ import annotations

import subprocess
import sys
import time
from typing import Any

import pytest
from e2e_support import REPO

confluent_kafka = pytest.importorskip("confluent_kafka")

FAST = {
    "group.consumer.heartbeat.interval.ms": "500",
    "group.consumer.min.heartbeat.interval.ms": "500",
}


def kcoord(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "coordinator", *args], capture_output=True,
                          text=True, timeout=60, cwd=REPO)


def table(stdout: str) -> list[dict[str, str]]:
    lines = [line for line in stdout.splitlines() if line.strip()]
    header = lines.index(next(line for line in lines if line.startswith("GROUP ")))
    columns = lines[header].split()
    return [dict(zip(columns, line.split(), strict=True)) for line in lines[header + 1:]]


@pytest.mark.parametrize("protocol", ["classic", "consumer"])
def test_describe_shows_offsets_and_lag(start_kcoord: Any, protocol: str) -> None:
    server = start_kcoord(topics=["lag:2"], config=FAST)
    producer = confluent_kafka.Producer({"bootstrap.servers": server.bootstrap})
    for i in range(20):
        producer.produce("lag", value=b"%d" % i, partition=i % 2)
    assert producer.flush(10) == 0
    group = f"lag-{protocol}"
    consumer = confluent_kafka.Consumer({
        "bootstrap.servers": server.bootstrap, "group.id": group, "group.protocol": protocol,
        "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe(["lag"])
    try:
        deadline = time.monotonic() + 30
        while not consumer.assignment() or len(consumer.assignment()) < 2:
            assert time.monotonic() < deadline, "no assignment"
            consumer.poll(0.1)
        consumer.commit(offsets=[confluent_kafka.TopicPartition("lag", 0, 4),
                                 confluent_kafka.TopicPartition("lag", 1, 10)],
                        asynchronous=False)
        member_id = consumer.memberid()
        described = kcoord("groups", "describe", group, "--bootstrap", server.bootstrap)
        assert described.returncode == 0, described.stderr
        rows = table(described.stdout)
        assert [(r["PARTITION"], r["CURRENT-OFFSET"], r["LOG-END-OFFSET"], r["LAG"])
                for r in rows] == [("0", "4", "10", "6"), ("1", "10", "10", "0")]
        assert {r["CONSUMER-ID"] for r in rows} == {member_id}
        assert {r["GROUP"] for r in rows} == {group}
        listed = kcoord("groups", "list", "--bootstrap", server.bootstrap)
        assert listed.returncode == 0 and group in listed.stdout.split()
    finally:
        consumer.close()
    after = kcoord("groups", "describe", group, "--bootstrap", server.bootstrap)
    assert "has no active members" in after.stdout
    assert [r["CONSUMER-ID"] for r in table(after.stdout)] == ["-", "-"]


def test_unknown_group_bad_broker_and_bad_arguments(start_kcoord: Any) -> None:
    server = start_kcoord()
    missing = kcoord("groups", "describe", "nobody", "--bootstrap", server.bootstrap)
    assert (missing.returncode, missing.stdout.strip()) == (  # issue 32 item 11: non-zero
        1, "Error: Consumer group 'nobody' does not exist.")
    unreachable = kcoord("groups", "list", "--bootstrap", "127.0.0.1:1")
    assert unreachable.returncode == 1 and unreachable.stderr.count("\n") == 1
    for bad in (["groups"], ["groups", "describe"], ["groups", "list", "--bootstrap", "x"]):
        result = kcoord(*bad)
        assert result.returncode == 2 and result.stderr.count("\n") == 1, (bad, result.stderr)


def test_list_asks_every_broker(tmp_path: Any) -> None:
    """With several brokers each one lists only the groups it coordinates (Kafka's
    ListGroups); ``kcoord groups list`` asks every broker Metadata names, so a group on any
    broker shows up, whichever broker is the bootstrap. Describe finds the coordinator."""
    from coordinator.testing.double import KcoordServer
    from coordinator.txn.placement import partition_for

    groups = [next(g for g in (f"cli-{node}-{i}" for i in range(200))
                   if partition_for(g, 50) % 3 == node) for node in range(3)]
    with KcoordServer(data_dir=str(tmp_path), brokers=3, topics={"t": 1}) as server:
        for group in groups:
            consumer = confluent_kafka.Consumer({"bootstrap.servers": server.bootstrap,
                                                 "group.id": group})
            try:
                consumer.commit(offsets=[confluent_kafka.TopicPartition("t", 0, 0)],
                                asynchronous=False)
            finally:
                consumer.close()
        assert {server.coordinator_of(g) for g in groups} == {0, 1, 2}
        for bootstrap in server.bootstraps:
            listed = kcoord("groups", "list", "--bootstrap", bootstrap)
            assert listed.returncode == 0, listed.stderr
            assert listed.stdout.split() == sorted(groups)
        described = kcoord("groups", "describe", groups[2], "--bootstrap", server.bootstrap)
        assert described.returncode == 0, described.stderr
        assert [row["PARTITION"] for row in table(described.stdout)] == ["0"]
