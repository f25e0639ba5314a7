"""ConsumerGroupHeartbeat's request validation (Kafka's
``throwIfConsumerGroupHeartbeatRequestIsInvalid`` and ``throwIfRegularExpressionIsInvalid``):
the error answers a heartbeat gets before any record is emitted."""

from __future__ import annotations

from collections.abc import Sequence

from coordinator.core.consumer.messages import ConsumerGroupHeartbeatRequest
from coordinator.core.group_manager import GroupManager
from coordinator.core.subscription_regex import (
    InvalidRegularExpression,
    compile_regex,
    invalid_regex_message,
    require_bounded_match,
)
from wire.constants import ErrorCode

__all__ = [
    "LEAVE_GROUP_MEMBER_EPOCH",
    "LEAVE_GROUP_STATIC_MEMBER_EPOCH",
    "HeartbeatError",
    "validate_heartbeat",
    "validate_new_regex",
]

LEAVE_GROUP_MEMBER_EPOCH = -1
LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2
_MEMBER_ID_REQUIRED_VERSION = 1  # KIP-1082: the client generates its member id


class HeartbeatError(Exception):
    """A Kafka error answer (code and message); raised before any record is emitted."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _invalid(message: str) -> HeartbeatError:
    return HeartbeatError(ErrorCode.INVALID_REQUEST, message)


def validate_heartbeat(
    req: ConsumerGroupHeartbeatRequest, version: int, assignors: Sequence[str]
) -> None:
    """Kafka's throwIfConsumerGroupHeartbeatRequestIsInvalid."""
    epoch = req["member_epoch"]
    if req["group_id"] == "":
        raise _invalid("GroupId can't be empty.")
    if req["instance_id"] == "":
        raise _invalid("InstanceId can't be empty.")
    if req["rack_id"] == "":
        raise _invalid("RackId can't be empty.")
    if req["member_id"] == "" and (
        version >= _MEMBER_ID_REQUIRED_VERSION or epoch > 0 or epoch == LEAVE_GROUP_MEMBER_EPOCH
    ):
        raise _invalid("MemberId can't be empty.")
    if epoch == 0:
        if req["rebalance_timeout_ms"] == -1:
            raise _invalid("RebalanceTimeoutMs must be provided in first request.")
        if req["topic_partitions"] is None or len(req["topic_partitions"]) > 0:
            raise _invalid("TopicPartitions must be empty when (re-)joining.")
        if req["subscribed_topic_names"] is None and req["subscribed_topic_regex"] is None:
            raise _invalid(
                "SubscribedTopicNames or SubscribedTopicRegex must be set in first request."
            )
    elif epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
        if req["instance_id"] is None:
            raise _invalid("InstanceId can't be null.")
    elif epoch < LEAVE_GROUP_STATIC_MEMBER_EPOCH:
        raise _invalid(f"MemberEpoch is invalid: {epoch}.")
    assignor = req["server_assignor"]
    if assignor is not None and assignor not in assignors:
        raise HeartbeatError(
            ErrorCode.UNSUPPORTED_ASSIGNOR,
            f"ServerAssignor {assignor} is not supported. "
            f"Supported assignors: {', '.join(assignors)}.",
        )


def validate_new_regex(manager: GroupManager, req: ConsumerGroupHeartbeatRequest) -> None:
    """A regex new to the group compiles (Kafka's throwIfRegularExpressionIsInvalid, run
    when a member brings a regex no member of its group has) and may be matched against
    the topics within the per-request bound. Checked before anything is written; a regex
    the group already has is not checked again, so topics created since cannot turn its
    members away."""
    regex = req["subscribed_topic_regex"]
    if not regex:  # null: unchanged; "": no regex
        return
    group = manager.consumer_groups.get(req["group_id"])
    if group is not None and any(
        m.subscribed_topic_regex == regex for m in group.members.values()
    ):
        return
    try:
        require_bounded_match(compile_regex(regex), len(manager.topics_image.by_name))
    except InvalidRegularExpression as exc:
        raise HeartbeatError(ErrorCode.INVALID_REGULAR_EXPRESSION,
                             invalid_regex_message(regex, exc.description)) from None
