"""Groups and transactions of a running server as the test double and its HTTP control API
show them: JSON-friendly snapshots of any group type (classic, consumer, share), with
committed offsets, log-end offsets and lag (a share group: its share partitions' start
offsets and lag), and the transaction coordinator's ids."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from coordinator.core.consumer.group import ConsumerGroup
from coordinator.core.coordinator import GroupCoordinator, GroupView
from coordinator.core.topics_image import TopicsImage
from coordinator.share.offsets import PartitionSummary
from coordinator.testing.share_view import describe_share_group
from wire.consumer_protocol import decode_assignment

__all__ = ["describe_any", "describe_consumer_group", "describe_transactions", "describe_view",
           "describe_with_offsets", "group_offsets", "join_waits", "share_offsets"]


def group_offsets(server: Any, group_id: str) -> list[dict[str, Any]]:
    """The group's committed offsets with each partition's log-end offset and lag (None
    where the topic or partition is unknown to this broker)."""
    committed = server.groups.coordinator.committed_offsets(group_id)
    out = []
    for (topic, partition), value in sorted(committed.items()):
        log = server.topics.partition(topic, partition) if server.topics is not None else None
        end = None if log is None else log.high_watermark
        out.append({"topic": topic, "partition": partition, "committed": value.offset,
                    "log_end_offset": end,
                    "lag": None if end is None else max(end - value.offset, 0)})
    return out


def share_offsets(server: Any, group_id: str) -> list[dict[str, Any]]:
    """A share group's share partitions with state: start offset, log-end offset and lag
    (records neither acknowledged nor archived from the start to the log end, KIP-1226),
    as DescribeShareGroupOffsets reports them."""
    shares = server.shares
    if shares is None:
        return []
    out = []
    for key, log in shares.manager.coordinator.store.partitions.items():
        if key.group_id != group_id:
            continue
        topic = server.topics.by_id(key.topic_id) if server.topics is not None else None
        partition = None if topic is None else topic.partition(key.partition)
        end = None if partition is None else partition.high_watermark
        summary = PartitionSummary.of(log)
        out.append({"topic": str(key.topic_id) if topic is None else topic.name,
                    "partition": key.partition, "start_offset": summary.start_offset,
                    "log_end_offset": end, "lag": None if end is None else summary.lag(end)})
    return sorted(out, key=lambda o: (o["topic"], o["partition"]))


def describe_with_offsets(server: Any, group_id: str) -> dict[str, Any] | None:
    """``describe_any`` plus the group's ``offsets`` (committed, log-end offset, lag) and,
    for a share group, its ``share_offsets``."""
    described = describe_any(server.groups.coordinator, group_id)
    if described is None:
        return None
    described = {**described, "offsets": group_offsets(server, group_id)}
    if described.get("type") == "share":
        described["share_offsets"] = share_offsets(server, group_id)
    return described


def describe_transactions(server: Any) -> list[dict[str, Any]]:
    """The transaction coordinator's ids as JSON-friendly snapshots (empty without one)."""
    transactions = server.transactions
    if transactions is None:
        return []
    coordinator = transactions.coordinator
    staged = server.groups.coordinator.store.pending_txn
    out: list[dict[str, Any]] = []
    for txn_id in coordinator.transactional_ids():
        metadata = coordinator.transaction_metadata(txn_id)
        if metadata is None:
            continue
        offsets = staged.get(metadata.producer_id, {})
        out.append({
            "transactional_id": txn_id,
            "state": metadata.state.kafka_name,
            "producer_id": metadata.producer_id,
            "producer_epoch": metadata.producer_epoch,
            "timeout_ms": metadata.txn_timeout_ms,
            "partitions": sorted([tp.topic, tp.partition] for tp in metadata.topic_partitions),
            "staged_offsets": {
                group: sorted([t, p, v.offset] for (t, p), v in by_tp.items())
                for group, by_tp in sorted(offsets.items())
            },
        })
    return out


def describe_any(coordinator: GroupCoordinator, group_id: str) -> dict[str, Any] | None:
    """Any group type (classic, consumer, share) as a JSON-friendly snapshot; None if
    unknown."""
    view = coordinator.describe(group_id)
    if view is not None:
        return describe_view(view)
    group = coordinator.consumer_group(group_id)
    if group is not None:
        return describe_consumer_group(group, coordinator.topics_image)
    share_group = coordinator.share_group(group_id)
    return None if share_group is None else describe_share_group(share_group,
                                                                  coordinator.topics_image)


def describe_consumer_group(group: ConsumerGroup, image: TopicsImage) -> dict[str, Any]:
    """A consumer group (KIP-848): epochs, and per member its epoch, reconciliation state,
    assignment and target as sorted (topic, partition) pairs. ``generation_id`` is the
    group epoch."""

    def pairs(partitions: Mapping[Any, frozenset[int]]) -> list[tuple[str, int]]:
        return sorted((image.by_id.get(t, str(t)), p) for t, ps in partitions.items()
                      for p in ps)

    return {
        "group_id": group.group_id,
        "type": "consumer",
        "state": group.state,
        "generation_id": group.group_epoch,
        "group_epoch": group.group_epoch,
        "assignment_epoch": group.assignment_epoch,
        "protocol_type": "consumer",
        "members": [
            {
                "member_id": member.member_id,
                "group_instance_id": member.instance_id,
                "client_id": member.client_id,
                "member_epoch": member.member_epoch,
                "member_state": member.current.state.name,
                "assignment": pairs(member.current.assigned_partitions),
                "target_assignment": pairs(group.target_of(member.member_id)),
            }
            for member in group.members.values()
        ],
    }


def describe_view(view: GroupView) -> dict[str, Any]:
    """A JSON-friendly group snapshot, assignments decoded for consumer groups."""
    return {
        "group_id": view.group_id,
        "type": "classic",
        "state": view.state,
        "generation_id": view.generation_id,
        "protocol_type": view.protocol_type,
        "protocol": view.protocol_name,
        "leader": view.leader_id,
        "members": [
            {
                "member_id": m.member_id,
                "group_instance_id": m.group_instance_id,
                "client_id": m.client_id,
                "assignment": _decode_assignment(m.assignment),
            }
            for m in view.members
        ],
    }


def _decode_assignment(data: bytes) -> list[tuple[str, int]] | None:
    if not data:
        return []
    try:
        assignment = decode_assignment(data)
    except Exception:
        return None
    return sorted((topic, p) for topic, partitions in assignment for p in partitions)


def join_waits(coordinator: GroupCoordinator, now_ms: int) -> list[str]:
    """Each classic group preparing a rebalance: the members whose JoinGroup it still waits
    for, and how long the join phase lasts without them (the largest rebalance timeout,
    a Java consumer's ``max.poll.interval.ms``). A member whose client heartbeats (answered
    REBALANCE_IN_PROGRESS) and never rejoins -- a kafka-python consumer left open and not
    polled -- keeps every other member without partitions that long, in Kafka too."""
    out = []
    for group_id, group in coordinator.groups.items():
        if group.state.value != "PreparingRebalance":
            continue
        waiting = sorted(m for m, member in group.members.items() if not member.awaiting_join)
        if waiting:
            out.append(f"group {group_id!r} waits for the JoinGroup of {waiting}, at most "
                       f"{max(group.join_deadline - now_ms, 0) / 1000:.1f} s more")
    return out
