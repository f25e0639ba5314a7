"""OffsetFetch (API 9), versions 0-10, in its v8+ shape (several groups per request).

Version notes: v2 topics None = every committed partition; v5 leader epoch; v7
require_stable (KIP-447): a partition with a transaction's offset still pending answers
UNSTABLE_OFFSET_COMMIT and offset -1 (the client retries until the marker); v8 several
groups per request. The broker wraps v0-7's single group in the v8 shape, and resolves v10's
topic ids (coordinator/server/apis/offset_fetch.py). Offsets are read from hard state: a commit
whose append is still in flight is not visible yet.
"""

from __future__ import annotations

from typing import Any

from coordinator.core.classic.state import DEAD
from coordinator.core.consumer.group import ConsumerGroup
from coordinator.core.group_manager import GroupManager, valid_group_id
from coordinator.core.messages import (
    OffsetFetchRequest,
    OffsetFetchResponse,
    OffsetFetchResponseGroup,
    OffsetFetchResponsePartition,
    OffsetFetchResponseTopic,
    RequestContext,
)
from coordinator.core.result import Reply, ReplyToken, Result
from coordinator.core.txn_offsets import has_pending_offset
from storage.records import OffsetCommitValue
from wire.constants import ErrorCode

__all__ = ["handle_offset_fetch"]


def _fetched(partition: int, value: OffsetCommitValue | None) -> OffsetFetchResponsePartition:
    if value is None:
        return {"partition_index": partition, "committed_offset": -1,
                "committed_leader_epoch": -1, "metadata": "", "error_code": ErrorCode.NONE}
    return {"partition_index": partition, "committed_offset": value.offset,
            "committed_leader_epoch": value.leader_epoch, "metadata": value.metadata,
            "error_code": ErrorCode.NONE}


def _validate_consumer_fetch(group: ConsumerGroup, requested: Any) -> ErrorCode | None:
    """Kafka's ConsumerGroup.validateOffsetFetch: a fetch naming no member (an admin's)
    passes; a member's must carry its current epoch."""
    member_id = requested.get("member_id")
    epoch = requested.get("member_epoch", -1)
    if member_id is None and epoch < 0:
        return None
    member = group.members.get(member_id or "")
    if member is None:
        return ErrorCode.UNKNOWN_MEMBER_ID
    if epoch != member.member_epoch:
        return ErrorCode.STALE_MEMBER_EPOCH
    return None


def handle_offset_fetch(
    manager: GroupManager, ctx: RequestContext, req: OffsetFetchRequest, token: ReplyToken,
    now_ms: int,
) -> Result:
    """Handle one OffsetFetch: offsets are returned whatever the group's state."""
    groups: list[OffsetFetchResponseGroup] = []
    for requested in req["groups"]:
        group_id = requested["group_id"]
        if not valid_group_id(group_id, allow_empty=True):
            groups.append({"group_id": group_id, "error_code": ErrorCode.INVALID_GROUP_ID,
                           "topics": ()})
            continue
        if group_id in manager.share_groups:  # Kafka's ShareGroup.validateOffsetFetch
            groups.append({"group_id": group_id, "error_code": ErrorCode.GROUP_ID_NOT_FOUND,
                           "topics": ()})
            continue
        consumer_group = manager.consumer_groups.get(group_id)
        if consumer_group is not None:
            error = _validate_consumer_fetch(consumer_group, requested)
            if error is not None:
                groups.append({"group_id": group_id, "error_code": error, "topics": ()})
                continue
        group = manager.groups.get(group_id)
        offsets = {} if group is not None and group.state is DEAD else (
            manager.store.group_offsets(group_id))
        topics = requested["topics"]
        out: list[OffsetFetchResponseTopic] = []
        if topics is None:
            by_topic: dict[str, list[OffsetFetchResponsePartition]] = {}
            for (topic, partition), value in sorted(offsets.items(), key=lambda kv: kv[0]):
                by_topic.setdefault(topic, []).append(_fetched(partition, value))
            out = [{"name": t, "partitions": ps} for t, ps in by_topic.items()]
        else:
            for t in topics:
                name = t["name"]
                out.append({
                    "name": name,
                    "partitions": [_fetched(p, offsets.get((name, p)))
                                   for p in t["partition_indexes"]],
                })
        if req["require_stable"] and manager.store.pending_txn:
            out = _unstable_marked(manager, group_id, out)
        groups.append({"group_id": group_id, "error_code": ErrorCode.NONE, "topics": out})
    response: OffsetFetchResponse = {"groups": groups}
    return Result((), (Reply(token, response),))


def _unstable_marked(
    manager: GroupManager, group_id: str, topics: list[OffsetFetchResponseTopic]
) -> list[OffsetFetchResponseTopic]:
    """Partitions with a pending transactional offset: UNSTABLE_OFFSET_COMMIT, offset -1."""
    out: list[OffsetFetchResponseTopic] = []
    for t in topics:
        name = t["name"]
        partitions: list[OffsetFetchResponsePartition] = []
        for p in t["partitions"]:
            if has_pending_offset(manager, group_id, name, p["partition_index"]):
                p = {**_fetched(p["partition_index"], None),
                     "error_code": ErrorCode.UNSTABLE_OFFSET_COMMIT}
            partitions.append(p)
        out.append({"name": name, "partitions": partitions})
    return out
