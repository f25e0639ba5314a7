"""Raw frames of the share-group offsets admin APIs (DescribeShareGroupOffsets 90,
AlterShareGroupOffsets 91, DeleteShareGroupOffsets 92) and the ShareGroupHeartbeat that
makes a group, for the server tests."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

DESCRIBE_OFFSETS, ALTER_OFFSETS, DELETE_OFFSETS, SHARE_HEARTBEAT = 90, 91, 92, 76

__all__ = [
    "ALTER_OFFSETS",
    "DELETE_OFFSETS",
    "DESCRIBE_OFFSETS",
    "SHARE_HEARTBEAT",
    "alter_body",
    "alter_request",
    "delete_body",
    "delete_request",
    "describe_body",
    "describe_request",
    "heartbeat_body",
    "heartbeat_request",
    "offsets_of",
]

Request = tuple[int, int, dict[str, Any]]
"""(API key, version, body): a client's ``request(*request)``."""


def heartbeat_body(group: str, member: str, epoch: int, topics: Sequence[str] = ("t",)) -> dict[
        str, Any]:
    """A ShareGroupHeartbeat v1 body (joining at epoch 0, leaving at -1)."""
    return {"group_id": group, "member_id": member, "member_epoch": epoch, "rack_id": None,
            "subscribed_topic_names": list(topics) if epoch == 0 else None}


def describe_body(group: str, topics: Mapping[str, Sequence[int]] | None) -> dict[str, Any]:
    """A DescribeShareGroupOffsets body for one group (None: every partition)."""
    return {"groups": [{"group_id": group, "topics": None if topics is None else [
        {"topic_name": name, "partitions": list(parts)} for name, parts in topics.items()]}]}


def alter_body(group: str, offsets: Mapping[str, Mapping[int, int]]) -> dict[str, Any]:
    """An AlterShareGroupOffsets body: topic -> partition -> start offset."""
    return {"group_id": group, "topics": [
        {"topic_name": name, "partitions": [
            {"partition_index": p, "start_offset": o} for p, o in parts.items()]}
        for name, parts in offsets.items()]}


def delete_body(group: str, topics: Sequence[str]) -> dict[str, Any]:
    """A DeleteShareGroupOffsets body."""
    return {"group_id": group, "topics": [{"topic_name": name} for name in topics]}


def heartbeat_request(group: str, member: str, epoch: int,
                      topics: Sequence[str] = ("t",)) -> Request:
    """ShareGroupHeartbeat v1 (:func:`heartbeat_body`)."""
    return SHARE_HEARTBEAT, 1, heartbeat_body(group, member, epoch, topics)


def describe_request(group: str, topics: Mapping[str, Sequence[int]] | None,
                     version: int = 1) -> Request:
    """DescribeShareGroupOffsets (:func:`describe_body`)."""
    return DESCRIBE_OFFSETS, version, describe_body(group, topics)


def alter_request(group: str, offsets: Mapping[str, Mapping[int, int]]) -> Request:
    """AlterShareGroupOffsets v0 (:func:`alter_body`)."""
    return ALTER_OFFSETS, 0, alter_body(group, offsets)


def delete_request(group: str, topics: Sequence[str]) -> Request:
    """DeleteShareGroupOffsets v0 (:func:`delete_body`)."""
    return DELETE_OFFSETS, 0, delete_body(group, topics)


def offsets_of(response: Any) -> dict[tuple[str, int], tuple[int, int]]:
    """(topic, partition) -> (start offset, lag) of a one-group describe answer (lag -1 in
    v0); every partition's error is NONE."""
    (group,) = response.groups
    assert group.error_code == 0, group
    found = {}
    for topic in group.topics:
        for p in topic.partitions:
            assert p.error_code == 0, p
            found[(topic.topic_name, p.partition_index)] = (p.start_offset,
                                                           getattr(p, "lag", -1))
    return found
