"""Fetch (key 1), versions 4-18: sessionless full fetches with Kafka's size rules.

- Fetch sessions (KIP-227) are never created: a full request (``session_epoch`` 0 or -1)
  is served in full and answered with ``session_id`` 0, which tells kafka-python,
  librdkafka and Java to keep sending full fetches. An incremental request (any other
  epoch) names a session that cannot exist: FETCH_SESSION_ID_NOT_FOUND, as Kafka answers
  for an unknown session.
- Whole batches from the one holding ``fetch_offset``, each partition up to
  ``partition_max_bytes``, all together up to ``max_bytes`` (capped by the broker's
  ``fetch.max.bytes``). Until some partition has returned data, the first batch is sent
  even when it is larger than those limits (Kafka's ``minOneMessage``), so a large batch
  never blocks a consumer.
- An offset outside [log start, log end] is OFFSET_OUT_OF_RANGE; an unknown topic or
  partition UNKNOWN_TOPIC_OR_PARTITION (UNKNOWN_TOPIC_ID by topic id, v13+). Errored
  partitions carry -1 offsets and empty records, as Kafka's.
- Long-poll: without an error, the answer waits up to ``max_wait_ms`` for ``min_bytes``
  to become readable, woken by Produce (and topic creation/deletion).
- ``isolation_level`` 1 (read_committed) reads up to the last stable offset (the first
  offset of the earliest open transaction) and lists the aborted transactions that
  overlap the returned batches (``producer_id``, ``first_offset``), so the client drops
  their records; control batches (markers) are returned like any batch.
  read_uncommitted reports null.
- ``records`` is never null: b"" when there is nothing (librdkafka needs that).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import trio

import wire
from coordinator.broker import config as broker_config
from coordinator.broker.partition_log import PartitionLog
from coordinator.broker.topics import FetchTarget, TopicStore
from coordinator.server.api_support import leadership_error, store_of
from coordinator.server.route import Acl, AclOperation, Entries, ResourceType, Route
from wire import ErrorCode
from wire.constants import ApiKey, IsolationLevel
from wire.records import parse_batches

if TYPE_CHECKING:
    from coordinator.server.context import RequestContext

__all__ = ["ROUTE", "handle"]

_TOPIC_ID_VERSION = 13
_FULL_FETCH_EPOCHS = (0, -1)  # INITIAL_EPOCH, FINAL_EPOCH


@dataclass(frozen=True, slots=True)
class _Wanted:
    """One requested partition: resolved to a topic name, or the error it gets."""

    topic: str | None
    topic_id: uuid.UUID | None  # v13+: re-resolved when read (the name may be reused)
    partition: int
    fetch_offset: int
    max_bytes: int
    unknown: ErrorCode
    #: With several brokers: why this one cannot serve the partition (not its leader, a
    #: stale or unknown leader epoch), or None.
    not_led: ErrorCode | None = None


def _resolve(
    ctx: RequestContext, store: TopicStore, body: Any, version: int
) -> list[tuple[Any, list[_Wanted]]]:
    out: list[tuple[Any, list[_Wanted]]] = []
    for topic_request in body.topics:
        if version >= _TOPIC_ID_VERSION:
            topic = store.by_id(topic_request.topic_id)
            unknown = ErrorCode.UNKNOWN_TOPIC_ID
        else:
            topic = store.get(topic_request.topic)
            unknown = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        wanted = [
            _Wanted(
                topic.name if topic is not None else None,
                topic.topic_id if topic is not None and version >= _TOPIC_ID_VERSION else None,
                p.partition,
                p.fetch_offset,
                p.partition_max_bytes,
                unknown,
                None if topic is None else leadership_error(
                    ctx, topic.name, p.partition, p.get("current_leader_epoch", -1)
                ),
            )
            for p in topic_request.partitions
        ]
        out.append((topic_request, wanted))
    return out


def _failed(index: int, code: ErrorCode) -> dict[str, Any]:
    return {
        "partition_index": index,
        "error_code": code,
        "high_watermark": -1,
        "last_stable_offset": -1,
        "log_start_offset": -1,
        "aborted_transactions": None,
        "records": b"",
    }


def _aborted(partition: PartitionLog, fetch_offset: int, batches: list[bytes]) -> list[Any]:
    """The aborted transactions overlapping what a read_committed fetch returns (Kafka's
    ``collectAbortedTransactions`` up to the offset after the last returned batch)."""
    if not batches:
        return []
    (last,) = parse_batches(batches[-1], verify_crc=False)
    return [
        {"producer_id": t.producer_id, "first_offset": t.first_offset}
        for t in partition.aborted_transactions(fetch_offset, last.last_offset + 1)
    ]


class _Reader:
    """Reads partitions in request order, sharing the response's byte budget."""

    def __init__(self, store: TopicStore, max_bytes: int, read_committed: bool) -> None:
        self.store = store
        self.remaining = max_bytes
        self.min_one = True
        self.read_committed = read_committed

    async def read(self, wanted: _Wanted) -> dict[str, Any]:
        if wanted.topic_id is not None:
            topic = self.store.by_id(wanted.topic_id)
            if topic is None:
                return _failed(wanted.partition, ErrorCode.UNKNOWN_TOPIC_ID)
        elif wanted.topic is not None:
            topic = self.store.get(wanted.topic)
        else:
            return _failed(wanted.partition, wanted.unknown)
        partition = topic.partition(wanted.partition) if topic is not None else None
        if partition is None:
            return _failed(wanted.partition, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        if wanted.not_led is not None:
            return _failed(wanted.partition, wanted.not_led)
        if not partition.offset_in_range(wanted.fetch_offset):
            return _failed(wanted.partition, ErrorCode.OFFSET_OUT_OF_RANGE)
        batches = await partition.read(
            wanted.fetch_offset,
            min(wanted.max_bytes, self.remaining),
            self.min_one,
            partition.fetchable_offset(self.read_committed),
            self.store.read_limiter,
        )
        records = b"".join(batches)
        if records:
            self.min_one = False
            self.remaining = max(0, self.remaining - len(records))
        return {
            "partition_index": wanted.partition,
            "error_code": ErrorCode.NONE,
            "high_watermark": partition.high_watermark,
            "last_stable_offset": partition.last_stable_offset,
            "log_start_offset": partition.log_start_offset,
            "aborted_transactions": (
                _aborted(partition, wanted.fetch_offset, batches) if self.read_committed else None
            ),
            "records": records,
        }


async def handle(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any] | None:
    """Serve a full fetch, long-polling up to ``max_wait_ms`` for ``min_bytes``."""
    body = request.body
    version = request.api_version
    if version >= 7 and body.session_epoch not in _FULL_FETCH_EPOCHS:
        return {
            "throttle_time_ms": 0,
            "error_code": ErrorCode.FETCH_SESSION_ID_NOT_FOUND,
            "session_id": 0,
            "responses": [],
        }
    store = store_of(ctx)
    broker_max = broker_config.fetch_max_bytes(ctx.state.config)
    max_bytes = min(body.max_bytes, broker_max)
    min_bytes = min(body.min_bytes, broker_max)
    read_committed = body.isolation_level == IsolationLevel.READ_COMMITTED
    resolved = _resolve(ctx, store, body, version)

    wanted_all = [w for _, wanted in resolved for w in wanted]
    targets = [
        FetchTarget(w.topic, w.partition, w.fetch_offset, w.max_bytes, w.topic_id)
        for w in wanted_all
        if w.topic is not None
    ]
    answer_now = (
        body.max_wait_ms <= 0
        or not wanted_all
        or len(targets) != len(wanted_all)
        or any(w.not_led is not None for w in wanted_all)
        or store.fetch_ready(targets, min_bytes, read_committed)
    )
    if not answer_now:
        deadline = trio.current_time() + body.max_wait_ms / 1000
        await store.wait_for_data(targets, deadline, min_bytes, read_committed)

    reader = _Reader(store, max_bytes, read_committed)
    responses = []
    for topic_request, wanted in resolved:
        responses.append(
            {
                "topic": topic_request.topic,
                "topic_id": topic_request.topic_id,
                "partitions": [await reader.read(w) for w in wanted],
            }
        )
    return {
        "throttle_time_ms": 0,
        "error_code": ErrorCode.NONE,
        "session_id": 0,
        "responses": responses,
    }


ROUTE = Route(
    ApiKey.FETCH,
    handle,
    acl=(Acl(ResourceType.TOPIC, AclOperation.READ, "from a consumer",
             entries=(Entries("topics", "topic"),)),
         Acl(ResourceType.CLUSTER, AclOperation.CLUSTER_ACTION, "from a follower")),
    may_wait=True,
    parks=True,  # the long poll
)
