"""The transaction APIs between the wire and the transaction runtime: InitProducerId for a
transactional id (22), AddPartitionsToTxn (24), AddOffsetsToTxn (25), EndTxn (26; v5 is a
transaction-version-2 client's, answered with its new producer id and epoch),
TxnOffsetCommit (28, through the group coordinator, as in Kafka; v5 adds the group's
offsets partition to the transaction itself),
and the admin APIs DescribeTransactions (65) and ListTransactions (66).

The decoded request goes to the transaction shard's handler as it is (as a group API's goes
to the group core), and its answer back to the wire. A server without a transaction runtime
(no topic store) answers the coordinator APIs with COORDINATOR_NOT_AVAILABLE, Kafka's answer
while ``__transaction_state`` is unavailable.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import wire
from coordinator.core.txn_offsets import handle_txn_offset_commit
from coordinator.server.api_support import TopicView
from coordinator.server.context import group_runtime
from coordinator.txn.handlers import (
    handle_add_offsets_to_txn,
    handle_add_partitions_to_txn,
    handle_describe_transactions,
    handle_end_txn,
    handle_init_producer_id,
    handle_list_transactions,
)
from coordinator.txn.placement import OFFSETS_TOPIC, partition_for
from coordinator.txn.state import TopicPartition
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


async def _call(ctx: RequestContext, handler: Any, body: Any) -> dict[str, Any] | None:
    """The shard's answer, or None without a transaction runtime."""
    runtime = transactions_of(ctx)
    if runtime is None:
        return None
    response: dict[str, Any] = await runtime.call(handler, ctx, body)
    return response


async def init_producer_id(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any]:
    """A transactional producer's id and next epoch (fencing the previous one)."""
    response = await _call(ctx, handle_init_producer_id, request.body)
    return response or {"throttle_time_ms": 0, "error_code": ErrorCode.COORDINATOR_NOT_AVAILABLE,
                        "producer_id": -1, "producer_epoch": -1}


def _unavailable(topics: Any) -> list[dict[str, Any]]:
    return [{"name": t["name"], "results_by_partition": [
        {"partition_index": p, "partition_error_code": ErrorCode.COORDINATOR_NOT_AVAILABLE}
        for p in t["partitions"]]} for t in topics]


async def add_partitions_to_txn(
    ctx: RequestContext, request: wire.DecodedRequest
) -> dict[str, Any]:
    """Add partitions to the producer's transaction (v0-3, clients), or for each of several
    transactions add or, with ``verify_only``, check them (v4+, brokers)."""
    body = request.body
    response = await _call(ctx, handle_add_partitions_to_txn, body)
    if response is not None:
        return response
    if request.api_version < _BATCHED_TXN_VERSION:
        return {"throttle_time_ms": 0,
                "results_by_topic_v3_and_below": _unavailable(body["v3_and_below_topics"])}
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "results_by_transaction": [
        {"transactional_id": t["transactional_id"], "topic_results": _unavailable(t["topics"])}
        for t in body.transactions]}


async def add_offsets_to_txn(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any]:
    """Add the group's offsets partition to the producer's transaction."""
    response = await _call(ctx, handle_add_offsets_to_txn, request.body)
    return response or {"throttle_time_ms": 0, "error_code": ErrorCode.COORDINATOR_NOT_AVAILABLE}


async def end_txn(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any]:
    """Commit or abort the producer's transaction (answered once its markers are written)."""
    response = await _call(ctx, handle_end_txn, request.body)
    runtime = transactions_of(ctx)
    if response is None or runtime is None:
        return {"throttle_time_ms": 0, "error_code": ErrorCode.COORDINATOR_NOT_AVAILABLE,
                "producer_id": -1, "producer_epoch": -1}
    await runtime.markers_settled(request.body.transactional_id)
    return response


async def txn_offset_commit(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any]:
    """Stage a transaction's offsets in the group coordinator; partitions of unknown topics
    are UNKNOWN_TOPIC_OR_PARTITION, as KafkaApis answers them."""
    body = request.body
    view = TopicView(ctx.state.topics)
    refused: list[dict[str, Any]] = []
    valid: list[dict[str, Any]] = []
    for topic in body.topics:
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
        response = await group_runtime(ctx).call(
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
                        partition_for(body.group_id, config.offsets_topic_num_partitions))
    txn_id = body.transactional_id
    producer_id, producer_epoch = body.producer_id, body.producer_epoch
    if runtime.in_transaction(txn_id, producer_id, producer_epoch, tp):
        return ErrorCode.NONE
    errors = await runtime.add_partitions_implicitly(txn_id, producer_id, producer_epoch, [tp])
    return errors[tp]


async def describe_transactions(
    ctx: RequestContext, request: wire.DecodedRequest
) -> dict[str, Any]:
    """Each transactional id's state, producer, timeout and partitions."""
    body = request.body
    response = await _call(ctx, handle_describe_transactions, body)
    return response or {"throttle_time_ms": 0, "transaction_states": [
        {"error_code": ErrorCode.COORDINATOR_NOT_AVAILABLE, "transactional_id": txn_id}
        for txn_id in body.transactional_ids]}


async def list_transactions(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any]:
    """Transactional ids by state, producer id and (v1) open duration."""
    response = await _call(ctx, handle_list_transactions, request.body)
    return response or {"throttle_time_ms": 0, "error_code": ErrorCode.COORDINATOR_NOT_AVAILABLE}
