"""TxnOffsetCommit (API 28) and the end of a transaction in the group coordinator.

Kafka's OffsetMetadataManager keeps a transaction's offsets *pending* per producer id until
the transaction's marker reaches the group's ``__consumer_offsets`` partition: a COMMIT
moves them into the committed offsets, an ABORT drops them. While any are pending for a
partition, OffsetFetch with ``require_stable`` answers UNSTABLE_OFFSET_COMMIT for it.

Validation (``validateTransactionalOffsetCommit``): a missing group is created as a simple
group when the generation is negative and is ILLEGAL_GENERATION otherwise; then the group's
own commit validation in its transactional form, where a stale member epoch of a consumer
group is ILLEGAL_GENERATION, and a classic group's rebalance state does not matter.

Staged offsets are hard state, persisted before they are applied: a ``TxnOffsetCommitKey``
record per partition (storage/records.py), so an open transaction's offsets survive a
restart. The COMMIT marker writes the ordinary offset commit records and tombstones the
staged ones; the ABORT marker only tombstones them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

from coordinator.core.append_errors import offset_commit_error
from coordinator.core.classic.group import ClassicGroup
from coordinator.core.classic.state import EMPTY
from coordinator.core.group_manager import GroupManager, valid_group_id
from coordinator.core.messages import (
    OffsetCommitResponse,
    OffsetCommitResponsePartition,
    OffsetCommitResponseTopic,
    RequestContext,
)
from coordinator.core.offset_commit import (
    all_partitions,
    commit_failed,
    metadata_too_large,
    validate_classic_commit,
    validate_consumer_commit,
)
from coordinator.core.result import Effects, Reply, ReplyToken, Result
from storage.records import (
    OffsetCommitKey,
    OffsetCommitValue,
    Record,
    TxnOffsetCommitKey,
    TxnOffsetCommitValue,
)
from wire.constants import ErrorCode

__all__ = [
    "TxnMarkerRequest",
    "handle_txn_marker",
    "handle_txn_offset_commit",
    "has_pending_offset",
]

class TxnMarkerRequest(TypedDict):
    """A transaction's marker reaching a ``__consumer_offsets`` partition: ``group_ids`` are
    the groups of that partition (the runtime places them)."""

    producer_id: int
    group_ids: Sequence[str]
    committed: bool


def _validate(
    manager: GroupManager, ctx: RequestContext, req: Mapping[str, Any], now_ms: int
) -> ErrorCode | None:
    group_id = req["group_id"]
    if not valid_group_id(group_id, allow_empty=True):
        return ErrorCode.INVALID_GROUP_ID
    if group_id in manager.share_groups:  # Kafka's ShareGroup.validateOffsetCommit
        return ErrorCode.GROUP_ID_NOT_FOUND
    consumer_group = manager.consumer_groups.get(group_id)
    if consumer_group is not None:
        return validate_consumer_commit(consumer_group, req["generation_id"], req["member_id"],
                                        ctx.api_version, transactional=True)
    group = manager.groups.get(group_id)
    if group is None:
        if req["generation_id"] >= 0:
            return ErrorCode.ILLEGAL_GENERATION
        group = ClassicGroup(group_id, EMPTY, now_ms)
        manager.groups[group_id] = group
    return validate_classic_commit(group, req["generation_id"], req["member_id"],
                                   req["group_instance_id"], transactional=True)


def handle_txn_offset_commit(
    manager: GroupManager, ctx: RequestContext, req: Any, token: ReplyToken, now_ms: int
) -> Result:
    """Stage a transaction's offsets until its marker (answered once they are in the log)."""
    error = _validate(manager, ctx, req, now_ms)
    if error is not None:
        return Result((), (Reply(token, all_partitions(req["topics"], error)),))
    group_id = req["group_id"]
    producer_id = req["producer_id"]
    limit = manager.config.offset_metadata_max_bytes
    fx = manager.effects()
    topics: list[OffsetCommitResponseTopic] = []
    for topic in req["topics"]:
        name = topic["name"]
        results: list[OffsetCommitResponsePartition] = []
        for p in topic["partitions"]:
            index = p["partition_index"]
            metadata = p["committed_metadata"] or ""
            if metadata_too_large(metadata, limit):
                results.append(
                    {"partition_index": index, "error_code": ErrorCode.OFFSET_METADATA_TOO_LARGE}
                )
                continue
            fx.persist(Record(
                TxnOffsetCommitKey(producer_id, group_id, name, index),
                TxnOffsetCommitValue(p["committed_offset"], p["committed_leader_epoch"],
                                     metadata, now_ms),
            ))
            results.append({"partition_index": index, "error_code": ErrorCode.NONE})
        topics.append({"name": name, "partitions": results})
    response: OffsetCommitResponse = {"topics": topics}
    fx.reply(token, response)
    fx.after_append(_Answered(token, response))
    return fx.result()


def handle_txn_marker(
    manager: GroupManager, ctx: RequestContext, req: TxnMarkerRequest, token: ReplyToken,
    now_ms: int,
) -> Result:
    """The marker of ``producer_id``'s transaction on an offsets partition: commit (write
    the staged offsets of the partition's groups) or abort (drop them); either way the
    staged records are tombstoned."""
    fx = manager.effects()
    producer_id = req["producer_id"]
    by_group = manager.store.pending_txn.get(producer_id, {})
    for group_id in req["group_ids"]:
        for (topic, partition), staged in by_group.get(group_id, {}).items():
            if req["committed"]:
                fx.persist(Record(
                    OffsetCommitKey(group_id, topic, partition),
                    OffsetCommitValue(staged.offset, staged.leader_epoch, staged.metadata,
                                      staged.commit_timestamp, -1),
                ))
            fx.persist(Record(TxnOffsetCommitKey(producer_id, group_id, topic, partition), None))
    response: OffsetCommitResponse = {"topics": ()}
    fx.reply(token, response)
    fx.after_append(_Answered(token, response))
    return fx.result()


class _Answered:
    """A staged commit's (or a marker's) answer once its append completed: each partition
    carries Kafka's mapped error if it failed (the marker's answer has no partitions: its
    ``error_code`` says)."""

    __slots__ = ("response", "token")

    def __init__(self, token: ReplyToken, response: OffsetCommitResponse) -> None:
        self.token = token
        self.response = response

    def appended(self, now_ms: int, fx: Effects) -> None:
        """Nothing to do: the answer already says NONE."""

    def append_failed(self, error: ErrorCode, now_ms: int, fx: Effects) -> None:
        """Answer with the mapped error."""
        failed = commit_failed(self.response, error)
        if not self.response["topics"]:
            failed["error_code"] = offset_commit_error(error)  # type: ignore[typeddict-unknown-key]
        fx.reply(self.token, failed)


def has_pending_offset(manager: GroupManager, group_id: str, topic: str, partition: int) -> bool:
    """Whether an open transaction holds an offset for the partition (require_stable)."""
    return any(
        (topic, partition) in groups.get(group_id, ())
        for groups in manager.store.pending_txn.values()
    )
