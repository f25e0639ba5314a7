"""The transaction APIs of the coordinator, one function each: (coordinator, context,
request, reply token, now_ms) -> Result, the handler contract of every coordinator shard
(the group core's ``handle_*``); the request carries its API version.

A handler checks the request against the metadata (``decisions``), answers at once when
nothing is to be written, or prepares the transition and emits its record through
``TransactionCoordinator.write`` with a ``respond`` function: the requester is answered
when the append completed, with Kafka's mapped error if it failed (``append``).
"""

from __future__ import annotations

from coordinator.core.result import Effects, ReplyToken, Result
from coordinator.txn.append import Created, Respond, TransitionWritten
from coordinator.txn.coordinator import TransactionCoordinator
from coordinator.txn.decisions import (
    check_add_partitions,
    describe,
    old_fenced,
    prepare_init_producer_id,
    verify_partitions,
)
from coordinator.txn.messages import (
    AddOffsetsToTxnRequest,
    AddOffsetsToTxnResponse,
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnResponse,
    DescribeTransactionsRequest,
    DescribeTransactionsResponse,
    EndTxnRequest,
    EndTxnResponse,
    InitProducerIdRequest,
    InitProducerIdResponse,
    ListTransactionsRequest,
    ListTransactionsResponse,
    TxnResponse,
)
from coordinator.txn.placement import OFFSETS_TOPIC, partition_for
from coordinator.txn.state import (
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    TopicPartition,
    TransactionMetadata,
    TransactionResult,
    TransactionState,
)
from wire.constants import ErrorCode

__all__ = [
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
_BATCHED_ADD_PARTITIONS_VERSION = 4  # AddPartitionsToTxn v4+: from brokers


# ---------------------------------------------------------------------- InitProducerId

def handle_init_producer_id(
    coordinator: TransactionCoordinator,
    ctx: object,
    req: InitProducerIdRequest,
    token: ReplyToken,
    now_ms: int,
) -> Result:
    """A producer id and epoch: a fresh id for an idempotent producer; for a
    transactional one, the next epoch of its id, fencing the previous producer (answered
    once the new epoch, or the fence's abort, is durable)."""
    fx = coordinator.effects()
    response = _init_producer_id(coordinator, req, token, now_ms, fx)
    if response is not None:
        fx.reply(token, response)
    return fx.result()

def _init_producer_id(
    coordinator: TransactionCoordinator,
    req: InitProducerIdRequest,
    token: ReplyToken,
    now_ms: int,
    fx: Effects,
) -> InitProducerIdResponse | None:
    if (req.producer_id == NO_PRODUCER_ID) != (req.producer_epoch == NO_PRODUCER_EPOCH):
        return InitProducerIdResponse(_E.INVALID_REQUEST)
    txn_id = req.transactional_id
    if txn_id is None:
        return InitProducerIdResponse(_E.NONE, coordinator.generate_producer_id(), 0)
    if txn_id == "":
        return InitProducerIdResponse(_E.INVALID_REQUEST)
    timeout = req.transaction_timeout_ms
    if not coordinator.manager.validate_transaction_timeout_ms(timeout):
        return InitProducerIdResponse(_E.INVALID_TRANSACTION_TIMEOUT)
    expected = None if req.producer_id == NO_PRODUCER_ID else req.producer_epoch
    found = coordinator.manager.get_transaction_state(txn_id)
    if isinstance(found, ErrorCode):
        return InitProducerIdResponse(found)
    coordinator_epoch, metadata = found
    created = metadata is None
    if metadata is None:
        metadata = TransactionMetadata(
            txn_id, coordinator.generate_producer_id(), NO_PRODUCER_EPOCH, timeout, _S.EMPTY,
            now_ms,
        )
        coordinator.manager.put_transaction_state_if_not_exists(metadata)
    prepared = prepare_init_producer_id(
        metadata,
        timeout,
        req.producer_id,
        expected,
        now_ms,
        coordinator.generate_producer_id,
    )
    version = req.version
    if isinstance(prepared, ErrorCode):
        if created:
            coordinator.manager.remove(txn_id)
        return InitProducerIdResponse(old_fenced(prepared, version, 4))

    def respond(error: ErrorCode, producer_id: int, producer_epoch: int) -> TxnResponse:
        if error != _E.NONE:
            return InitProducerIdResponse(old_fenced(error, version, 4))
        return InitProducerIdResponse(_E.NONE, producer_id, producer_epoch)

    if prepared.txn_state == _S.PREPARE_EPOCH_FENCE:
        # Abort the open transaction first; the client retries and gets a new epoch then.
        def fenced(
            error: ErrorCode, producer_id: int, producer_epoch: int
        ) -> InitProducerIdResponse:
            code = _E.CONCURRENT_TRANSACTIONS if error == _E.NONE else error
            return InitProducerIdResponse(old_fenced(code, version, 4))

        error, _, _ = coordinator.end_transaction(
            txn_id,
            prepared.producer_id,
            prepared.producer_epoch,
            TransactionResult.ABORT,
            False,
            coordinator.config.transaction_version,
            now_ms,
            fx,
            (token, fenced),
        )
        return None if error == _E.NONE else fenced(error, -1, -1)
    kind = Created if created else TransitionWritten
    answer = (token, respond)
    coordinator.write(kind(coordinator.manager, coordinator_epoch, metadata, prepared, answer), fx)
    return None

# ---------------------------------------------------------------------- partitions

def handle_add_partitions_to_txn(
    coordinator: TransactionCoordinator,
    ctx: object,
    req: AddPartitionsToTxnRequest,
    token: ReplyToken,
    now_ms: int,
) -> Result:
    """Add partitions to the transaction (v0-3), or with ``verify_only`` (v4+) check that
    they are in it."""
    fx = coordinator.effects()
    partitions = req.partitions
    if req.verify_only:
        found = coordinator.manager.get_transaction_state(req.transactional_id)
        errors = verify_partitions(found, req)
        results = tuple((tp, errors[tp]) for tp in partitions)
        fx.reply(token, AddPartitionsToTxnResponse(results))
        return fx.result()
    unknown = {tp for tp in partitions if not coordinator.partition_exists(tp)}
    if unknown:
        # One missing partition fails them all; the others were "not attempted".
        results = tuple(
            (tp, _E.UNKNOWN_TOPIC_OR_PARTITION if tp in unknown else _E.OPERATION_NOT_ATTEMPTED)
            for tp in partitions
        )
        fx.reply(token, AddPartitionsToTxnResponse(results))
        return fx.result()
    # v4+ comes from a broker adding partitions for a TV2 client's Produce v12+ or
    # TxnOffsetCommit v5+ (``transactionVersionForAddPartitionsToTxn``).
    client_version = 2 if req.version >= _BATCHED_ADD_PARTITIONS_VERSION else 0
    version = req.version

    def respond(error: ErrorCode, producer_id: int, producer_epoch: int) -> TxnResponse:
        code = old_fenced(error, version, 2)
        return AddPartitionsToTxnResponse(tuple((tp, code) for tp in partitions))

    error = _add_partitions(
        coordinator,
        req.transactional_id,
        req.producer_id,
        req.producer_epoch,
        set(partitions),
        now_ms,
        fx,
        (token, respond),
        client_version,
    )
    if error is not None:
        fx.reply(token, respond(error, -1, -1))
    return fx.result()

def handle_add_offsets_to_txn(
    coordinator: TransactionCoordinator,
    ctx: object,
    req: AddOffsetsToTxnRequest,
    token: ReplyToken,
    now_ms: int,
) -> Result:
    """Add the group's ``__consumer_offsets`` partition to the transaction."""
    fx = coordinator.effects()
    offsets_partition = TopicPartition(
        OFFSETS_TOPIC, partition_for(req.group_id, coordinator.config.offsets_topic_num_partitions)
    )
    version = req.version

    def respond(error: ErrorCode, producer_id: int, producer_epoch: int) -> TxnResponse:
        return AddOffsetsToTxnResponse(old_fenced(error, version, 2))

    error = _add_partitions(
        coordinator,
        req.transactional_id,
        req.producer_id,
        req.producer_epoch,
        {offsets_partition},
        now_ms,
        fx,
        (token, respond),
    )
    if error is not None:
        fx.reply(token, respond(error, -1, -1))
    return fx.result()

def _add_partitions(
    coordinator: TransactionCoordinator,
    txn_id: str,
    producer_id: int,
    producer_epoch: int,
    partitions: set[TopicPartition],
    now_ms: int,
    fx: Effects,
    answer: tuple[ReplyToken, Respond],
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
    ctx: object,
    req: EndTxnRequest,
    token: ReplyToken,
    now_ms: int,
) -> Result:
    """Commit or abort: once PrepareCommit/PrepareAbort is durable the client is answered
    and the markers go out; :meth:`markers_written` completes the transaction. EndTxn
    v5+ comes from a transaction-version-2 client: the epoch is bumped."""
    fx = coordinator.effects()
    result = TransactionResult.COMMIT if req.committed else TransactionResult.ABORT
    client_version = 2 if req.version > _LAST_END_TXN_VERSION_BEFORE_TV2 else 0
    version = req.version

    def respond(error: ErrorCode, producer_id: int, producer_epoch: int) -> TxnResponse:
        return EndTxnResponse(old_fenced(error, version, 2), producer_id, producer_epoch)

    error, producer_id, producer_epoch = coordinator.end_transaction(
        req.transactional_id,
        req.producer_id,
        req.producer_epoch,
        result,
        True,
        client_version,
        now_ms,
        fx,
        (token, respond),
    )
    if not fx.callbacks:
        fx.reply(token, respond(error, producer_id, producer_epoch))
    return fx.result()

# ---------------------------------------------------------------------- admin

def handle_describe_transactions(
    coordinator: TransactionCoordinator,
    ctx: object,
    req: DescribeTransactionsRequest,
    token: ReplyToken,
    now_ms: int,
) -> Result:
    """DescribeTransactions: each id's state, producer and partitions."""
    fx = coordinator.effects()
    states = tuple(
        describe(txn_id, coordinator.manager.get_transaction_state(txn_id))
        for txn_id in req.transactional_ids
    )
    fx.reply(token, DescribeTransactionsResponse(states))
    return fx.result()

def handle_list_transactions(
    coordinator: TransactionCoordinator,
    ctx: object,
    req: ListTransactionsRequest,
    token: ReplyToken,
    now_ms: int,
) -> Result:
    """ListTransactions with its state, producer-id and duration filters."""
    fx = coordinator.effects()
    response: ListTransactionsResponse = coordinator.manager.list_transaction_states(
        frozenset(req.producer_id_filters), req.state_filters, req.duration_filter, now_ms
    )
    fx.reply(token, response)
    return fx.result()
