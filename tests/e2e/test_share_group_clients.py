"""confluent-kafka's ``ShareConsumer`` (KIP-932) against a real kcoord process: members
join a share group through ShareGroupHeartbeat, several of them share the one partition of
a topic, the group is listed with the share type and described with its members (also by
``kcoord groups``), a closed consumer leaves, and the group survives a restart of kcoord.

confluent-kafka 2.16's AdminClient has no share group calls (its ``list_consumer_groups``
keeps only groups of protocol type "consumer" or "", as librdkafka filters them, against
Kafka too), so listing and describing go through raw ListGroups / ShareGroupDescribe
requests."""

from __future__ import annotations

from typing import Any

import pytest
from e2e_support import raw_request, wait_until

from wire.constants import ApiKey

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
GROUP = "queue-group"


def groups_cli(argv: list[str]) -> list[str]:
    """``kcoord groups ...``'s output lines (run in this process)."""
    import contextlib
    import io

    from coordinator.groups_cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(argv) == 0
    return out.getvalue().splitlines()


def _share_consumer(bootstrap: str) -> Any:
    consumer = confluent_kafka.ShareConsumer({
        "bootstrap.servers": bootstrap, "group.id": GROUP, "log_level": 0,
    })
    consumer.subscribe(["sq"])
    return consumer


def _describe(bootstrap: str) -> Any:
    answer = raw_request(bootstrap, ApiKey.SHARE_GROUP_DESCRIBE, 1,
                         {"group_ids": [GROUP], "include_authorized_operations": False})
    (group,) = answer.groups
    return group


def _members_with_partition_zero(bootstrap: str, count: int, consumers: list[Any]) -> Any:
    for consumer in consumers:
        consumer.poll(0.05)  # the client's heartbeats run on its own thread; keep it busy
    group = _describe(bootstrap)
    if group.error_code != 0 or len(group.members) != count:
        return None
    for member in group.members:
        parts = [(tp.topic_name, list(tp.partitions))
                 for tp in member.assignment.topic_partitions]
        if parts != [("sq", [0])]:
            return None
    return group


def test_share_consumers_join_share_a_partition_and_leave(start_kcoord: Any) -> None:
    server = start_kcoord(topics=["sq:1"], config=FAST)
    bootstrap = server.bootstrap
    consumers = [_share_consumer(bootstrap) for _ in range(3)]
    try:
        group = wait_until(lambda: _members_with_partition_zero(bootstrap, 3, consumers),
                           timeout=30, what="three share members, each assigned sq-0")
        assert (group.group_state, group.assignor_name) == ("Stable", "simple")
        assert all(m.member_epoch > 0 for m in group.members)
        assert len({m.member_id for m in group.members}) == 3  # ids the clients made

        listed = raw_request(bootstrap, ApiKey.LIST_GROUPS, 5,
                             {"states_filter": [], "types_filter": ["share"]})
        assert [(g.group_id, g.protocol_type, g.group_type) for g in listed.groups] == [
            (GROUP, "share", "share")]
        consumer_only = raw_request(bootstrap, ApiKey.LIST_GROUPS, 5,
                                    {"states_filter": [], "types_filter": ["consumer"]})
        assert list(consumer_only.groups) == []

        assert groups_cli(["list", "--bootstrap", bootstrap]) == [GROUP]
        header, *rows = groups_cli(["describe", GROUP, "--bootstrap", bootstrap])
        assert header.split() == ["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS",
                                  "ASSIGNMENT"]
        members = rows[:rows.index("")] if "" in rows else rows  # then the share partitions
        assert len(members) == 3 and all(r.split()[-2:] == ["1", "sq:0"] for r in members)

        consumers.pop().close()  # leaves with epoch -1
        wait_until(lambda: _members_with_partition_zero(bootstrap, 2, consumers),
                   timeout=30, what="two share members after a close")
    finally:
        for consumer in consumers:
            consumer.close()
    left = wait_until(lambda: not (g := _describe(bootstrap)).members and g, timeout=30,
                      what="every member gone")
    assert left.group_state == "Empty"

    server.kill()
    restarted = start_kcoord(data_dir=server.data_dir, topics=["sq:1"], config=FAST)
    again = _describe(restarted.bootstrap)
    assert (again.error_code, again.group_epoch, again.group_state) == (
        0, left.group_epoch, "Empty")

