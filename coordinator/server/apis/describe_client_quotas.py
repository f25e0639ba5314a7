"""DescribeClientQuotas (key 48), versions 0-1 (KIP-546): the quotas of the client entities
a filter matches, as Kafka's ``ClientQuotasImage.describe`` answers
(``coordinator.configs.client_quotas``). Each filter component names an entity type
(``user``, ``client-id``, ``ip``) and matches a name exactly (0), the default entity (1) or
any name (2); ``strict`` leaves out entities with components the filter does not name. A bad
filter is the whole answer's error (INVALID_REQUEST, UNSUPPORTED_VERSION for an unknown entity
type) with null entries. Asked while the server loads, it answers once the quotas are
replayed. v1 is flexible.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from coordinator.configs.client_quotas import FilterComponent, QuotaError
from coordinator.server.api_support import group_runtime
from coordinator.server.config_shard import ConfigShard
from coordinator.server.route import Acl, AclOperation, ResourceType, Route
from wire.constants import ApiKey, ErrorCode

if TYPE_CHECKING:
    import wire
    from coordinator.server.context import RequestContext

__all__ = ["ROUTE", "handle"]


async def handle(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any] | None:
    """The matching entities and their quotas, or the filter's error."""
    loaded = ctx.state.loaded
    if not loaded.is_set():
        await loaded.wait()  # never answer with quotas a restart has not restored yet
    shard = group_runtime(ctx).configs
    assert isinstance(shard, ConfigShard)
    body = request.body
    components = [FilterComponent(c.entity_type, c.match_type, c.match)
                  for c in body.components]
    try:
        found = shard.quotas.describe(components, bool(body.strict))
    except QuotaError as exc:
        return {"throttle_time_ms": 0, "error_code": exc.code, "error_message": exc.message,
                "entries": None}
    entries = [{"entity": [{"entity_type": kind, "entity_name": name} for kind, name in entity],
                "values": [{"key": key, "value": value} for key, value in quotas.items()]}
               for entity, quotas in found]
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "error_message": None,
            "entries": entries}


ROUTE = Route(
    ApiKey.DESCRIBE_CLIENT_QUOTAS,
    handle,
    acl=(Acl(ResourceType.CLUSTER, AclOperation.DESCRIBE_CONFIGS),),
)
