"""SyncGroup (14): the leader hands out the assignment, every member waits for its share;
answered by the group core (``coordinator/core/classic/sync.py``), parked until the leader's
assignment is written."""

from __future__ import annotations

from coordinator.core.classic.sync import handle_sync_group
from coordinator.server.group_api import group_api
from coordinator.server.route import Acl, AclOperation, OneKey, ResourceType, Route, field
from coordinator.txn.placement import OFFSETS_TOPIC
from wire.constants import ApiKey

__all__ = ["ROUTE"]


ROUTE = Route(
    ApiKey.SYNC_GROUP,
    group_api(handle_sync_group),
    acl=(Acl(ResourceType.GROUP, AclOperation.READ),),
    routing=OneKey(OFFSETS_TOPIC, field("group_id")),
    may_wait=True,
    parks=True,
)
