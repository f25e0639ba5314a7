"""Kafka's transaction coordinator as a deterministic, sans-I/O state machine.

Every handler (``coordinator.txn.handlers``) takes the coordinator, a typed request, an
opaque reply token and ``now_ms`` and returns a :class:`~coordinator.core.result.Result`,
the vocabulary every coordinator shard speaks. State changes only once its record is
durable, as in Kafka: a handler *prepares* a transition (the metadata's pending state, which
makes other requests for the id answer CONCURRENT_TRANSACTIONS) and emits its
``TransactionLogRecord`` with a callback (``coordinator.txn.append``); the runtime appends
the records and calls :meth:`TransactionCoordinator.append_done`, which completes the
transition and answers (or writes the markers after PrepareCommit/PrepareAbort), or
:meth:`TransactionCoordinator.append_failed`, which reverts it and answers Kafka's mapped
error. An ended transaction stays pending from PrepareCommit/PrepareAbort (durable, its
``markers`` emitted) until :meth:`TransactionCoordinator.markers_written` reports every
marker written and CompleteCommit/CompleteAbort is durable; the EndTxn is answered then.

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

from coordinator.core.result import EMPTY_RESULT, Effects, Result, ShardTimerKey
from coordinator.core.store import PendingWrites
from coordinator.txn.append import (
    Answer,
    CompletionWritten,
    EndPrepared,
    Expired,
    TransitionWritten,
)
from coordinator.txn.config import TxnConfig
from coordinator.txn.decisions import (
    check_end_txn,
    marker_for,
)
from coordinator.txn.log import (
    TransactionLogKey,
    TransactionLogRecord,
    from_storage,
    to_storage,
    value_from_transit,
)
from coordinator.txn.manager import PendingCompletion, TransactionStateManager
from coordinator.txn.messages import TxnMarker
from coordinator.txn.state import (
    SHORT_MAX,
    IllegalTransitionError,
    TopicPartition,
    TransactionMetadata,
    TxnTransitMetadata,
)
from coordinator.txn.timers import (
    ABORT_TIMED_OUT_TRANSACTIONS,
    REMOVE_EXPIRED_TRANSACTIONAL_IDS,
)
from coordinator.txn.transaction_state import TransactionResult, TransactionState
from storage.records import Record
from wire.constants import NO_PRODUCER_EPOCH, NO_PRODUCER_ID, ErrorCode

__all__ = ["TransactionCoordinator"]

_S = TransactionState
_E = ErrorCode
_LAST_END_TXN_VERSION_BEFORE_TV2 = 4  # EndTxn v5+: the client uses transaction version 2
_BATCHED_ADD_PARTITIONS_VERSION = 4  # AddPartitionsToTxn v4+: from brokers


class TransactionCoordinator:
    """InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn, EndTxn, DescribeTransactions,
    ListTransactions, marker completion, timeouts, expiration and loading."""

    __slots__ = (
        "_config",
        "_manager",
        "_new_producer_id",
        "_next_producer_id",
        "_partition_exists",
        "_pending",
        "_writes",
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
        their records, then call :meth:`on_loaded`. ``new_producer_id`` hands out producer
        ids (a broker's, which its idempotent producers draw from too); without it, ids
        count up from one past the largest one replayed."""
        self._config = config or TxnConfig()
        self._manager = TransactionStateManager(self._config)
        self._partition_exists = partition_exists
        self._new_producer_id = new_producer_id
        self._next_producer_id = 0
        # The shared Effects keep an overlay of pending offset writes; this shard has none.
        self._writes = PendingWrites()
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

    def partition_exists(self, tp: TopicPartition) -> bool:
        """Whether the topic partition exists (everything does without a checker)."""
        exists = self._partition_exists
        return exists is None or exists(tp)

    def partition_for(self, transactional_id: str) -> int:
        """The ``__transaction_state`` partition owning ``transactional_id``."""
        return self._manager.partition_for(transactional_id)

    def effects(self) -> Effects:
        """An accumulator for one call's Result."""
        return Effects(self._writes)

    def generate_producer_id(self) -> int:
        """A producer id never handed out before."""
        if self._new_producer_id is not None:
            return self._new_producer_id()
        producer_id = self._next_producer_id
        self._next_producer_id += 1
        return producer_id

    def end_transaction(
        self,
        txn_id: str,
        producer_id: int,
        producer_epoch: int,
        result: TransactionResult,
        from_client: bool,
        client_version: int,
        now_ms: int,
        fx: Effects,
        answer: Answer | None = None,
    ) -> tuple[ErrorCode, int, int]:
        """(error, producer id, producer epoch) of an EndTxn, or of an abort the coordinator
        starts itself (fence, timeout) with ``from_client`` False and the bumped epoch.
        ``client_version`` is the transaction version the end is made with. When the end
        is prepared, NONE: ``answer`` hears the outcome once the record is appended."""
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
                next_producer_id = self.generate_producer_id()
            fenced_from = None
            if fencing and target == _S.PREPARE_ABORT:
                # The fence's epoch becomes the producer's epoch with this very abort (put
                # back if the abort does not reach the log).
                fenced_from = (metadata.producer_epoch, metadata.last_producer_epoch)
                metadata.pending_state = None
                metadata.producer_epoch = producer_epoch
                metadata.last_producer_epoch = NO_PRODUCER_EPOCH
                if producer_epoch >= SHORT_MAX:
                    client_version = 0  # no room for version 2's bump on top of the fence
            prepared = metadata.prepare_abort_or_commit(
                target, client_version, next_producer_id, now_ms
            )
            self.write(
                EndPrepared(
                    self._manager, coordinator_epoch, metadata, prepared, answer, self, fenced_from
                ),
                fx,
            )
            return (_E.NONE, *no_ids)
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

    def start_completion(
        self, coordinator_epoch: int, metadata: TransactionMetadata, now_ms: int, fx: Effects
    ) -> TxnTransitMetadata:
        """A PrepareCommit/PrepareAbort is durable (or was loaded): prepare the completion
        (returned) and write the markers (none to write: the completion at once)."""
        transit = metadata.prepare_complete(now_ms)
        pending = PendingCompletion(
            coordinator_epoch, metadata, transit, frozenset(metadata.topic_partitions)
        )
        txn_id = metadata.transactional_id
        self._pending[txn_id] = pending
        if metadata.topic_partitions:
            fx.write_markers(marker_for(metadata, coordinator_epoch))
        else:
            self._maybe_complete(txn_id, fx)
        return transit

    def markers_written(
        self, transactional_id: str, partitions: Iterable[TopicPartition], now_ms: int
    ) -> Result:
        """The markers of ``partitions`` are written (or their partitions no longer exist);
        once none is left, CompleteCommit/CompleteAbort is written."""
        pending = self._pending.get(transactional_id)
        if pending is None:
            return EMPTY_RESULT
        if self._manager.coordinator_epoch_of(transactional_id) != pending.coordinator_epoch:
            # The partition moved or is reloading: whoever loads it completes the transaction.
            del self._pending[transactional_id]
            return EMPTY_RESULT
        for tp in partitions:
            if tp in pending.metadata.topic_partitions:
                pending.metadata.remove_partition(tp)
        fx = self.effects()
        self._maybe_complete(transactional_id, fx)
        return fx.result()

    def markers_failed(self, transactional_id: str, error: ErrorCode, now_ms: int) -> Result:
        """A marker could not be written (log-append ``error``): the transaction is again
        what the log says (prepared, all its partitions) and its markers go out again at the
        next timeout scan."""
        pending = self._pending.pop(transactional_id, None)
        if pending is None:
            return EMPTY_RESULT
        fx = self.effects()
        CompletionWritten(
            self._manager, pending.coordinator_epoch, pending.metadata, pending.transit,
            pending.partitions,
        ).append_failed(error, now_ms, fx)
        return fx.result()

    def _maybe_complete(self, txn_id: str, fx: Effects) -> None:
        pending = self._pending[txn_id]
        if pending.metadata.topic_partitions:
            return
        del self._pending[txn_id]
        self.write(
            CompletionWritten(
                self._manager, pending.coordinator_epoch, pending.metadata, pending.transit,
                pending.partitions,
            ),
            fx,
        )

    def pending_markers(self) -> dict[str, TxnMarker]:
        """Markers not yet reported written, by transactional id."""
        return {
            txn_id: marker_for(pending.metadata, pending.coordinator_epoch)
            for txn_id, pending in sorted(self._pending.items())
        }

    # ------------------------------------------------------------------ appends

    def append_done(self, result: Result, now_ms: int) -> Result:
        """``result.records`` are durable: complete their transitions; what follows (the
        answers, markers, completions) is returned."""
        if not result.callbacks:
            return EMPTY_RESULT
        fx = self.effects()
        for callback in result.callbacks:
            callback.appended(now_ms, fx)
        return fx.result()

    def append_failed(self, result: Result, error: ErrorCode, now_ms: int) -> Result:
        """Appending ``result.records`` failed with log-append error ``error``: every
        transition is reverted and its requester answered with Kafka's mapped error. The
        returned Result carries every reply to send instead of ``result.replies``."""
        fx = self.effects()
        for callback in result.callbacks:
            callback.append_failed(error, now_ms, fx)
        replaced = {reply.token for reply in fx.replies}
        kept = tuple(reply for reply in result.replies if reply.token not in replaced)
        return Result((), kept + tuple(fx.replies), tuple(fx.timers), (), fx.markers)

    # ------------------------------------------------------------------ timers

    def fire_timer(self, key: ShardTimerKey, now_ms: int) -> Result:
        """Run a periodic job and re-arm it."""
        fx = self.effects()
        if key == ABORT_TIMED_OUT_TRANSACTIONS:
            self._abort_timed_out_transactions(now_ms, fx)
            self._resume_completions(now_ms, fx)
            interval = self._config.transaction_abort_timed_out_transaction_cleanup_interval_ms
        elif key == REMOVE_EXPIRED_TRANSACTIONAL_IDS:
            self._remove_expired_transactional_ids(now_ms, fx)
            interval = self._config.transaction_remove_expired_transaction_cleanup_interval_ms
        else:
            return EMPTY_RESULT
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
            error, _, _ = self.end_transaction(
                metadata.transactional_id,
                fence.producer_id,
                fence.producer_epoch,
                TransactionResult.ABORT,
                False,
                self._config.transaction_version,
                now_ms,
                fx,
            )
            if error != _E.NONE and metadata.pending_state == _S.PREPARE_EPOCH_FENCE:
                metadata.pending_state = None  # nothing was written: the next scan tries again

    def _resume_completions(self, now_ms: int, fx: Effects) -> None:
        """Transactions left prepared by a lost completion get their markers again, as
        after a restart."""
        for coordinator_epoch, metadata in self._manager.all_metadata():
            if (
                metadata.state in (_S.PREPARE_COMMIT, _S.PREPARE_ABORT)
                and metadata.pending_state is None
                and metadata.transactional_id not in self._pending
            ):
                self.start_completion(coordinator_epoch, metadata, now_ms, fx)

    def _remove_expired_transactional_ids(self, now_ms: int, fx: Effects) -> None:
        for metadata in self._manager.expirable_transactional_ids(now_ms):
            txn_id = metadata.transactional_id
            coordinator_epoch = self._manager.coordinator_epoch_of(txn_id)
            assert coordinator_epoch is not None
            transit = metadata.prepare_dead()
            fx.persist(to_storage(TransactionLogRecord(TransactionLogKey(txn_id), None)))
            fx.after_append(Expired(self._manager, coordinator_epoch, metadata, transit))

    # ------------------------------------------------------------------ loading

    def replay(self, record: Record) -> None:
        """Apply one log record at load time (last record per id wins; tombstones remove)."""
        replayed = from_storage(record)
        self._manager.replay(replayed)
        if replayed.value is not None:
            self._next_producer_id = max(
                self._next_producer_id,
                replayed.value.producer_id + 1,
                replayed.value.next_producer_id + 1,
            )

    def on_loaded(self, now_ms: int) -> Result:
        """After replay: own every loading partition, re-send the markers of transactions
        left in PrepareCommit/PrepareAbort, and start the periodic jobs."""
        fx = self.effects()
        for partition, epoch in sorted(self._manager.loading_epochs().items()):
            self._complete_loading(partition, epoch, now_ms, fx)
        fx.schedule(
            ABORT_TIMED_OUT_TRANSACTIONS,
            now_ms + self._config.transaction_abort_timed_out_transaction_cleanup_interval_ms,
        )
        fx.schedule(
            REMOVE_EXPIRED_TRANSACTIONAL_IDS,
            now_ms + self._config.transaction_remove_expired_transaction_cleanup_interval_ms,
        )
        return fx.result()

    def _complete_loading(self, partition: int, epoch: int, now_ms: int, fx: Effects) -> None:
        for metadata in self._manager.complete_loading(partition, epoch):
            self.start_completion(epoch, metadata, now_ms, fx)

    def load_partition(self, partition: int, coordinator_epoch: int) -> None:
        """Become coordinator of ``partition`` (several brokers): replay its records, then
        call :meth:`complete_partition_load`."""
        self._drop_pending(partition)
        self._manager.begin_loading(partition, coordinator_epoch)

    def complete_partition_load(
        self, partition: int, coordinator_epoch: int, now_ms: int
    ) -> Result:
        """The partition's records are replayed: serve it and re-send pending markers."""
        fx = self.effects()
        self._complete_loading(partition, coordinator_epoch, now_ms, fx)
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

    def hard_state(self) -> dict[str, TransactionLogRecord]:
        """Every owned id's state as the record a replay would rebuild it from (the live
        metadata equals a replay of the log exactly when these are equal)."""
        return {
            m.transactional_id: TransactionLogRecord(
                TransactionLogKey(m.transactional_id),
                value_from_transit(m.current_transit(), self._config.log_value_version),
            )
            for _, m in self._manager.all_metadata()
        }

    # ------------------------------------------------------------------ internals

    def write(self, written: TransitionWritten, fx: Effects) -> None:
        """Emit the transition's record; ``written`` completes it once durable."""
        value = value_from_transit(written.transit, self._config.log_value_version)
        key = TransactionLogKey(written.metadata.transactional_id)
        fx.persist(to_storage(TransactionLogRecord(key, value)))
        fx.after_append(written)
