"""Coordinator routing with several brokers: a group or transactional request reaches the
coordinator only on the broker that coordinates its key (``cluster.Cluster``).

Kafka's rules, per API:

- one group id (JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit, OffsetDelete,
  OffsetFetch v0-7, ConsumerGroupHeartbeat, TxnOffsetCommit) or one transactional id
  (InitProducerId with one, AddPartitionsToTxn v0-3, AddOffsetsToTxn, EndTxn): elsewhere the
  whole request gets NOT_COORDINATOR, and COORDINATOR_LOAD_IN_PROGRESS while the
  coordinator loads the key's partition -- except Heartbeat, which Kafka's
  GroupCoordinatorService answers NONE then ("the group is still loading, so blindly
  respond");
- several keys (DescribeGroups, DeleteGroups, OffsetFetch v8+, ConsumerGroupDescribe,
  DescribeTransactions): each key is answered on its own, the foreign ones with that error;
- ListGroups and ListTransactions list what this broker coordinates, or answer
  COORDINATOR_LOAD_IN_PROGRESS while it loads any partition of its internal topic.

With one broker nothing is wrapped: every key is this broker's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

import trio
from construct import Container, ListContainer

import wire
from coordinator.server.cluster import Cluster
from coordinator.server.context import Handler, RequestContext
from coordinator.txn.placement import OFFSETS_TOPIC, TRANSACTION_STATE_TOPIC
from wire import ApiKey, ErrorCode

__all__ = ["routed_handlers"]

_GROUP_KEYED = frozenset({
    ApiKey.JOIN_GROUP, ApiKey.SYNC_GROUP, ApiKey.HEARTBEAT, ApiKey.LEAVE_GROUP,
    ApiKey.OFFSET_COMMIT, ApiKey.OFFSET_DELETE, ApiKey.CONSUMER_GROUP_HEARTBEAT,
    ApiKey.TXN_OFFSET_COMMIT,
})
_TXN_KEYED = frozenset({ApiKey.ADD_OFFSETS_TO_TXN, ApiKey.END_TXN})
_OFFSET_FETCH_GROUPS_VERSION = 8
_ADD_PARTITIONS_BATCHED_VERSION = 4

Key = tuple[str, str]  # (internal topic, key)


def _single_key(api_key: int, version: int, body: Any) -> Key | None:
    """The one key a request is routed by, or None when it has none (or several)."""
    if api_key in _GROUP_KEYED or (
        api_key == ApiKey.OFFSET_FETCH and version < _OFFSET_FETCH_GROUPS_VERSION
    ):
        return OFFSETS_TOPIC, body.group_id
    if api_key in _TXN_KEYED:
        return TRANSACTION_STATE_TOPIC, body.transactional_id
    if api_key == ApiKey.ADD_PARTITIONS_TO_TXN and version < _ADD_PARTITIONS_BATCHED_VERSION:
        return TRANSACTION_STATE_TOPIC, body.v3_and_below_transactional_id
    if api_key == ApiKey.INIT_PRODUCER_ID and body.transactional_id is not None:
        return TRANSACTION_STATE_TOPIC, body.transactional_id
    return None


class _Multi:
    """A request naming several keys: where they are in the request and the response."""

    def __init__(self, topic: str, request_field: str, response_field: str,
                 response_key: str, key_of: Callable[[Any], str] = str,
                 error_entry: Mapping[str, Any] | None = None) -> None:
        self.topic = topic
        self.request_field = request_field
        self.response_field = response_field
        self.response_key = response_key
        self.key_of = key_of
        self.error_entry = dict(error_entry or {})


_MULTI: dict[int, _Multi] = {
    ApiKey.DESCRIBE_GROUPS: _Multi(OFFSETS_TOPIC, "groups", "groups", "group_id"),
    ApiKey.DELETE_GROUPS: _Multi(OFFSETS_TOPIC, "groups_names", "results", "group_id"),
    ApiKey.CONSUMER_GROUP_DESCRIBE: _Multi(OFFSETS_TOPIC, "group_ids", "groups", "group_id"),
    ApiKey.OFFSET_FETCH: _Multi(OFFSETS_TOPIC, "groups", "groups", "group_id",
                                key_of=lambda g: str(g.group_id), error_entry={"topics": []}),
    ApiKey.DESCRIBE_TRANSACTIONS: _Multi(TRANSACTION_STATE_TOPIC, "transactional_ids",
                                         "transaction_states", "transactional_id"),
}
_LISTS: dict[int, tuple[str, str, str]] = {
    ApiKey.LIST_GROUPS: (OFFSETS_TOPIC, "groups", "group_id"),
    ApiKey.LIST_TRANSACTIONS: (TRANSACTION_STATE_TOPIC, "transaction_states",
                               "transactional_id"),
}


def _cluster_and_node(ctx: RequestContext) -> tuple[Cluster, int]:
    cluster: Cluster = ctx.state.cluster
    return cluster, ctx.state.identity.node_id


def _route_single(handler: Handler) -> Handler:
    async def handle(ctx: RequestContext, request: wire.DecodedRequest) -> Any:
        key = _single_key(request.api_key, request.api_version, request.body)
        if key is not None and key[1] is not None:
            cluster, node = _cluster_and_node(ctx)
            error = cluster.coordinator_error(node, key[0], key[1], trio.current_time())
            if (error == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
                    and request.api_key == ApiKey.HEARTBEAT):
                return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE}
            if error != ErrorCode.NONE:
                return _whole_request_error(request, error)
        return await handler(ctx, request)

    return handle


def _whole_request_error(request: wire.DecodedRequest, error: ErrorCode) -> Any:
    """Kafka 4's answer when the coordinator cannot run a request: the error, with every
    partition of an OffsetCommit / TxnOffsetCommit (and OffsetFetch v0-1, which has no
    top-level error) carrying it, and no members or topics otherwise."""
    from wire.error_response import error_response

    response: Any = error_response(request, error)
    if request.api_key == ApiKey.LEAVE_GROUP and "members" in response:
        response["members"] = []
    if (request.api_key == ApiKey.OFFSET_FETCH and request.api_version >= 2
            and "topics" in response):
        response["topics"] = []
    return response


def _route_multi(handler: Handler, multi: _Multi, single: Handler) -> Handler:
    async def handle(ctx: RequestContext, request: wire.DecodedRequest) -> Any:
        if request.api_key == ApiKey.OFFSET_FETCH and (
            request.api_version < _OFFSET_FETCH_GROUPS_VERSION
        ):
            return await single(ctx, request)
        cluster, node = _cluster_and_node(ctx)
        now = trio.current_time()
        local: list[Any] = []
        foreign: list[dict[str, Any]] = []
        for entry in request.body[multi.request_field] or ():
            key = multi.key_of(entry)
            error = cluster.coordinator_error(node, multi.topic, key, now)
            if error == ErrorCode.NONE:
                local.append(entry)
            else:
                foreign.append({multi.response_key: key, "error_code": error,
                                **multi.error_entry})
        if not foreign:
            return await handler(ctx, request)
        if local:
            body = Container(request.body)
            body[multi.request_field] = ListContainer(local)
            response = await handler(ctx, replace(request, body=body))
            if response is None:
                return None
        else:
            response = {"throttle_time_ms": 0, multi.response_field: []}
        response[multi.response_field] = list(response[multi.response_field]) + foreign
        return response

    return handle


def _route_list(handler: Handler, topic: str, field: str, key_field: str) -> Handler:
    async def handle(ctx: RequestContext, request: wire.DecodedRequest) -> Any:
        cluster, node = _cluster_and_node(ctx)
        if cluster.loading(node, topic, trio.current_time()):
            return {"throttle_time_ms": 0, "error_code": ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
                    field: []}
        response = await handler(ctx, request)
        if response is None:
            return None
        response[field] = [entry for entry in response[field]
                           if cluster.coordinator(topic, entry[key_field]) == node]
        return response

    return handle


def routed_handlers(handlers: Mapping[int, Handler]) -> dict[int, Handler]:
    """The handler table of one broker among several (see the module docstring)."""
    out = dict(handlers)
    for api_key, handler in handlers.items():
        if api_key in _MULTI:
            out[api_key] = _route_multi(handler, _MULTI[api_key], _route_single(handler))
        elif api_key in _LISTS:
            out[api_key] = _route_list(handler, *_LISTS[api_key])
        elif api_key in _GROUP_KEYED or api_key in _TXN_KEYED or api_key in (
            ApiKey.ADD_PARTITIONS_TO_TXN, ApiKey.INIT_PRODUCER_ID,
        ):
            out[api_key] = _route_single(handler)
    return out
