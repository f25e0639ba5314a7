"""Coordinator routing with several brokers: a group or transactional request reaches the
coordinator only on the broker that coordinates its key (``cluster.Cluster``), as each
route's ``routing`` says (``coordinator/server/route.py``):

- ``OneKey``: one group id or transactional id; elsewhere the whole request gets
  NOT_COORDINATOR, and COORDINATOR_LOAD_IN_PROGRESS while the coordinator loads the key's
  partition (``error_answers.py``: as Kafka shapes them);
- ``EachKey``: several keys, each answered on its own, the foreign ones with that error;
- ``ListedKeys``: a listing of what this broker coordinates, or COORDINATOR_LOAD_IN_PROGRESS
  while it loads any partition of its internal topic.

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
from coordinator.server.error_answers import key_error_entry, listing_error, whole_request_error
from coordinator.server.route import EachKey, ListedKeys, OneKey, Route
from wire import ErrorCode

__all__ = ["answer_each_key", "routed_handlers"]


def _cluster_and_node(ctx: RequestContext) -> tuple[Cluster, int]:
    cluster = ctx.state.cluster
    assert cluster is not None, "routed handlers serve several brokers"
    return cluster, ctx.state.identity.node_id


def _route_single(handler: Handler, one: OneKey) -> Handler:
    async def handle(ctx: RequestContext, request: wire.DecodedRequest) -> Any:
        key = one.key(request.api_version, request.body)
        if key is not None:
            cluster, node = _cluster_and_node(ctx)
            error = cluster.coordinator_error(node, one.topic, key, trio.current_time())
            if error != ErrorCode.NONE:
                return whole_request_error(request, one, error)
        return await handler(ctx, request)

    return handle


def _route_multi(handler: Handler, multi: EachKey) -> Handler:
    single = None if multi.before is None else _route_single(handler, multi.before)

    async def handle(ctx: RequestContext, request: wire.DecodedRequest) -> Any:
        if single is not None and request.api_version < multi.from_version:
            return await single(ctx, request)
        cluster, node = _cluster_and_node(ctx)
        now = trio.current_time()
        return await answer_each_key(
            handler, ctx, request, multi,
            lambda key: cluster.coordinator_error(node, multi.topic, key, now))

    return handle


async def answer_each_key(handler: Handler, ctx: RequestContext, request: wire.DecodedRequest,
                          multi: EachKey, error_of: Callable[[str], ErrorCode]) -> Any:
    """Serve the keys ``error_of`` answers NONE for through ``handler``, and answer each
    other key with its error, in ``multi.response_field`` (NOT_COORDINATOR on a foreign
    broker; an authorization error under an authorizer)."""
    local: list[Any] = []
    foreign: list[dict[str, Any]] = []
    for entry in request.body[multi.request_field] or ():
        key = multi.key_of(entry)
        error = error_of(key)
        if error == ErrorCode.NONE:
            local.append(entry)
        else:
            foreign.append(key_error_entry(multi, key, error))
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


def _route_list(handler: Handler, listed: ListedKeys) -> Handler:
    topic, field, key_field = listed

    async def handle(ctx: RequestContext, request: wire.DecodedRequest) -> Any:
        cluster, node = _cluster_and_node(ctx)
        if cluster.loading(node, topic, trio.current_time()):
            return listing_error(listed, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)
        response = await handler(ctx, request)
        if response is None:
            return None
        response[field] = [entry for entry in response[field]
                           if cluster.coordinator(topic, entry[key_field]) == node]
        return response

    return handle


def routed_handlers(
    handlers: Mapping[int, Handler], routes: Mapping[int, Route]
) -> dict[int, Handler]:
    """The handler table of one broker among several (see the module docstring)."""
    out = dict(handlers)
    for api_key, handler in handlers.items():
        routing = routes[api_key].routing
        if isinstance(routing, EachKey):
            out[api_key] = _route_multi(handler, routing)
        elif isinstance(routing, ListedKeys):
            out[api_key] = _route_list(handler, routing)
        elif isinstance(routing, OneKey):
            out[api_key] = _route_single(handler, routing)
    return out
