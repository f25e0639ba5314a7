"""OffsetCommit (8): commit consumed offsets (the group core's
``coordinator/core/offset_commit.py``). Partitions of topics the broker does not have are
answered here with UNKNOWN_TOPIC_OR_PARTITION and never reach the coordinator; v10 names
topics by id (UNKNOWN_TOPIC_ID when one does not resolve).

Pipelined: ``submit`` hands the commit to the coordinator at once and returns its pending
reply, so a connection may take the next request while this one waits for the disk; the
usual commit, when nothing is in flight, the runtime writes and answers inline (the core's
``at_once`` Result)."""

from __future__ import annotations

from typing import Any

import wire
from coordinator.core import ErrorCode, handle_offset_commit
from coordinator.server.api_support import (
    ZERO_UUID,
    TopicView,
    all_exist,
    group_runtime,
)
from coordinator.server.context import RequestContext
from coordinator.server.route import Acl, AclOperation, Entries, OneKey, ResourceType, Route, field
from coordinator.server.runtime import PendingReply, ReadyReply
from coordinator.txn.placement import OFFSETS_TOPIC
from wire.constants import ApiKey

__all__ = ["ROUTE", "offset_commit"]

_TOPIC_IDS_VERSION = 10


class _OffsetCommit:
    """OffsetCommit: commit the partitions the broker has; refuse the others per partition."""

    __name__ = __qualname__ = "offset_commit"

    async def __call__(self, ctx: RequestContext, request: wire.DecodedRequest) -> Any:
        pending = self.submit(ctx, request)
        if pending is None:
            await group_runtime(ctx).wait_loaded()
            pending = self.submit(ctx, request)
            assert pending is not None
        return await pending.wait()

    def submit(
        self, ctx: RequestContext, request: wire.DecodedRequest
    ) -> PendingReply | ReadyReply | None:
        body = request.body
        version = ctx.api_version
        by_id = version >= _TOPIC_IDS_VERSION
        state = ctx.state
        if not by_id and all_exist(state.topics, body["topics"]):  # the common case
            return group_runtime(ctx).submit(handle_offset_commit, ctx, body)
        view = TopicView(state.topics)
        refused: list[dict[str, Any]] = []
        valid: list[dict[str, Any]] = []
        untouched = not by_id
        for topic in body["topics"]:
            topic_id = topic["topic_id"] if by_id else ZERO_UUID
            name = view.name_of(topic_id) if by_id else topic["name"]
            count = None if name is None else view.partition_count(name)
            good = []
            bad: list[dict[str, int]] = []
            for p in topic["partitions"]:
                index = p["partition_index"]
                if name is None:
                    bad.append({"partition_index": index,
                                "error_code": ErrorCode.UNKNOWN_TOPIC_ID})
                elif count is None or not 0 <= index < count:
                    bad.append({"partition_index": index,
                                "error_code": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION})
                else:
                    good.append(p)
            if bad:
                untouched = False
                refused.append({"name": name or "", "topic_id": topic_id, "partitions": bad})
            if good:
                valid.append({"name": name, "partitions": good})
        if untouched and valid:  # the common case: every partition exists, topics by name
            return group_runtime(ctx).submit(handle_offset_commit, ctx, body)
        if not valid:
            return PendingReply.answered({"topics": _merge(refused)})
        known: Any = {**body, "topics": valid}
        pending = group_runtime(ctx).submit(handle_offset_commit, ctx, known)
        if pending is None:
            return None

        def merged(response: dict[str, Any]) -> dict[str, Any]:
            out = refused
            for t in response["topics"]:
                topic_id = view.id_of(t["name"]) if by_id else ZERO_UUID
                out.append({"name": t["name"], "topic_id": topic_id,
                            "partitions": list(t["partitions"])})
            return {"topics": _merge(out)}

        return pending.then(merged)


offset_commit = _OffsetCommit()


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


ROUTE = Route(
    ApiKey.OFFSET_COMMIT,
    offset_commit,
    acl=(Acl(ResourceType.GROUP, AclOperation.READ),
         Acl(ResourceType.TOPIC, AclOperation.READ, entries=(Entries("topics"),))),
    routing=OneKey(OFFSETS_TOPIC, field("group_id")),
    pipelined=True,
)
