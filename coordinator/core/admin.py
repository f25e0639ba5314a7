"""Admin APIs: DescribeGroups (15), ListGroups (16), DeleteGroups (42), OffsetDelete (47).

Version notes: DescribeGroups v3 authorized operations (answered by the server), v4 member
group.instance.id, v6 GROUP_ID_NOT_FOUND for unknown groups (KIP-1043; before: NONE with
state Dead). ListGroups v4 states filter (KIP-518, case-insensitive), v5 types filter
(KIP-848: every group here is "classic"). DeleteGroups v0-2 unchanged. OffsetDelete v0
(KIP-496): partitions of topics a non-empty consumer group subscribes to are refused with
GROUP_SUBSCRIBED_TO_TOPIC; non-empty non-consumer groups get NON_EMPTY_GROUP.
"""

from __future__ import annotations

from coordinator.core.engine import Engine, valid_group_id
from coordinator.core.group import ClassicGroup
from coordinator.core.messages import (
    DeletableGroupResult,
    DeleteGroupsRequest,
    DeleteGroupsResponse,
    DescribedGroup,
    DescribedGroupMember,
    DescribeGroupsRequest,
    DescribeGroupsResponse,
    ListedGroup,
    ListGroupsRequest,
    ListGroupsResponse,
    OffsetDeleteRequest,
    OffsetDeleteResponse,
    OffsetDeleteResponsePartition,
    OffsetDeleteResponseTopic,
)
from coordinator.core.result import Effects, ReplyToken
from coordinator.core.state import DEAD, EMPTY, STABLE
from wire.constants import ErrorCode

__all__ = [
    "describe_group",
    "handle_delete_groups",
    "handle_describe_groups",
    "handle_list_groups",
    "handle_offset_delete",
]

CLASSIC_GROUP_TYPE = "classic"


def describe_group(group: ClassicGroup) -> DescribedGroup:
    """Kafka's GroupMetadata.summary: metadata and assignments only when Stable."""
    stable = group.state is STABLE and group.protocol_name is not None
    protocol = group.protocol_name if stable else None
    members = tuple(
        DescribedGroupMember(
            member_id=member_id,
            group_instance_id=member.group_instance_id,
            client_id=member.client_id,
            client_host=member.client_host,
            member_metadata=member.metadata(protocol) if protocol is not None else b"",
            member_assignment=member.assignment if protocol is not None else b"",
        )
        for member_id, member in group.members.items()
    )
    return DescribedGroup(
        error_code=ErrorCode.NONE,
        group_id=group.group_id,
        group_state=group.state.value,
        protocol_type=group.protocol_type or "",
        protocol_data=protocol or "",
        members=members,
    )


def handle_describe_groups(
    engine: Engine, req: DescribeGroupsRequest, token: ReplyToken, now_ms: int, fx: Effects
) -> None:
    """Handle one DescribeGroups."""
    described = []
    for group_id in req.groups:
        if not valid_group_id(group_id, allow_empty=True):
            described.append(DescribedGroup(error_code=ErrorCode.INVALID_GROUP_ID,
                                            group_id=group_id, group_state="",
                                            protocol_type="", protocol_data=""))
            continue
        group = engine.groups.get(group_id)
        if group is None:
            error = ErrorCode.GROUP_ID_NOT_FOUND if req.api_version >= 6 else ErrorCode.NONE
            described.append(DescribedGroup(error_code=error, group_id=group_id,
                                            group_state=DEAD.value, protocol_type="",
                                            protocol_data=""))
            continue
        described.append(describe_group(group))
    fx.reply(token, DescribeGroupsResponse(groups=tuple(described)))


def handle_list_groups(
    engine: Engine, req: ListGroupsRequest, token: ReplyToken, now_ms: int, fx: Effects
) -> None:
    """Handle one ListGroups: states compare case-insensitively, types too."""
    states = {s.lower() for s in req.states_filter}
    types = {t.lower() for t in req.types_filter}
    include_classic = not types or CLASSIC_GROUP_TYPE in types
    listed = []
    if include_classic:
        for group_id, group in engine.groups.items():
            if states and group.state.lower_name not in states:
                continue
            listed.append(ListedGroup(group_id=group_id, protocol_type=group.protocol_type or "",
                                      group_state=group.state.value,
                                      group_type=CLASSIC_GROUP_TYPE))
    fx.reply(token, ListGroupsResponse(error_code=ErrorCode.NONE, groups=tuple(listed)))


def handle_delete_groups(
    engine: Engine, req: DeleteGroupsRequest, token: ReplyToken, now_ms: int, fx: Effects
) -> None:
    """Handle one DeleteGroups: only Empty groups go; their offsets and record are tombstoned."""
    results = []
    for group_id in req.groups_names:
        results.append(DeletableGroupResult(group_id=group_id,
                                            error_code=_delete_group(engine, group_id, now_ms, fx)))
    fx.reply(token, DeleteGroupsResponse(results=tuple(results)))


def _delete_group(engine: Engine, group_id: str, now_ms: int, fx: Effects) -> ErrorCode:
    if not valid_group_id(group_id, allow_empty=True):
        return ErrorCode.INVALID_GROUP_ID
    group = engine.groups.get(group_id)
    if group is None or group.state is DEAD:
        return ErrorCode.GROUP_ID_NOT_FOUND
    if group.state is not EMPTY:
        return ErrorCode.NON_EMPTY_GROUP
    engine.delete_offsets(group_id, sorted(engine.store.group_offsets(group_id)), fx)
    engine.drop_group(group, now_ms, "group deleted", fx)
    return ErrorCode.NONE


def handle_offset_delete(
    engine: Engine, req: OffsetDeleteRequest, token: ReplyToken, now_ms: int, fx: Effects
) -> None:
    """Handle one OffsetDelete."""
    group_id = req.group_id
    if not valid_group_id(group_id, allow_empty=False):
        fx.reply(token, OffsetDeleteResponse(error_code=ErrorCode.INVALID_GROUP_ID))
        return
    group = engine.groups.get(group_id)
    if group is None or group.state is DEAD:
        fx.reply(token, OffsetDeleteResponse(error_code=ErrorCode.GROUP_ID_NOT_FOUND))
        return
    if group.state is not EMPTY and not group.is_consumer_group():
        fx.reply(token, OffsetDeleteResponse(error_code=ErrorCode.NON_EMPTY_GROUP))
        return
    check_subscription = group.state is not EMPTY
    eligible: list[tuple[str, int]] = []
    topics = []
    for topic in req.topics:
        subscribed = check_subscription and group.is_subscribed_to_topic(topic.name)
        error = ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC if subscribed else ErrorCode.NONE
        partitions = []
        for partition in topic.partitions:
            if not subscribed:
                eligible.append((topic.name, partition))
            partitions.append(OffsetDeleteResponsePartition(partition_index=partition,
                                                            error_code=error))
        topics.append(OffsetDeleteResponseTopic(name=topic.name, partitions=tuple(partitions)))
    if eligible:
        engine.delete_offsets(group_id, eligible, fx)
        engine.maybe_drop_group(group, now_ms, "offsets deleted", fx)
    fx.reply(token, OffsetDeleteResponse(error_code=ErrorCode.NONE, topics=tuple(topics)))
