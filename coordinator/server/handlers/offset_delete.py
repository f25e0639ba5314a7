"""OffsetDelete (API 47), version 0 (KIP-496): wire <-> ``coordinator.core`` translation.

As in Kafka's ``KafkaApis.handleOffsetDeleteRequest``, partitions the broker does not have
are answered here with UNKNOWN_TOPIC_OR_PARTITION; the rest go to the coordinator. A
group-level error answers with that error alone.
"""

from __future__ import annotations

from typing import Any

import wire
from coordinator.core import (
    ErrorCode,
    OffsetDeleteRequest,
    OffsetDeleteRequestTopic,
    OffsetDeleteResponse,
)
from coordinator.server.context import RequestContext
from coordinator.server.handlers._common import runtime, topics

API_KEY = 47


async def handle(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any]:
    """Delete committed offsets of partitions no member of the group consumes."""
    body = request.body
    view = topics(ctx)
    unknown: list[dict[str, Any]] = []
    valid: list[OffsetDeleteRequestTopic] = []
    for t in body["topics"]:
        count = view.partition_count(t["name"])
        good = []
        bad = []
        for p in t["partitions"]:
            index = p["partition_index"]
            if count is not None and 0 <= index < count:
                good.append(index)
            else:
                bad.append(
                    {"partition_index": index, "error_code": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
                )
        if bad:
            unknown.append({"name": t["name"], "partitions": bad})
        if good:
            valid.append(OffsetDeleteRequestTopic(name=t["name"], partitions=tuple(good)))
    req = OffsetDeleteRequest(
        api_version=ctx.api_version, group_id=body["group_id"], topics=tuple(valid)
    )
    rt = runtime(ctx)
    resp = await rt.call(rt.coordinator.offset_delete, req, OffsetDeleteResponse)
    if resp.error_code != ErrorCode.NONE:
        return {"error_code": resp.error_code, "topics": []}
    out = [
        {
            "name": t.name,
            "partitions": [
                {"partition_index": p.partition_index, "error_code": p.error_code}
                for p in t.partitions
            ],
        }
        for t in resp.topics
    ]
    return {"error_code": ErrorCode.NONE, "topics": unknown + out}
