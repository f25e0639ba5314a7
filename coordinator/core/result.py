"""What every coordinator shard's entry point returns: records to append, replies to send,
timers to set -- the one vocabulary of the group coordinator (``coordinator.core``) and the
transaction coordinator (``coordinator.txn``).

The runtime applies ``timers`` at once (scheduling a key again replaces it) and appends
``records`` to the log. Nothing in hard state changes before that append succeeds: the
runtime then calls ``GroupCoordinator.append_done`` (which applies the records and runs the
Result's ``callbacks``) and sends ``replies``; if the append failed it calls
``GroupCoordinator.append_failed`` instead, whose Result carries the replies to send (the
callbacks replace the answers that depended on the records, with Kafka's mapped error).

A Result marked ``at_once`` (the usual OffsetCommit, the steady ConsumerGroupHeartbeat) is
safe to answer inline: it answers only its own request, counts nothing as in flight and
runs no callback, so when nothing is queued or being written and the sink writes at once,
the runtime appends it, applies it (``append_done``), arms its timers and answers before
``submit`` returns -- without a pending reply. ``at_once`` is how its answer reads when the
append fails (the API's error mapping, as Kafka's write operations map theirs); the runtime
asks the shard to count it in flight (``GroupCoordinator.count_in_flight``) when it must
queue it instead.

A transaction coordinator's Result may also carry ``markers``: the WriteTxnMarkers entries
the runtime writes once the PrepareCommit/PrepareAbort before them is durable (the group
core never emits any).

``Effects`` is the accumulator handlers write into. ``persist`` also records the write in
the core's pending overlay (Kafka's ``pendingOffsetCommits``), so decisions taken before the
append lands -- by the same handler or by later requests -- see it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, NamedTuple, Protocol

from coordinator.core.messages import Response
from coordinator.core.store import PendingWrites
from coordinator.core.timers import TimerKey
from coordinator.share.timers import ShareLockTimerKey
from coordinator.txn.messages import TxnMarker, TxnResponse
from coordinator.txn.timers import TxnTimerKey
from storage.records import Record
from wire.constants import ErrorCode

__all__ = [
    "EMPTY_RESULT",
    "AnswerFailed",
    "AppendCallback",
    "CancelTimer",
    "Effects",
    "Reply",
    "ReplyToken",
    "Result",
    "ScheduleTimer",
    "ShardResponse",
    "ShardTimerKey",
    "new_tuple",
    "unchanged",
]

ReplyToken = Hashable
"""Opaque handle of a request awaiting its answer, supplied by the runtime (never None)."""

ShardTimerKey = TimerKey | TxnTimerKey | ShareLockTimerKey
"""A timer of any shard (the group, transaction and share coordinators')."""

ShardResponse = Response | TxnResponse
"""An answer of either shard."""


AnswerFailed = Callable[[Any, ErrorCode], Any]
"""(the answer an at-once Result gives, Kafka log-append error) -> the answer instead."""


def unchanged(response: Any, error: ErrorCode) -> Any:
    """The ``at_once`` of a Result without records: no append, so nothing to map."""
    return response


# Reply, ScheduleTimer, CancelTimer and Result are NamedTuples: a Heartbeat builds one of
# each, and a tuple is built in about half the time of a frozen dataclass (330 vs 760 ns for
# Result, measured with timeit), which is most of the core's share of the hot path.

#: Builds a NamedTuple from all its fields as one tuple: ``new_tuple(Result, (...))``. The
#: hot handlers (the steady heartbeats, the usual commit) use it, since a NamedTuple's own
#: ``__new__`` is a Python call (three of them about a sixth of a steady heartbeat's cost).
new_tuple = tuple.__new__


class Reply(NamedTuple):
    """The answer to the request identified by ``token`` (possibly a parked, earlier one)."""

    token: ReplyToken
    response: ShardResponse


class ScheduleTimer(NamedTuple):
    """Arm ``key`` to fire at ``deadline_ms``; replaces any earlier deadline of the key."""

    key: ShardTimerKey
    deadline_ms: int


class CancelTimer(NamedTuple):
    """Disarm ``key`` (no-op when it is not armed)."""

    key: ShardTimerKey


class AppendCallback(Protocol):
    """Soft state coupled to a write (Kafka's append-future callbacks): run by the core once
    the runtime reports how the append of the Result's records went."""

    def appended(self, now_ms: int, fx: Effects) -> None:
        """The records are in the log (and in hard state)."""

    def append_failed(self, error: ErrorCode, now_ms: int, fx: Effects) -> None:
        """The append failed with Kafka log-append error ``error``; nothing was applied.
        A reply added to ``fx`` for a token of the failed Result replaces that token's."""


class Result(NamedTuple):
    """Outcome of one core call: records to persist, replies to send once they are durable,
    timer changes to apply, what to do when the append completes, and transaction markers
    to write. ``at_once``: None, or the Result is safe to answer inline and this maps its
    answer when the append fails (see the module docstring)."""

    records: tuple[Record, ...] = ()
    replies: tuple[Reply, ...] = ()
    timers: tuple[ScheduleTimer | CancelTimer, ...] = ()
    callbacks: tuple[AppendCallback, ...] = ()
    markers: tuple[TxnMarker, ...] = ()
    at_once: AnswerFailed | None = None


EMPTY_RESULT = Result()


class Effects:
    """Accumulates one call's records, replies, timer changes and append callbacks."""

    __slots__ = ("_pending", "callbacks", "markers", "records", "replies", "timers")

    def __init__(self, pending: PendingWrites) -> None:
        self._pending = pending
        self.records: list[Record] = []
        self.replies: list[Reply] = []
        self.timers: list[ScheduleTimer | CancelTimer] = []
        self.callbacks: list[AppendCallback] = []
        self.markers: tuple[TxnMarker, ...] = ()  # rare: no list allocated per call

    def persist(self, record: Record) -> None:
        """Emit a record of hard state; it counts as pending until its append completes."""
        self.records.append(record)
        self._pending.add(record)

    def event(self, record: Record) -> None:
        """Emit a history record (replay ignores it; losing it fails nothing)."""
        self.records.append(record)

    def after_append(self, callback: AppendCallback) -> None:
        """Run ``callback`` when the append of this call's records completes."""
        self.callbacks.append(callback)

    def write_markers(self, marker: TxnMarker) -> None:
        """Ask the runtime to write a transaction's markers."""
        self.markers += (marker,)

    def reply(self, token: ReplyToken, response: ShardResponse) -> None:
        """Answer the request identified by ``token``."""
        self.replies.append(Reply(token, response))

    def schedule(self, key: ShardTimerKey, deadline_ms: int) -> None:
        """Arm (or re-arm) a timer."""
        self.timers.append(ScheduleTimer(key, deadline_ms))

    def cancel(self, key: TimerKey) -> None:
        """Disarm a timer."""
        self.timers.append(CancelTimer(key))

    def result(self) -> Result:
        """Freeze what was accumulated."""
        if self.records:
            if self._pending.unreturned:
                self._pending.seal()
        elif not (self.replies or self.timers or self.callbacks or self.markers):
            return EMPTY_RESULT
        return Result(
            tuple(self.records), tuple(self.replies), tuple(self.timers), tuple(self.callbacks),
            self.markers,
        )
