"""What the ShareFetch and ShareAcknowledge routes share: reading the request's share
partitions and acknowledgements, resolving topic ids against the topic store, running the
session check in the share shard, and the answers' shapes (Kafka's ``ShareFetchResponse``
and ``ShareAcknowledgeResponse``)."""

from __future__ import annotations

import uuid
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import trio

from coordinator.broker.partition_log import PartitionLog
from coordinator.broker.stored_batch import StoredBatch, read_batch, read_batches
from coordinator.broker.topics import TopicStore
from coordinator.core.share_group.offsets import INVALID_GROUP_ID_MESSAGE, top_level_error
from coordinator.server.api_support import leadership_error, store_of, with_current_topics
from coordinator.server.route import Acl, AclOperation, Entries, OneKey, ResourceType, Route
from coordinator.server.route import field as request_field
from coordinator.share.durable import SharePartitionKey
from coordinator.share.manager import (
    EvictRequest,
    SessionAnswer,
    SessionRequest,
    ShareAppendFailed,
    handle_evict_closed,
    handle_session,
)
from coordinator.share.states import AcknowledgementBatch, AcquiredRecords
from coordinator.txn.placement import OFFSETS_TOPIC
from wire import ErrorCode
from wire.constants import ApiKey
from wire.records import parse_batches

if TYPE_CHECKING:
    from coordinator.server.context import RequestContext
    from coordinator.server.share_runtime import ShareRuntime

__all__ = [
    "ShareRequestParts",
    "acquired_batches",
    "bytes_bounded_end",
    "error_response",
    "partition_log",
    "read_acquired",
    "request_parts",
    "run_group_offsets_step",
    "run_session",
    "share_offsets_route",
    "share_runtime_of",
    "skipped_ranges",
    "start_request",
]

_NO_LEADER = {"leader_id": -1, "leader_epoch": -1}


def share_runtime_of(ctx: RequestContext) -> ShareRuntime:
    """The server's share runtime: the share APIs are served only once it is loaded
    (RuntimeError before)."""
    runtime = ctx.state.shares
    if runtime is None:
        raise RuntimeError("the share coordinator is not loaded")
    return runtime


async def run_group_offsets_step(
    ctx: RequestContext, handler: Any, group_id: str, topics: list[dict[str, Any]]
) -> Any:
    """The group coordinator's step of Alter- or DeleteShareGroupOffsets: an empty group id
    answers INVALID_GROUP_ID; else ``handler`` (a group core handler) checks the group and
    answers, on the group's shard with the broker's current topics."""
    if not group_id:
        return top_level_error(ErrorCode.INVALID_GROUP_ID, INVALID_GROUP_ID_MESSAGE)
    return await with_current_topics(ctx).call(
        handler, ctx, {"group_id": group_id, "topics": topics})


def share_offsets_route(api_key: ApiKey, handler: Any, group_operation: AclOperation) -> Route:
    """The route of Alter- or DeleteShareGroupOffsets: ``group_operation`` on the group and
    READ on each named topic (as KafkaApis authorizes them), served by the group's
    coordinator."""
    return Route(
        api_key,
        handler,
        acl=(Acl(ResourceType.GROUP, group_operation),
             Acl(ResourceType.TOPIC, AclOperation.READ,
                 entries=(Entries("topics", "topic_name"),))),
        routing=OneKey(OFFSETS_TOPIC, request_field("group_id")),
    )


@dataclass(slots=True)
class ShareRequestParts:
    """A ShareFetch's or ShareAcknowledge's share partitions, in request order, their
    acknowledgements, and the partitions that cannot be served (with their error)."""

    keys: list[SharePartitionKey] = field(default_factory=list)
    acknowledgements: dict[SharePartitionKey, tuple[AcknowledgementBatch, ...]] = field(
        default_factory=dict
    )
    errors: dict[SharePartitionKey, ErrorCode] = field(default_factory=dict)
    forgotten: list[SharePartitionKey] = field(default_factory=list)


def partition_log(
    ctx: RequestContext, store: TopicStore, key: SharePartitionKey
) -> tuple[PartitionLog | None, ErrorCode]:
    """The topic partition a share partition reads, or why it cannot be served."""
    topic = store.by_id(key.topic_id)
    if topic is None:
        return None, ErrorCode.UNKNOWN_TOPIC_ID
    partition = topic.partition(key.partition)
    if partition is None:
        return None, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    not_led = leadership_error(ctx, topic.name, key.partition)
    if not_led is not None:
        return None, not_led
    return partition, ErrorCode.NONE


def request_parts(
    ctx: RequestContext, store: TopicStore, group_id: str, body: Any
) -> ShareRequestParts:
    """Read the request's partitions and acknowledgements (ShareFetch's forgotten topics
    too), checking each partition against the topic store."""
    parts = ShareRequestParts()
    for topic in body.topics:
        for p in topic.partitions:
            key = SharePartitionKey(group_id, topic.topic_id, p.partition_index)
            if key not in parts.errors and key not in parts.keys:
                parts.keys.append(key)
                _, error = partition_log(ctx, store, key)
                if error != ErrorCode.NONE:
                    parts.errors[key] = error
            batches = p.acknowledgement_batches or ()
            if batches and key not in parts.errors:
                parts.acknowledgements[key] = parts.acknowledgements.get(key, ()) + tuple(
                    AcknowledgementBatch(b.first_offset, b.last_offset,
                                         tuple(b.acknowledge_types))
                    for b in batches
                )
    for topic in body.get("forgotten_topics_data") or ():
        parts.forgotten.extend(
            SharePartitionKey(group_id, topic.topic_id, index) for index in topic.partitions
        )
    return parts


async def run_session(
    ctx: RequestContext, api: Literal["fetch", "acknowledge"], group_id: str, body: Any,
    parts: ShareRequestParts,
) -> SessionAnswer | ShareAppendFailed:
    """The session check and acknowledgements in the share shard (answered once their
    records are durable)."""
    shares = share_runtime_of(ctx)
    connection = (ctx.state.identity.node_id, ctx.connection_id)
    shares.served(connection)
    request = SessionRequest(
        api, group_id, body.member_id or "", body.share_session_epoch,
        tuple(k for k in parts.keys if k not in parts.errors), tuple(parts.forgotten),
        parts.acknowledgements, connection, shares.lock_duration_ms(group_id),
    )
    answer: SessionAnswer | ShareAppendFailed = await shares.call(handle_session, ctx, request)
    return answer


async def start_request(
    ctx: RequestContext, api: Literal["fetch", "acknowledge"], body: Any
) -> tuple[ShareRequestParts, SessionAnswer] | dict[str, Any]:
    """The request's partitions and its session check with its acknowledgements, or the
    whole-request error answer when the check failed (nothing was done)."""
    group_id = body.group_id or ""
    parts = request_parts(ctx, store_of(ctx), group_id, body)
    session = await run_session(ctx, api, group_id, body, parts)
    if _limit_reached(session):
        # Sessions of closed connections go (Kafka drops them at disconnect); if none did,
        # the error waits max_wait_ms, as Kafka's IdleShareFetchTimerTask delays it.
        request = EvictRequest(ctx.state.identity.node_id, frozenset(ctx.state.connections))
        if await share_runtime_of(ctx).call(handle_evict_closed, ctx, request):
            session = await run_session(ctx, api, group_id, body, parts)
        else:
            await trio.sleep(max(0, body.get("max_wait_ms", 0)) / 1000)
    lock_ms = share_runtime_of(ctx).lock_duration_ms(group_id)
    if isinstance(session, ShareAppendFailed):
        return error_response(session.error, None, acquisition_lock_timeout_ms=lock_ms)
    if session.error is not None:
        return error_response(session.error.error_code, session.error.message,
                              acquisition_lock_timeout_ms=lock_ms)
    return parts, session


def _limit_reached(session: SessionAnswer | ShareAppendFailed) -> bool:
    return (isinstance(session, SessionAnswer) and session.error is not None
            and session.error.error_code == ErrorCode.SHARE_SESSION_LIMIT_REACHED)


def error_response(code: ErrorCode, message: str | None, **extra: Any) -> dict[str, Any]:
    """A whole-request error (a session error: nothing was done)."""
    return {"throttle_time_ms": 0, "error_code": code, "error_message": message,
            "responses": [], "node_endpoints": [], **extra}


def group_by_topic(entries: Iterable[tuple[SharePartitionKey, dict[str, Any]]]) -> list[Any]:
    """Partition answers grouped by topic id, in first-seen order."""
    topics: dict[uuid.UUID, list[dict[str, Any]]] = {}
    for key, entry in entries:
        entry.setdefault("current_leader", _NO_LEADER)
        topics.setdefault(key.topic_id, []).append(entry)
    return [{"topic_id": tid, "partitions": ps} for tid, ps in topics.items()]


def acquired_batches(partition: PartitionLog,
                     acquired: Sequence[AcquiredRecords]) -> list[StoredBatch]:
    """The whole batches holding the acquired offsets, in order."""
    if not acquired:
        return []
    batches = partition.batches
    out: list[StoredBatch] = []
    ranges = sorted(acquired)
    last = ranges[-1].last_offset
    position = bisect_left(batches, ranges[0].first_offset, key=lambda b: b.last_offset)
    index = 0
    while position < len(batches) and batches[position].base_offset <= last:
        batch = batches[position]
        while index < len(ranges) and ranges[index].last_offset < batch.base_offset:
            index += 1
        if index < len(ranges) and ranges[index].first_offset <= batch.last_offset:
            out.append(batch)
        position += 1
    return out


async def read_acquired(partition: PartitionLog, acquired: Sequence[AcquiredRecords],
                        limiter: trio.CapacityLimiter | None = None) -> bytes:
    """The bytes of :func:`acquired_batches` (the client keeps the records in the
    AcquiredRecords ranges), up to a batch no longer where the index says."""
    return b"".join(await read_batches(acquired_batches(partition, acquired), limiter))


def bytes_bounded_end(partition: PartitionLog, start: int, end: int, max_bytes: int) -> int:
    """The offset below ``end`` where the whole batches read from ``start`` reach
    ``max_bytes``; the first batch always counts (KIP-74)."""
    batches = partition.batches
    position = bisect_left(batches, start, key=lambda b: b.last_offset)
    read = 0
    while position < len(batches) and batches[position].base_offset < end:
        batch = batches[position]
        if read and read + batch.size > max_bytes:
            return batch.base_offset
        read += batch.size
        position += 1
    return end


async def skipped_ranges(partition: PartitionLog, start: int, end: int,
                         limiter: trio.CapacityLimiter | None = None
                         ) -> tuple[tuple[int, int], ...]:
    """Under read_committed, the batches in [start, end) a share partition never delivers:
    control batches (transaction markers) and the records of aborted transactions (Kafka
    archives them instead of handing them out)."""
    if start >= end:
        return ()
    aborted = partition.aborted_transactions(start, end)
    batches = partition.batches
    found = []
    position = bisect_left(batches, start, key=lambda b: b.last_offset)
    while position < len(batches) and batches[position].base_offset < end:
        batch = batches[position]
        (header,) = parse_batches(await read_batch(batch, limiter), verify_crc=False)
        position = bisect_left(batches, batch.base_offset, key=lambda b: b.last_offset)
        if header.is_control or (header.is_transactional and any(
                t.producer_id == header.producer_id
                and t.first_offset <= batch.base_offset <= t.last_offset for t in aborted)):
            found.append((batch.base_offset, batch.last_offset))
        position += 1
    return tuple(found)


def split_by_batch_size(
    acquired: Sequence[AcquiredRecords], batch_size: int
) -> list[AcquiredRecords]:
    """Acquired ranges cut into pieces of at most ``batch_size`` records (ShareFetch v1's
    BatchSize: the client acknowledges in such batches)."""
    if batch_size <= 0:
        return list(acquired)
    out = []
    for run in acquired:
        first = run.first_offset
        while first <= run.last_offset:
            last = min(run.last_offset, first + batch_size - 1)
            out.append(AcquiredRecords(first, last, run.delivery_count))
            first = last + 1
    return out
