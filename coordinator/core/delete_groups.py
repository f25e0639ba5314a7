"""DeleteGroups (API 42), versions 0-2 (unchanged across versions).

Only Empty groups go (NON_EMPTY_GROUP otherwise): their committed offsets -- including any
whose commit is still in flight -- and their metadata record are tombstoned, and the group
is forgotten at once (a share group with its share-partition state: ``share_group/deletion.py``).
If the tombstones' append fails, the groups come back as they were and the client hears the
mapped error (Kafka's appendGroupMetadataErrorToResponseError).
"""

from __future__ import annotations

from coordinator.core.append_errors import group_metadata_error
from coordinator.core.classic.state import DEAD, EMPTY
from coordinator.core.consumer.group import ConsumerGroup
from coordinator.core.consumer.records import drop_empty_consumer_group
from coordinator.core.group_manager import GroupManager, valid_group_id
from coordinator.core.messages import (
    DeletableGroupResult,
    DeleteGroupsRequest,
    DeleteGroupsResponse,
    RequestContext,
)
from coordinator.core.result import Effects, ReplyToken, Result
from coordinator.core.share_group.deletion import delete_share_group
from wire.constants import ErrorCode

__all__ = ["handle_delete_groups"]


def handle_delete_groups(
    manager: GroupManager, ctx: RequestContext, req: DeleteGroupsRequest, token: ReplyToken,
    now_ms: int,
) -> Result:
    """Handle one DeleteGroups."""
    fx = manager.effects()
    results: list[DeletableGroupResult] = [
        {"group_id": group_id, "error_code": _delete_group(manager, group_id, now_ms, fx)}
        for group_id in req["groups_names"]
    ]
    response: DeleteGroupsResponse = {"results": results}
    fx.reply(token, response)
    if fx.records:
        fx.after_append(_DeleteOutcome(token, response))
    return fx.result()


def _delete_group(manager: GroupManager, group_id: str, now_ms: int, fx: Effects) -> ErrorCode:
    if not valid_group_id(group_id, allow_empty=True):
        return ErrorCode.INVALID_GROUP_ID
    consumer_group = manager.consumer_groups.get(group_id)
    if consumer_group is not None:
        return _delete_consumer_group(manager, consumer_group, fx)
    share_group = manager.share_groups.get(group_id)
    if share_group is not None:
        return delete_share_group(manager, share_group, fx)
    group = manager.groups.get(group_id)
    if group is None or group.state is DEAD:
        return ErrorCode.GROUP_ID_NOT_FOUND
    if group.state is not EMPTY:
        return ErrorCode.NON_EMPTY_GROUP
    manager.delete_offsets(group_id, manager.offset_keys(group_id), fx)
    manager.drop_group(group, now_ms, "group deleted", fx)
    return ErrorCode.NONE


def _delete_consumer_group(manager: GroupManager, group: ConsumerGroup, fx: Effects) -> ErrorCode:
    """An empty consumer group goes with its offsets: tombstones for its target assignment
    and group epoch records (Kafka's ConsumerGroup.createGroupTombstoneRecords)."""
    if group.members:
        return ErrorCode.NON_EMPTY_GROUP
    group_id = group.group_id
    manager.delete_offsets(group_id, manager.offset_keys(group_id), fx)
    drop_empty_consumer_group(manager, group, fx)
    return ErrorCode.NONE


class _DeleteOutcome:
    """A failed append answers the groups that would have been deleted with the mapped
    error (the groups themselves are restored by ``GroupManager.drop_group``'s callback)."""

    __slots__ = ("response", "token")

    def __init__(self, token: ReplyToken, response: DeleteGroupsResponse) -> None:
        self.token = token
        self.response = response

    def appended(self, now_ms: int, fx: Effects) -> None:
        """Nothing to do: the answer already says NONE."""

    def append_failed(self, error: ErrorCode, now_ms: int, fx: Effects) -> None:
        """Answer with the mapped error."""
        code = group_metadata_error(error)
        fx.reply(self.token, {"results": [
            {"group_id": r["group_id"], "error_code": r["error_code"] or code}
            for r in self.response["results"]
        ]})
