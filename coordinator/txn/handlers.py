"""The transaction APIs of the coordinator, one function each: (coordinator, context, decoded
request, reply token, now_ms) -> Result, the handler contract of every coordinator shard (the
group core's ``handle_*``). A handler reads the decoded wire body as it is
(``body["transactional_id"]``) and the version from the context, and answers with the dict
the wire encodes.

A handler checks the request against the metadata (``decisions``), answers at once when
nothing is to be written, or prepares the transition and emits its record through
``TransactionCoordinator.write`` with an ``answer``: the requester hears the outcome when the
append completed, with Kafka's mapped error if it failed (``append``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from coordinator.core.result import Effects, ReplyToken, Result
from coordinator.txn.append import Answer, Created, TransitionWritten
from coordinator.txn.coordinator import TransactionCoordinator
from coordinator.txn.decisions import (
    check_add_partitions,
    describe,
    old_fenced,
    prepare_init_producer_id,
    verify_partitions,
)
from coordinator.txn.messages import TxnRequest, TxnResponse
from coordinator.txn.placement import OFFSETS_TOPIC, partition_for
from coordinator.txn.state import (
    TopicPartition,
    TransactionMetadata,
)
from coordinator.txn.transaction_state import TransactionResult, TransactionState
from wire.constants import NO_PRODUCER_EPOCH, NO_PRODUCER_ID, ErrorCode

__all__ = [
    "Versioned",
    "handle_add_offsets_to_txn",
    "handle_add_partitions_to_txn",
    "handle_describe_transactions",
    "handle_end_txn",
    "handle_init_producer_id",
    "handle_list_transactions",
]

_S = TransactionState
_E = ErrorCode
_LAST_END_TXN_VERSION_BEFORE_TV2 = 4  # EndTxn v5+: the client uses transaction version 2
_BATCHED_ADD_PARTITIONS_VERSION = 4  # AddPartitionsToTxn v4+: from brokers, several at once


class Versioned(Protocol):
    """What a handler reads of the request context: the API version."""

    @property
    def api_version(self) -> int:
        """The request's version."""


def _replying(token: ReplyToken, build: Callable[[ErrorCode, int, int], TxnResponse]) -> Answer:
    """An answer that replies to ``token`` with what ``build`` makes of the outcome."""

    def answer(error: ErrorCode, producer_id: int, producer_epoch: int, fx: Effects) -> None:
        fx.reply(token, build(error, producer_id, producer_epoch))

    return answer


# ---------------------------------------------------------------------- InitProducerId


def handle_init_producer_id(
    coordinator: TransactionCoordinator,
    ctx: Versioned,
    body: TxnRequest,
    token: ReplyToken,
    now_ms: int,
) -> Result:
    """A producer id and epoch: a fresh id for an idempotent producer; for a
    transactional one, the next epoch of its id, fencing the previous producer (answered
    once the new epoch, or the fence's abort, is durable)."""
    version = ctx.api_version

    def build(error: ErrorCode, producer_id: int = -1, producer_epoch: int = -1) -> TxnResponse:
        if error != _E.NONE:
            producer_id = producer_epoch = -1
        return {"throttle_time_ms": 0, "error_code": old_fenced(error, version, 4),
                "producer_id": producer_id, "producer_epoch": producer_epoch}

    def fenced(error: ErrorCode, producer_id: int, producer_epoch: int) -> TxnResponse:
        # The open transaction is aborted first; the client retries for its new epoch.
        return build(_E.CONCURRENT_TRANSACTIONS if error == _E.NONE else error)

    fx = coordinator.effects()
    found = _init_producer_id(coordinator, body, now_ms, fx)
    if isinstance(found, tuple):
        error, producer_id, producer_epoch = found
        fx.reply(token, build(error, producer_id, producer_epoch))
    else:
        found(fx, _replying(token, build), _replying(token, fenced))
    return fx.result()


def _init_producer_id(
    coordinator: TransactionCoordinator, body: TxnRequest, now_ms: int, fx: Effects
) -> tuple[ErrorCode, int, int] | Callable[[Effects, Answer, Answer], None]:
    """The answer (error, producer id, epoch), or what writes the transition."""
    producer_id, producer_epoch = body["producer_id"], body["producer_epoch"]
    if (producer_id == NO_PRODUCER_ID) != (producer_epoch == NO_PRODUCER_EPOCH):
        return _E.INVALID_REQUEST, -1, -1
    txn_id = body["transactional_id"]
    if txn_id is None:
        return _E.NONE, coordinator.generate_producer_id(), 0
    if txn_id == "":
        return _E.INVALID_REQUEST, -1, -1
    timeout = body["transaction_timeout_ms"]
    manager = coordinator.manager
    if not manager.validate_transaction_timeout_ms(timeout):
        return _E.INVALID_TRANSACTION_TIMEOUT, -1, -1
    expected = None if producer_id == NO_PRODUCER_ID else producer_epoch
    found = manager.get_transaction_state(txn_id)
    if isinstance(found, ErrorCode):
        return found, -1, -1
    coordinator_epoch, metadata = found
    created = metadata is None
    if metadata is None:
        metadata = TransactionMetadata(
            txn_id, coordinator.generate_producer_id(), NO_PRODUCER_EPOCH, timeout, _S.EMPTY,
            now_ms,
        )
        manager.put_transaction_state_if_not_exists(metadata)
    prepared = prepare_init_producer_id(
        metadata, timeout, producer_id, expected, now_ms, coordinator.generate_producer_id
    )
    if isinstance(prepared, ErrorCode):
        if created:
            manager.remove(txn_id)
        return prepared, -1, -1
    if prepared.txn_state == _S.PREPARE_EPOCH_FENCE:

        def fence(fx: Effects, answer: Answer, fenced: Answer) -> None:
            error, _, _ = coordinator.end_transaction(
                txn_id, prepared.producer_id, prepared.producer_epoch, TransactionResult.ABORT,
                False, coordinator.config.transaction_version, now_ms, fx, fenced,
            )
            if error != _E.NONE:
                fenced(error, -1, -1, fx)

        return fence
    kind = Created if created else TransitionWritten

    def bump(fx: Effects, answer: Answer, fenced: Answer) -> None:
        coordinator.write(kind(manager, coordinator_epoch, metadata, prepared, answer), fx)

    return bump


# ---------------------------------------------------------------------- partitions


def _topic_partitions(topics: Sequence[Any]) -> tuple[TopicPartition, ...]:
    return tuple(TopicPartition(t["name"], p) for t in topics for p in t["partitions"])


def _results_by_topic(
    topics: Sequence[Any], errors: dict[TopicPartition, int]
) -> list[dict[str, Any]]:
    return [
        {"name": t["name"], "results_by_partition": [
            {"partition_index": p, "partition_error_code": errors[TopicPartition(t["name"], p)]}
            for p in t["partitions"]
        ]}
        for t in topics
    ]


def handle_add_partitions_to_txn(
    coordinator: TransactionCoordinator,
    ctx: Versioned,
    body: TxnRequest,
    token: ReplyToken,
    now_ms: int,
) -> Result:
    """Add partitions to the producer's transaction (v0-3, clients), or for each of several
    transactions add them or, with ``verify_only``, check that they are in it (v4+, brokers).
    Answered once every addition is durable (or refused)."""
    version = ctx.api_version
    fx = coordinator.effects()
    if version < _BATCHED_ADD_PARTITIONS_VERSION:
        topics = body["v3_and_below_topics"]
        transactions = [(body["v3_and_below_transactional_id"], body["v3_and_below_producer_id"],
                         body["v3_and_below_producer_epoch"], topics, False)]

        def build(results: list[dict[TopicPartition, int]]) -> TxnResponse:
            return {"throttle_time_ms": 0,
                    "results_by_topic_v3_and_below": _results_by_topic(topics, results[0])}
    else:
        transactions = [(t["transactional_id"], t["producer_id"], t["producer_epoch"],
                         t["topics"], bool(t["verify_only"])) for t in body["transactions"]]

        def build(results: list[dict[TopicPartition, int]]) -> TxnResponse:
            return {"throttle_time_ms": 0, "error_code": _E.NONE, "results_by_transaction": [
                {"transactional_id": txn[0], "topic_results": _results_by_topic(txn[3], errors)}
                for txn, errors in zip(transactions, results, strict=True)
            ]}

    batch = _Batch(token, build, len(transactions))
    if not transactions:
        fx.reply(token, build([]))
    for index, (txn_id, producer_id, producer_epoch, topics, verify_only) in enumerate(
        transactions
    ):
        partitions = _topic_partitions(topics)
        if verify_only:
            found = coordinator.manager.get_transaction_state(txn_id)
            batch.fill(index, verify_partitions(found, txn_id, producer_id, producer_epoch,
                                                partitions), fx)
            continue
        error = _add_partitions_or_answer(
            coordinator, txn_id, producer_id, producer_epoch, partitions, version, now_ms, fx,
            batch.answer(index, partitions, version),
        )
        if error is not None:
            batch.fill(index, error, fx)
    return fx.result()


class _Batch:
    """The answer of a batch of additions, sent once each has its outcome."""

    __slots__ = ("build", "missing", "results", "token")

    def __init__(
        self, token: ReplyToken,
        build: Callable[[list[dict[TopicPartition, int]]], TxnResponse], count: int,
    ) -> None:
        self.token = token
        self.build = build
        self.results: list[dict[TopicPartition, int]] = [{} for _ in range(count)]
        self.missing = count

    def fill(self, index: int, errors: dict[TopicPartition, int], fx: Effects) -> None:
        self.results[index] = errors
        self.missing -= 1
        if self.missing == 0:
            fx.reply(self.token, self.build(self.results))

    def answer(self, index: int, partitions: tuple[TopicPartition, ...], version: int) -> Answer:
        def answer(error: ErrorCode, producer_id: int, producer_epoch: int, fx: Effects) -> None:
            self.fill(index, dict.fromkeys(partitions, old_fenced(error, version, 2)), fx)

        return answer


def _add_partitions_or_answer(
    coordinator: TransactionCoordinator,
    txn_id: str,
    producer_id: int,
    producer_epoch: int,
    partitions: tuple[TopicPartition, ...],
    version: int,
    now_ms: int,
    fx: Effects,
    answer: Answer,
) -> dict[TopicPartition, int] | None:
    """The errors to answer at once, or None when ``answer`` hears the outcome later."""
    unknown = {tp for tp in partitions if not coordinator.partition_exists(tp)}
    if unknown:
        # One missing partition fails them all; the others were "not attempted".
        return {
            tp: _E.UNKNOWN_TOPIC_OR_PARTITION if tp in unknown else _E.OPERATION_NOT_ATTEMPTED
            for tp in partitions
        }
    # v4+ comes from a broker adding partitions for a TV2 client's Produce v12+ or
    # TxnOffsetCommit v5+ (``transactionVersionForAddPartitionsToTxn``).
    client_version = 2 if version >= _BATCHED_ADD_PARTITIONS_VERSION else 0
    error = _add_partitions(
        coordinator, txn_id, producer_id, producer_epoch, set(partitions), now_ms, fx, answer,
        client_version,
    )
    if error is None:
        return None
    return dict.fromkeys(partitions, old_fenced(error, version, 2))


def handle_add_offsets_to_txn(
    coordinator: TransactionCoordinator,
    ctx: Versioned,
    body: TxnRequest,
    token: ReplyToken,
    now_ms: int,
) -> Result:
    """Add the group's ``__consumer_offsets`` partition to the transaction."""
    fx = coordinator.effects()
    offsets_partition = TopicPartition(
        OFFSETS_TOPIC,
        partition_for(body["group_id"], coordinator.config.offsets_topic_num_partitions),
    )
    version = ctx.api_version

    def build(error: ErrorCode, producer_id: int, producer_epoch: int) -> TxnResponse:
        return {"throttle_time_ms": 0, "error_code": old_fenced(error, version, 2)}

    error = _add_partitions(
        coordinator, body["transactional_id"], body["producer_id"], body["producer_epoch"],
        {offsets_partition}, now_ms, fx, _replying(token, build),
    )
    if error is not None:
        fx.reply(token, build(error, -1, -1))
    return fx.result()


def _add_partitions(
    coordinator: TransactionCoordinator,
    txn_id: str,
    producer_id: int,
    producer_epoch: int,
    partitions: set[TopicPartition],
    now_ms: int,
    fx: Effects,
    answer: Answer,
    client_version: int = 0,
) -> ErrorCode | None:
    """The error to answer at once, or None when ``answer`` hears it after the append."""
    if not txn_id:
        return _E.INVALID_REQUEST
    found = coordinator.manager.get_transaction_state(txn_id)
    checked = check_add_partitions(found, producer_id, producer_epoch, partitions)
    if isinstance(checked, ErrorCode):
        return checked
    assert not isinstance(found, ErrorCode)
    metadata = checked
    transit = metadata.prepare_add_partitions(partitions, now_ms, client_version)
    written = TransitionWritten(coordinator.manager, found[0], metadata, transit, answer)
    coordinator.write(written, fx)
    return None


# ---------------------------------------------------------------------- EndTxn


def handle_end_txn(
    coordinator: TransactionCoordinator,
    ctx: Versioned,
    body: TxnRequest,
    token: ReplyToken,
    now_ms: int,
) -> Result:
    """Commit or abort: once PrepareCommit/PrepareAbort is durable the client is answered
    and the markers go out; ``markers_written`` completes the transaction. EndTxn v5+ comes
    from a transaction-version-2 client: the epoch is bumped (v5 answers the id and epoch
    the producer continues with)."""
    fx = coordinator.effects()
    result = TransactionResult.COMMIT if body["committed"] else TransactionResult.ABORT
    version = ctx.api_version
    client_version = 2 if version > _LAST_END_TXN_VERSION_BEFORE_TV2 else 0

    def build(error: ErrorCode, producer_id: int, producer_epoch: int) -> TxnResponse:
        return {"throttle_time_ms": 0, "error_code": old_fenced(error, version, 2),
                "producer_id": producer_id, "producer_epoch": producer_epoch}

    error, producer_id, producer_epoch = coordinator.end_transaction(
        body["transactional_id"], body["producer_id"], body["producer_epoch"], result, True,
        client_version, now_ms, fx, _replying(token, build),
    )
    if not fx.callbacks:
        fx.reply(token, build(error, producer_id, producer_epoch))
    return fx.result()


# ---------------------------------------------------------------------- admin


def handle_describe_transactions(
    coordinator: TransactionCoordinator,
    ctx: Versioned,
    body: TxnRequest,
    token: ReplyToken,
    now_ms: int,
) -> Result:
    """DescribeTransactions: each id's state, producer and partitions."""
    fx = coordinator.effects()
    states = [
        describe(txn_id, coordinator.manager.get_transaction_state(txn_id))
        for txn_id in body["transactional_ids"]
    ]
    fx.reply(token, {"throttle_time_ms": 0, "transaction_states": states})
    return fx.result()


def handle_list_transactions(
    coordinator: TransactionCoordinator,
    ctx: Versioned,
    body: TxnRequest,
    token: ReplyToken,
    now_ms: int,
) -> Result:
    """ListTransactions with its state, producer-id and (v1+) duration filters."""
    fx = coordinator.effects()
    duration = body["duration_filter"] if ctx.api_version >= 1 else -1
    response = coordinator.manager.list_transaction_states(
        frozenset(body["producer_id_filters"]), body["state_filters"], duration, now_ms
    )
    fx.reply(token, response)
    return fx.result()
