"""OffsetCommit (API 8), versions 0-10: wire <-> ``coordinator.core`` translation.

As in Kafka's ``KafkaApis.handleOffsetCommitRequest``, partitions of topics the broker does
not have are answered here with UNKNOWN_TOPIC_OR_PARTITION (v10: topic ids that do not
resolve, UNKNOWN_TOPIC_ID) and never reach the coordinator; a request left with nothing to
commit is answered at once. v1 commit timestamp; v2-4 retention time; v6 leader epoch; v7
group.instance.id; v8 flexible; v9 GROUP_ID_NOT_FOUND for a missing group; v10 topic ids.
"""

from __future__ import annotations

from typing import Any

import wire
from coordinator.core import (
    ErrorCode,
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
    OffsetCommitResponse,
)
from coordinator.server.context import RequestContext
from coordinator.server.handlers._common import ZERO_UUID, runtime, topics

API_KEY = 8

_TOPIC_IDS_VERSION = 10


async def handle(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any]:
    """Commit offsets for the partitions that exist; refuse the others per partition."""
    body = request.body
    version = ctx.api_version
    view = topics(ctx)
    # Per request topic, in request order: (name or None, topic id, {partition: error}).
    rejected: list[tuple[str, Any, dict[int, int]]] = []
    valid: list[OffsetCommitRequestTopic] = []
    for topic in body["topics"]:
        topic_id = topic["topic_id"] if version >= _TOPIC_IDS_VERSION else ZERO_UUID
        name = view.name_of(topic_id) if version >= _TOPIC_IDS_VERSION else topic["name"]
        errors: dict[int, int] = {}
        good: list[OffsetCommitRequestPartition] = []
        count = None if name is None else view.partition_count(name)
        for p in topic["partitions"]:
            index = p["partition_index"]
            if name is None:
                errors[index] = ErrorCode.UNKNOWN_TOPIC_ID
            elif count is None or not 0 <= index < count:
                errors[index] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            else:
                good.append(
                    OffsetCommitRequestPartition(
                        partition_index=index,
                        committed_offset=p["committed_offset"],
                        committed_leader_epoch=p["committed_leader_epoch"],
                        commit_timestamp=p["commit_timestamp"],
                        committed_metadata=p["committed_metadata"],
                    )
                )
        if errors:
            rejected.append((name or "", topic_id, errors))
        if good:
            assert name is not None
            valid.append(OffsetCommitRequestTopic(name=name, partitions=tuple(good)))
    out: list[dict[str, Any]] = []
    for name, topic_id, errors in rejected:
        out.append(_topic(name, topic_id, errors.items()))
    if valid:
        req = OffsetCommitRequest(
            api_version=version,
            group_id=body["group_id"],
            generation_id=body["generation_id_or_member_epoch"],
            member_id=body["member_id"],
            group_instance_id=body["group_instance_id"],
            retention_time_ms=body["retention_time_ms"],
            topics=tuple(valid),
        )
        rt = runtime(ctx)
        resp = await rt.call(rt.coordinator.offset_commit, req, OffsetCommitResponse)
        for t in resp.topics:
            topic_id = view.id_of(t.name) if version >= _TOPIC_IDS_VERSION else ZERO_UUID
            out.append(
                _topic(t.name, topic_id, ((p.partition_index, p.error_code) for p in t.partitions))
            )
    return {"topics": _merge(out)}


def _topic(name: str, topic_id: Any, partitions: Any) -> dict[str, Any]:
    return {
        "name": name,
        "topic_id": topic_id,
        "partitions": [{"partition_index": i, "error_code": e} for i, e in partitions],
    }


def _merge(topics: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One entry per topic (a topic can be split between refused and committed parts)."""
    merged: dict[tuple[str, Any], dict[str, Any]] = {}
    for t in topics:
        key = (t["name"], t["topic_id"])
        if key in merged:
            merged[key]["partitions"].extend(t["partitions"])
        else:
            merged[key] = t
    return list(merged.values())
