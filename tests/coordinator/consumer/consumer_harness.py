"""The coordinator harness with the consumer group protocol's requests: a topics image,
ConsumerGroupHeartbeat / ConsumerGroupDescribe calls, and a check that the live consumer
groups are what a replay of the appended records rebuilds."""

from __future__ import annotations

import sys
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import dataclasses

from harness import KAFKA_TEST_CONFIG, Harness, ctx

from coordinator.config import CoordinatorConfig
from coordinator.core.consumer.describe import handle_consumer_group_describe
from coordinator.core.consumer.group import ConsumerGroup
from coordinator.core.consumer.heartbeat import handle_consumer_group_heartbeat
from coordinator.core.topics_image import TopicsImage
from storage.records import RebalanceEventKey

FOO = uuid.UUID(int=0xF00)
BAR = uuid.UUID(int=0xBA4)
GROUP = "fooup"
CONFIG = dataclasses.replace(
    KAFKA_TEST_CONFIG,
    group_consumer_session_timeout_ms=45_000,
    group_consumer_heartbeat_interval_ms=5_000,
)


class ConsumerHarness(Harness):
    """Harness + topics + consumer group requests."""

    def __init__(self, config: CoordinatorConfig = CONFIG, **topics: tuple[uuid.UUID, int]):
        super().__init__(config=config)
        self.version = 0
        self.set_topics(**(topics or {"foo": (FOO, 6), "bar": (BAR, 3)}))

    def set_topics(self, **topics: tuple[uuid.UUID, int]) -> None:
        """Replace the topics image (as the broker does when topics change)."""
        self.version += 1
        self.topics = topics
        self.coordinator.topics_image = TopicsImage(
            ((name, tid, n) for name, (tid, n) in topics.items()), version=self.version
        )

    def crash_and_replay(self) -> None:
        image = self.coordinator.topics_image
        super().crash_and_replay()
        self.coordinator.topics_image = image

    def consumer_heartbeat(
        self,
        member_id: str,
        member_epoch: int,
        *,
        group_id: str = GROUP,
        instance_id: str | None = None,
        rack_id: str | None = None,
        rebalance_timeout_ms: int = -1,
        subscribed_topic_names: list[str] | None = None,
        subscribed_topic_regex: str | None = None,
        server_assignor: str | None = None,
        topic_partitions: list[tuple[uuid.UUID, list[int]]] | None = None,
        api_version: int = 1,
    ) -> Any:
        """One ConsumerGroupHeartbeat; returns the answer."""
        request = {
            "group_id": group_id,
            "member_id": member_id,
            "member_epoch": member_epoch,
            "instance_id": instance_id,
            "rack_id": rack_id,
            "rebalance_timeout_ms": rebalance_timeout_ms,
            "subscribed_topic_names": subscribed_topic_names,
            "subscribed_topic_regex": subscribed_topic_regex,
            "server_assignor": server_assignor,
            "topic_partitions": None if topic_partitions is None else [
                {"topic_id": t, "partitions": list(p)} for t, p in topic_partitions
            ],
        }
        token = self.token()
        self.apply(handle_consumer_group_heartbeat(
            self.coordinator, ctx(api_version), request, token, self.now))  # type: ignore[arg-type]
        return self.reply(token)

    def join(self, member_id: str, topics: list[str], **kw: Any) -> Any:
        """A joining heartbeat (epoch 0) subscribing to ``topics``."""
        kw.setdefault("rebalance_timeout_ms", 300_000)
        return self.consumer_heartbeat(member_id, 0, subscribed_topic_names=topics,
                                       topic_partitions=[], **kw)

    def describe(self, *group_ids: str, api_version: int = 1) -> Any:
        """ConsumerGroupDescribe."""
        token = self.token()
        self.apply(handle_consumer_group_describe(
            self.coordinator, ctx(api_version),
            {"group_ids": list(group_ids), "include_authorized_operations": True},
            token, self.now))
        return self.reply(token)

    def consumer_group(self, group_id: str = GROUP) -> ConsumerGroup:
        group = self.coordinator.consumer_groups.get(group_id)
        assert group is not None, group_id
        return group

    def assert_live_equals_replay(self, group_id: str = GROUP) -> None:
        """The live group is exactly what its appended records rebuild."""
        live = self.coordinator.consumer_groups.get(group_id)
        replayed = self.coordinator.replayed_consumer_group(group_id)
        assert (live is None) == (replayed is None)
        if live is None or replayed is None:
            return
        assert snapshot(live) == snapshot(replayed)


def assert_no_partition_has_two_owners(group: ConsumerGroup | None) -> None:
    """No partition is assigned to, or pending revocation by, two members."""
    if group is None:
        return
    seen: set[tuple[uuid.UUID, int]] = set()
    for member in group.members.values():
        current = member.current
        for parts in (current.assigned_partitions, current.partitions_pending_revocation):
            for topic_id, partitions in parts.items():
                for p in partitions:
                    assert (topic_id, p) not in seen, (topic_id, p)
                    seen.add((topic_id, p))


def snapshot(group: ConsumerGroup) -> Any:
    """A comparable view of a consumer group."""
    return (
        group.group_epoch, group.assignment_epoch, group.metadata_hash,
        {mid: (m.metadata_value(), m.current) for mid, m in group.members.items()},
        {mid: dict(t) for mid, t in group.target.items()},
        dict(group.static_members), group.ledger.held(),
    )


def assignment(answer: Any) -> dict[uuid.UUID, list[int]] | None:
    """The answer's assignment as topic id -> sorted partitions (None if absent)."""
    if answer.get("assignment") is None:
        return None
    return {tp["topic_id"]: sorted(tp["partitions"])
            for tp in answer.assignment["topic_partitions"]}


def owned(answer: Any) -> list[tuple[uuid.UUID, list[int]]]:
    """The assignment of an answer, as the next heartbeat's TopicPartitions."""
    got = assignment(answer) or {}
    return list(got.items())


def records_since(h: Harness, start: int) -> list[Any]:
    """The records appended since ``start``, without kcoord's RebalanceEvent records."""
    return [r for r in h.records[start:] if not isinstance(r.key, RebalanceEventKey)]
