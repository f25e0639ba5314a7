"""confluent-kafka's ``ShareConsumer`` fetching and acknowledging against a real kcoord
process (ShareFetch, ShareAcknowledge): two consumers in explicit acknowledgement mode share
the one partition of a topic; every record is delivered to one of them at a time, a RELEASE
brings a record back with a higher delivery count, REJECT and ACCEPT never do; after a
SIGKILL of kcoord the acknowledged records stay acknowledged; a hung consumer's records come
back when their locks expire, a killed one's at once."""

from __future__ import annotations

import json
import select
import signal
import subprocess
import sys
import time
from collections import defaultdict
from typing import Any

import pytest
from e2e_support import wait_until

# Real clients for tens of seconds: slow, run by CI after the default run (which stays
# under ten minutes on two cores).
pytestmark = pytest.mark.slow

confluent_kafka = pytest.importorskip("confluent_kafka")

FAST = {
    "group.share.heartbeat.interval.ms": "500",
    "group.share.min.heartbeat.interval.ms": "500",
    "group.share.session.timeout.ms": "6000",
    "group.share.min.session.timeout.ms": "3000",
}
GROUP = "fetching-queue"
TOPIC = "sq"
RECORDS = 100


def _consumer(bootstrap: str) -> Any:
    consumer = confluent_kafka.ShareConsumer({
        "bootstrap.servers": bootstrap, "group.id": GROUP, "log_level": 0,
        "share.acknowledgement.mode": "explicit",
    })
    consumer.subscribe([TOPIC])
    return consumer


def _accept_polled(consumer: Any, seen: dict[int, int]) -> None:
    """One poll of an explicit consumer: each record's delivery count noted, then accepted."""
    for message in consumer.poll(0.5) or []:
        if message.error() is None:
            seen[message.offset()] = message.delivery_count()
            consumer.acknowledge(message)


class Deliveries:
    """Who got which record, with which delivery count, and what it answered."""

    def __init__(self) -> None:
        self.events: dict[int, list[tuple[str, int]]] = defaultdict(list)
        self.by_consumer: dict[str, int] = defaultdict(int)
        self.holding: dict[int, str] = {}  # offset -> consumer, until its ack is sent

    def poll(self, name: str, consumer: Any, decide: Any, timeout: float = 0.3) -> int:
        # Acknowledgements of the previous poll go out with this one: they are no longer held.
        for offset in [o for o, who in self.holding.items() if who == name]:
            del self.holding[offset]
        got = 0
        for message in consumer.poll(timeout) or []:
            if message.error() is not None:
                continue
            offset = message.offset()
            other = self.holding.get(offset)
            assert other is None, f"offset {offset} delivered to {name} while {other} holds it"
            self.holding[offset] = name
            self.events[offset].append((name, message.delivery_count()))
            self.by_consumer[name] += 1
            consumer.acknowledge(message, decide(message))
            got += 1
        return got


def test_two_share_consumers_release_and_reject(start_kcoord: Any) -> None:
    server = start_kcoord(topics=[f"{TOPIC}:1"], config=FAST)
    producer = confluent_kafka.Producer({"bootstrap.servers": server.bootstrap})
    consumers = {"one": _consumer(server.bootstrap), "two": _consumer(server.bootstrap)}
    ack = confluent_kafka.AcknowledgeType
    deliveries = Deliveries()
    try:
        # share.auto.offset.reset is latest: warm up until the share partition has started
        # (a consumer receives a warm-up record), then produce the records the test counts.
        def warmed_up() -> bool:
            producer.produce(TOPIC, b"warm-up")
            producer.flush(10)
            return any(deliveries.poll(name, c, lambda m: ack.ACCEPT, 0.5)
                       for name, c in consumers.items())

        wait_until(warmed_up, timeout=60, what="a warm-up record delivered")
        offsets: list[int] = []
        producer.produce(TOPIC, b"v0", on_delivery=lambda _e, m: offsets.append(m.offset()))
        producer.flush(10)
        (first,) = offsets

        def decide(message: Any) -> Any:
            offset = message.offset() - first
            if offset < 0:  # a late warm-up record
                return ack.ACCEPT
            if offset % 10 == 0 and message.delivery_count() == 1:
                return ack.RELEASE
            return ack.REJECT if offset % 10 == 5 else ack.ACCEPT

        for start in range(0, RECORDS, 10):
            for i in range(max(start, 1), start + 10):
                producer.produce(TOPIC, b"v%d" % i)
            producer.flush(10)
            for name, consumer in consumers.items():
                deliveries.poll(name, consumer, decide)

        def every_record_done() -> bool:
            for name, consumer in consumers.items():
                deliveries.poll(name, consumer, decide)
            wanted = range(first, first + RECORDS)
            return all(len(deliveries.events[o]) == (2 if (o - first) % 10 == 0 else 1)
                       for o in wanted)

        wait_until(every_record_done, timeout=60, what="every record delivered as decided")
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline:  # nothing more comes: accepted/rejected stay done
            for name, consumer in consumers.items():
                deliveries.poll(name, consumer, decide)
    finally:
        for consumer in consumers.values():
            consumer.close()

    for i in range(RECORDS):
        events = deliveries.events[first + i]
        counts = [count for _, count in events]
        assert counts == ([1, 2] if i % 10 == 0 else [1]), (i, events)
    assert sum(deliveries.by_consumer.values()) >= RECORDS + RECORDS // 10

    # SIGKILL: the acknowledged records stay acknowledged; a record produced after the restart
    # is the only one a new consumer gets.
    server.kill()
    restarted = start_kcoord(data_dir=server.data_dir, topics=[f"{TOPIC}:1"], config=FAST)
    producer = confluent_kafka.Producer({"bootstrap.servers": restarted.bootstrap})
    consumer = _consumer(restarted.bootstrap)
    after = Deliveries()
    try:
        producer.produce(TOPIC, b"after-restart")
        producer.flush(10)
        wait_until(lambda: after.poll("three", consumer, lambda m: ack.ACCEPT, 0.5) and after,
                   timeout=60, what="the record produced after the restart")
    finally:
        consumer.close()
    assert sorted(after.events) == [first + RECORDS]


_HOLDER = """
import json, sys, time
import confluent_kafka
consumer = confluent_kafka.ShareConsumer({
    "bootstrap.servers": sys.argv[1], "group.id": sys.argv[2], "log_level": 0,
    "share.acknowledgement.mode": "explicit"})
consumer.subscribe([sys.argv[3]])
while True:
    got = [m.offset() for m in consumer.poll(0.5) or [] if m.error() is None]
    if got:
        print(json.dumps(got), flush=True)
        time.sleep(600)  # holds them, never acknowledging, until killed
"""


@pytest.mark.parametrize("end", ["stopped", "killed"])
def test_records_of_a_gone_consumer_reach_another(start_kcoord: Any, end: str) -> None:
    """A consumer that hangs (SIGSTOP: its connection stays open) holds its records until
    their acquisition locks expire; one killed (its connection closes) has them released at
    once, as Kafka's broker releases a disconnected share session's records."""
    lock_ms = 3000
    server = start_kcoord(topics=[f"{TOPIC}:1"], config={
        **FAST, "group.share.record.lock.duration.ms": str(lock_ms)})
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, server.bootstrap, GROUP, TOPIC],
                              stdout=subprocess.PIPE, text=True)
    producer = confluent_kafka.Producer({"bootstrap.servers": server.bootstrap})
    other = None
    try:
        lines: list[str] = []
        acquired_at: list[float] = []

        def holder_got_records() -> bool:
            producer.produce(TOPIC, b"job")  # latest reset: produce until one is taken
            producer.flush(10)
            assert holder.stdout is not None
            ready, _, _ = select.select([holder.stdout], [], [], 0.5)
            if ready:
                lines.append(holder.stdout.readline())
                acquired_at.append(time.monotonic())
            return bool(lines)

        wait_until(holder_got_records, timeout=60, what="the holder's first records")
        held = json.loads(lines[0])
        if end == "killed":
            holder.kill()
            holder.wait(10)
        else:
            holder.send_signal(signal.SIGSTOP)
        other = _consumer(server.bootstrap)
        seen: dict[int, int] = {}

        def held_records_redelivered() -> bool:
            _accept_polled(other, seen)
            return set(held) <= set(seen)

        wait_until(held_records_redelivered, timeout=60, what="the held records redelivered")
        waited = time.monotonic() - acquired_at[0]
        if end == "killed":  # released at the disconnect, well before the lock
            assert waited < lock_ms / 1000 - 0.5
        else:  # not before their locks expired (acquired a little before they were printed)
            assert waited >= lock_ms / 1000 - 0.5
        assert {seen[o] for o in held} == {2}
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait(10)
        if holder.stdout is not None:
            holder.stdout.close()
        if other is not None:
            other.close()


@pytest.mark.parametrize("ending", ["close", "commit_sync-then-close"])
def test_implicit_close_releases_the_last_poll(start_kcoord: Any, ending: str) -> None:
    """Implicit acknowledgement accepts a poll's records at the next poll or commit, so a
    consumer that closes right after a poll has its last records released (librdkafka's
    close sends a final-epoch ShareAcknowledge without acknowledgements; Kafka's
    SharePartitionManager.releaseSession releases the member's acquired records, as
    KafkaShareConsumer documents: "close() releases any acquired records without
    acknowledgement") and another consumer gets them with delivery count 2; a commit_sync()
    before close() accepts them and nothing comes back."""
    # Locks that outlast the test: a record comes back only if close() released it.
    server = start_kcoord(topics=[f"{TOPIC}:1"], config={
        **FAST, "group.share.record.lock.duration.ms": "120000"})
    producer = confluent_kafka.Producer({"bootstrap.servers": server.bootstrap})
    implicit = confluent_kafka.ShareConsumer({
        "bootstrap.servers": server.bootstrap, "group.id": GROUP, "log_level": 0})
    implicit.subscribe([TOPIC])
    other = None
    try:
        last_poll: list[int] = []

        def got_records() -> bool:  # latest reset: produce until a poll returns records
            producer.produce(TOPIC, b"job")
            producer.flush(10)
            last_poll[:] = [m.offset() for m in implicit.poll(0.5) or [] if m.error() is None]
            return bool(last_poll)

        wait_until(got_records, timeout=60, what="the implicit consumer's first records")
        if ending != "close":
            implicit.commit_sync()
        implicit.close()
        implicit = None
        offsets: list[int] = []
        producer.produce(TOPIC, b"after", on_delivery=lambda _e, m: offsets.append(m.offset()))
        producer.flush(10)
        (after,) = offsets
        other = _consumer(server.bootstrap)
        seen: dict[int, int] = {}

        def reached_the_record_after() -> bool:
            _accept_polled(other, seen)
            return after in seen and (ending != "close" or set(last_poll) <= set(seen))

        wait_until(reached_the_record_after, timeout=30, what="the record produced after")
    finally:
        if implicit is not None:
            implicit.close()
        if other is not None:
            other.close()
    if ending == "close":
        assert {seen[o] for o in last_poll} == {2}
    else:
        assert not set(last_poll) & set(seen), seen
    assert seen[after] == 1
