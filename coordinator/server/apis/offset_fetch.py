"""OffsetFetch (9): committed offsets (the group core's ``coordinator/core/offset_fetch.py``).
v0-7 carry one group at the top level (the core reads the v8+ shape), v0-1 have no
top-level error (it goes on every partition), v10 names topics by id (UNKNOWN_TOPIC_ID
when one does not resolve)."""

from __future__ import annotations

from typing import Any

import wire
from coordinator.core import ErrorCode, handle_offset_fetch
from coordinator.server.api_support import TopicView, group_runtime
from coordinator.server.context import RequestContext
from coordinator.server.route import (
    Acl,
    AclOperation,
    EachKey,
    Entries,
    OneKey,
    ResourceType,
    Route,
    field,
)
from coordinator.txn.placement import OFFSETS_TOPIC
from wire.constants import ApiKey

__all__ = ["ROUTE", "offset_fetch"]

_GROUPS_VERSION = 8
_TOPIC_IDS_VERSION = 10
_TOP_LEVEL_ERROR_VERSION = 2


async def offset_fetch(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any]:
    """Fetch committed offsets of one group (v0-7) or several (v8+)."""
    body = request.body
    version = ctx.api_version
    runtime = group_runtime(ctx)
    if version < _GROUPS_VERSION:
        group = {"group_id": body.group_id, "topics": body.topics}
        single: Any = {**body, "groups": [group]}  # the decoded request, in v8's shape
        response = await runtime.call(handle_offset_fetch, ctx, single)
        return _single_group(response["groups"][0], version, body.topics)
    if version < _TOPIC_IDS_VERSION:
        fetched: dict[str, Any] = await runtime.call(handle_offset_fetch, ctx, body)
        return fetched
    view = TopicView(ctx.state.topics)
    groups = []
    unknown_by_group: list[list[dict[str, Any]]] = []
    for g in body.groups:
        unknown: list[dict[str, Any]] = []
        topics = g["topics"]
        if topics is not None:
            known = []
            for t in topics:
                name = view.name_of(t["topic_id"])
                if name is None:
                    unknown.append(t)
                else:
                    known.append({"name": name, "partition_indexes": t["partition_indexes"]})
            topics = known
        groups.append({"group_id": g["group_id"], "topics": topics})
        unknown_by_group.append(unknown)
    by_name: Any = {**body, "groups": groups}
    response = await runtime.call(handle_offset_fetch, ctx, by_name)
    return {
        "groups": [
            _with_topic_ids(group, view, unknown)
            for group, unknown in zip(response["groups"], unknown_by_group, strict=True)
        ]
    }


def _unfetched(partition: int, error: int) -> dict[str, Any]:
    return {"partition_index": partition, "committed_offset": -1, "committed_leader_epoch": -1,
            "metadata": "", "error_code": error}


def _single_group(group: dict[str, Any], version: int, requested: Any) -> dict[str, Any]:
    error = group["error_code"]
    if version < _TOP_LEVEL_ERROR_VERSION and error != ErrorCode.NONE:
        # No top-level error before v2: Kafka puts the group's error on every partition.
        return {"topics": [
            {"name": t["name"], "partitions": [_unfetched(p, error)
                                               for p in t["partition_indexes"]]}
            for t in requested or ()
        ]}
    return {"error_code": error, "topics": group["topics"]}


def _with_topic_ids(
    group: dict[str, Any], view: TopicView, unknown: list[dict[str, Any]]
) -> dict[str, Any]:
    topics: list[dict[str, Any]] = [
        {**t, "topic_id": view.id_of(t["name"])} for t in group["topics"]
    ]
    for t in unknown:
        topics.append({"name": "", "topic_id": t["topic_id"], "partitions": [
            _unfetched(p, ErrorCode.UNKNOWN_TOPIC_ID) for p in t["partition_indexes"]]})
    return {**group, "topics": topics}


_GROUPS = Entries("groups", "group_id")

ROUTE = Route(
    ApiKey.OFFSET_FETCH,
    offset_fetch,
    # v8+: each group on its own, and each topic inside an allowed group on its own.
    acl=(Acl(ResourceType.GROUP, AclOperation.DESCRIBE, entries=(_GROUPS,)),
         Acl(ResourceType.TOPIC, AclOperation.DESCRIBE,
             entries=(Entries("topics"), Entries("topics", within=_GROUPS)))),
    # v0-7: one group at the top level; v8+: each group on its own coordinator.
    routing=EachKey(OFFSETS_TOPIC, "groups", "groups", "group_id",
                    key_of=lambda g: str(g.group_id), error_entry={"topics": []},
                    from_version=_GROUPS_VERSION,
                    before=OneKey(OFFSETS_TOPIC, field("group_id"))),
    read_only=True,
    core_handler=handle_offset_fetch,
)
