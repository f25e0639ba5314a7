"""DescribeCluster (key 60), versions 0-2: the cluster id, the controller and the brokers,
as a KRaft broker answers it (``KafkaApis.handleDescribeCluster`` through
``AuthHelper.computeDescribeClusterResponse``).

- ``cluster_id``: the server's (stable for a data directory across restarts).
- ``controller_id``: this broker alone is a combined broker-and-controller node, so it is
  this broker's id; with ``--brokers`` it is the multi-broker model's controller (the
  lowest live node id, the same id Metadata reports). Kafka answers -1 when that id is
  not among the listed brokers.
- ``brokers``: every live broker with its host, port and rack (null). v2's
  ``include_fenced_brokers`` adds the stopped brokers of the multi-broker model with
  ``is_fenced`` true (a stopped KRaft broker is fenced once its heartbeats stop).
- ``endpoint_type`` (v1+): this is a broker listener, BROKER (1). CONTROLLER (2) is
  MISMATCHED_ENDPOINT_TYPE, any other value UNSUPPORTED_ENDPOINT_TYPE; in v0 both are
  INVALID_REQUEST, with Kafka's messages.
- ``include_cluster_authorized_operations``: without an authorizer Kafka reports every
  operation a cluster supports; not asked, the schema's default (INT32 min).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import wire
from coordinator.server.acl_answers import fill_cluster_operations
from coordinator.server.api_support import (
    CLUSTER_AUTHORIZED_OPERATIONS,
    NO_AUTHORIZED_OPERATIONS,
)
from coordinator.server.context import listener_of
from coordinator.server.route import Acl, AclOperation, ResourceType, Route
from wire import ErrorCode
from wire.constants import ApiKey

if TYPE_CHECKING:
    from coordinator.server.context import BrokerIdentity, RequestContext

__all__ = ["BROKER_ENDPOINT", "CONTROLLER_ENDPOINT", "ROUTE", "handle"]

# Kafka's EndpointType ids (0 is UNKNOWN).
BROKER_ENDPOINT = 1
CONTROLLER_ENDPOINT = 2
_ENDPOINT_NAMES = {BROKER_ENDPOINT: "BROKER", CONTROLLER_ENDPOINT: "CONTROLLER"}


def _endpoint_error(version: int, requested: int) -> dict[str, Any] | None:
    """Kafka's answer to an endpoint type this broker listener does not serve, or None."""
    if requested not in _ENDPOINT_NAMES:
        code = ErrorCode.UNSUPPORTED_ENDPOINT_TYPE
        message = f"Unsupported endpoint type {requested}"
    elif requested != BROKER_ENDPOINT:
        code = ErrorCode.MISMATCHED_ENDPOINT_TYPE
        message = ("The request was sent to an endpoint of type BROKER, but we wanted an "
                   f"endpoint of type {_ENDPOINT_NAMES[requested]}")
    else:
        return None
    return {
        "throttle_time_ms": 0,
        "error_code": ErrorCode.INVALID_REQUEST if version == 0 else code,
        "error_message": message,
        "endpoint_type": BROKER_ENDPOINT,
        "cluster_id": "",
        "controller_id": -1,
        "brokers": [],
        "cluster_authorized_operations": NO_AUTHORIZED_OPERATIONS,
    }


def _broker_entry(identity: BrokerIdentity, fenced: bool, listener: str | None
                  ) -> dict[str, Any]:
    host, port = identity.address(listener)  # the listener the request came on
    return {"broker_id": identity.node_id, "host": host, "port": port,
            "rack": None, "is_fenced": fenced}


def _brokers(ctx: RequestContext, include_fenced: bool) -> tuple[list[dict[str, Any]], int]:
    """The listed brokers and the controller id."""
    identity = ctx.state.identity
    cluster = ctx.state.cluster
    listener = listener_of(ctx)
    if cluster is None:
        return [_broker_entry(identity, False, listener)], identity.node_id
    brokers = [
        _broker_entry(broker, node_id not in cluster.live, listener)
        for node_id, broker in sorted(cluster.identities.items())
        if include_fenced or node_id in cluster.live
    ]
    controller: int = cluster.controller()
    return brokers, controller


async def handle(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any] | None:
    """The cluster as this broker sees it (module docstring)."""
    version = request.api_version
    body = request.body
    requested = body.endpoint_type if version >= 1 else BROKER_ENDPOINT
    refused = _endpoint_error(version, requested)
    if refused is not None:
        return refused
    include_fenced = version >= 2 and bool(body.include_fenced_brokers)
    brokers, controller = _brokers(ctx, include_fenced)
    if all(b["broker_id"] != controller for b in brokers):
        controller = -1
    operations = (CLUSTER_AUTHORIZED_OPERATIONS if body.include_cluster_authorized_operations
                  else NO_AUTHORIZED_OPERATIONS)
    return {
        "throttle_time_ms": 0,
        "error_code": ErrorCode.NONE,
        "error_message": None,
        "endpoint_type": BROKER_ENDPOINT,
        "cluster_id": ctx.state.identity.cluster_id,
        "controller_id": controller,
        "brokers": brokers,
        "cluster_authorized_operations": operations,
    }


ROUTE = Route(
    ApiKey.DESCRIBE_CLUSTER,
    handle,
    acl=(Acl(ResourceType.CLUSTER, AclOperation.DESCRIBE, "cluster authorized operations"),),
    answer_filter=fill_cluster_operations,
)
