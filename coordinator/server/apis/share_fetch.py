"""ShareFetch (key 78), versions 1-2 (Kafka 4.2): a share group member's fetch, as
``KafkaApis.handleShareFetchRequest`` and ``SharePartitionManager`` serve it.

- Share sessions keyed by (group, member) with epochs (``coordinator/share/sessions.py``):
  epoch 0 opens one (acknowledgements in it: INVALID_REQUEST), later epochs must follow
  the session's (INVALID_SHARE_SESSION_EPOCH; none: SHARE_SESSION_NOT_FOUND), a full
  cache is SHARE_SESSION_LIMIT_REACHED (``group.share.max.share.sessions``; first the
  sessions of closed connections are dropped, releasing their records, as Kafka drops them
  at disconnect; the error is answered after ``max_wait_ms``, as Kafka's), -1 applies the
  acknowledgements, releases what the member holds on the session's partitions and closes
  the session. A session error answers the whole request, with nothing done.
- Piggybacked acknowledgements (ACCEPT, RELEASE, REJECT; RENEW in v2) are persisted
  before the answer; each partition's outcome is its ``acknowledge_error_code``.
- Records are acquired over the session's partitions up to ``max_records`` (locked for
  the group's ``share.record.lock.duration.ms``, else the broker's
  ``group.share.record.lock.duration.ms``: the answer's ``acquisition_lock_timeout_ms``)
  and returned as the whole record batches holding them, read from the topic's log, with
  the ``acquired_records`` ranges (cut to ``batch_size``) and their delivery counts. A
  share partition with no state starts where the group's ``share.auto.offset.reset`` says
  (latest by default; earliest; by_duration); its first snapshot is written before anything
  is acquired.
- ``max_bytes`` bounds the batches read, shared evenly among the session's partitions
  (Kafka's uniform partition max bytes): each partition acquires only within the whole
  batches that fit its share, read from its first available offset, but always within the
  first one (KIP-74: a batch larger than the limit still comes); 0 fetches nothing.
- Long poll: with nothing acquired (or fewer than ``min_bytes``), the answer waits up to
  ``max_wait_ms`` for records to be produced or released (an acknowledgement, a lock
  expiring, a session closing).
- ``is_renew_ack`` (v2): only the acknowledgements; nothing is acquired.
- The first answer of a session lists every partition it names; later ones only those
  with records, an error or an acknowledgement outcome.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import trio

import wire
from coordinator.broker.topics import FetchTarget
from coordinator.server.api_support import store_of
from coordinator.server.route import Acl, AclOperation, Entries, ResourceType, Route
from coordinator.server.share_support import (
    acquired_batches,
    bytes_bounded_end,
    group_by_topic,
    partition_log,
    read_acquired,
    share_runtime_of,
    skipped_ranges,
    split_by_batch_size,
    start_request,
)
from coordinator.share.durable import SharePartitionKey
from coordinator.share.manager import (
    AcquireAnswer,
    AcquireRequest,
    AcquireTarget,
    ShareAppendFailed,
    handle_acquire,
)
from coordinator.share.offset_reset import initial_start_offset, reset_timestamp
from coordinator.share.sessions import INITIAL_EPOCH
from coordinator.share.states import AcquiredRecords
from wire import ErrorCode
from wire.constants import ApiKey

if TYPE_CHECKING:
    from coordinator.broker.partition_log import PartitionLog
    from coordinator.broker.topics import TopicStore
    from coordinator.server.context import RequestContext
    from coordinator.server.share_runtime import ShareRuntime

__all__ = ["ROUTE", "handle"]

_MAX_INITIALIZING_ROUNDS = 4  # a new partition's first snapshot, then the acquisition
_MAX_EAGER_ROUNDS = 8  # acquisitions retried at once while unread records remain


async def handle(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any]:
    """Serve one ShareFetch."""
    body = request.body
    shares = share_runtime_of(ctx)
    store = store_of(ctx)
    group_id = body.group_id or ""
    started = await start_request(ctx, "fetch", body)
    if isinstance(started, dict):
        return started
    parts, session = started
    acquired: dict[SharePartitionKey, list[AcquiredRecords]] = {}
    fetch_error: ErrorCode | None = None
    if not session.closed and not body.get("is_renew_ack", False):
        keys = [k for k in session.partitions if k not in parts.errors]
        fetched = await _acquire(ctx, shares, store, group_id, body, keys)
        if isinstance(fetched, ShareAppendFailed):
            fetch_error = fetched.error
        else:
            acquired = fetched
    entries = []
    listed = set(parts.keys) if body.share_session_epoch == INITIAL_EPOCH else set()
    order = list(dict.fromkeys([*parts.keys, *session.partitions]))
    for key in order:
        entry = await _partition_entry(ctx, store, key, parts.errors.get(key), fetch_error,
                                 acquired.get(key, []), body.get("batch_size", 0))
        ack = session.acknowledge_errors.get(key)
        if ack is not None:
            entry["acknowledge_error_code"], entry["acknowledge_error_message"] = ack
        if key in listed or ack is not None or entry["error_code"] or entry["acquired_records"]:
            entries.append((key, entry))
    return {
        "throttle_time_ms": 0,
        "error_code": ErrorCode.NONE,
        "acquisition_lock_timeout_ms": shares.lock_duration_ms(group_id),
        "responses": group_by_topic(entries),
        "node_endpoints": [],
    }


async def _partition_entry(
    ctx: RequestContext, store: TopicStore, key: SharePartitionKey, error: ErrorCode | None,
    fetch_error: ErrorCode | None, acquired: list[AcquiredRecords], batch_size: int,
) -> dict[str, Any]:
    entry: dict[str, Any] = {"partition_index": key.partition, "error_code": ErrorCode.NONE,
                             "acknowledge_error_code": ErrorCode.NONE, "records": b"",
                             "acquired_records": []}
    partition, code = partition_log(ctx, store, key)
    if error is not None or partition is None:
        entry["error_code"] = error if error is not None else code
        return entry
    if fetch_error is not None:
        entry["error_code"] = fetch_error
        return entry
    entry["records"] = await read_acquired(partition, acquired, store.read_limiter)
    entry["acquired_records"] = [
        {"first_offset": r.first_offset, "last_offset": r.last_offset,
         "delivery_count": r.delivery_count}
        for r in split_by_batch_size(acquired, batch_size)
    ]
    return entry


async def _start_offset(shares: ShareRuntime, group_id: str, partition: PartitionLog,
                        now_ms: int, limiter: trio.CapacityLimiter) -> int:
    """Where a share partition with no state starts (``share.auto.offset.reset``)."""
    reset = shares.auto_offset_reset(group_id)
    found = None
    at = reset_timestamp(reset, now_ms)
    if at is not None:
        hit = await partition.offset_for_timestamp(at, limiter)
        found = None if hit is None else hit[1]
    return initial_start_offset(reset, partition.log_start_offset, partition.high_watermark,
                                found)


async def _acquire(
    ctx: RequestContext, shares: ShareRuntime, store: TopicStore, group_id: str, body: Any,
    keys: list[SharePartitionKey],
) -> dict[SharePartitionKey, list[AcquiredRecords]] | ShareAppendFailed:
    """Acquire records over ``keys``, long-polling up to ``max_wait_ms`` for ``min_bytes``."""
    max_records = body.get("max_records", 500)
    collected: dict[SharePartitionKey, list[AcquiredRecords]] = {}
    if not keys or max_records <= 0 or body.max_bytes <= 0:
        return collected
    deadline = trio.current_time() + max(0, body.max_wait_ms) / 1000
    remaining = max_records
    size = initializing = eager = 0
    read_committed = shares.read_committed(group_id)
    while True:
        changed = shares.changed()
        targets = []
        logs: dict[SharePartitionKey, PartitionLog] = {}
        now_ms = shares.groups.now_ms()
        budget = max(1, (body.max_bytes - size) // len(keys))  # bytes each partition may read
        for key in keys:
            partition, _ = partition_log(ctx, store, key)
            if partition is not None:
                logs[key] = partition
                targets.append(await _target(shares, group_id, key, partition, read_committed,
                                             now_ms, budget, store.read_limiter))
        answer: AcquireAnswer | ShareAppendFailed = await shares.call(
            handle_acquire, ctx, AcquireRequest(group_id, body.member_id or "", tuple(targets),
                                                remaining, shares.lock_duration_ms(group_id)))
        if isinstance(answer, ShareAppendFailed):
            return collected if collected else answer
        for key, runs in answer.acquired.items():
            collected.setdefault(key, []).extend(runs)
            remaining -= sum(r.last_offset - r.first_offset + 1 for r in runs)
        if answer.initializing and initializing < _MAX_INITIALIZING_ROUNDS:
            initializing += 1
            continue
        size = sum(batch.size for k, runs in collected.items()
                   for batch in acquired_batches(logs[k], runs))
        if (collected and size >= min(body.min_bytes, body.max_bytes)) or remaining <= 0:
            return collected
        if trio.current_time() >= deadline:
            return collected
        unread = _unread(shares, logs, read_committed)
        if unread and not answer.acquired and eager < _MAX_EAGER_ROUNDS:
            eager += 1
            continue
        await _wait(store, changed, logs, deadline, read_committed)


async def _target(shares: ShareRuntime, group_id: str, key: SharePartitionKey,
                  partition: PartitionLog, read_committed: bool, now_ms: int,
                  max_bytes: int, limiter: trio.CapacityLimiter) -> AcquireTarget:
    """What the share shard needs to acquire from ``key``: within the batches ``max_bytes``
    reads from the first available offset; under read_committed, up to the last stable
    offset, archiving aborted records and markers instead of delivering them."""
    start = await _start_offset(shares, group_id, partition, now_ms, limiter)
    share = shares.manager.partitions.get(key)
    end = bytes_bounded_end(partition, start if share is None else share.next_fetch_offset(),
                            partition.fetchable_offset(read_committed), max_bytes)
    skipped: tuple[tuple[int, int], ...] = ()
    if read_committed:
        skipped = await skipped_ranges(
            partition, start if share is None else share.start_offset, end, limiter)
    return AcquireTarget(key, end, partition.log_start_offset, start, skipped)


def _unread(shares: ShareRuntime, logs: dict[SharePartitionKey, PartitionLog],
            read_committed: bool) -> bool:
    """Whether some partition has readable records past its share partition's fetched ones
    that it may still take in (fewer than ``group.share.partition.max.record.locks``)."""
    for key, partition in logs.items():
        share = shares.manager.partitions.get(key)
        if share is None:
            continue
        if (partition.fetchable_offset(read_committed) > share.next_offset
                and share.in_flight_count() < share.config.max_record_locks):
            return True
    return False


async def _wait(store: TopicStore, changed: trio.Event,
                logs: dict[SharePartitionKey, PartitionLog], deadline: float,
                read_committed: bool) -> None:
    """Until records become readable on a partition (produced; under read_committed, a
    transaction ended), the share state changes, or deadline."""
    targets = []
    for key, partition in logs.items():
        topic = store.by_id(key.topic_id)
        if topic is not None:
            targets.append(FetchTarget(topic.name, key.partition,
                                       partition.fetchable_offset(read_committed), 1,
                                       key.topic_id))
    with trio.move_on_at(deadline):
        async with trio.open_nursery() as nursery:
            async def on_change() -> None:
                await changed.wait()
                nursery.cancel_scope.cancel()

            async def on_data() -> None:
                await store.wait_for_data(targets, deadline, 1, read_committed)
                nursery.cancel_scope.cancel()

            nursery.start_soon(on_change)
            if targets:
                nursery.start_soon(on_data)


ROUTE = Route(
    ApiKey.SHARE_FETCH,
    handle,
    acl=(Acl(ResourceType.GROUP, AclOperation.READ),
         Acl(ResourceType.TOPIC, AclOperation.READ, entries=(Entries("topics", ""),))),
    may_wait=True,
    parks=True,  # the long poll
)
