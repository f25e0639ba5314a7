"""confluent-kafka with ``group.protocol=consumer`` (KIP-848) against a real kcoord process:
a group forms through ConsumerGroupHeartbeat, consumes every record exactly once, commits,
and is described with the consumer type; the requested server assignor is honoured; a regex
subscription picks up a topic created later."""

from __future__ import annotations

import time
from typing import Any

import pytest
from e2e_support import exact_cover, raw_request, wait_until

confluent_kafka = pytest.importorskip("confluent_kafka")
confluent_admin = pytest.importorskip("confluent_kafka.admin")

# The minimums lowered the way Kafka's own test setups lower them.
FAST = {
    "group.consumer.heartbeat.interval.ms": "500",
    "group.consumer.min.heartbeat.interval.ms": "500",
    "group.consumer.session.timeout.ms": "6000",
    "group.consumer.min.session.timeout.ms": "3000",
}


def _consumer(bootstrap: str, group: str, assigned: dict[str, set[int]], name: str,
              topics: list[str], **extra: Any) -> Any:
    consumer = confluent_kafka.Consumer({
        "bootstrap.servers": bootstrap, "group.id": group, "group.protocol": "consumer",
        "auto.offset.reset": "earliest", "enable.auto.commit": False, **extra,
    })
    assigned[name] = set()

    def on_assign(_: Any, parts: list[Any]) -> None:
        assigned[name].update(p.partition for p in parts)

    def on_revoke(_: Any, parts: list[Any]) -> None:
        assigned[name].difference_update(p.partition for p in parts)

    consumer.subscribe(topics, on_assign=on_assign, on_revoke=on_revoke)
    return consumer


def _commit(consumer: Any, message: Any) -> None:
    """A synchronous commit, retried on STALE_MEMBER_EPOCH (113) the way Kafka's own
    consumer retries ``commitSync``: a commit sent while the member's epoch is being bumped
    carries the old epoch, and Kafka (as kcoord) refuses it as stale; librdkafka learns the
    new epoch from its next heartbeat, in its own thread. Bounded at about 2 s; any other
    error, or a stale epoch that persists, fails the test."""
    for _ in range(80):
        try:
            consumer.commit(message, asynchronous=False)
            return
        except confluent_kafka.KafkaException as exc:
            if exc.args[0].code() != confluent_kafka.KafkaError.STALE_MEMBER_EPOCH:
                raise
        time.sleep(0.025)
    consumer.commit(message, asynchronous=False)


def _produce(bootstrap: str, topic: str, count: int, partitions: int) -> None:
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    failed: list[Any] = []

    def delivered(error: Any, _: Any) -> None:
        if error is not None:
            failed.append(error)

    for i in range(count):
        producer.produce(topic, value=str(i).encode(), partition=i % partitions,
                         on_delivery=delivered)
    assert producer.flush(20) == 0
    assert failed == []


def test_three_consumers_consume_every_record_once_and_commit(
    start_kcoord: Any,
) -> None:
    server = start_kcoord(topics=["t12:12"], config=FAST)
    bootstrap = server.bootstrap
    _produce(bootstrap, "t12", 240, 12)
    assigned: dict[str, set[int]] = {}
    seen: dict[bytes, list[str]] = {}
    consumers = {n: _consumer(bootstrap, "g848", assigned, n, ["t12"]) for n in "abc"}
    try:
        def poll_all() -> bool:
            for name, consumer in consumers.items():
                message = consumer.poll(0.05)
                if message is not None and not message.error():
                    seen.setdefault(message.value(), []).append(name)
                    _commit(consumer, message)
            return len(seen) == 240 and exact_cover(assigned.values(), set(range(12))) and all(
                len(parts) == 4 for parts in assigned.values())

        wait_until(poll_all, timeout=30, interval=0)
        assert all(len(names) == 1 for names in seen.values())
        assert sorted(len(parts) for parts in assigned.values()) == [4, 4, 4]
        admin = confluent_admin.AdminClient({"bootstrap.servers": bootstrap})
        (future,) = admin.describe_consumer_groups(["g848"]).values()
        description = future.result(timeout=10)
        assert description.type == confluent_kafka.ConsumerGroupType.CONSUMER
        assert len(description.members) == 3
        committed = consumers["a"].committed(
            [confluent_kafka.TopicPartition("t12", p) for p in range(12)], timeout=10)
        assert sum(tp.offset for tp in committed) == 240
    finally:
        for consumer in consumers.values():
            consumer.close()


@pytest.mark.parametrize("assignor", ["range", "uniform"])
def test_remote_assignor_is_honoured(start_kcoord: Any, assignor: str) -> None:
    server = start_kcoord(topics=["r4:4"], config=FAST)
    assigned: dict[str, set[int]] = {}
    consumers = [
        _consumer(server.bootstrap, f"g-{assignor}", assigned, name, ["r4"],
                  **{"group.remote.assignor": assignor})
        for name in ("a", "b")
    ]
    try:
        def settled() -> bool:
            for consumer in consumers:
                consumer.poll(0.05)
            return exact_cover(assigned.values(), set(range(4))) and all(
                len(parts) == 2 for parts in assigned.values())

        wait_until(settled, timeout=30, interval=0)
        assert sorted(len(p) for p in assigned.values()) == [2, 2]
        admin = confluent_admin.AdminClient({"bootstrap.servers": server.bootstrap})
        (future,) = admin.describe_consumer_groups([f"g-{assignor}"]).values()
        description = future.result(timeout=10)
        assert description.partition_assignor == assignor
        if assignor == "range":  # contiguous ranges
            assert sorted(sorted(p) for p in assigned.values()) == [[0, 1], [2, 3]]
    finally:
        for consumer in consumers:
            consumer.close()


def test_regex_subscription_picks_up_a_topic_created_later(start_kcoord: Any) -> None:
    server = start_kcoord(topics=["ev-a:2"], config=FAST)
    bootstrap = server.bootstrap
    consumer = confluent_kafka.Consumer({
        "bootstrap.servers": bootstrap, "group.id": "g-regex", "group.protocol": "consumer",
        "auto.offset.reset": "earliest", "topic.metadata.refresh.interval.ms": 500,
    })
    topics_seen: set[str] = set()
    consumer.subscribe(["^ev-.*"], on_assign=lambda _, parts: topics_seen.update(
        p.topic for p in parts))
    try:
        wait_until(lambda: consumer.poll(0.05) is None and "ev-a" in topics_seen, timeout=30,
                   interval=0)
        admin = confluent_admin.AdminClient({"bootstrap.servers": bootstrap})
        for future in admin.create_topics([confluent_admin.NewTopic("ev-b", 2)]).values():
            future.result(timeout=10)
        _produce(bootstrap, "ev-b", 4, 2)
        got: list[str] = []

        def consumed_from_new_topic() -> bool:
            message = consumer.poll(0.05)
            if message is not None and not message.error():
                got.append(message.topic())
            return "ev-b" in got

        wait_until(consumed_from_new_topic, timeout=30, interval=0)
        assert "ev-b" in topics_seen
    finally:
        consumer.close()


def _poll_until(consumers: list[Any], condition: Any, timeout: float = 30,
                what: Any = "") -> None:
    def step() -> bool:
        for consumer in consumers:
            consumer.poll(0.02)
        return bool(condition())

    try:
        wait_until(step, timeout=timeout, interval=0)
    except AssertionError as exc:
        raise AssertionError(f"{exc}: {what() if callable(what) else what}") from None


def test_join_and_leave_rebalance_incrementally_without_overlap(
    start_kcoord: Any,
) -> None:
    """Every assignment callback sees each partition owned by at most one consumer, and the
    group always comes back to an exact cover of the 12 partitions."""
    server = start_kcoord(topics=["t12:12"], config=FAST)
    assigned: dict[str, set[int]] = {}
    overlaps: list[str] = []

    def check() -> None:
        owners = [p for parts in assigned.values() for p in parts]
        if len(owners) != len(set(owners)):
            overlaps.append(repr(assigned))

    def consumer(name: str) -> Any:
        c = confluent_kafka.Consumer({
            "bootstrap.servers": server.bootstrap, "group.id": "g-inc",
            "group.protocol": "consumer", "auto.offset.reset": "earliest"})
        assigned[name] = set()

        def on_assign(_: Any, parts: list[Any]) -> None:
            assigned[name].update(p.partition for p in parts)
            check()

        def on_revoke(_: Any, parts: list[Any]) -> None:
            assigned[name].difference_update(p.partition for p in parts)
            check()

        c.subscribe(["t12"], on_assign=on_assign, on_revoke=on_revoke)
        return c

    # a holds all 12 partitions before b joins. Started together, a may heartbeat with an
    # empty owned list while its first assignment still waits in its queue for poll(): the
    # server then reads that as "revoked" (Kafka's CurrentAssignmentBuilder does the same)
    # and b's callback may run before a's. Overlap is judged from a stable start.
    running = {"a": consumer("a")}
    try:
        _poll_until(list(running.values()), lambda: len(assigned["a"]) == 12)
        running["b"] = consumer("b")
        _poll_until(list(running.values()),
                    lambda: exact_cover(assigned.values(), set(range(12)))
                    and len(assigned["b"]) == 6)
        kept_by_a = set(assigned["a"])
        running["c"] = consumer("c")
        _poll_until(list(running.values()),
                    lambda: exact_cover(assigned.values(), set(range(12)))
                    and len(assigned["c"]) == 4)
        # incremental: a only lost partitions, it gained none
        assert assigned["a"] <= kept_by_a
        running.pop("b").close()
        assigned.pop("b")
        _poll_until(list(running.values()),
                    lambda: exact_cover(assigned.values(), set(range(12)))
                    and len(assigned["c"]) == 6)
        assert sorted(len(p) for p in assigned.values()) == [6, 6]
        assert overlaps == []
    finally:
        for c in running.values():
            c.close()


def test_static_member_restarts_with_its_partitions(start_kcoord: Any) -> None:
    server = start_kcoord(topics=["s6:6"], config=FAST)
    assigned: dict[str, set[int]] = {}
    static = {"group.instance.id": "worker-1"}
    first = _consumer(server.bootstrap, "g-static", assigned, "s1", ["s6"], **static)
    other = _consumer(server.bootstrap, "g-static", assigned, "o", ["s6"])
    try:
        _poll_until([first, other], lambda: exact_cover(assigned.values(), set(range(6)))
                    and len(assigned["o"]) == 3)
        before = set(assigned["s1"])
        epoch_before = describe_members(server.bootstrap, "g-static")[0]
        assert epoch_before >= 2
        first.close()  # a static member leaves temporarily (epoch -2): no rebalance
        assigned.pop("s1")
        second = _consumer(server.bootstrap, "g-static", assigned, "s2", ["s6"], **static)
        try:
            _poll_until([second, other], lambda: assigned["s2"] == before,
                        what=lambda: f"{before=} {assigned=}")
            assert assigned["o"].isdisjoint(before)
            assert describe_members(server.bootstrap, "g-static")[0] == epoch_before
        finally:
            second.close()
    finally:
        other.close()


def test_classic_group_runs_beside_a_consumer_protocol_group(start_kcoord: Any) -> None:
    from kafka import KafkaConsumer

    server = start_kcoord(topics=["mix:4"], config=FAST)
    _produce(server.bootstrap, "mix", 40, 4)
    assigned: dict[str, set[int]] = {}
    modern = _consumer(server.bootstrap, "g-modern", assigned, "m", ["mix"])
    classic = KafkaConsumer(bootstrap_servers=server.bootstrap, group_id="g-classic",
                            auto_offset_reset="earliest", session_timeout_ms=6000,
                            heartbeat_interval_ms=500)
    # kafka-python joins with whatever metadata it has: let it know the topic first, or its
    # first assignment can be empty ("No partition metadata for topic mix").
    wait_until(lambda: classic.partitions_for_topic("mix") == {0, 1, 2, 3}, timeout=20)
    classic.subscribe(["mix"])
    try:
        got_modern: list[bytes] = []
        got_classic: list[bytes] = []

        def both_consumed() -> bool:
            message = modern.poll(0.05)
            if message is not None and not message.error():
                got_modern.append(message.value())
            for records in classic.poll(timeout_ms=50).values():
                got_classic.extend(r.value for r in records)
            return len(got_modern) == 40 and len(got_classic) == 40

        try:
            wait_until(both_consumed, timeout=30, interval=0)
        except AssertionError:
            raise AssertionError(f"consumed {len(got_modern)} (consumer protocol) and "
                                 f"{len(got_classic)} (classic) of 40") from None
        admin = confluent_admin.AdminClient({"bootstrap.servers": server.bootstrap})
        listed = admin.list_consumer_groups().result(timeout=10)
        types = {g.group_id: g.type for g in listed.valid}
        assert types["g-modern"] == confluent_kafka.ConsumerGroupType.CONSUMER
        assert types["g-classic"] == confluent_kafka.ConsumerGroupType.CLASSIC
    finally:
        modern.close()
        classic.close()


@pytest.mark.slow  # SIGKILLs and restarts of real servers: CI's restart step
def test_members_keep_ids_epochs_and_partitions_across_sigkill(
    start_kcoord: Any, tmp_path: Any
) -> None:
    """kcoord is SIGKILLed under a Stable consumer group and restarted on the same port and
    data directory: the members go on heartbeating with the same ids and epochs, keep their
    partitions, and the group epoch does not move (no rebalance)."""
    data = tmp_path / "kip848-restart"
    server = start_kcoord(data_dir=data, topics=["r6:6"], config=FAST)
    port = server.port
    assigned: dict[str, set[int]] = {}
    consumers = [_consumer(server.bootstrap, "g-restart", assigned, n, ["r6"]) for n in "ab"]
    try:
        _poll_until(consumers, lambda: exact_cover(assigned.values(), set(range(6)))
                    and all(len(p) == 3 for p in assigned.values()))
        before = describe_members(server.bootstrap, "g-restart")
        snapshot = {name: set(parts) for name, parts in assigned.items()}
        server.kill()
        restarted = start_kcoord(data_dir=data, topics=["r6:6"], config=FAST, port=port)
        deadline = time.monotonic() + 4  # several heartbeat intervals against the new process
        while time.monotonic() < deadline:
            for consumer in consumers:
                consumer.poll(0.05)
        assert describe_members(restarted.bootstrap, "g-restart") == before
        assert assigned == snapshot
    finally:
        for consumer in consumers:
            consumer.close()


def describe_members(bootstrap: str, group: str) -> tuple[int, list[tuple[str, int]]]:
    """(group epoch, sorted (member id, member epoch)) from a raw ConsumerGroupDescribe."""
    response = raw_request(bootstrap, 69, 1, {
        "group_ids": [group], "include_authorized_operations": False})
    (described,) = response.groups
    assert described.error_code == 0
    return described.group_epoch, sorted((m.member_id, m.member_epoch)
                                         for m in described.members)


@pytest.mark.slow  # SIGKILLs and restarts of real servers: CI's restart step
def test_a_sigkilled_member_is_fenced_and_its_partitions_move(start_kcoord: Any) -> None:
    """A consumer process dies (SIGKILL): after its session timeout (6 s here) the
    coordinator fences it and the survivor takes its partitions, with no overlap on the way."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    server = start_kcoord(topics=["k4:4"], config=FAST)
    assigned: dict[str, set[int]] = {}
    survivor = _consumer(server.bootstrap, "g-kill", assigned, "s", ["k4"])
    script = Path(__file__).with_name("ck_consumer_proc.py")
    victim = subprocess.Popen([sys.executable, str(script), server.bootstrap, "g-kill", "k4"],
                              stdout=subprocess.PIPE, text=True)
    lines: list[set[int]] = [set()]

    def read_victim() -> None:  # a thread: select() and a buffered pipe do not mix
        assert victim.stdout is not None
        for line in victim.stdout:
            lines.append(set(json.loads(line)["assignment"]))

    import threading

    reader = threading.Thread(target=read_victim, daemon=True)
    reader.start()

    def victim_owns() -> set[int]:
        return lines[-1]

    try:
        def balanced() -> bool:
            survivor.poll(0.02)
            owned = [*assigned["s"], *victim_owns()]
            return len(owned) == 4 == len(set(owned)) and len(assigned["s"]) == 2

        wait_until(balanced, timeout=30, interval=0, what="two members with two each")
        victim.kill()
        victim.wait(5)
        # fenced after the 6 s session: the survivor ends with all four
        _poll_until([survivor], lambda: assigned["s"] == set(range(4)), timeout=20)
    finally:
        if victim.poll() is None:
            victim.kill()
            victim.wait(5)
        if victim.stdout is not None:
            victim.stdout.close()
        survivor.close()
