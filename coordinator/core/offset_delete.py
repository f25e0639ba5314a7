"""OffsetDelete (API 47), version 0 (KIP-496).

Partitions of topics a non-empty consumer group subscribes to are refused with
GROUP_SUBSCRIBED_TO_TOPIC; non-empty non-consumer groups get NON_EMPTY_GROUP. The broker
answers partitions of unknown topics itself (coordinator/server/apis/offset_delete.py). An Empty
group left without offsets is dropped; if the tombstones' append fails it comes back and
the client hears the mapped error at the top level.
"""

from __future__ import annotations

from coordinator.core.append_errors import offset_commit_error
from coordinator.core.classic.state import DEAD, EMPTY
from coordinator.core.group_manager import GroupManager, valid_group_id
from coordinator.core.messages import (
    OffsetDeleteRequest,
    OffsetDeleteResponse,
    OffsetDeleteResponsePartition,
    OffsetDeleteResponseTopic,
    RequestContext,
)
from coordinator.core.result import Effects, ReplyToken, Result
from coordinator.core.store import TopicPartition
from wire.constants import ErrorCode

__all__ = ["handle_offset_delete"]


def _error(error: ErrorCode) -> OffsetDeleteResponse:
    return {"error_code": error, "topics": ()}


def handle_offset_delete(
    manager: GroupManager, ctx: RequestContext, req: OffsetDeleteRequest, token: ReplyToken,
    now_ms: int,
) -> Result:
    """Handle one OffsetDelete."""
    fx = manager.effects()
    fx.reply(token, _delete(manager, req, now_ms, fx))
    if fx.records:
        fx.after_append(_OffsetDeleteOutcome(token))
    return fx.result()


def _delete(
    manager: GroupManager, req: OffsetDeleteRequest, now_ms: int, fx: Effects
) -> OffsetDeleteResponse:
    group_id = req["group_id"]
    if not valid_group_id(group_id, allow_empty=False):
        return _error(ErrorCode.INVALID_GROUP_ID)
    if group_id in manager.share_groups:  # Kafka's ShareGroup.validateOffsetDelete
        return _error(ErrorCode.GROUP_ID_NOT_FOUND)
    consumer_group = manager.consumer_groups.get(group_id)
    group = manager.groups.get(group_id)
    if consumer_group is not None:
        # Kafka's ConsumerGroup.validateOffsetDelete: any state; subscribed topics refused.
        check_subscription = bool(consumer_group.members)
        subscribed_names = consumer_group.subscribed_topic_names(manager.topics_image)

        def is_subscribed(name: str) -> bool:
            return name in subscribed_names

    elif group is None or group.state is DEAD:
        return _error(ErrorCode.GROUP_ID_NOT_FOUND)
    elif group.state is not EMPTY and not group.is_consumer_group():
        return _error(ErrorCode.NON_EMPTY_GROUP)
    else:
        check_subscription = group.state is not EMPTY
        is_subscribed = group.is_subscribed_to_topic  # type: ignore[assignment]
    eligible: list[TopicPartition] = []
    topics: list[OffsetDeleteResponseTopic] = []
    for topic in req["topics"]:
        name = topic["name"]
        subscribed = check_subscription and is_subscribed(name)
        error = ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC if subscribed else ErrorCode.NONE
        partitions: list[OffsetDeleteResponsePartition] = []
        for p in topic["partitions"]:
            index = p["partition_index"]
            if not subscribed:
                eligible.append((name, index))
            partitions.append({"partition_index": index, "error_code": error})
        topics.append({"name": name, "partitions": partitions})
    if eligible:
        manager.delete_offsets(group_id, eligible, fx)
        if consumer_group is None and group is not None:
            manager.maybe_drop_group(group, now_ms, "offsets deleted", fx)
    return {"error_code": ErrorCode.NONE, "topics": topics}


class _OffsetDeleteOutcome:
    """A failed append answers with the mapped error alone (the group-level error shape)."""

    __slots__ = ("token",)

    def __init__(self, token: ReplyToken) -> None:
        self.token = token

    def appended(self, now_ms: int, fx: Effects) -> None:
        """Nothing to do: the answer already says NONE."""

    def append_failed(self, error: ErrorCode, now_ms: int, fx: Effects) -> None:
        """Answer with the mapped error."""
        fx.reply(self.token, _error(offset_commit_error(error)))
