"""Kafka's transaction coordinator as a deterministic, sans-I/O state machine.

Every handler takes a typed request, an opaque reply token and ``now_ms`` and returns a
:class:`~coordinator.txn.result.TxnResult`. A transition is prepared, written as a
``TransactionLogRecord`` and completed within the call (the runtime persists the records
before it sends the replies), so the only state that stays *pending* across calls is the
completion of an ended transaction: from EndTxn (PrepareCommit/PrepareAbort written, the
client answered, ``markers`` emitted) until :meth:`TransactionCoordinator.markers_written`
reports every marker written and CompleteCommit/CompleteAbort is written. In between, the
id answers CONCURRENT_TRANSACTIONS.

Followed: ``TransactionCoordinator.scala`` (Kafka 4.0-dev, October 2024), with transaction
version 2 (KIP-890 part 2): an EndTxn v5 (``KafkaApis``: version > 4 means the client uses
TV2) bumps the producer epoch at every commit or abort and answers the new id and epoch;
when the epoch would pass 32766 a new producer id is allocated (NextProducerId) and the
completion moves to it at epoch 0; a retry of a completed or completing EndTxn with the
previous epoch (or, after a rollover, the previous id at epoch 32766) is recognised. The
coordinator's own aborts (fence, timeout) use the finalized ``transaction.version``, so
with 2 the abort bumps past the fence's epoch (a fenced producer's retry cannot pass as an
epoch-bump retry); where that would pass 32767 (a fence at 32766, where Kafka's Short
overflows) the abort stays at the fence's epoch. ``KafkaApis`` parts are included where
they decide an error: INVALID_REQUEST for a producer id without epoch, PRODUCER_FENCED
answered as INVALID_PRODUCER_EPOCH to old request versions, unknown partitions in
AddPartitionsToTxn.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from coordinator.txn.config import TxnConfig
from coordinator.txn.decisions import (
    check_add_partitions,
    check_end_txn,
    describe,
    marker_for,
    old_fenced,
    prepare_init_producer_id,
    verify_partitions,
)
from coordinator.txn.log import (
    ProducerIdsRecord,
    TransactionLogKey,
    TransactionLogRecord,
    TxnRecord,
    value_from_transit,
)
from coordinator.txn.manager import PendingCompletion, TransactionStateManager
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
)
from coordinator.txn.placement import OFFSETS_TOPIC, partition_for
from coordinator.txn.producer_ids import ProducerIdManager
from coordinator.txn.result import (
    ABORT_TIMED_OUT_TRANSACTIONS,
    REMOVE_EXPIRED_TRANSACTIONAL_IDS,
    Effects,
    ReplyToken,
    TxnMarker,
    TxnResult,
    TxnTimerKey,
)
from coordinator.txn.state import (
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    SHORT_MAX,
    IllegalTransitionError,
    TopicPartition,
    TransactionMetadata,
    TransactionResult,
    TransactionState,
    TxnTransitMetadata,
)
from wire.constants import ErrorCode

__all__ = ["TransactionCoordinator"]

_S = TransactionState
_E = ErrorCode
_LAST_END_TXN_VERSION_BEFORE_TV2 = 4  # EndTxn v5+: the client uses transaction version 2
_BATCHED_ADD_PARTITIONS_VERSION = 4  # AddPartitionsToTxn v4+: from brokers


class TransactionCoordinator:
    """InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn, EndTxn, DescribeTransactions,
    ListTransactions, marker completion, timeouts, expiration and loading."""

    __slots__ = (
        "_config", "_manager", "_new_producer_id", "_partition_exists", "_pending", "_producer_ids"
    )

    def __init__(
        self,
        config: TxnConfig | None = None,
        partition_exists: Callable[[TopicPartition], bool] | None = None,
        owned_partitions: Iterable[int] | None = None,
        coordinator_epoch: int = 0,
        new_producer_id: Callable[[], int] | None = None,
    ) -> None:
        """``partition_exists`` answers whether a topic partition exists (AddPartitionsToTxn's
        UNKNOWN_TOPIC_OR_PARTITION check; everything exists when omitted).
        ``owned_partitions`` (default: all) start loading at ``coordinator_epoch``; replay
        their records, then call :meth:`on_loaded`. ``new_producer_id``, when given, hands out
        producer ids instead of the coordinator's own block allocator (a broker whose
        idempotent producers draw from the same source)."""
        self._config = config or TxnConfig()
        self._manager = TransactionStateManager(self._config)
        self._producer_ids = ProducerIdManager(
            self._config.broker_id, self._config.producer_id_block_size
        )
        self._partition_exists = partition_exists
        self._new_producer_id = new_producer_id
        self._pending: dict[str, PendingCompletion] = {}
        owned = (
            range(self._config.transaction_state_log_num_partitions)
            if owned_partitions is None
            else owned_partitions
        )
        for partition in owned:
            self._manager.begin_loading(partition, coordinator_epoch)

    @property
    def config(self) -> TxnConfig:
        """The configuration in force."""
        return self._config

    @property
    def manager(self) -> TransactionStateManager:
        """The metadata cache (tests: lets them place metadata as Kafka's tests do)."""
        return self._manager

    def partition_for(self, transactional_id: str) -> int:
        """The ``__transaction_state`` partition owning ``transactional_id``."""
        return self._manager.partition_for(transactional_id)

    # ------------------------------------------------------------------ InitProducerId

    def init_producer_id(
        self, req: InitProducerIdRequest, token: ReplyToken, now_ms: int
    ) -> TxnResult:
        """A producer id and epoch: a fresh id for an idempotent producer; for a
        transactional one, the next epoch of its id, fencing the previous producer."""
        fx = Effects()
        fx.reply(token, self._init_producer_id(req, now_ms, fx))
        return fx.result()

    def _init_producer_id(
        self, req: InitProducerIdRequest, now_ms: int, fx: Effects
    ) -> InitProducerIdResponse:
        if (req.producer_id == NO_PRODUCER_ID) != (req.producer_epoch == NO_PRODUCER_EPOCH):
            return InitProducerIdResponse(_E.INVALID_REQUEST)
        txn_id = req.transactional_id
        if txn_id is None:
            return InitProducerIdResponse(_E.NONE, self._generate_producer_id(fx), 0)
        if txn_id == "":
            return InitProducerIdResponse(_E.INVALID_REQUEST)
        timeout = req.transaction_timeout_ms
        if not self._manager.validate_transaction_timeout_ms(timeout):
            return InitProducerIdResponse(_E.INVALID_TRANSACTION_TIMEOUT)
        expected = None if req.producer_id == NO_PRODUCER_ID else req.producer_epoch
        found = self._manager.get_transaction_state(txn_id)
        if isinstance(found, ErrorCode):
            return InitProducerIdResponse(found)
        metadata = found[1]
        if metadata is None:
            created = TransactionMetadata(
                txn_id, self._generate_producer_id(fx), NO_PRODUCER_EPOCH, timeout, _S.EMPTY, now_ms
            )
            put = self._manager.put_transaction_state_if_not_exists(created)
            if isinstance(put, ErrorCode):
                return InitProducerIdResponse(put)
            metadata = put[1]
        prepared = prepare_init_producer_id(
            metadata,
            timeout,
            req.producer_id,
            expected,
            now_ms,
            lambda: self._generate_producer_id(fx),
        )
        if isinstance(prepared, ErrorCode):
            return InitProducerIdResponse(old_fenced(prepared, req.version, 4))
        if prepared.txn_state == _S.PREPARE_EPOCH_FENCE:
            # Abort the open transaction first; the client retries and gets a new epoch then.
            error, _, _ = self._end_transaction(
                txn_id,
                prepared.producer_id,
                prepared.producer_epoch,
                TransactionResult.ABORT,
                False,
                self._config.transaction_version,
                now_ms,
                fx,
            )
            code = _E.CONCURRENT_TRANSACTIONS if error == _E.NONE else error
            return InitProducerIdResponse(old_fenced(code, req.version, 4))
        self._persist(metadata, prepared, fx)
        return InitProducerIdResponse(_E.NONE, prepared.producer_id, prepared.producer_epoch)

    def _generate_producer_id(self, fx: Effects) -> int:
        if self._new_producer_id is not None:
            return self._new_producer_id()
        producer_id, block = self._producer_ids.generate()
        if block is not None:
            fx.records.append(block)
        return producer_id

    # ------------------------------------------------------------------ partitions

    def add_partitions_to_txn(
        self, req: AddPartitionsToTxnRequest, token: ReplyToken, now_ms: int
    ) -> TxnResult:
        """Add partitions to the transaction (v0-3), or with ``verify_only`` (v4+) check that
        they are in it."""
        fx = Effects()
        partitions = req.partitions
        if req.verify_only:
            found = self._manager.get_transaction_state(req.transactional_id)
            errors = verify_partitions(found, req)
            results = tuple((tp, errors[tp]) for tp in partitions)
            fx.reply(token, AddPartitionsToTxnResponse(results))
            return fx.result()
        exists = self._partition_exists
        unknown = set() if exists is None else {tp for tp in partitions if not exists(tp)}
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
        error = self._add_partitions(
            req.transactional_id,
            req.producer_id,
            req.producer_epoch,
            set(partitions),
            now_ms,
            fx,
            client_version,
        )
        error = old_fenced(error, req.version, 2)
        fx.reply(token, AddPartitionsToTxnResponse(tuple((tp, error) for tp in partitions)))
        return fx.result()

    def add_offsets_to_txn(
        self, req: AddOffsetsToTxnRequest, token: ReplyToken, now_ms: int
    ) -> TxnResult:
        """Add the group's ``__consumer_offsets`` partition to the transaction."""
        fx = Effects()
        offsets_partition = TopicPartition(
            OFFSETS_TOPIC, partition_for(req.group_id, self._config.offsets_topic_num_partitions)
        )
        error = self._add_partitions(
            req.transactional_id,
            req.producer_id,
            req.producer_epoch,
            {offsets_partition},
            now_ms,
            fx,
        )
        fx.reply(token, AddOffsetsToTxnResponse(old_fenced(error, req.version, 2)))
        return fx.result()

    def _add_partitions(
        self,
        txn_id: str,
        producer_id: int,
        producer_epoch: int,
        partitions: set[TopicPartition],
        now_ms: int,
        fx: Effects,
        client_version: int = 0,
    ) -> ErrorCode:
        if not txn_id:
            return _E.INVALID_REQUEST
        found = self._manager.get_transaction_state(txn_id)
        checked = check_add_partitions(found, producer_id, producer_epoch, partitions)
        if isinstance(checked, ErrorCode):
            return checked
        metadata = checked
        transit = metadata.prepare_add_partitions(partitions, now_ms, client_version)
        self._persist(metadata, transit, fx)
        return _E.NONE

    # ------------------------------------------------------------------ EndTxn

    def end_txn(self, req: EndTxnRequest, token: ReplyToken, now_ms: int) -> TxnResult:
        """Commit or abort: PrepareCommit/PrepareAbort is written, the client answered, and
        the markers emitted; :meth:`markers_written` completes the transaction. EndTxn v5+
        comes from a transaction-version-2 client: the epoch is bumped."""
        fx = Effects()
        result = TransactionResult.COMMIT if req.committed else TransactionResult.ABORT
        client_version = 2 if req.version > _LAST_END_TXN_VERSION_BEFORE_TV2 else 0
        error, producer_id, producer_epoch = self._end_transaction(
            req.transactional_id,
            req.producer_id,
            req.producer_epoch,
            result,
            True,
            client_version,
            now_ms,
            fx,
        )
        fx.reply(
            token, EndTxnResponse(old_fenced(error, req.version, 2), producer_id, producer_epoch)
        )
        return fx.result()

    def _end_transaction(
        self,
        txn_id: str,
        producer_id: int,
        producer_epoch: int,
        result: TransactionResult,
        from_client: bool,
        client_version: int,
        now_ms: int,
        fx: Effects,
    ) -> tuple[ErrorCode, int, int]:
        """(error, producer id, producer epoch) of an EndTxn, or of an abort the coordinator
        starts itself (fence, timeout) with ``from_client`` False and the bumped epoch.
        ``client_version`` is the transaction version the end is made with."""
        no_ids = (NO_PRODUCER_ID, NO_PRODUCER_EPOCH)
        if not txn_id:
            return (_E.INVALID_REQUEST, *no_ids)
        found = self._manager.get_transaction_state(txn_id)
        if isinstance(found, ErrorCode):
            return (found, *no_ids)
        coordinator_epoch, metadata = found
        if metadata is None:
            return (_E.INVALID_PRODUCER_ID_MAPPING, *no_ids)
        current = (metadata.producer_id, metadata.producer_epoch)
        checked = check_end_txn(metadata, producer_id, producer_epoch, from_client)
        if checked != _E.NONE:
            return (checked, *no_ids)
        fencing = metadata.pending_state == _S.PREPARE_EPOCH_FENCE
        state, commit = metadata.state, result == TransactionResult.COMMIT
        if state == _S.ONGOING:
            target = _S.PREPARE_COMMIT if commit else _S.PREPARE_ABORT
            next_producer_id = NO_PRODUCER_ID
            if client_version >= 2 and not fencing and metadata.is_producer_epoch_exhausted:
                # The bump reaches the last epoch: the producer moves to a new id at epoch 0
                # once the markers are written.
                next_producer_id = self._generate_producer_id(fx)
            if fencing and target == _S.PREPARE_ABORT:
                # The fence's epoch becomes the producer's epoch with this very abort.
                metadata.pending_state = None
                metadata.producer_epoch = producer_epoch
                metadata.last_producer_epoch = NO_PRODUCER_EPOCH
                if producer_epoch >= SHORT_MAX:
                    client_version = 0  # no room for version 2's bump on top of the fence
            prepared = metadata.prepare_abort_or_commit(
                target, client_version, next_producer_id, now_ms
            )
            self._persist(metadata, prepared, fx)
            completion = metadata.prepare_complete(now_ms)
            self._send_markers(PendingCompletion(coordinator_epoch, metadata, completion), fx)
            # The id and epoch the producer continues with (a new id after a rollover).
            return _E.NONE, completion.producer_id, completion.producer_epoch
        if state in (_S.COMPLETE_COMMIT, _S.COMPLETE_ABORT):
            # A retry of an EndTxn that already completed succeeds again, if it agrees.
            if commit == (state == _S.COMPLETE_COMMIT):
                return (_E.NONE, *current)
            return (_E.INVALID_TXN_STATE, *no_ids)
        if state in (_S.PREPARE_COMMIT, _S.PREPARE_ABORT):
            if commit == (state == _S.PREPARE_COMMIT):
                return (_E.CONCURRENT_TRANSACTIONS, *no_ids)
            return (_E.INVALID_TXN_STATE, *no_ids)
        if state == _S.EMPTY:
            return (_E.INVALID_TXN_STATE, *no_ids)
        raise IllegalTransitionError(f"{txn_id} found in state {state.name}")

    # ------------------------------------------------------------------ markers

    def _send_markers(self, pending: PendingCompletion, fx: Effects) -> None:
        metadata = pending.metadata
        txn_id = metadata.transactional_id
        self._pending[txn_id] = pending
        if not metadata.topic_partitions:
            self._maybe_complete(txn_id, fx)
            return
        fx.markers.append(marker_for(metadata, pending.coordinator_epoch))

    def markers_written(
        self, transactional_id: str, partitions: Iterable[TopicPartition], now_ms: int
    ) -> TxnResult:
        """The markers of ``partitions`` are written (or their partitions no longer exist);
        once none is left, CompleteCommit/CompleteAbort is written."""
        pending = self._pending.get(transactional_id)
        if pending is None:
            return TxnResult()
        if self._manager.coordinator_epoch_of(transactional_id) != pending.coordinator_epoch:
            # The partition moved or is reloading: whoever loads it completes the transaction.
            del self._pending[transactional_id]
            return TxnResult()
        for tp in partitions:
            if tp in pending.metadata.topic_partitions:
                pending.metadata.remove_partition(tp)
        fx = Effects()
        self._maybe_complete(transactional_id, fx)
        return fx.result()

    def _maybe_complete(self, txn_id: str, fx: Effects) -> None:
        pending = self._pending[txn_id]
        if pending.metadata.topic_partitions:
            return
        del self._pending[txn_id]
        self._persist(pending.metadata, pending.transit, fx)

    def pending_markers(self) -> dict[str, TxnMarker]:
        """Markers not yet reported written, by transactional id."""
        return {
            txn_id: marker_for(pending.metadata, pending.coordinator_epoch)
            for txn_id, pending in sorted(self._pending.items())
        }

    # ------------------------------------------------------------------ admin

    def describe_transactions(
        self, req: DescribeTransactionsRequest, token: ReplyToken, now_ms: int
    ) -> TxnResult:
        """DescribeTransactions: each id's state, producer and partitions."""
        fx = Effects()
        states = tuple(
            describe(txn_id, self._manager.get_transaction_state(txn_id))
            for txn_id in req.transactional_ids
        )
        fx.reply(token, DescribeTransactionsResponse(states))
        return fx.result()

    def list_transactions(
        self, req: ListTransactionsRequest, token: ReplyToken, now_ms: int
    ) -> TxnResult:
        """ListTransactions with its state, producer-id and duration filters."""
        fx = Effects()
        response: ListTransactionsResponse = self._manager.list_transaction_states(
            frozenset(req.producer_id_filters), req.state_filters, req.duration_filter, now_ms
        )
        fx.reply(token, response)
        return fx.result()

    # ------------------------------------------------------------------ timers

    def fire_timer(self, key: TxnTimerKey, now_ms: int) -> TxnResult:
        """Run a periodic job and re-arm it."""
        fx = Effects()
        if key == ABORT_TIMED_OUT_TRANSACTIONS:
            self._abort_timed_out_transactions(now_ms, fx)
            interval = self._config.abort_timed_out_transaction_cleanup_interval_ms
        elif key == REMOVE_EXPIRED_TRANSACTIONAL_IDS:
            self._remove_expired_transactional_ids(now_ms, fx)
            interval = self._config.remove_expired_transactional_id_cleanup_interval_ms
        else:
            return TxnResult()
        fx.schedule(key, now_ms + interval)
        return fx.result()

    def _abort_timed_out_transactions(self, now_ms: int, fx: Effects) -> None:
        for timed_out in self._manager.timed_out_transactions(now_ms):
            found = self._manager.get_transaction_state(timed_out.transactional_id)
            if isinstance(found, ErrorCode) or found[1] is None:
                continue
            metadata = found[1]
            if metadata.producer_id != timed_out.producer_id:
                continue  # the id moved on to another producer since the scan
            if metadata.pending_transition_in_progress:
                continue
            fence = metadata.prepare_fence_producer_epoch()
            self._end_transaction(
                metadata.transactional_id,
                fence.producer_id,
                fence.producer_epoch,
                TransactionResult.ABORT,
                False,
                self._config.transaction_version,
                now_ms,
                fx,
            )

    def _remove_expired_transactional_ids(self, now_ms: int, fx: Effects) -> None:
        for metadata in self._manager.expirable_transactional_ids(now_ms):
            metadata.prepare_dead()
            fx.records.append(
                TransactionLogRecord(TransactionLogKey(metadata.transactional_id), None)
            )
            self._manager.remove(metadata.transactional_id)

    # ------------------------------------------------------------------ loading

    def replay(self, record: TxnRecord) -> None:
        """Apply one log record at load time (last record per id wins; tombstones remove)."""
        if isinstance(record, ProducerIdsRecord):
            self._producer_ids.replay(record)
        else:
            self._manager.replay(record)

    def on_loaded(self, now_ms: int) -> TxnResult:
        """After replay: own every loading partition, re-send the markers of transactions
        left in PrepareCommit/PrepareAbort, and start the periodic jobs."""
        fx = Effects()
        for partition, epoch in sorted(self._manager.loading_epochs().items()):
            for pending in self._manager.complete_loading(partition, epoch, now_ms):
                self._send_markers(pending, fx)
        fx.schedule(
            ABORT_TIMED_OUT_TRANSACTIONS,
            now_ms + self._config.abort_timed_out_transaction_cleanup_interval_ms,
        )
        fx.schedule(
            REMOVE_EXPIRED_TRANSACTIONAL_IDS,
            now_ms + self._config.remove_expired_transactional_id_cleanup_interval_ms,
        )
        return fx.result()

    def load_partition(self, partition: int, coordinator_epoch: int) -> None:
        """Become coordinator of ``partition`` (several brokers): replay its records, then
        call :meth:`complete_partition_load`."""
        self._drop_pending(partition)
        self._manager.begin_loading(partition, coordinator_epoch)

    def complete_partition_load(
        self, partition: int, coordinator_epoch: int, now_ms: int
    ) -> TxnResult:
        """The partition's records are replayed: serve it and re-send pending markers."""
        fx = Effects()
        for pending in self._manager.complete_loading(partition, coordinator_epoch, now_ms):
            self._send_markers(pending, fx)
        return fx.result()

    def unload_partition(self, partition: int, coordinator_epoch: int | None = None) -> None:
        """Stop being coordinator of ``partition``; its ids answer NOT_COORDINATOR."""
        self._manager.remove_partition(partition, coordinator_epoch)
        self._drop_pending(partition)

    def _drop_pending(self, partition: int) -> None:
        for txn_id in [t for t in self._pending if self.partition_for(t) == partition]:
            del self._pending[txn_id]

    # ------------------------------------------------------------------ views

    def transaction_metadata(self, transactional_id: str) -> TransactionMetadata | None:
        """The live metadata of an owned id (read it, do not change it)."""
        found = self._manager.get_transaction_state(transactional_id)
        return None if isinstance(found, ErrorCode) else found[1]

    def transactional_ids(self) -> list[str]:
        """Ids currently cached, in partition then id order."""
        return [m.transactional_id for _, m in self._manager.all_metadata()]

    # ------------------------------------------------------------------ internals

    def _persist(
        self, metadata: TransactionMetadata, transit: TxnTransitMetadata, fx: Effects
    ) -> None:
        """Write the transition's record and complete it (the runtime makes the record
        durable before any reply of this Result goes out)."""
        value = value_from_transit(transit, self._config.log_value_version)
        fx.records.append(TransactionLogRecord(TransactionLogKey(metadata.transactional_id), value))
        metadata.complete_transition_to(transit)
