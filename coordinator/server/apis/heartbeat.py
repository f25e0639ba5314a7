"""Heartbeat (12): a classic-protocol member keeps its session, answered by the group core
(``coordinator/core/classic/heartbeat.py``) in the coordinator runtime."""

from __future__ import annotations

from coordinator.core.classic.heartbeat import handle_heartbeat
from coordinator.server.group_api import group_api
from coordinator.server.route import Acl, AclOperation, OneKey, ResourceType, Route, field
from coordinator.txn.placement import OFFSETS_TOPIC
from wire.constants import ApiKey

__all__ = ["ROUTE"]


ROUTE = Route(
    ApiKey.HEARTBEAT,
    group_api(handle_heartbeat),
    acl=(Acl(ResourceType.GROUP, AclOperation.READ),),
    routing=OneKey(OFFSETS_TOPIC, field("group_id"), answers_while_loading=True),
    pipelined=True,
)
