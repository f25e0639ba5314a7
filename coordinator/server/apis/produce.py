"""Produce (key 0), versions 3-13: append one record batch per partition.

Per partition, in Kafka's order: an unknown topic or partition is
UNKNOWN_TOPIC_OR_PARTITION (UNKNOWN_TOPIC_ID for v13's topic ids; Produce never
auto-creates, Metadata does); then the batch checks of
:func:`coordinator.broker.batches.validate_produced_batch` (INVALID_RECORD,
CORRUPT_MESSAGE for a bad CRC or layout, MESSAGE_TOO_LARGE above ``message.max.bytes``,
UNSUPPORTED_COMPRESSION_TYPE); ``acks`` other than 0, 1, -1 is INVALID_REQUIRED_ACKS.
Idempotent producers' sequences are checked per partition (OUT_OF_ORDER_SEQUENCE_NUMBER,
INVALID_PRODUCER_EPOCH) and a retried batch gets its first append's offset back.

Transactional batches without a ``transactional_id`` are
TRANSACTIONAL_ID_AUTHORIZATION_FAILED for the whole request (as Kafka). With one, a batch
that would open a transaction on a partition the transaction coordinator does not have in
the producer's transaction is INVALID_TXN_STATE (Kafka's transaction verification,
``transaction.partition.verification.enable``, on by default). From v12 (KIP-890 part 2,
a transaction-version-2 client) such a partition is added to the transaction first, as
Kafka's broker does with AddPartitionsToTxn v5 (``addPartition``): the coordinator's
errors answer the partition, PRODUCER_FENCED as INVALID_PRODUCER_EPOCH and the retriable
coordinator errors as NOT_ENOUGH_REPLICAS (``ReplicaManager``'s translation).

``acks=0`` appends and returns None: Kafka sends no response.
"""

from __future__ import annotations

import dataclasses
import struct
from typing import TYPE_CHECKING, Any, NamedTuple

import wire
from coordinator.broker import config as broker_config
from coordinator.broker.batches import stamp_log_append_time, validate_produced_batch
from coordinator.broker.errors import BrokerError
from coordinator.broker.topics import Topic
from coordinator.server.api_support import (
    group_runtime,
    leader_epoch_of,
    leadership_error,
    store_of,
)
from coordinator.server.internal_topics import internal_topic_by_id, is_internal
from coordinator.server.route import Acl, AclOperation, Entries, ResourceType, Route
from coordinator.server.txn_apis import transactions_of
from coordinator.txn.state import TopicPartition
from wire import ErrorCode
from wire.constants import ApiKey
from wire.records import ATTR_TRANSACTIONAL

if TYPE_CHECKING:
    from coordinator.broker.topics import TopicStore
    from coordinator.server.context import RequestContext

__all__ = ["ROUTE", "handle"]

_TOPIC_ID_VERSION = 13
_IMPLICIT_ADD_VERSION = 12  # KIP-890 part 2: the broker adds the partition to the txn
#: Coordinator errors a producer may not retry well, answered as NOT_ENOUGH_REPLICAS.
_RETRIABLE_AS = dict.fromkeys(
    (ErrorCode.CONCURRENT_TRANSACTIONS, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
     ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.NOT_COORDINATOR),
    ErrorCode.NOT_ENOUGH_REPLICAS,
)
_ATTRIBUTES_AT = 21
_PRODUCER_AT = 43  # the first batch's producer id (int64), then its epoch (int16)
_VALID_ACKS = (-1, 0, 1)


class _Target(NamedTuple):
    """One topic of a Produce request, looked up once (``_target``)."""

    topic: Topic | None
    unknown: ErrorCode  # what its partitions answer when ``topic`` is None
    internal_name: str | None  # an internal topic's name: refused


def _failed(index: int, code: ErrorCode, message: str | None = None) -> dict[str, Any]:
    return {
        "index": index,
        "error_code": code,
        "base_offset": -1,
        "log_append_time_ms": -1,
        "log_start_offset": -1,
        "error_message": message,
    }


def _is_transactional(records: bytes | None) -> bool:
    if not records or len(records) < _ATTRIBUTES_AT + 2:
        return False
    return bool(int.from_bytes(records[_ATTRIBUTES_AT : _ATTRIBUTES_AT + 2]) & ATTR_TRANSACTIONAL)


def _transactional_producer(records: bytes | None) -> tuple[int, int] | None:
    """(producer id, epoch) of a transactional batch; None for others and unreadable ones
    (the append reports those)."""
    if not _is_transactional(records) or len(records or b"") < _PRODUCER_AT + 10:
        return None
    assert records is not None
    producer_id, epoch = struct.unpack_from(">qh", records, _PRODUCER_AT)
    return producer_id, epoch


async def _add_partitions_implicitly(
    ctx: RequestContext, body: Any, topics: list[_Target]
) -> dict[TopicPartition, ErrorCode]:
    """Produce v12+: add each transactional batch's partition its transaction does not hold
    yet (one call for the request, as Kafka's broker does); the partitions refused. Batches
    of more than one producer id are INVALID_PRODUCER_ID_MAPPING (Kafka refuses such a
    request)."""
    runtime = transactions_of(ctx)
    txn_id = body.transactional_id
    if runtime is None or txn_id is None:
        return {}
    wanted: dict[tuple[int, int], list[TopicPartition]] = {}
    for topic_data, (topic, _, _) in zip(body.topic_data, topics, strict=True):
        for data in topic_data.partition_data:
            batch_producer = _transactional_producer(data.records)
            if topic is None or batch_producer is None or topic.partition(data.index) is None:
                continue
            if leadership_error(ctx, topic.name, data.index) is not None:
                continue
            tp = TopicPartition(topic.name, data.index)
            if not runtime.in_transaction(txn_id, *batch_producer, tp):
                wanted.setdefault(batch_producer, []).append(tp)
    if len({producer_id for producer_id, _ in wanted}) > 1:
        return {tp: ErrorCode.INVALID_PRODUCER_ID_MAPPING for tps in wanted.values() for tp in tps}
    refused: dict[TopicPartition, ErrorCode] = {}
    for (producer_id, epoch), partitions in wanted.items():
        errors = await runtime.add_partitions_implicitly(txn_id, producer_id, epoch, partitions)
        refused.update((tp, _RETRIABLE_AS.get(code, code)) for tp, code in errors.items()
                       if code != ErrorCode.NONE)
    return refused


def _append(
    ctx: RequestContext,
    topic: Topic,
    index: int,
    records: bytes | None,
    transactional_id: str | None,
    max_message_bytes: int,
) -> dict[str, Any]:
    partition = topic.partition(index)
    if partition is None:
        return _failed(index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    not_led = leadership_error(ctx, topic.name, index)
    if not_led is not None:
        return _failed(index, not_led)
    partition.leader_epoch = leader_epoch_of(ctx, topic.name, index)
    configs = topic.configs
    if "max.message.bytes" in configs:  # the topic's, else the broker's message.max.bytes
        max_message_bytes = int(configs["max.message.bytes"])
    append_time = -1
    try:
        header = validate_produced_batch(records, ctx.api_version, max_message_bytes)
        if configs.get("message.timestamp.type",
                       ctx.state.config.get("log.message.timestamp.type")) == "LogAppendTime":
            assert records is not None
            append_time = group_runtime(ctx).now_ms()
            records = stamp_log_append_time(records, append_time)
            header = dataclasses.replace(header, attributes=header.attributes | 0x08,
                                         max_timestamp=append_time)
        verified = True
        if header.is_transactional:
            runtime = transactions_of(ctx)
            verified = (
                runtime is not None
                and transactional_id is not None
                and runtime.in_transaction(
                    transactional_id, header.producer_id, header.producer_epoch,
                    TopicPartition(topic.name, index),
                )
            )
        assert records is not None
        base_offset = store_of(ctx).append(topic, index, records, header, verified=verified)
    except BrokerError as exc:
        return _failed(index, exc.code, exc.message)
    return {
        "index": index,
        "error_code": ErrorCode.NONE,
        "base_offset": base_offset,
        "log_append_time_ms": append_time,
        "log_start_offset": partition.log_start_offset,
        "error_message": None,
    }


def _target(ctx: RequestContext, store: TopicStore, topic_data: Any, version: int) -> _Target:
    """One topic of the request, looked up once: the topic (None: unknown), the error an
    unknown one gets, and its name if it is an internal topic."""
    if version >= _TOPIC_ID_VERSION:
        internal = internal_topic_by_id(topic_data.topic_id, ctx.state.config,
                                        ctx.state.identity.cluster_id)
        return _Target(store.by_id(topic_data.topic_id), ErrorCode.UNKNOWN_TOPIC_ID,
                       None if internal is None else internal.name)
    name = topic_data.name
    return _Target(store.get(name), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                   name if is_internal(name) else None)


async def handle(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any] | None:
    """Append each partition's batch; the per-partition results (None for acks=0)."""
    body = request.body
    version = request.api_version
    store = store_of(ctx)
    max_message_bytes = broker_config.message_max_bytes(ctx.state.config)
    whole_request_error: ErrorCode | None = None
    if body.acks not in _VALID_ACKS:
        whole_request_error = ErrorCode.INVALID_REQUIRED_ACKS
    elif body.transactional_id is None and any(
        _is_transactional(p.records) for t in body.topic_data for p in t.partition_data
    ):
        whole_request_error = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED

    topics = [_target(ctx, store, topic_data, version) for topic_data in body.topic_data]
    refused: dict[TopicPartition, ErrorCode] = {}
    if whole_request_error is None and version >= _IMPLICIT_ADD_VERSION:
        refused = await _add_partitions_implicitly(ctx, body, topics)
    responses: list[dict[str, Any]] = []
    for topic_data, (topic, unknown, internal_name) in zip(body.topic_data, topics, strict=True):
        partitions: list[dict[str, Any]] = []
        for data in topic_data.partition_data:
            if whole_request_error is not None:
                partitions.append(_failed(data.index, whole_request_error))
            elif internal_name is not None:  # Kafka's ReplicaManager refuses these first
                partitions.append(_failed(data.index, ErrorCode.INVALID_TOPIC_EXCEPTION,
                                          f"Cannot append to internal topic {internal_name}"))
            elif topic is None:
                partitions.append(_failed(data.index, unknown))
            elif (refusal := refused.get(TopicPartition(topic.name, data.index))) is not None:
                partitions.append(_failed(data.index, refusal))
            else:
                partitions.append(
                    _append(ctx, topic, data.index, data.records, body.transactional_id,
                            max_message_bytes)
                )
        responses.append(
            {
                "name": topic_data.name,
                "topic_id": topic_data.topic_id,
                "partition_responses": partitions,
            }
        )
    if body.acks == 0:
        return None
    return {"responses": responses, "throttle_time_ms": 0}


ROUTE = Route(
    ApiKey.PRODUCE,
    handle,
    acl=(Acl(ResourceType.TRANSACTIONAL_ID, AclOperation.WRITE, "transactional records"),
         Acl(ResourceType.TOPIC, AclOperation.WRITE, entries=(Entries("topic_data"),))),
    may_wait=True,  # acks=-1 waits for the records to be durable
)
