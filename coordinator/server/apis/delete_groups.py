"""DeleteGroups (42): delete empty groups and their offsets, answered by the group core
(``coordinator/core/delete_groups.py``); each group on its own coordinator."""

from __future__ import annotations

from coordinator.core.delete_groups import handle_delete_groups
from coordinator.server.group_api import group_api
from coordinator.server.route import Acl, AclOperation, EachKey, Entries, ResourceType, Route
from coordinator.txn.placement import OFFSETS_TOPIC
from wire.constants import ApiKey

__all__ = ["ROUTE"]


ROUTE = Route(
    ApiKey.DELETE_GROUPS,
    group_api(handle_delete_groups),
    acl=(Acl(ResourceType.GROUP, AclOperation.DELETE, entries=(Entries("groups_names", ""),)),),
    routing=EachKey(OFFSETS_TOPIC, "groups_names", "results", "group_id"),
)
