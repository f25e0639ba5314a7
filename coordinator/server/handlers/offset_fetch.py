"""OffsetFetch (API 9), versions 0-10: wire <-> ``coordinator.core`` translation.

v0-7 fetch one group (v2+: topics null = every committed partition, plus a top-level
error); v5 leader epoch; v6 flexible; v7 require_stable; v8 several groups per request;
v9 member id/epoch (KIP-848 groups only: ignored for classic groups); v10 topics by id
(ids that do not resolve answer UNKNOWN_TOPIC_ID per partition). Offsets of topics the
broker does not know are answered like any other (-1 when nothing is committed), as Kafka
does.
"""

from __future__ import annotations

import uuid
from typing import Any

import wire
from coordinator.core import (
    ErrorCode,
    OffsetFetchRequest,
    OffsetFetchRequestGroup,
    OffsetFetchRequestTopic,
    OffsetFetchResponse,
    OffsetFetchResponseGroup,
)
from coordinator.server.context import RequestContext
from coordinator.server.handlers._common import TopicView, runtime, topics

API_KEY = 9

_GROUPS_VERSION = 8
_TOPIC_IDS_VERSION = 10


def _unknown_ids(
    view: TopicView, requested: Any
) -> tuple[list[OffsetFetchRequestTopic], list[tuple[uuid.UUID, list[int]]]]:
    """Split v10 topics into resolvable ones (by name) and unknown ids."""
    known: list[OffsetFetchRequestTopic] = []
    unknown: list[tuple[uuid.UUID, list[int]]] = []
    for t in requested:
        name = view.name_of(t["topic_id"])
        if name is None:
            unknown.append((t["topic_id"], list(t["partition_indexes"])))
        else:
            known.append(OffsetFetchRequestTopic(name, tuple(t["partition_indexes"])))
    return known, unknown


async def handle(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any]:
    """Fetch committed offsets of one or several groups."""
    body = request.body
    version = ctx.api_version
    view = topics(ctx)
    unknown_by_group: dict[int, list[tuple[uuid.UUID, list[int]]]] = {}
    groups: list[OffsetFetchRequestGroup] = []
    if version < _GROUPS_VERSION:
        req_topics = (
            None
            if body["topics"] is None
            else tuple(
                OffsetFetchRequestTopic(t["name"], tuple(t["partition_indexes"]))
                for t in body["topics"]
            )
        )
        groups.append(OffsetFetchRequestGroup(body["group_id"], req_topics))
    else:
        for i, g in enumerate(body["groups"]):
            if g["topics"] is None:
                groups.append(OffsetFetchRequestGroup(g["group_id"], None))
            elif version >= _TOPIC_IDS_VERSION:
                known, unknown = _unknown_ids(view, g["topics"])
                unknown_by_group[i] = unknown
                groups.append(OffsetFetchRequestGroup(g["group_id"], tuple(known)))
            else:
                groups.append(
                    OffsetFetchRequestGroup(
                        g["group_id"],
                        tuple(
                            OffsetFetchRequestTopic(t["name"], tuple(t["partition_indexes"]))
                            for t in g["topics"]
                        ),
                    )
                )
    req = OffsetFetchRequest(
        api_version=version, groups=tuple(groups), require_stable=body["require_stable"]
    )
    rt = runtime(ctx)
    resp = await rt.call(rt.coordinator.offset_fetch, req, OffsetFetchResponse)
    if version < _GROUPS_VERSION:
        return _single_group(resp, version, groups[0])
    return {
        "groups": [
            _group(g, version, view, unknown_by_group.get(i, ())) for i, g in enumerate(resp.groups)
        ]
    }


def _partition(p: Any) -> dict[str, Any]:
    return {
        "partition_index": p.partition_index,
        "committed_offset": p.committed_offset,
        "committed_leader_epoch": p.committed_leader_epoch,
        "metadata": p.metadata,
        "error_code": p.error_code,
    }


def _single_group(
    resp: OffsetFetchResponse, version: int, requested: OffsetFetchRequestGroup
) -> dict[str, Any]:
    group = resp.groups[0]
    error = group.error_code
    if version < 2 and error != ErrorCode.NONE:
        # No top-level error before v2: Kafka puts the group's error on every partition.
        return {
            "topics": [
                {
                    "name": t.name,
                    "partitions": [
                        {
                            "partition_index": p,
                            "committed_offset": -1,
                            "committed_leader_epoch": -1,
                            "metadata": "",
                            "error_code": error,
                        }
                        for p in t.partition_indexes
                    ],
                }
                for t in requested.topics or ()
            ]
        }
    return {
        "error_code": error,
        "topics": [
            {"name": t.name, "partitions": [_partition(p) for p in t.partitions]}
            for t in group.topics
        ],
    }


def _group(
    group: OffsetFetchResponseGroup,
    version: int,
    view: TopicView,
    unknown: Any,
) -> dict[str, Any]:
    out_topics: list[dict[str, Any]] = []
    for t in group.topics:
        entry: dict[str, Any] = {
            "name": t.name,
            "partitions": [_partition(p) for p in t.partitions],
        }
        if version >= _TOPIC_IDS_VERSION:
            entry["topic_id"] = view.id_of(t.name)
        out_topics.append(entry)
    for topic_id, partitions in unknown:
        out_topics.append(
            {
                "name": "",
                "topic_id": topic_id,
                "partitions": [
                    {
                        "partition_index": p,
                        "committed_offset": -1,
                        "committed_leader_epoch": -1,
                        "metadata": "",
                        "error_code": ErrorCode.UNKNOWN_TOPIC_ID,
                    }
                    for p in partitions
                ],
            }
        )
    return {"group_id": group.group_id, "error_code": group.error_code, "topics": out_topics}
