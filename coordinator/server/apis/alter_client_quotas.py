"""AlterClientQuotas (key 49), versions 0-1 (KIP-546): set or remove the quotas of client
entities (``user``, ``client-id``, both, or ``ip``; a null name is the default entity),
validated as Kafka's controller does (``coordinator.configs.client_quotas``), written as
client quota records through the runtime's config shard and applied once durable
(``coordinator.server.config_shard``); ``validate_only`` writes nothing. One answer per
distinct entity. An ip entity's name that is no address is looked up (Kafka's
``InetAddress.getByName``) before planning, outside the shard. v1 is flexible.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import trio

from coordinator.configs.client_quotas import (
    IP,
    Entity,
    QuotaAlteration,
    entity_of,
    is_ip_literal,
)
from coordinator.core.result import Reply, Result, ShardResponse
from coordinator.server.config_shard import ConfigShard, call_config_shard
from coordinator.server.route import Acl, AclOperation, ResourceType, Route
from wire.constants import ApiKey, ErrorCode

if TYPE_CHECKING:
    import wire
    from coordinator.server.context import RequestContext

__all__ = ["ROUTE", "handle"]

#: How long one ip entity's name lookup may take before it counts as unresolvable.
LOOKUP_TIMEOUT_S = 10.0


class _Planned:
    """What the shard plans on: the alterations, validate_only, the resolvable names."""

    def __init__(self, alterations: list[QuotaAlteration], validate_only: bool,
                 resolved: frozenset[str]) -> None:
        self.alterations = alterations
        self.validate_only = validate_only
        self.resolved = resolved

    def resolvable(self, name: str) -> bool:
        return is_ip_literal(name) or name in self.resolved


def _entity_data(entity: Entity) -> list[dict[str, Any]]:
    return [{"entity_type": kind, "entity_name": name} for kind, name in entity]


def alter_client_quotas(shard: ConfigShard, ctx: Any, planned: _Planned, token: Any,
                        now_ms: int) -> Result:
    """Plan every alteration; the records unless ``validate_only``, the answer once they
    are durable."""
    records, results = shard.quotas.alter(planned.alterations, planned.resolvable)
    entries = [{"error_code": ErrorCode.NONE if error is None else error.code,
                "error_message": None if error is None else error.message,
                "entity": _entity_data(entity)} for entity, error in results.items()]
    response = {"throttle_time_ms": 0, "entries": entries}
    written = () if planned.validate_only else tuple(records)
    return Result(written, (Reply(token, cast(ShardResponse, response)),))


async def _resolved(names: set[str]) -> frozenset[str]:
    """The names among ``names`` that resolve to an address."""
    found = set()
    for name in sorted(names):
        with trio.move_on_after(LOOKUP_TIMEOUT_S):
            try:
                await trio.socket.getaddrinfo(name, None)
            except OSError:
                continue
            found.add(name)
    return frozenset(found)


async def handle(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any] | None:
    """Each distinct entity's result, once its records are durable."""
    body = request.body
    alterations = [
        QuotaAlteration(entity_of((e.entity_type, e.entity_name) for e in entry.entity),
                        tuple((op.key, None if op.remove else float(op.value))
                              for op in entry.ops))
        for entry in body.entries]
    if not alterations:  # Kafka's controller answers at once
        return {"throttle_time_ms": 0, "entries": []}
    hosts = {name for a in alterations for kind, name in a.entity
             if kind == IP and name and not is_ip_literal(name)}
    planned = _Planned(alterations, bool(body.validate_only), await _resolved(hosts))
    return await call_config_shard(ctx, alter_client_quotas, planned)


ROUTE = Route(
    ApiKey.ALTER_CLIENT_QUOTAS,
    handle,
    acl=(Acl(ResourceType.CLUSTER, AclOperation.ALTER_CONFIGS),),
)
