"""A transactional id's metadata and its state machine (Kafka's ``TransactionMetadata``).

Every change goes through a *prepare* / *complete* pair, as in Kafka: a ``prepare_*``
method checks that the target state may follow the current one, marks it as the
``pending_state`` and returns the intended :class:`TxnTransitMetadata` (what the
coordinator writes to the transaction log); :meth:`TransactionMetadata.complete_transition_to`
applies it once written, after checking it is still consistent. While a state is pending,
no other transition can be prepared: that is where CONCURRENT_TRANSACTIONS comes from.
The states themselves, and which may follow which, are ``transaction_state.py``.

Followed: ``core/.../coordinator/transaction/TransactionMetadata.scala`` of Kafka 4.0-dev
(October 2024), which supports transaction versions 0-2 (``clientTransactionVersion``).
Kafka later ported it to Java (``transaction-coordinator/.../TransactionMetadata.java``);
for versions 0 and 1 they agree except that the port's completion takes every field from
the transit, which is followed here (so the live metadata is what a reload of the log
yields). Not followed from the port: a fence at epoch 32767 (logged there, refused here)
and the KIP-939 two-phase-commit additions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from coordinator.txn.transaction_state import (
    COMPLETE_STATES,
    PREPARED_STATES,
    TransactionState,
)
from wire.constants import NO_PRODUCER_EPOCH, NO_PRODUCER_ID

__all__ = [
    "SHORT_MAX",
    "IllegalTransitionError",
    "TopicPartition",
    "TransactionMetadata",
    "TxnTransitMetadata",
    "is_epoch_exhausted",
]

SHORT_MAX = 32767  # Short.MaxValue: the largest producer epoch


class TopicPartition(NamedTuple):
    """A topic partition (Kafka's ``TopicPartition``); orders by topic, then partition."""

    topic: str
    partition: int


_S = TransactionState


def is_epoch_exhausted(producer_epoch: int) -> bool:
    """Kafka keeps epoch 32767 in reserve so a fence is always possible."""
    return producer_epoch >= SHORT_MAX - 1


class IllegalTransitionError(Exception):
    """A transition the state machine forbids (Kafka's IllegalStateException): a bug in the
    caller, never an answer to a client."""


@dataclass(frozen=True, slots=True)
class TxnTransitMetadata:
    """The metadata a transition leads to: what the transaction log record carries."""

    producer_id: int
    prev_producer_id: int
    next_producer_id: int
    producer_epoch: int
    last_producer_epoch: int
    txn_timeout_ms: int
    txn_state: TransactionState
    topic_partitions: frozenset[TopicPartition]
    txn_start_timestamp: int
    txn_last_update_timestamp: int
    client_transaction_version: int = 0


class TransactionMetadata:
    """One transactional id: its producer id and epoch, and its transaction's state.

    ``client_transaction_version`` is Kafka's TransactionVersion feature level: 2 and above
    (KIP-890 part 2, EndTxn v5) bump the epoch at the end of every transaction.
    """

    __slots__ = (
        "client_transaction_version",
        "last_producer_epoch",
        "next_producer_id",
        "pending_state",
        "prev_producer_id",
        "producer_epoch",
        "producer_id",
        "state",
        "topic_partitions",
        "transactional_id",
        "txn_last_update_timestamp",
        "txn_start_timestamp",
        "txn_timeout_ms",
    )

    def __init__(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        txn_timeout_ms: int,
        state: TransactionState,
        txn_last_update_timestamp: int,
        *,
        prev_producer_id: int = NO_PRODUCER_ID,
        next_producer_id: int = NO_PRODUCER_ID,
        last_producer_epoch: int = NO_PRODUCER_EPOCH,
        topic_partitions: set[TopicPartition] | None = None,
        txn_start_timestamp: int = -1,
        client_transaction_version: int = 0,
    ) -> None:
        self.transactional_id = transactional_id
        self.producer_id = producer_id
        self.prev_producer_id = prev_producer_id
        self.next_producer_id = next_producer_id
        self.producer_epoch = producer_epoch
        self.last_producer_epoch = last_producer_epoch
        self.txn_timeout_ms = txn_timeout_ms
        self.state = state
        self.topic_partitions: set[TopicPartition] = set(topic_partitions or ())
        self.txn_start_timestamp = txn_start_timestamp
        self.txn_last_update_timestamp = txn_last_update_timestamp
        self.client_transaction_version = client_transaction_version
        self.pending_state: TransactionState | None = None

    def __repr__(self) -> str:
        return (
            f"TransactionMetadata({self.transactional_id!r}, pid={self.producer_id}, "
            f"epoch={self.producer_epoch}, last_epoch={self.last_producer_epoch}, "
            f"state={self.state.kafka_name}, pending={self.pending_state}, "
            f"partitions={sorted(self.topic_partitions)})"
        )

    # -------------------------------------------------------------------- queries

    @property
    def is_producer_epoch_exhausted(self) -> bool:
        """No epoch left to hand out for this producer id."""
        return is_epoch_exhausted(self.producer_epoch)

    @property
    def pending_transition_in_progress(self) -> bool:
        """A prepared transition has not completed yet."""
        return self.pending_state is not None

    @property
    def supports_epoch_bump(self) -> bool:
        """Transaction version 2: every transaction end bumps the epoch."""
        return self.client_transaction_version >= 2

    def has_pending_transaction(self) -> bool:
        """A transaction has begun and not completed."""
        return self.state in (_S.ONGOING, _S.PREPARE_ABORT, _S.PREPARE_COMMIT)

    # -------------------------------------------------------------------- mutation

    def add_partitions(self, partitions: set[TopicPartition] | frozenset[TopicPartition]) -> None:
        """Add partitions directly (tests and loading)."""
        self.topic_partitions |= partitions

    def remove_partition(self, partition: TopicPartition) -> None:
        """Forget a partition whose marker is written; only while a commit/abort is prepared."""
        if self.state not in PREPARED_STATES:
            raise IllegalTransitionError(
                f"removing {partition} from {self.transactional_id} in state {self.state.name}"
            )
        self.topic_partitions.discard(partition)

    # -------------------------------------------------------------------- prepare

    def prepare_no_transit(self) -> TxnTransitMetadata:
        """The current metadata as a transit, without marking anything pending."""
        return self._transit(
            self.state,
            prev_producer_id=self.prev_producer_id,
            next_producer_id=self.next_producer_id,
            client_transaction_version=0,
        )

    def current_transit(self) -> TxnTransitMetadata:
        """The metadata as it stands, as the record that would rebuild it (tests compare
        live state with a replay through it)."""
        return self._transit(
            self.state,
            prev_producer_id=self.prev_producer_id,
            next_producer_id=self.next_producer_id,
        )

    def prepare_fence_producer_epoch(self) -> TxnTransitMetadata:
        """Bump the epoch to fence the current producer before aborting its transaction."""
        if self.producer_epoch == SHORT_MAX:
            raise IllegalTransitionError(
                f"cannot fence {self.transactional_id}: epoch {SHORT_MAX} would overflow"
            )
        # Kafka keeps the epoch of a fence whose abort failed to append (its
        # hasFailedEpochFence); here that abort puts the epoch back, so a fence always bumps.
        return self._prepare(
            self._transit(
                _S.PREPARE_EPOCH_FENCE,
                producer_epoch=self.producer_epoch + 1,
                last_producer_epoch=NO_PRODUCER_EPOCH,
                client_transaction_version=0,
            )
        )

    def prepare_increment_producer_epoch(
        self, new_txn_timeout_ms: int, expected_producer_epoch: int | None, update_timestamp: int
    ) -> TxnTransitMetadata | None:
        """InitProducerId's epoch bump; None when ``expected_producer_epoch`` is fenced.

        Without an expected epoch the epoch is bumped and the last epoch forgotten. With one
        (KIP-360), the current epoch (or none yet) means "bump and remember the old one", the
        last epoch means "a retry: answer the current one again", anything else is fenced.
        """
        if self.is_producer_epoch_exhausted:
            raise IllegalTransitionError(
                f"no producer epoch left for producer id {self.producer_id}"
            )
        bumped = self.producer_epoch + 1
        if expected_producer_epoch is None:
            epoch, last_epoch = bumped, NO_PRODUCER_EPOCH
        elif (
            self.producer_epoch == NO_PRODUCER_EPOCH
            or expected_producer_epoch == self.producer_epoch
        ):
            epoch, last_epoch = bumped, self.producer_epoch
        elif expected_producer_epoch == self.last_producer_epoch:
            epoch, last_epoch = self.producer_epoch, self.last_producer_epoch
        else:
            return None
        return self._prepare(
            self._transit(
                _S.EMPTY,
                producer_epoch=epoch,
                last_producer_epoch=last_epoch,
                txn_timeout_ms=new_txn_timeout_ms,
                topic_partitions=frozenset(),
                txn_start_timestamp=-1,
                txn_last_update_timestamp=update_timestamp,
                client_transaction_version=0,
            )
        )

    def prepare_producer_id_rotation(
        self,
        new_producer_id: int,
        new_txn_timeout_ms: int,
        update_timestamp: int,
        record_last_epoch: bool,
    ) -> TxnTransitMetadata:
        """A new producer id at epoch 0 once the epochs of the current one are exhausted."""
        if self.has_pending_transaction():
            raise IllegalTransitionError(
                f"cannot rotate the producer id of {self.transactional_id} mid-transaction"
            )
        return self._prepare(
            self._transit(
                _S.EMPTY,
                producer_id=new_producer_id,
                producer_epoch=0,
                last_producer_epoch=self.producer_epoch if record_last_epoch else NO_PRODUCER_EPOCH,
                txn_timeout_ms=new_txn_timeout_ms,
                topic_partitions=frozenset(),
                txn_start_timestamp=-1,
                txn_last_update_timestamp=update_timestamp,
                client_transaction_version=0,
            )
        )

    def prepare_add_partitions(
        self,
        added: set[TopicPartition] | frozenset[TopicPartition],
        update_timestamp: int,
        client_transaction_version: int = 0,
    ) -> TxnTransitMetadata:
        """Add partitions; the transaction starts now if none was open. Version 2: added
        for a TV2 client (implicitly, by the broker, for its Produce or TxnOffsetCommit)."""
        starts_now = self.state in (_S.EMPTY, _S.COMPLETE_ABORT, _S.COMPLETE_COMMIT)
        return self._prepare(
            self._transit(
                _S.ONGOING,
                topic_partitions=frozenset(self.topic_partitions | added),
                txn_start_timestamp=update_timestamp if starts_now else self.txn_start_timestamp,
                txn_last_update_timestamp=update_timestamp,
                client_transaction_version=client_transaction_version,
            )
        )

    def prepare_abort_or_commit(
        self,
        new_state: TransactionState,
        client_transaction_version: int,
        next_producer_id: int,
        update_timestamp: int,
    ) -> TxnTransitMetadata:
        """EndTxn: PrepareCommit or PrepareAbort (version 2 also bumps the epoch here)."""
        if client_transaction_version >= 2:
            epoch, last_epoch = self.producer_epoch + 1, self.producer_epoch
        else:
            epoch, last_epoch = self.producer_epoch, self.last_producer_epoch
        return self._prepare(
            self._transit(
                new_state,
                next_producer_id=next_producer_id,
                producer_epoch=epoch,
                last_producer_epoch=last_epoch,
                txn_last_update_timestamp=update_timestamp,
                client_transaction_version=client_transaction_version,
            )
        )

    def prepare_complete(self, update_timestamp: int) -> TxnTransitMetadata:
        """Every marker is written: CompleteCommit or CompleteAbort, partitions cleared."""
        new_state = _S.COMPLETE_COMMIT if self.state == _S.PREPARE_COMMIT else _S.COMPLETE_ABORT
        producer_id, epoch = self.producer_id, self.producer_epoch
        if self.supports_epoch_bump and self.next_producer_id != NO_PRODUCER_ID:
            # Version 2 overflowed the epoch at EndTxn: the new producer id starts now.
            producer_id, epoch = self.next_producer_id, 0
        return self._prepare(
            self._transit(
                new_state,
                producer_id=producer_id,
                next_producer_id=NO_PRODUCER_ID,
                producer_epoch=epoch,
                last_producer_epoch=self.producer_epoch,
                topic_partitions=frozenset(),
                txn_last_update_timestamp=update_timestamp,
            )
        )

    def prepare_dead(self) -> TxnTransitMetadata:
        """Expiration of an idle transactional id (its tombstone)."""
        return self._prepare(
            self._transit(_S.DEAD, topic_partitions=frozenset(), client_transaction_version=0)
        )

    def _transit(self, state: TransactionState, **changes: object) -> TxnTransitMetadata:
        fields: dict[str, object] = {
            "producer_id": self.producer_id,
            "prev_producer_id": self.producer_id,
            "next_producer_id": NO_PRODUCER_ID,
            "producer_epoch": self.producer_epoch,
            "last_producer_epoch": self.last_producer_epoch,
            "txn_timeout_ms": self.txn_timeout_ms,
            "txn_state": state,
            "topic_partitions": frozenset(self.topic_partitions),
            "txn_start_timestamp": self.txn_start_timestamp,
            "txn_last_update_timestamp": self.txn_last_update_timestamp,
            "client_transaction_version": self.client_transaction_version,
        }
        fields.update(changes)
        return TxnTransitMetadata(**fields)  # type: ignore[arg-type]

    def _prepare(self, transit: TxnTransitMetadata) -> TxnTransitMetadata:
        target = transit.txn_state
        if self.pending_state is not None:
            raise IllegalTransitionError(
                f"preparing {target.name} for {self.transactional_id} while "
                f"{self.pending_state.name} is pending"
            )
        if transit.producer_id < 0:
            raise IllegalTransitionError(f"illegal producer id {transit.producer_id}")
        # A freshly created id has epoch -1 until its first bump; only Dead may keep it.
        if target != _S.DEAD and transit.producer_epoch < 0:
            raise IllegalTransitionError(f"illegal producer epoch {transit.producer_epoch}")
        if self.state not in target.valid_previous_states:
            raise IllegalTransitionError(
                f"{self.transactional_id}: {target.name} cannot follow {self.state.name}"
            )
        self.pending_state = target
        return transit

    # -------------------------------------------------------------------- complete

    def complete_transition_to(self, transit: TxnTransitMetadata) -> None:
        """Apply a prepared transition once its record is in the log.

        The transit is checked against the current metadata as Kafka checks it, then every
        persisted field is taken from it (as Kafka's Java port does; the Scala original kept
        some fields, e.g. the start time after InitProducerId, that a reload would reset).
        The last epoch, which the log does not carry, changes as in the Scala original.
        """
        target = self.pending_state
        if target is None:
            raise IllegalTransitionError(
                f"completing {transit.txn_state.name} for {self.transactional_id} with "
                "nothing pending"
            )
        if target != transit.txn_state or not self._consistent(target, transit):
            self._refuse(transit)
        if target == _S.EMPTY or (
            transit.client_transaction_version >= 2 and target in PREPARED_STATES | COMPLETE_STATES
        ):
            self.last_producer_epoch = transit.last_producer_epoch
        self.producer_id = transit.producer_id
        self.prev_producer_id = transit.prev_producer_id
        self.next_producer_id = transit.next_producer_id
        self.producer_epoch = transit.producer_epoch
        self.txn_timeout_ms = transit.txn_timeout_ms
        self.topic_partitions = set(transit.topic_partitions)
        self.txn_start_timestamp = transit.txn_start_timestamp
        self.client_transaction_version = transit.client_transaction_version
        self.txn_last_update_timestamp = transit.txn_last_update_timestamp
        self.pending_state = None
        self.state = target

    def _consistent(self, target: TransactionState, transit: TxnTransitMetadata) -> bool:
        if target == _S.EMPTY:
            # InitProducerId: same epoch (a retry), the next one, or epoch 0 of a new id.
            return (
                (transit.producer_epoch == self.producer_epoch or self._valid_bump(transit))
                and not transit.topic_partitions
                and transit.txn_start_timestamp == -1
            )
        if target == _S.ONGOING:
            return (
                self._valid_epoch(transit)
                and self.topic_partitions <= transit.topic_partitions
                and self.txn_timeout_ms == transit.txn_timeout_ms
            )
        if target in PREPARED_STATES:
            return (
                self._valid_epoch(transit)
                and self.topic_partitions == transit.topic_partitions
                and self.txn_timeout_ms == transit.txn_timeout_ms
                and self.txn_start_timestamp == transit.txn_start_timestamp
            )
        if target in COMPLETE_STATES:
            return (
                self._valid_epoch(transit)
                and self.txn_timeout_ms == transit.txn_timeout_ms
                and transit.txn_start_timestamp != -1
            )
        # PrepareEpochFence is replaced by PrepareAbort before anything is written, and
        # Dead ends in removal from the cache, never in a completed transition.
        return False

    def _valid_epoch(self, transit: TxnTransitMetadata) -> bool:
        version2 = transit.client_transaction_version >= 2
        if version2 and transit.txn_state in COMPLETE_STATES and transit.producer_epoch == 0:
            # Version 2 overflow: the producer id moved on, the last epoch did not.
            return (
                transit.last_producer_epoch == self.producer_epoch
                and transit.prev_producer_id == self.producer_id
            )
        if version2 and transit.txn_state in PREPARED_STATES:
            return (
                transit.last_producer_epoch == self.producer_epoch
                and transit.producer_id == self.producer_id
            )
        return (
            transit.producer_epoch == self.producer_epoch
            and transit.producer_id == self.producer_id
        )

    def _valid_bump(self, transit: TxnTransitMetadata) -> bool:
        return transit.producer_epoch == self.producer_epoch + 1 or (
            transit.producer_epoch == 0 and transit.producer_id != self.producer_id
        )

    def _refuse(self, transit: TxnTransitMetadata) -> None:
        raise IllegalTransitionError(f"{self!r} cannot complete the transition to {transit}")
