"""What happens when a transaction log record's append completes (Kafka's
``TransactionStateManager.appendTransactionToLog`` callback and the callers' response
callbacks in ``TransactionCoordinator``).

A handler only *prepares* a transition (the metadata's ``pending_state``) and emits its
record with one of these callbacks. Once the runtime reports the append done, the callback
checks that the id is still owned at the same coordinator epoch (else NOT_COORDINATOR, as
Kafka) and completes the transition, then answers or carries on (markers after
PrepareCommit/PrepareAbort). If the append failed, the preparation is reverted -- the live
metadata is again what a replay of the log yields -- and the requester hears the log-append
error mapped as Kafka maps it (:func:`transaction_log_error`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from coordinator.core.append_errors import group_metadata_error
from coordinator.core.result import Effects
from coordinator.txn.manager import TransactionStateManager
from coordinator.txn.state import TopicPartition, TransactionMetadata, TxnTransitMetadata
from wire.constants import ErrorCode

__all__ = [
    "Answer",
    "CompletionWritten",
    "EndPrepared",
    "Expired",
    "TransitionWritten",
    "transaction_log_error",
]

def transaction_log_error(append_error: ErrorCode) -> ErrorCode:
    """``appendTransactionToLog``'s mapping of a log-append error to the coordinator's: the
    group metadata mapping for every error a log append raises (UNKNOWN_TOPIC_OR_PARTITION,
    NOT_ENOUGH_REPLICAS(_AFTER_APPEND) and REQUEST_TIMED_OUT are COORDINATOR_NOT_AVAILABLE,
    NOT_LEADER_OR_FOLLOWER and KAFKA_STORAGE_ERROR NOT_COORDINATOR, MESSAGE_TOO_LARGE and
    RECORD_LIST_TOO_LARGE UNKNOWN_SERVER_ERROR, others themselves)."""
    return group_metadata_error(append_error)


Answer = Callable[[ErrorCode, int, int, "Effects"], None]
"""Answers the requester with (error, producer id, producer epoch), into the Effects."""


class Completer(Protocol):
    """What a prepared commit or abort needs from the coordinator once it is durable."""

    def start_completion(
        self, coordinator_epoch: int, metadata: TransactionMetadata, now_ms: int, fx: Effects
    ) -> TxnTransitMetadata:
        """Write the markers, then the completion (returned)."""


class TransitionWritten:
    """One transition's record: complete the transition once appended, revert if not.
    ``answer`` is told the outcome; subclasses carry on from there."""

    __slots__ = ("answer", "coordinator_epoch", "manager", "metadata", "transit")

    def __init__(
        self,
        manager: TransactionStateManager,
        coordinator_epoch: int,
        metadata: TransactionMetadata,
        transit: TxnTransitMetadata,
        answer: Answer | None = None,
    ) -> None:
        self.manager = manager
        self.coordinator_epoch = coordinator_epoch
        self.metadata = metadata
        self.transit = transit
        self.answer = answer

    def _still_owned(self) -> ErrorCode:
        found = self.manager.get_transaction_state(self.metadata.transactional_id)
        if isinstance(found, ErrorCode):
            return found
        epoch, cached = found
        if cached is not self.metadata or epoch != self.coordinator_epoch:
            # The partition moved (or reloaded) while the record was being written.
            return ErrorCode.NOT_COORDINATOR
        return ErrorCode.NONE

    def appended(self, now_ms: int, fx: Effects) -> None:
        """The record is in the log: complete the transition (if still owned) and go on."""
        error = self._still_owned()
        if error != ErrorCode.NONE:
            self._respond(error, fx)
            return
        self.metadata.complete_transition_to(self.transit)
        self._applied(now_ms, fx)

    def append_failed(self, error: ErrorCode, now_ms: int, fx: Effects) -> None:
        """The record did not reach the log: undo the preparation, answer the mapped error."""
        if self._still_owned() == ErrorCode.NONE:
            self.metadata.pending_state = None
            self._revert()
        self._respond(transaction_log_error(error), fx)

    def _applied(self, now_ms: int, fx: Effects) -> None:
        transit = self.transit
        self._respond(ErrorCode.NONE, fx, transit.producer_id, transit.producer_epoch)

    def _revert(self) -> None:
        """Undo what the preparation changed besides the pending state (nothing here)."""

    def _respond(
        self, error: ErrorCode, fx: Effects, producer_id: int = -1, producer_epoch: int = -1
    ) -> None:
        if self.answer is not None:
            self.answer(error, producer_id, producer_epoch, fx)


class Created(TransitionWritten):
    """InitProducerId's first epoch of a transactional id the cache did not hold: if the
    record is lost, the id is forgotten again (a replay does not know it)."""

    __slots__ = ()

    def _revert(self) -> None:
        self.manager.remove(self.metadata.transactional_id)


class EndPrepared(TransitionWritten):
    """PrepareCommit/PrepareAbort: once durable the requester is answered (an EndTxn with
    the id and epoch the producer continues with; the fence of an InitProducerId) and the
    markers go out. A fence's abort had moved the epoch to the fence's: put back if lost."""

    __slots__ = ("completer", "fenced_from")

    def __init__(
        self,
        manager: TransactionStateManager,
        coordinator_epoch: int,
        metadata: TransactionMetadata,
        transit: TxnTransitMetadata,
        answer: Answer | None,
        completer: Completer,
        fenced_from: tuple[int, int] | None,
    ) -> None:
        super().__init__(manager, coordinator_epoch, metadata, transit, answer)
        self.completer = completer
        self.fenced_from = fenced_from

    def _applied(self, now_ms: int, fx: Effects) -> None:
        completion = self.completer.start_completion(
            self.coordinator_epoch, self.metadata, now_ms, fx
        )
        self._respond(ErrorCode.NONE, fx, completion.producer_id, completion.producer_epoch)

    def _revert(self) -> None:
        if self.fenced_from is not None:
            self.metadata.producer_epoch, self.metadata.last_producer_epoch = self.fenced_from


class CompletionWritten(TransitionWritten):
    """CompleteCommit/CompleteAbort after every marker (nobody waits for it, as in Kafka:
    the EndTxn was answered at PrepareCommit/PrepareAbort): if lost, the transaction is
    again what the log says (prepared, with all its partitions) and its markers go out
    again at the next timeout scan, as after a restart."""

    __slots__ = ("partitions",)

    def __init__(
        self,
        manager: TransactionStateManager,
        coordinator_epoch: int,
        metadata: TransactionMetadata,
        transit: TxnTransitMetadata,
        partitions: frozenset[TopicPartition],
    ) -> None:
        super().__init__(manager, coordinator_epoch, metadata, transit)
        self.partitions = partitions

    def _revert(self) -> None:
        self.metadata.topic_partitions = set(self.partitions)


class Expired(TransitionWritten):
    """The tombstone of an idle transactional id: the id leaves the cache once it is
    durable; if lost, the id stays as it was."""

    __slots__ = ()

    def _applied(self, now_ms: int, fx: Effects) -> None:
        self.manager.remove(self.metadata.transactional_id)

    def appended(self, now_ms: int, fx: Effects) -> None:
        # Dead is never completed as a transition: the id just leaves the cache.
        if self._still_owned() == ErrorCode.NONE:
            self.metadata.pending_state = None
            self._applied(now_ms, fx)
