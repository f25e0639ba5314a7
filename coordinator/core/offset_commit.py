"""OffsetCommit (API 8), versions 0-10.

Version notes: v1 per-partition commit timestamp; v2-4 retention_time_ms (an explicit
expire timestamp, Kafka's OffsetCommitValue v1); v6 leader epoch; v7 group.instance.id;
v9+ a commit to a missing group with a generation is GROUP_ID_NOT_FOUND (ILLEGAL_GENERATION
before). Topics arrive by name: the broker answers unknown topics and resolves v10's topic
ids first (its route file, coordinator/server/apis/offset_commit.py).

The answer waits for the commit records; nothing is applied before they are in the log,
and a failed append answers every partition with the mapped error (Kafka's
maybeConvertOffsetCommitError). The usual commit is an ``at_once`` Result, which the
runtime may append, apply and answer inline (``coordinator.core.result``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from coordinator.core.append_errors import offset_commit_error
from coordinator.core.classic.group import ClassicGroup
from coordinator.core.classic.group_member import Member
from coordinator.core.classic.join import validate_current_member
from coordinator.core.classic.state import (
    COMPLETING_REBALANCE,
    DEAD,
    EMPTY,
    PREPARING_REBALANCE,
    STABLE,
)
from coordinator.core.consumer.group import ConsumerGroup
from coordinator.core.group_manager import GroupManager, renew_session, valid_group_id
from coordinator.core.messages import (
    OffsetCommitRequest,
    OffsetCommitResponse,
    RequestContext,
)
from coordinator.core.result import (
    Effects,
    Reply,
    ReplyToken,
    Result,
    ScheduleTimer,
    new_tuple,
)
from storage.records import Record, offset_commit_record
from wire.constants import ErrorCode

__all__ = [
    "all_partitions",
    "commit_failed",
    "commit_records",
    "commit_target",
    "handle_offset_commit",
    "metadata_too_large",
    "shared_answer",
    "validate_classic_commit",
    "validate_consumer_commit",
]

_MEMBER_EPOCH_VERSION = 9  # OffsetCommit/OffsetFetch: the first for consumer groups


def metadata_too_large(metadata: str, limit: int) -> bool:
    """Kafka compares String.length() (UTF-16 code units) with offset.metadata.max.bytes."""
    if len(metadata) > limit:
        return True
    return not metadata.isascii() and len(metadata.encode("utf-16-le")) // 2 > limit


def all_partitions(topics: Sequence[Any], error: ErrorCode) -> OffsetCommitResponse:
    """Every requested partition answered with ``error`` (OffsetCommit, TxnOffsetCommit)."""
    return {
        "topics": [
            {
                "name": topic["name"],
                "partitions": [
                    {"partition_index": p["partition_index"], "error_code": error}
                    for p in topic["partitions"]
                ],
            }
            for topic in topics
        ]
    }


def validate_classic_commit(
    group: ClassicGroup,
    generation: int,
    member_id: str,
    instance_id: str | None,
    *,
    transactional: bool = False,
) -> ErrorCode | None:
    """Kafka's ClassicGroup.validateOffsetCommit: simple commits to an Empty group skip
    member checks; a transactional commit without a member passes whatever the state."""
    state = group.state
    if state is DEAD:
        return ErrorCode.COORDINATOR_NOT_AVAILABLE
    if generation < 0 and state is EMPTY:
        return None
    if generation >= 0 or member_id != "" or instance_id is not None:
        error = validate_current_member(group, member_id, instance_id)
        if error is not None:
            return error
        if generation != group.generation_id:
            return ErrorCode.ILLEGAL_GENERATION
        return None
    if state is not EMPTY and not transactional:
        return ErrorCode.UNKNOWN_MEMBER_ID
    return None


def validate_consumer_commit(
    group: ConsumerGroup,
    epoch: int,
    member_id: str,
    version: int,
    *,
    transactional: bool = False,
) -> ErrorCode | None:
    """Kafka's ConsumerGroup.validateOffsetCommit: an admin commit (negative epoch) to an
    empty group passes; otherwise the member must exist, commit with v9+ (a member using
    the classic protocol: any version) and its exact epoch (ILLEGAL_GENERATION for a
    classic member). A transactional commit has no version rule and a wrong epoch is
    ILLEGAL_GENERATION (Kafka's validateTransactionalOffsetCommit)."""
    if epoch < 0 and not group.members:
        return None
    member = group.members.get(member_id)
    if member is None:
        return ErrorCode.UNKNOWN_MEMBER_ID
    classic = member.uses_classic_protocol
    if not transactional and not classic and version < _MEMBER_EPOCH_VERSION:
        return ErrorCode.UNSUPPORTED_VERSION
    if epoch != member.member_epoch:
        # A classic member commits with its generation (its member epoch).
        return (ErrorCode.ILLEGAL_GENERATION if classic or transactional
                else ErrorCode.STALE_MEMBER_EPOCH)
    return None


def commit_target(
    manager: GroupManager, req: OffsetCommitRequest, version: int
) -> tuple[ErrorCode | None, ClassicGroup | ConsumerGroup | None]:
    """Kafka's OffsetMetadataManager.validateOffsetCommit for this commit: (the error every
    partition is answered with, None) or (None, the group committed to); (None, None) when
    the group does not exist and the commit makes a simple group."""
    group_id = req["group_id"]
    if not valid_group_id(group_id, allow_empty=True):
        return ErrorCode.INVALID_GROUP_ID, None
    if group_id in manager.share_groups:  # Kafka's ShareGroup.validateOffsetCommit
        return ErrorCode.GROUP_ID_NOT_FOUND, None
    generation = req["generation_id_or_member_epoch"]
    consumer_group = manager.consumer_groups.get(group_id)
    if consumer_group is not None:
        error = validate_consumer_commit(consumer_group, generation, req["member_id"], version)
        return error, None if error is not None else consumer_group
    group = manager.groups.get(group_id)
    if group is None:
        if generation >= 0:
            return (ErrorCode.GROUP_ID_NOT_FOUND if version >= 9
                    else ErrorCode.ILLEGAL_GENERATION), None
        return None, None  # a "simple" group: Kafka used only for offset storage
    error = validate_classic_commit(group, generation, req["member_id"],
                                    req["group_instance_id"])
    if error is None and group.state is COMPLETING_REBALANCE:
        error = ErrorCode.REBALANCE_IN_PROGRESS
    return error, None if error is not None else group


def handle_offset_commit(
    manager: GroupManager, ctx: RequestContext, req: OffsetCommitRequest, token: ReplyToken,
    now_ms: int,
) -> Result:
    """Handle one OffsetCommit. The usual commit -- into an existing group whose checks
    pass, at least one partition written -- is an ``at_once`` Result: its records, its
    answer, the committer's renewed session; a failed append maps the answer
    (``commit_failed``)."""
    version = ctx.api_version
    error, target = commit_target(manager, req, version)
    if error is None and target is not None:
        records, response = commit_records(manager, req, version, now_ms)
        if records:
            timers: tuple[ScheduleTimer, ...] = ()
            if type(target) is ClassicGroup:
                state = target.state
                if state is STABLE or state is PREPARING_REBALANCE:  # as _kept_alive
                    committer = target.members[req["member_id"]]
                    timers = (new_tuple(ScheduleTimer, (
                        committer.heartbeat_key, renew_session(committer, now_ms))),)
            return new_tuple(Result, (  # (at_once)
                tuple(records), (new_tuple(Reply, (token, response)),), timers, (), (),
                commit_failed))
    fx = manager.effects()
    if error is not None:
        fx.reply(token, all_partitions(req["topics"], error))
        return fx.result()
    group: ClassicGroup | None = None
    created = target is None
    if target is None:
        group = ClassicGroup(req["group_id"], EMPTY, now_ms)
        manager.groups[group.group_id] = group
    elif type(target) is ClassicGroup:
        group = target
        member = _kept_alive(group, req)
        if member is not None:
            manager.reschedule_heartbeat(member, now_ms, fx)
    records, response = commit_records(manager, req, version, now_ms)
    fx.reply(token, response)
    if records:
        fx.records.extend(records)
        manager.pending.add_offsets(req["group_id"], records)
        fx.after_append(_CommitOutcome(manager, group, created, token, response))
    return fx.result()


def _kept_alive(group: ClassicGroup, req: OffsetCommitRequest) -> Member | None:
    """The member whose session a commit to classic ``group`` renews: the committer while
    the group is Stable or PreparingRebalance (commits from the previous generation are
    allowed while preparing; they keep the member's session alive), else None."""
    state = group.state
    if state is STABLE or state is PREPARING_REBALANCE:
        return group.members[req["member_id"]]
    return None


def commit_records(
    manager: GroupManager, req: OffsetCommitRequest, version: int, now_ms: int
) -> tuple[list[Record], OffsetCommitResponse]:
    """One OffsetCommit record per partition whose metadata fits, and the answer of every
    partition (an all-NONE answer is ``shared_answer``'s). The hot path of a consumer."""
    limit = manager.config.offset_metadata_max_bytes
    group_id = req["group_id"]
    retention = req["retention_time_ms"]
    # An explicit expiry exists only where the request carries a retention time (v2-4).
    expire = now_ms + retention if retention != -1 and 2 <= version <= 4 else -1
    per_partition_timestamp = version == 1  # the v1 per-partition commit timestamp
    records: list[Record] = []
    add = records.append
    shape: list[tuple[str, tuple[int, ...]]] = []  # (name, partition indexes) per topic
    too_large: set[tuple[int, int]] = set()  # (topic, partition) positions refused
    for topic in req["topics"]:
        name = topic["name"]
        indexes: list[int] = []
        for p in topic["partitions"]:
            index = p["partition_index"]
            metadata = p["committed_metadata"] or ""
            if (metadata or limit < 0) and metadata_too_large(metadata, limit):
                too_large.add((len(shape), len(indexes)))
                indexes.append(index)
                continue
            indexes.append(index)
            commit_timestamp = now_ms
            if per_partition_timestamp and p["commit_timestamp"] != -1:
                commit_timestamp = p["commit_timestamp"]
            add(offset_commit_record(group_id, name, index, p["committed_offset"],
                                     p["committed_leader_epoch"], metadata, commit_timestamp,
                                     expire))
        shape.append((name, tuple(indexes)))
    if not too_large:
        return records, shared_answer(manager, tuple(shape))
    return records, {"topics": [
        {"name": name, "partitions": [
            {"partition_index": index,
             "error_code": (ErrorCode.OFFSET_METADATA_TOO_LARGE if (t, i) in too_large
                            else ErrorCode.NONE)}
            for i, index in enumerate(indexes)]}
        for t, (name, indexes) in enumerate(shape)]}


class SharedAnswer(dict[str, Any]):
    """An all-NONE OffsetCommit answer ({"topics": [...]}) shared by every commit of the
    same topics and partitions: never changed once made, so the wire encoder keeps its
    frame per version in ``encoded_tails`` (``wire.apis.offset_commit``)."""

    __slots__ = ("encoded_tails",)

    def __init__(self, topics: list[dict[str, Any]]) -> None:
        super().__init__(topics=topics)
        self.encoded_tails: dict[int, bytes] = {}


def shared_answer(
    manager: GroupManager, shape: tuple[tuple[str, tuple[int, ...]], ...]
) -> OffsetCommitResponse:
    """The answer NONE for every partition of ``shape`` ((topic name, partition indexes) per
    topic, in request order): one shared, never changed ``SharedAnswer`` per shape (kept by
    the manager, ``GroupManager.shared_answers``), whose encoding the wire layer keeps."""
    answer: OffsetCommitResponse | None = manager.shared_answers.get(shape)
    if answer is None:
        answer = manager.shared_answers.put(shape, SharedAnswer([
            {"name": name, "partitions": [
                {"partition_index": index, "error_code": ErrorCode.NONE} for index in indexes]}
            for name, indexes in shape]))
    return answer


def commit_failed(response: OffsetCommitResponse, error: ErrorCode) -> OffsetCommitResponse:
    """The answer of a commit whose append failed with log-append error ``error``: each
    partition it would have committed carries the mapped error (Kafka's
    maybeConvertOffsetCommitError)."""
    code = offset_commit_error(error)
    return {
        "topics": [
            {
                "name": t["name"],
                "partitions": [
                    {"partition_index": p["partition_index"],
                     "error_code": p["error_code"] or code}
                    for p in t["partitions"]
                ],
            }
            for t in response["topics"]
        ]
    }


class _CommitOutcome:
    """A failed commit answers every partition it would have committed with the mapped
    error, and forgets a group the commit itself created that holds nothing."""

    __slots__ = ("created", "group", "manager", "response", "token")

    def __init__(
        self,
        manager: GroupManager,
        group: ClassicGroup | None,
        created: bool,
        token: ReplyToken,
        response: OffsetCommitResponse,
    ) -> None:
        self.manager = manager
        self.group = group
        self.created = created
        self.token = token
        self.response = response

    def appended(self, now_ms: int, fx: Effects) -> None:
        """Nothing to do: the answer already says NONE."""

    def append_failed(self, error: ErrorCode, now_ms: int, fx: Effects) -> None:
        """Answer with the mapped error; undo the creation of a simple group."""
        fx.reply(self.token, commit_failed(self.response, error))
        manager = self.manager
        group = self.group
        if group is None:
            return
        group_id = group.group_id
        if (
            self.created
            and manager.groups.get(group_id) is group
            and group.state is EMPTY
            and group.generation_id == 0
            and not group.members
            and group_id not in manager.store.groups
            and not manager.has_offsets(group_id)
        ):
            del manager.groups[group_id]
