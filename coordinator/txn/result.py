"""What every transaction-coordinator entry point returns.

Same discipline as the group coordinator's core: the runtime appends ``records`` to the
log, then sends ``replies``, then applies ``timers``. One thing more: ``markers``, the
control batches the runtime must write (one COMMIT or ABORT marker per partition of each
entry, with the entry's producer id, epoch and coordinator epoch). Once a partition's marker
is written (or the partition is gone) the runtime calls
``TransactionCoordinator.markers_written``, whose Result completes the transaction.

Nothing is applied when a Result returns: each record's transition is only *pending*.
Once the append of ``records`` is durable the runtime calls
``TransactionCoordinator.append_done`` (which completes the transitions through the
Result's ``callbacks``), and ``append_failed`` if it failed (the transitions are reverted,
the requesters answered with Kafka's mapped error).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Protocol

from coordinator.txn.log import TxnRecord
from coordinator.txn.messages import TxnResponse
from coordinator.txn.state import TopicPartition, TransactionResult
from wire.constants import ErrorCode

__all__ = [
    "ABORT_TIMED_OUT_TRANSACTIONS",
    "EMPTY_RESULT",
    "REMOVE_EXPIRED_TRANSACTIONAL_IDS",
    "AppendCallback",
    "CancelTimer",
    "Effects",
    "Reply",
    "ReplyToken",
    "ScheduleTimer",
    "TxnMarker",
    "TxnResult",
    "TxnTimerKey",
]

ReplyToken = Hashable
"""Opaque handle of a request awaiting its answer, supplied by the runtime."""


@dataclass(frozen=True, slots=True)
class TxnTimerKey:
    """One of the coordinator's periodic jobs."""

    name: str


ABORT_TIMED_OUT_TRANSACTIONS = TxnTimerKey("transaction-abort")
REMOVE_EXPIRED_TRANSACTIONAL_IDS = TxnTimerKey("transactionalId-expiration")


@dataclass(frozen=True, slots=True)
class Reply:
    """The answer to the request identified by ``token``."""

    token: ReplyToken
    response: TxnResponse


@dataclass(frozen=True, slots=True)
class ScheduleTimer:
    """Arm ``key`` to fire at ``deadline_ms``; replaces any earlier deadline of the key."""

    key: TxnTimerKey
    deadline_ms: int


@dataclass(frozen=True, slots=True)
class CancelTimer:
    """Disarm ``key`` (no-op when it is not armed)."""

    key: TxnTimerKey


@dataclass(frozen=True, slots=True)
class TxnMarker:
    """Write a ``result`` control batch for ``producer_id``/``producer_epoch`` to each partition
    (Kafka's ``TxnMarkerEntry`` of WriteTxnMarkers)."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    coordinator_epoch: int
    result: TransactionResult
    partitions: tuple[TopicPartition, ...]


class AppendCallback(Protocol):
    """Run once the append of the Result's records completed."""

    def appended(self, now_ms: int, fx: Effects) -> None:
        """The records are in the log."""

    def append_failed(self, error: ErrorCode, now_ms: int, fx: Effects) -> None:
        """The append failed with log-append error ``error``."""


@dataclass(frozen=True, slots=True)
class TxnResult:
    """Records to persist, replies to send, timer changes, markers to write and what to do
    when the append completes."""

    records: tuple[TxnRecord, ...] = ()
    replies: tuple[Reply, ...] = ()
    timers: tuple[ScheduleTimer | CancelTimer, ...] = ()
    markers: tuple[TxnMarker, ...] = ()
    callbacks: tuple[AppendCallback, ...] = ()


EMPTY_RESULT = TxnResult()


class Effects:
    """Accumulates one call's output."""

    __slots__ = ("callbacks", "markers", "records", "replies", "timers")

    def __init__(self) -> None:
        self.records: list[TxnRecord] = []
        self.replies: list[Reply] = []
        self.timers: list[ScheduleTimer | CancelTimer] = []
        self.markers: list[TxnMarker] = []
        self.callbacks: list[AppendCallback] = []

    def persist(self, record: TxnRecord, callback: AppendCallback) -> None:
        """Emit a record and what completes (or reverts) its transition."""
        self.records.append(record)
        self.callbacks.append(callback)

    def reply(self, token: ReplyToken, response: TxnResponse) -> None:
        """Answer the request identified by ``token``."""
        self.replies.append(Reply(token, response))

    def schedule(self, key: TxnTimerKey, deadline_ms: int) -> None:
        """Arm (or re-arm) a timer."""
        self.timers.append(ScheduleTimer(key, deadline_ms))

    def result(self) -> TxnResult:
        """Freeze what was accumulated."""
        if not (self.records or self.replies or self.timers or self.markers or self.callbacks):
            return EMPTY_RESULT
        return TxnResult(
            tuple(self.records), tuple(self.replies), tuple(self.timers), tuple(self.markers),
            tuple(self.callbacks),
        )
