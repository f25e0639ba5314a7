"""ShareGroupHeartbeat (76): a share group member joins, heartbeats, gets its assignment and
leaves (KIP-932; the group core's ``coordinator/core/share_group/heartbeat.py``), against the
broker's current topics."""

from __future__ import annotations

from coordinator.core.share_group.heartbeat import handle_share_group_heartbeat
from coordinator.server.api_support import WithCurrentTopics
from coordinator.server.route import Acl, AclOperation, OneKey, ResourceType, Route, field
from coordinator.txn.placement import OFFSETS_TOPIC
from wire.constants import ApiKey

__all__ = ["ROUTE", "share_group_heartbeat"]

share_group_heartbeat = WithCurrentTopics(
    handle_share_group_heartbeat, "share_group_heartbeat",
    "ShareGroupHeartbeat against the broker's current topics.",
)


ROUTE = Route(
    ApiKey.SHARE_GROUP_HEARTBEAT,
    share_group_heartbeat,
    # KafkaApis: GROUP READ, and DESCRIBE on the subscribed topics (not enforced here).
    acl=(Acl(ResourceType.GROUP, AclOperation.READ),),
    routing=OneKey(OFFSETS_TOPIC, field("group_id")),
    pipelined=True,
)
