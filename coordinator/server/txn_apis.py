"""The transaction APIs between the wire and the transaction runtime: InitProducerId for a
transactional id (22), AddPartitionsToTxn (24), AddOffsetsToTxn (25), EndTxn (26; v5 is a
transaction-version-2 client's, answered with its new producer id and epoch),
TxnOffsetCommit (28, through the group coordinator, as in Kafka; v5 adds the group's
offsets partition to the transaction itself),
and the admin APIs DescribeTransactions (65) and ListTransactions (66).

A server without a transaction runtime (no topic store) answers the coordinator APIs with
COORDINATOR_NOT_AVAILABLE, Kafka's answer while ``__transaction_state`` is unavailable.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import wire
from coordinator.core.txn_offsets import handle_txn_offset_commit
from coordinator.server.group_apis import TopicView
from coordinator.txn import OFFSETS_TOPIC, TopicPartition, partition_for
from coordinator.txn.handlers import (
    handle_add_offsets_to_txn,
    handle_add_partitions_to_txn,
    handle_describe_transactions,
    handle_end_txn,
    handle_init_producer_id,
    handle_list_transactions,
)
from coordinator.txn.messages import (
    AddOffsetsToTxnRequest,
    AddPartitionsToTxnRequest,
    DescribeTransactionsRequest,
    EndTxnRequest,
    InitProducerIdRequest,
    ListTransactionsRequest,
)
from wire import ErrorCode

if TYPE_CHECKING:
    from coordinator.server.context import RequestContext
    from coordinator.server.txn_runtime import TransactionRuntime

_BATCHED_TXN_VERSION = 4  # AddPartitionsToTxn v4+: several transactions, from brokers
_IMPLICIT_ADD_OFFSETS_VERSION = 5  # TxnOffsetCommit v5+: may add the offsets partition

__all__ = [
    "add_offsets_to_txn",
    "add_partitions_to_txn",
    "describe_transactions",
    "end_txn",
    "init_producer_id",
    "list_transactions",
    "transactions_of",
    "txn_offset_commit",
]


def transactions_of(ctx: RequestContext) -> TransactionRuntime | None:
    """The server's transaction runtime, if it has one."""
    runtime: TransactionRuntime | None = getattr(ctx.state, "transactions", None)
    return runtime


async def init_producer_id(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any]:
    """A transactional producer's id and next epoch (fencing the previous one)."""
    body = request.body
    runtime = transactions_of(ctx)
    if runtime is None:
        return {"throttle_time_ms": 0, "error_code": ErrorCode.COORDINATOR_NOT_AVAILABLE,
                "producer_id": -1, "producer_epoch": -1}
    req = InitProducerIdRequest(
        transactional_id=body.transactional_id,
        transaction_timeout_ms=body.transaction_timeout_ms,
        producer_id=body.producer_id,
        producer_epoch=body.producer_epoch,
        version=request.api_version,
    )
    response = await runtime.call(handle_init_producer_id, ctx, req)
    return {"throttle_time_ms": 0, "error_code": response.error_code,
            "producer_id": response.producer_id, "producer_epoch": response.producer_epoch}


def _partition_results(topics: list[tuple[str, list[int]]],
                       errors: dict[TopicPartition, int]) -> list[dict[str, Any]]:
    return [
        {
            "name": name,
            "results_by_partition": [
                {"partition_index": p, "partition_error_code": errors[TopicPartition(name, p)]}
                for p in parts
            ],
        }
        for name, parts in topics
    ]


async def _add_partitions(
    ctx: RequestContext, version: int, transactional_id: str, producer_id: int,
    producer_epoch: int, topics: list[tuple[str, list[int]]], verify_only: bool,
) -> dict[TopicPartition, int]:
    runtime = transactions_of(ctx)
    if runtime is None:
        return {TopicPartition(name, p): ErrorCode.COORDINATOR_NOT_AVAILABLE
                for name, parts in topics for p in parts}
    req = AddPartitionsToTxnRequest(
        transactional_id=transactional_id,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        partitions=tuple(TopicPartition(name, p) for name, parts in topics for p in parts),
        version=version,
        verify_only=verify_only,
    )
    response = await runtime.call(handle_add_partitions_to_txn, ctx, req)
    errors: dict[TopicPartition, int] = response.errors
    return errors


async def add_partitions_to_txn(
    ctx: RequestContext, request: wire.DecodedRequest
) -> dict[str, Any]:
    """Add partitions to the producer's transaction (v0-3, clients), or for each of several
    transactions add or, with ``verify_only``, check them (v4+, brokers)."""
    body = request.body
    version = request.api_version
    if version < _BATCHED_TXN_VERSION:
        topics = [(t.name, list(t.partitions)) for t in body.v3_and_below_topics]
        errors = await _add_partitions(
            ctx, version, body.v3_and_below_transactional_id,
            body.v3_and_below_producer_id, body.v3_and_below_producer_epoch, topics, False)
        return {"throttle_time_ms": 0,
                "results_by_topic_v3_and_below": _partition_results(topics, errors)}
    results = []
    for txn in body.transactions:
        topics = [(t.name, list(t.partitions)) for t in txn.topics]
        errors = await _add_partitions(ctx, version, txn.transactional_id, txn.producer_id,
                                       txn.producer_epoch, topics, bool(txn.verify_only))
        results.append({"transactional_id": txn.transactional_id,
                        "topic_results": _partition_results(topics, errors)})
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE,
            "results_by_transaction": results}


async def add_offsets_to_txn(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any]:
    """Add the group's offsets partition to the producer's transaction."""
    body = request.body
    runtime = transactions_of(ctx)
    if runtime is None:
        return {"throttle_time_ms": 0, "error_code": ErrorCode.COORDINATOR_NOT_AVAILABLE}
    req = AddOffsetsToTxnRequest(
        transactional_id=body.transactional_id,
        producer_id=body.producer_id,
        producer_epoch=body.producer_epoch,
        group_id=body.group_id,
        version=request.api_version,
    )
    response = await runtime.call(handle_add_offsets_to_txn, ctx, req)
    return {"throttle_time_ms": 0, "error_code": response.error_code}


async def end_txn(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any]:
    """Commit or abort the producer's transaction (answered once its markers are written)."""
    body = request.body
    runtime = transactions_of(ctx)
    if runtime is None:
        return {"throttle_time_ms": 0, "error_code": ErrorCode.COORDINATOR_NOT_AVAILABLE}
    req = EndTxnRequest(
        transactional_id=body.transactional_id,
        producer_id=body.producer_id,
        producer_epoch=body.producer_epoch,
        committed=bool(body.committed),
        version=request.api_version,
    )
    response = await runtime.call(handle_end_txn, ctx, req)
    await runtime.markers_settled(req.transactional_id)
    # v5 (transaction version 2) answers the id and epoch the producer continues with.
    return {"throttle_time_ms": 0, "error_code": response.error_code,
            "producer_id": response.producer_id, "producer_epoch": response.producer_epoch}


async def txn_offset_commit(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any]:
    """Stage a transaction's offsets in the group coordinator; partitions of unknown topics
    are UNKNOWN_TOPIC_OR_PARTITION, as KafkaApis answers them."""
    body = request.body
    view = TopicView(ctx.state.topics)
    refused: list[dict[str, Any]] = []
    valid: list[dict[str, Any]] = []
    for topic in body["topics"]:
        count = view.partition_count(topic["name"])
        good = [p for p in topic["partitions"]
                if count is not None and 0 <= p["partition_index"] < count]
        bad = [{"partition_index": p["partition_index"],
                "error_code": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
               for p in topic["partitions"]
               if count is None or not 0 <= p["partition_index"] < count]
        if bad:
            refused.append({"name": topic["name"], "partitions": bad})
        if good:
            valid.append({"name": topic["name"], "partitions": good})
    topics: list[dict[str, Any]] = []
    if valid and request.api_version >= _IMPLICIT_ADD_OFFSETS_VERSION:
        error = await _add_offsets_implicitly(ctx, body)
        if error != ErrorCode.NONE:
            refused.extend(
                {"name": t["name"], "partitions": [
                    {"partition_index": p["partition_index"], "error_code": error}
                    for p in t["partitions"]]}
                for t in valid)
            valid = []
    if valid:
        response = await ctx.state.groups.call(
            handle_txn_offset_commit, ctx, {**body, "topics": valid}
        )
        topics.extend({"name": t["name"], "partitions": list(t["partitions"])}
                      for t in response["topics"])
    for t in refused:
        same = next((o for o in topics if o["name"] == t["name"]), None)
        if same is None:
            topics.append(t)
        else:
            same["partitions"].extend(t["partitions"])
    return {"throttle_time_ms": 0, "topics": topics}


async def _add_offsets_implicitly(ctx: RequestContext, body: Any) -> ErrorCode:
    """TxnOffsetCommit v5+ (KIP-890 part 2): the group's ``__consumer_offsets`` partition
    joins the transaction here, as the AddOffsetsToTxn a transaction-version-2 client no
    longer sends. As in Kafka the request version decides (``addPartition`` for v5+), not
    the finalized level: a client sends v5 only once it sees ``transaction.version`` 2."""
    runtime = transactions_of(ctx)
    if runtime is None:
        return ErrorCode.COORDINATOR_NOT_AVAILABLE
    config = runtime.coordinator.config
    tp = TopicPartition(OFFSETS_TOPIC,
                        partition_for(body["group_id"], config.offsets_topic_num_partitions))
    txn_id = body["transactional_id"]
    producer_id, producer_epoch = body["producer_id"], body["producer_epoch"]
    if runtime.in_transaction(txn_id, producer_id, producer_epoch, tp):
        return ErrorCode.NONE
    errors = await runtime.add_partitions_implicitly(txn_id, producer_id, producer_epoch, [tp])
    return errors[tp]


async def describe_transactions(
    ctx: RequestContext, request: wire.DecodedRequest
) -> dict[str, Any]:
    """Each transactional id's state, producer, timeout and partitions."""
    ids = tuple(request.body.transactional_ids)
    runtime = transactions_of(ctx)
    if runtime is None:
        return {"throttle_time_ms": 0, "transaction_states": [
            {"error_code": ErrorCode.COORDINATOR_NOT_AVAILABLE, "transactional_id": txn_id}
            for txn_id in ids]}
    response = await runtime.call(
        handle_describe_transactions, ctx, DescribeTransactionsRequest(ids)
    )
    return {"throttle_time_ms": 0, "transaction_states": [
        {
            "error_code": d.error_code,
            "transactional_id": d.transactional_id,
            "transaction_state": d.transaction_state,
            "transaction_timeout_ms": d.transaction_timeout_ms,
            "transaction_start_time_ms": d.transaction_start_time_ms,
            "producer_id": d.producer_id,
            "producer_epoch": d.producer_epoch,
            "topics": [{"topic": t, "partitions": list(ps)} for t, ps in d.topics],
        }
        for d in response.transaction_states
    ]}


async def list_transactions(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any]:
    """Transactional ids by state, producer id and (v1) open duration."""
    body = request.body
    runtime = transactions_of(ctx)
    if runtime is None:
        return {"throttle_time_ms": 0, "error_code": ErrorCode.COORDINATOR_NOT_AVAILABLE}
    req = ListTransactionsRequest(
        state_filters=tuple(body.state_filters),
        producer_id_filters=tuple(body.producer_id_filters),
        duration_filter=body.duration_filter if request.api_version >= 1 else -1,
    )
    response = await runtime.call(handle_list_transactions, ctx, req)
    return {
        "throttle_time_ms": 0,
        "error_code": response.error_code,
        "unknown_state_filters": list(response.unknown_state_filters),
        "transaction_states": [
            {"transactional_id": t.transactional_id, "producer_id": t.producer_id,
             "transaction_state": t.transaction_state}
            for t in response.transaction_states
        ],
    }
