"""A transaction's states (Kafka's ``TransactionState``): their status bytes, the names
DescribeTransactions reports, which state may follow which, and which may expire; and how
a transaction ends (``TransactionResult``). The state machine is ``state.py``.
"""

from __future__ import annotations

from enum import IntEnum

__all__ = [
    "COMPLETE_STATES",
    "PREPARED_STATES",
    "TransactionResult",
    "TransactionState",
]


class TransactionResult(IntEnum):
    """How a transaction ends (``TransactionResult``; the int is EndTxn's ``committed``)."""

    ABORT = 0
    COMMIT = 1


class TransactionState(IntEnum):
    """The eight states, valued by the status byte Kafka writes in ``TransactionLogValue``."""

    EMPTY = 0
    ONGOING = 1
    PREPARE_COMMIT = 2
    PREPARE_ABORT = 3
    COMPLETE_COMMIT = 4
    COMPLETE_ABORT = 5
    DEAD = 6
    PREPARE_EPOCH_FENCE = 7

    @property
    def kafka_name(self) -> str:
        """The name DescribeTransactions and ListTransactions report (``Empty``, ...)."""
        return _NAMES[self]

    @property
    def valid_previous_states(self) -> frozenset[TransactionState]:
        """States from which a transition to this one is legal."""
        return _VALID_PREVIOUS[self]

    @property
    def is_expiration_allowed(self) -> bool:
        """Whether an idle transactional id in this state may be expired."""
        return self in _EXPIRABLE

    @classmethod
    def from_name(cls, name: str) -> TransactionState | None:
        """The state called ``name`` (Kafka's spelling), or None."""
        return _BY_NAME.get(name)


_S = TransactionState
_NAMES = {
    _S.EMPTY: "Empty",
    _S.ONGOING: "Ongoing",
    _S.PREPARE_COMMIT: "PrepareCommit",
    _S.PREPARE_ABORT: "PrepareAbort",
    _S.COMPLETE_COMMIT: "CompleteCommit",
    _S.COMPLETE_ABORT: "CompleteAbort",
    _S.DEAD: "Dead",
    _S.PREPARE_EPOCH_FENCE: "PrepareEpochFence",
}
_BY_NAME = {name: state for state, name in _NAMES.items()}
#: The states of a transaction that has ended.
COMPLETE_STATES = frozenset({_S.COMPLETE_COMMIT, _S.COMPLETE_ABORT})
_VALID_PREVIOUS: dict[TransactionState, frozenset[TransactionState]] = {
    _S.EMPTY: frozenset({_S.EMPTY}) | COMPLETE_STATES,
    _S.ONGOING: frozenset({_S.ONGOING, _S.EMPTY}) | COMPLETE_STATES,
    _S.PREPARE_COMMIT: frozenset({_S.ONGOING}),
    _S.PREPARE_ABORT: frozenset({_S.ONGOING, _S.PREPARE_EPOCH_FENCE}),
    _S.COMPLETE_COMMIT: frozenset({_S.PREPARE_COMMIT}),
    _S.COMPLETE_ABORT: frozenset({_S.PREPARE_ABORT}),
    _S.DEAD: frozenset({_S.EMPTY}) | COMPLETE_STATES,
    _S.PREPARE_EPOCH_FENCE: frozenset({_S.ONGOING}),
}
_EXPIRABLE = frozenset({_S.EMPTY}) | COMPLETE_STATES
#: The states a transaction is prepared to end in.
PREPARED_STATES = frozenset({_S.PREPARE_COMMIT, _S.PREPARE_ABORT})
