"""OffsetCommit (API 8), OffsetFetch (API 9) and offset expiration (KIP-211).

OffsetCommit version notes: v1 per-partition commit timestamp; v2-4 retention_time_ms (an
explicit expire timestamp, Kafka's OffsetCommitValue v1); v6 leader epoch; v7
group.instance.id; v9+ a commit to a missing group with a generation is GROUP_ID_NOT_FOUND
(ILLEGAL_GENERATION before). Topics arrive by name; the server answers unknown topics itself.

OffsetFetch version notes: v2 topics None = every committed partition; v5 leader epoch; v7
require_stable (KIP-447) -- commits here are applied synchronously and there are no
transactional offsets, so nothing is ever unstable; v8 several groups per request.
"""

from __future__ import annotations

from coordinator.core.engine import Engine, valid_group_id
from coordinator.core.group import ClassicGroup
from coordinator.core.join import validate_current_member
from coordinator.core.messages import (
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetCommitResponsePartition,
    OffsetCommitResponseTopic,
    OffsetFetchRequest,
    OffsetFetchResponse,
    OffsetFetchResponseGroup,
    OffsetFetchResponsePartition,
    OffsetFetchResponseTopic,
)
from coordinator.core.protocol import CONSUMER_PROTOCOL_TYPE
from coordinator.core.result import Effects, ReplyToken
from coordinator.core.state import COMPLETING_REBALANCE, DEAD, EMPTY, PREPARING_REBALANCE, STABLE
from coordinator.core.timers import RetentionTimerKey
from storage.records import OffsetCommitKey, OffsetCommitValue, Record
from wire.constants import ErrorCode

__all__ = ["expire_offsets", "handle_offset_commit", "handle_offset_fetch", "metadata_too_large"]


def metadata_too_large(metadata: str, limit: int) -> bool:
    """Kafka compares String.length() (UTF-16 code units) with offset.metadata.max.bytes."""
    if len(metadata) > limit:
        return True
    return not metadata.isascii() and len(metadata.encode("utf-16-le")) // 2 > limit


def _all_partitions(req: OffsetCommitRequest, error: ErrorCode) -> OffsetCommitResponse:
    return OffsetCommitResponse(
        topics=tuple(
            OffsetCommitResponseTopic(
                name=topic.name,
                partitions=tuple(
                    OffsetCommitResponsePartition(partition_index=p.partition_index,
                                                  error_code=error)
                    for p in topic.partitions
                ),
            )
            for topic in req.topics
        )
    )


def _validate_offset_commit(group: ClassicGroup, req: OffsetCommitRequest) -> ErrorCode | None:
    """Kafka's validateOffsetCommit: simple commits to an Empty group skip member checks."""
    state = group.state
    if state is DEAD:
        return ErrorCode.COORDINATOR_NOT_AVAILABLE
    generation = req.generation_id
    if generation < 0 and state is EMPTY:
        return None
    if generation >= 0 or req.member_id != "" or req.group_instance_id is not None:
        error = validate_current_member(group, req.member_id, req.group_instance_id)
        if error is not None:
            return error
        if generation != group.generation_id:
            return ErrorCode.ILLEGAL_GENERATION
        return None
    if state is not EMPTY:
        return ErrorCode.UNKNOWN_MEMBER_ID
    return None


def handle_offset_commit(
    engine: Engine, req: OffsetCommitRequest, token: ReplyToken, now_ms: int, fx: Effects
) -> None:
    """Handle one OffsetCommit."""
    group_id = req.group_id
    if not valid_group_id(group_id, allow_empty=True):
        fx.reply(token, _all_partitions(req, ErrorCode.INVALID_GROUP_ID))
        return
    group = engine.groups.get(group_id)
    if group is None:
        if req.generation_id >= 0:
            error = (ErrorCode.GROUP_ID_NOT_FOUND if req.api_version >= 9
                     else ErrorCode.ILLEGAL_GENERATION)
            fx.reply(token, _all_partitions(req, error))
            return
        # A "simple" group: Kafka used only for offset storage.
        group = ClassicGroup(group_id, EMPTY, now_ms)
        engine.groups[group_id] = group
    validation_error = _validate_offset_commit(group, req)
    if validation_error is not None:
        fx.reply(token, _all_partitions(req, validation_error))
        return
    state = group.state
    if state is COMPLETING_REBALANCE:
        fx.reply(token, _all_partitions(req, ErrorCode.REBALANCE_IN_PROGRESS))
        return
    if state is STABLE or state is PREPARING_REBALANCE:
        # Commits from the previous generation are allowed while preparing; they keep the
        # member's session alive.
        engine.reschedule_heartbeat(group.members[req.member_id], now_ms, fx)
    fx.reply(token, _store_offsets(engine, req, now_ms, fx))


def _store_offsets(
    engine: Engine, req: OffsetCommitRequest, now_ms: int, fx: Effects
) -> OffsetCommitResponse:
    limit = engine.config.offset_metadata_max_bytes
    group_id = req.group_id
    expire = -1
    if req.retention_time_ms != -1 and 2 <= req.api_version <= 4:
        expire = now_ms + req.retention_time_ms
    topics = []
    for topic in req.topics:
        results = []
        for p in topic.partitions:
            metadata = p.committed_metadata or ""
            if metadata_too_large(metadata, limit):
                results.append(OffsetCommitResponsePartition(
                    partition_index=p.partition_index,
                    error_code=ErrorCode.OFFSET_METADATA_TOO_LARGE))
                continue
            commit_timestamp = now_ms
            if req.api_version == 1 and p.commit_timestamp != -1:
                commit_timestamp = p.commit_timestamp
            value = OffsetCommitValue(
                offset=p.committed_offset,
                leader_epoch=p.committed_leader_epoch,
                metadata=metadata,
                commit_timestamp=commit_timestamp,
                expire_timestamp=expire,
            )
            fx.persist(Record(OffsetCommitKey(group_id, topic.name, p.partition_index), value))
            results.append(OffsetCommitResponsePartition(partition_index=p.partition_index,
                                                         error_code=ErrorCode.NONE))
        topics.append(OffsetCommitResponseTopic(name=topic.name, partitions=tuple(results)))
    return OffsetCommitResponse(topics=tuple(topics))


def _fetched(partition: int, value: OffsetCommitValue | None) -> OffsetFetchResponsePartition:
    if value is None:
        return OffsetFetchResponsePartition(partition_index=partition, committed_offset=-1,
                                            committed_leader_epoch=-1, metadata="",
                                            error_code=ErrorCode.NONE)
    return OffsetFetchResponsePartition(partition_index=partition, committed_offset=value.offset,
                                        committed_leader_epoch=value.leader_epoch,
                                        metadata=value.metadata, error_code=ErrorCode.NONE)


def handle_offset_fetch(
    engine: Engine, req: OffsetFetchRequest, token: ReplyToken, now_ms: int, fx: Effects
) -> None:
    """Handle one OffsetFetch: offsets are returned whatever the group's state."""
    groups = []
    for group_id, topics in req.groups:
        if not valid_group_id(group_id, allow_empty=True):
            groups.append(OffsetFetchResponseGroup(
                group_id=group_id, error_code=ErrorCode.INVALID_GROUP_ID, topics=()))
            continue
        group = engine.groups.get(group_id)
        offsets = {} if group is not None and group.state is DEAD else (
            engine.store.group_offsets(group_id))
        if topics is None:
            by_topic: dict[str, list[OffsetFetchResponsePartition]] = {}
            for (topic, partition), value in sorted(offsets.items(), key=lambda kv: kv[0]):
                by_topic.setdefault(topic, []).append(_fetched(partition, value))
            out = tuple(OffsetFetchResponseTopic(name=t, partitions=tuple(ps))
                        for t, ps in by_topic.items())
        else:
            out = tuple(
                OffsetFetchResponseTopic(
                    name=name,
                    partitions=tuple(_fetched(p, offsets.get((name, p))) for p in partitions),
                )
                for name, partitions in topics
            )
        groups.append(OffsetFetchResponseGroup(group_id=group_id, error_code=ErrorCode.NONE,
                                               topics=out))
    error = groups[0].error_code if len(groups) == 1 else ErrorCode.NONE
    fx.reply(token, OffsetFetchResponse(error_code=error, groups=tuple(groups)))


def _expired_partitions(
    group: ClassicGroup, offsets: dict[tuple[str, int], OffsetCommitValue], now_ms: int,
    retention_ms: int,
) -> list[tuple[str, int]]:
    """KIP-211 (GroupMetadata.removeExpiredOffsets): which offsets of the group expire now."""
    protocol_type = group.protocol_type
    state = group.state
    skip: frozenset[str] = frozenset()
    use_state_time = False
    if protocol_type is not None and state is EMPTY:
        use_state_time = group.current_state_timestamp is not None
    elif (protocol_type == CONSUMER_PROTOCOL_TYPE and group.subscribed_topics is not None
          and state is STABLE):
        skip = group.subscribed_topics
    elif protocol_type is not None:
        return []
    expired = []
    for tp, value in offsets.items():
        if tp[0] in skip:
            continue
        if value.expire_timestamp != -1:
            if now_ms >= value.expire_timestamp:
                expired.append(tp)
            continue
        base = value.commit_timestamp
        if use_state_time:
            assert group.current_state_timestamp is not None
            base = group.current_state_timestamp
        if now_ms - base >= retention_ms:
            expired.append(tp)
    return expired


def expire_offsets(engine: Engine, now_ms: int, fx: Effects) -> None:
    """The retention scan: tombstone expired offsets, drop Empty groups left without any,
    and re-arm the scan."""
    if engine.retention_deadline == -1 or engine.retention_deadline > now_ms:
        return
    retention_ms = engine.config.offsets_retention_ms
    for group in list(engine.groups.values()):
        offsets = engine.store.group_offsets(group.group_id)
        if offsets:
            expired = _expired_partitions(group, offsets, now_ms, retention_ms)
            if expired:
                engine.delete_offsets(group.group_id, expired, fx)
        engine.maybe_drop_group(group, now_ms, "offsets expired", fx)
    schedule_retention_scan(engine, now_ms, fx)


def schedule_retention_scan(engine: Engine, now_ms: int, fx: Effects) -> None:
    """Arm the next offset-expiration scan."""
    deadline = now_ms + engine.config.offsets_retention_check_interval_ms
    engine.retention_deadline = deadline
    fx.schedule(RetentionTimerKey(), deadline)
