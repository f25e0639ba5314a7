"""ListConfigResources (key 74), versions 0-1 (KIP-1142; v0 was ListClientMetricsResources).

v0 lists client-metrics resources only: kcoord has none, so the list is empty. v1 lists the
config resources of the types asked for (none: every type): TOPIC (every topic, the
internal ones included), BROKER and BROKER_LOGGER (every broker's node id), GROUP (every
group the coordinator holds and every group with dynamic configs) and CLIENT_METRICS (none).
A type outside those is answered UNSUPPORTED_VERSION, as Kafka's ``KafkaApis`` does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import wire
from coordinator.server.api_support import broker_ids, group_runtime, store_of
from coordinator.server.route import Acl, AclOperation, ResourceType, Route
from coordinator.txn.placement import OFFSETS_TOPIC, TRANSACTION_STATE_TOPIC
from wire import ErrorCode
from wire.constants import ApiKey

if TYPE_CHECKING:
    from coordinator.server.context import RequestContext

__all__ = ["ROUTE", "handle"]

TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP = 2, 4, 8, 16, 32
_SUPPORTED = (TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP)


def _names(ctx: RequestContext, kind: int) -> list[str]:
    if kind == TOPIC:
        names = set(store_of(ctx).names())
        names.update((OFFSETS_TOPIC, TRANSACTION_STATE_TOPIC))
        return sorted(names)
    if kind in (BROKER, BROKER_LOGGER):
        return [str(node) for node in broker_ids(ctx)]
    if kind == GROUP:
        runtime = group_runtime(ctx)
        groups = set(runtime.coordinator.group_ids())
        if runtime.configs is not None:
            groups.update(runtime.configs.store.resources(GROUP))  # type: ignore[attr-defined]
        return sorted(groups)
    return []  # CLIENT_METRICS: none


async def handle(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any] | None:
    """The config resources of the types asked for."""
    if request.api_version == 0:
        return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "config_resources": []}
    asked = list(request.body.resource_types)
    unsupported = [kind for kind in asked if kind not in _SUPPORTED]
    if unsupported:
        return {"throttle_time_ms": 0, "error_code": ErrorCode.UNSUPPORTED_VERSION,
                "config_resources": []}
    kinds = asked or list(_SUPPORTED)
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "config_resources": [
        {"resource_name": name, "resource_type": kind}
        for kind in kinds for name in _names(ctx, kind)]}


ROUTE = Route(
    ApiKey.LIST_CONFIG_RESOURCES,
    handle,
    acl=(Acl(ResourceType.CLUSTER, AclOperation.DESCRIBE_CONFIGS),),
)
