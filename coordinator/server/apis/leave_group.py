"""LeaveGroup (13): members leave a classic group, answered by the group core
(``coordinator/core/classic/leave.py``)."""

from __future__ import annotations

from coordinator.core.classic.leave import handle_leave_group
from coordinator.server.group_api import group_api
from coordinator.server.route import Acl, AclOperation, OneKey, ResourceType, Route, field
from coordinator.txn.placement import OFFSETS_TOPIC
from wire.constants import ApiKey

__all__ = ["ROUTE"]


ROUTE = Route(
    ApiKey.LEAVE_GROUP,
    group_api(handle_leave_group),
    acl=(Acl(ResourceType.GROUP, AclOperation.READ),),
    routing=OneKey(OFFSETS_TOPIC, field("group_id")),
)
