"""AlterShareGroupOffsets (API 91) and DeleteShareGroupOffsets (API 92) on the group
coordinator's side: Kafka's GroupCoordinatorShard ``alterShareGroupOffsets`` and
``initiateDeleteShareGroupOffsets`` with GroupMetadataManager's
``completeAlterShareGroupOffsets`` and ``sharePartitionsEligibleForOffsetDeletion``.

Both need an existing share group (GROUP_ID_NOT_FOUND) with no members (NON_EMPTY_GROUP,
ShareGroup.validateOffsetsAlterable / validateDeleteGroup); those errors answer the whole
request.

- Alter: each partition of a topic the topics image has, below its partition count, is
  answered NONE and recorded as initialized in the group's ShareGroupStatePartitionMetadata;
  the others UNKNOWN_TOPIC_OR_PARTITION. The share coordinator then writes each accepted
  partition's new snapshot (``coordinator.share.offsets``), at the group epoch as its state
  epoch (Kafka's buildInitializeShareGroupState); the route makes that second call, as
  Kafka's service calls the persister after this write.
- Delete: a topic whose partitions the group initialized loses its share state (the share
  coordinator's ShareSnapshot/ShareUpdate tombstones, as DeleteShareGroupState writes them)
  and leaves the initialized topics; an unknown topic, or one never initialized, is
  UNKNOWN_TOPIC_OR_PARTITION. Kafka's two-step deletingTopics round is one step here: the
  share state lives in the same log.

A failed append rebuilds the group from the log and answers the mapped error.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from coordinator.core.append_errors import group_metadata_error
from coordinator.core.consumer.records import RecordWriter
from coordinator.core.group_manager import GroupManager
from coordinator.core.messages import RequestContext
from coordinator.core.result import Effects, ReplyToken, Result
from coordinator.core.share_group.deletion import ShareStateDeleted, share_state_tombstones
from coordinator.core.share_group.group import ShareGroup, state_partitions_value
from coordinator.core.share_group.heartbeat import (
    RebuildShareGroupOnFailure,
    ShareHeartbeatError,
    share_group_for,
)
from storage.records import Record, ShareGroupStatePartitionMetadataKey
from wire.constants import ErrorCode

__all__ = [
    "INVALID_GROUP_ID_MESSAGE",
    "NON_EMPTY_GROUP_MESSAGE",
    "NO_OFFSETS_MESSAGE",
    "UNKNOWN_TOPIC_MESSAGE",
    "AlterShareOffsetsOutcome",
    "handle_alter_share_group_offsets",
    "handle_delete_share_group_offsets",
    "top_level_error",
]

#: Kafka's Errors.INVALID_GROUP_ID.message().
INVALID_GROUP_ID_MESSAGE = "The configured groupId is invalid."
#: Kafka's Errors.UNKNOWN_TOPIC_OR_PARTITION.message().
UNKNOWN_TOPIC_MESSAGE = "This server does not host this topic-partition."
#: Kafka's Errors.NON_EMPTY_GROUP.message().
NON_EMPTY_GROUP_MESSAGE = "The group is not empty."
#: Kafka's message for a known topic the group has no share state of.
NO_OFFSETS_MESSAGE = "There is no offset information to delete."


@dataclass(slots=True)
class AlterShareOffsetsOutcome:
    """An accepted AlterShareGroupOffsets: the answer's topics, and the share partitions
    whose start offsets the share coordinator now writes, at ``state_epoch``."""

    responses: list[dict[str, Any]]
    state_epoch: int
    start_offsets: dict[tuple[uuid.UUID, int], int] = field(default_factory=dict)


def top_level_error(code: ErrorCode, message: str | None) -> dict[str, Any]:
    """An answer of one whole-request error (Alter- and DeleteShareGroupOffsets)."""
    return {"throttle_time_ms": 0, "error_code": code, "error_message": message,
            "responses": []}


def _empty_share_group(
    manager: GroupManager, group_id: str, token: ReplyToken, fx: Effects
) -> ShareGroup | None:
    """The share group, if it exists and is empty; else None, the error answered."""
    try:
        group = share_group_for(manager, group_id, create=False)
    except ShareHeartbeatError as exc:
        fx.reply(token, top_level_error(exc.code, exc.message))
        return None
    if group.members:
        fx.reply(token, top_level_error(ErrorCode.NON_EMPTY_GROUP, NON_EMPTY_GROUP_MESSAGE))
        return None
    return group


def _unknown_partition(index: int) -> dict[str, Any]:
    return {"partition_index": index, "error_code": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
            "error_message": UNKNOWN_TOPIC_MESSAGE}


def handle_alter_share_group_offsets(
    manager: GroupManager, ctx: RequestContext, req: Any, token: ReplyToken, now_ms: int
) -> Result:
    """Check the group, record the altered partitions as initialized; answered with an
    :class:`AlterShareOffsetsOutcome` (or a whole-request error answer)."""
    fx = manager.effects()
    group_id = req["group_id"]
    group = _empty_share_group(manager, group_id, token, fx)
    if group is None:
        return fx.result()
    image = manager.topics_image
    outcome = AlterShareOffsetsOutcome([], group.group_epoch)
    initialized = dict(group.initialized)
    for topic in req["topics"]:
        name = topic["topic_name"]
        known = image.by_name.get(name)
        if known is None:
            outcome.responses.append({"topic_name": name, "topic_id": uuid.UUID(int=0),
                                      "partitions": [_unknown_partition(p["partition_index"])
                                                     for p in topic["partitions"]]})
            continue
        topic_id, count = known
        answers = []
        accepted = set()
        for p in topic["partitions"]:
            index = p["partition_index"]
            if 0 <= index < count:
                answers.append({"partition_index": index, "error_code": ErrorCode.NONE,
                                "error_message": None})
                outcome.start_offsets[(topic_id, index)] = p["start_offset"]
                accepted.add(index)
            else:
                answers.append(_unknown_partition(index))
        outcome.responses.append({"topic_name": name, "topic_id": topic_id,
                                  "partitions": answers})
        if accepted:
            _, before = initialized.get(topic_id, (name, frozenset()))
            initialized[topic_id] = (name, before | accepted)
    if initialized != group.initialized:
        RecordWriter(group, fx).write(ShareGroupStatePartitionMetadataKey(group_id),
                                      state_partitions_value(initialized))
        fx.after_append(RebuildShareGroupOnFailure(manager, group_id, None))
        fx.after_append(_AnswerFailure(token))
    fx.reply(token, outcome)  # type: ignore[arg-type]  # the route reads it
    return fx.result()


def handle_delete_share_group_offsets(
    manager: GroupManager, ctx: RequestContext, req: Any, token: ReplyToken, now_ms: int
) -> Result:
    """Delete the share state of the requested topics the group initialized; answered with
    the DeleteShareGroupOffsets response (the route adds the topics it refused)."""
    fx = manager.effects()
    group_id = req["group_id"]
    group = _empty_share_group(manager, group_id, token, fx)
    if group is None:
        return fx.result()
    image = manager.topics_image
    deleted: list[dict[str, Any]] = []
    refused: list[dict[str, Any]] = []
    remaining = dict(group.initialized)
    for topic in req["topics"]:
        name = topic["topic_name"]
        known = image.by_name.get(name)
        topic_id = None if known is None else known[0]
        if topic_id is not None and any(d["topic_id"] == topic_id for d in deleted):
            deleted.append({**deleted[0], "topic_name": name, "topic_id": topic_id})
            continue  # named twice: deleted once, answered as Kafka's deletingTopics does
        if topic_id is None or topic_id not in remaining:
            message = UNKNOWN_TOPIC_MESSAGE if topic_id is None else NO_OFFSETS_MESSAGE
            refused.append({"topic_name": name, "topic_id": uuid.UUID(int=0),
                            "error_code": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                            "error_message": message})
            continue
        del remaining[topic_id]
        deleted.append({"topic_name": name, "topic_id": topic_id,
                        "error_code": ErrorCode.NONE, "error_message": None})
    if deleted:
        tombstones: list[Record] = share_state_tombstones(group_id, {
            tid: parts for tid, parts in group.initialized.items() if tid not in remaining})
        for record in tombstones:
            fx.persist(record)
        RecordWriter(group, fx).write(ShareGroupStatePartitionMetadataKey(group_id),
                                      state_partitions_value(remaining))
        fx.after_append(ShareStateDeleted(manager, tombstones))
        fx.after_append(RebuildShareGroupOnFailure(manager, group_id, None))
        fx.after_append(_AnswerFailure(token))
    fx.reply(token, {"throttle_time_ms": 0, "error_code": ErrorCode.NONE,
                     "error_message": None, "responses": deleted + refused})
    return fx.result()


class _AnswerFailure:
    """A failed append answers the whole request with the mapped error."""

    __slots__ = ("token",)

    def __init__(self, token: ReplyToken) -> None:
        self.token = token

    def appended(self, now_ms: int, fx: Effects) -> None:
        """Nothing to do: the answer stands."""

    def append_failed(self, error: ErrorCode, now_ms: int, fx: Effects) -> None:
        fx.reply(self.token, top_level_error(group_metadata_error(error), None))
