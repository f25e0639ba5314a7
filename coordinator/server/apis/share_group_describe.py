"""ShareGroupDescribe (77): describe share groups (KIP-932; the group core's
``coordinator/core/share_group/describe.py``), topic names read from the broker's topics."""

from __future__ import annotations

from coordinator.core.share_group.describe import handle_share_group_describe
from coordinator.server.api_support import WithCurrentTopics
from coordinator.server.route import Acl, AclOperation, EachKey, Entries, ResourceType, Route
from coordinator.txn.placement import OFFSETS_TOPIC
from wire.constants import ApiKey

__all__ = ["ROUTE", "share_group_describe"]

share_group_describe = WithCurrentTopics(
    handle_share_group_describe, "share_group_describe",
    "ShareGroupDescribe (topic names from the broker's topics).",
)


ROUTE = Route(
    ApiKey.SHARE_GROUP_DESCRIBE,
    share_group_describe,
    acl=(Acl(ResourceType.GROUP, AclOperation.DESCRIBE, entries=(Entries("group_ids", ""),)),),
    routing=EachKey(OFFSETS_TOPIC, "group_ids", "groups", "group_id"),
    read_only=True,
    core_handler=handle_share_group_describe,
)
