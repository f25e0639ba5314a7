"""The pytest plugin used as a user would: only the public ``kcoord`` fixture, with real
kafka-python consumers over real TCP. Coordinator time moves with ``advance`` instead of
sleeping through session timeouts."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition
    from kafka.errors import CommitFailedError
    from kafka.structs import OffsetAndMetadata

import contextlib

from coordinator.testing import KcoordServer

TOPIC = "events"
PARTITIONS = 4
REBALANCE_IN_PROGRESS = 27
OFFSET_COMMIT = 8


def wait_until(condition: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.05)


def consumer(kcoord: KcoordServer, **overrides: object) -> KafkaConsumer:
    config: dict[str, object] = {
        "bootstrap_servers": kcoord.bootstrap,
        "group_id": "g",
        "enable_auto_commit": False,
        "auto_offset_reset": "earliest",
        "heartbeat_interval_ms": 500,
        "session_timeout_ms": 30000,
        "request_timeout_ms": 40000,
    }
    config.update(overrides)
    c = KafkaConsumer(**config)
    c.subscribe([TOPIC])
    return c


# kafka-python 3.0.12 loses a join if poll()'s timeout expires between the JoinGroup and
# the SyncGroup answers (it logs the SyncGroup response, then never applies the assignment
# nor heartbeats again). Polls here are long enough for a whole join to fit in one.
POLL_MS = 1000


def poll_until_assigned(c: KafkaConsumer, count: int, timeout: float = 30.0) -> set[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        c.poll(timeout_ms=POLL_MS)
        if len(c.assignment()) == count:
            return {tp.partition for tp in c.assignment()}
    raise AssertionError(f"consumer never owned {count} partitions: {c.assignment()}")


@pytest.fixture
def consumers() -> Iterator[list[KafkaConsumer]]:
    made: list[KafkaConsumer] = []
    yield made
    for c in made:
        with contextlib.suppress(Exception):
            c.close(autocommit=False)


def test_static_member_survives_30s_absence_without_rebalance(
    kcoord: KcoordServer, consumers: list[KafkaConsumer]
) -> None:
    kcoord.create_topic(TOPIC, PARTITIONS)
    first = consumer(kcoord, group_instance_id="worker-1", session_timeout_ms=45000)
    consumers.append(first)
    owned = poll_until_assigned(first, PARTITIONS)
    before = kcoord.describe_group("g")
    assert before is not None and before["state"] == "Stable"

    first.close(autocommit=False)  # a static member sends no LeaveGroup
    kcoord.advance(30)  # 30 s of coordinator time: less than the 45 s session timeout
    during = kcoord.describe_group("g")
    assert during is not None
    assert during["state"] == "Stable"
    assert [m["group_instance_id"] for m in during["members"]] == ["worker-1"]

    again = consumer(kcoord, group_instance_id="worker-1", session_timeout_ms=45000)
    consumers.append(again)
    assert poll_until_assigned(again, PARTITIONS) == owned
    after = kcoord.describe_group("g")
    assert after is not None
    assert after["generation_id"] == before["generation_id"], "the static rejoin rebalanced"
    assert after["members"][0]["member_id"] != before["members"][0]["member_id"]
    assert sorted(p for _, p in after["members"][0]["assignment"]) == sorted(owned)


def test_crashed_consumer_partitions_move_after_session_timeout(
    kcoord: KcoordServer, consumers: list[KafkaConsumer]
) -> None:
    kcoord.create_topic(TOPIC, PARTITIONS)
    survivor = consumer(kcoord, session_timeout_ms=30000)
    consumers.append(survivor)
    poll_until_assigned(survivor, PARTITIONS)

    script = Path(__file__).with_name("crash_consumer.py")
    proc = subprocess.Popen(
        [sys.executable, str(script), kcoord.bootstrap, "g", TOPIC, "6000"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        # The survivor keeps polling so it takes part in the rebalance the newcomer causes.
        def shared() -> bool:
            survivor.poll(timeout_ms=POLL_MS)
            group = kcoord.describe_group("g")
            return (
                group is not None
                and group["state"] == "Stable"
                and len(group["members"]) == 2
                and all(m["assignment"] for m in group["members"])
                and len(survivor.assignment()) == PARTITIONS // 2
            )

        wait_until(shared, "the two consumers to share the partitions", timeout=60)
        generation = kcoord.describe_group("g")["generation_id"]  # type: ignore[index]
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)

        kcoord.advance(6.5)  # the crashed member's 6 s session timeout, no sleeping
        group = kcoord.describe_group("g")
        assert group is not None
        assert [m["client_id"] for m in group["members"]] != ["crasher"]
        assert all(m["client_id"] != "crasher" for m in group["members"])
        assert poll_until_assigned(survivor, PARTITIONS) == set(range(PARTITIONS))
        after = kcoord.describe_group("g")
        assert after is not None and after["generation_id"] > generation
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        if proc.stdout:
            proc.stdout.close()


def test_injected_rebalance_in_progress_fails_the_next_commit(
    kcoord: KcoordServer, consumers: list[KafkaConsumer]
) -> None:
    kcoord.create_topic(TOPIC, PARTITIONS)
    c = consumer(kcoord)
    consumers.append(c)
    poll_until_assigned(c, PARTITIONS)
    tp = TopicPartition(TOPIC, 0)
    generation = kcoord.describe_group("g")["generation_id"]  # type: ignore[index]

    kcoord.inject(OFFSET_COMMIT, error_code=REBALANCE_IN_PROGRESS, count=1, group_id="g")
    # kafka-python (coordinator/consumer.py) turns REBALANCE_IN_PROGRESS on a commit into
    # request_rejoin() + CommitFailedError.
    with pytest.raises(CommitFailedError):
        c.commit({tp: OffsetAndMetadata(5, "", -1)})
    assert kcoord.committed("g") == {}

    poll_until_assigned(c, PARTITIONS)  # the rejoin it asked for
    wait_until(
        lambda: (
            c.poll(timeout_ms=POLL_MS) is not None
            and kcoord.describe_group("g")["generation_id"] > generation
        ),  # type: ignore[index]
        "the rejoin after the failed commit",
    )
    c.commit({tp: OffsetAndMetadata(5, "", -1)})  # the fault was for one request only
    assert kcoord.committed("g") == {(TOPIC, 0): 5}


def test_committed_offsets_survive_a_restart(
    kcoord: KcoordServer, consumers: list[KafkaConsumer]
) -> None:
    kcoord.create_topic(TOPIC, PARTITIONS)
    producer = KafkaProducer(bootstrap_servers=kcoord.bootstrap)
    for i in range(20):
        producer.send(TOPIC, value=b"m%d" % i, partition=i % PARTITIONS)
    producer.flush(timeout=30)
    producer.close()
    c = consumer(kcoord)
    consumers.append(c)
    seen = 0  # counted from the first poll: joining the group happens inside poll()
    deadline = time.monotonic() + 30
    while seen < 20 and time.monotonic() < deadline:
        seen += sum(len(v) for v in c.poll(timeout_ms=POLL_MS).values())
    assert seen == 20
    c.commit()
    expected = {(TOPIC, p): 5 for p in range(PARTITIONS)}
    assert kcoord.committed("g") == expected
    c.close(autocommit=False)
    consumers.remove(c)

    kcoord.restart()
    assert kcoord.committed("g") == expected
    fresh = KafkaConsumer(
        bootstrap_servers=kcoord.bootstrap, group_id="g", enable_auto_commit=False
    )
    consumers.append(fresh)
    assert fresh.committed(TopicPartition(TOPIC, 1)) == 5
    # The topic and its records came back too (durable topics, issue 12).
    assert fresh.partitions_for_topic(TOPIC) == set(range(PARTITIONS))
    ends = fresh.end_offsets([TopicPartition(TOPIC, p) for p in range(PARTITIONS)])
    assert sorted(ends.values()) == [5] * PARTITIONS
