"""A share group (KIP-932) as the test double and its HTTP control API show it: epochs, and
per member its epoch, subscription and assignment as sorted (topic, partition) pairs;
``generation_id`` is the group epoch, as for a consumer group."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from coordinator.core.share_group.group import SHARE_GROUP_TYPE, SHARE_PROTOCOL_TYPE, ShareGroup
from coordinator.core.topics_image import TopicsImage

__all__ = ["describe_share_group"]


def describe_share_group(group: ShareGroup, image: TopicsImage) -> dict[str, Any]:
    """The share group as a JSON-friendly snapshot."""

    def pairs(partitions: Mapping[Any, frozenset[int]]) -> list[tuple[str, int]]:
        return sorted((image.by_id.get(t, str(t)), p) for t, ps in partitions.items()
                      for p in ps)

    return {
        "group_id": group.group_id,
        "type": SHARE_GROUP_TYPE,
        "state": group.state,
        "generation_id": group.group_epoch,
        "group_epoch": group.group_epoch,
        "assignment_epoch": group.assignment_epoch,
        "protocol_type": SHARE_PROTOCOL_TYPE,
        "members": [
            {
                "member_id": member.member_id,
                "client_id": member.client_id,
                "member_epoch": member.member_epoch,
                "subscribed_topics": list(member.subscribed_topic_names),
                "assignment": pairs(member.assigned),
                "target_assignment": pairs(group.target_of(member.member_id)),
            }
            for member in group.members.values()
        ],
    }
