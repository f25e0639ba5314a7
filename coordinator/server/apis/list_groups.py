"""ListGroups (16): the groups this broker coordinates, answered by the group core
(``coordinator/core/list_groups.py``); with several brokers only this one's keys."""

from __future__ import annotations

from coordinator.core.list_groups import handle_list_groups
from coordinator.server.acl_answers import filter_listed
from coordinator.server.group_api import group_api
from coordinator.server.route import (
    Acl,
    AclOperation,
    AnyOf,
    ListedKeys,
    ResourceType,
    Route,
)
from coordinator.txn.placement import OFFSETS_TOPIC
from wire.constants import ApiKey

__all__ = ["ROUTE"]


ROUTE = Route(
    ApiKey.LIST_GROUPS,
    group_api(handle_list_groups),
    # CLUSTER DESCRIBE lists every group; otherwise only the groups one may DESCRIBE.
    acl=(AnyOf((Acl(ResourceType.CLUSTER, AclOperation.DESCRIBE),
                Acl(ResourceType.GROUP, AclOperation.DESCRIBE))),),
    routing=ListedKeys(OFFSETS_TOPIC, "groups", "group_id"),
    read_only=True,
    core_handler=handle_list_groups,
    answer_filter=filter_listed("groups", "group_id", ResourceType.GROUP, cluster_lists_all=True),
)
