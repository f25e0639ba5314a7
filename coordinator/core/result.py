"""What every core entry point returns: records to append, replies to send, timers to set.

The runtime appends ``records`` to the log, then sends ``replies``, then applies ``timers``
in order (scheduling a key again replaces it). ``Effects`` is the accumulator the handlers
write into; emitting a record applies it to hard state through the replay code path at once,
so the live state is the replay of the emitted records by construction.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass

from coordinator.core.messages import Response
from coordinator.core.timers import TimerKey
from storage.records import Record

__all__ = [
    "EMPTY_RESULT",
    "CancelTimer",
    "Effects",
    "Reply",
    "ReplyToken",
    "Result",
    "ScheduleTimer",
]

ReplyToken = Hashable
"""Opaque handle of a request awaiting its answer, supplied by the runtime (never None)."""


@dataclass(frozen=True, slots=True)
class Reply:
    """The answer to the request identified by ``token`` (possibly a parked, earlier one)."""

    token: ReplyToken
    response: Response


@dataclass(frozen=True, slots=True)
class ScheduleTimer:
    """Arm ``key`` to fire at ``deadline_ms``; replaces any earlier deadline of the key."""

    key: TimerKey
    deadline_ms: int


@dataclass(frozen=True, slots=True)
class CancelTimer:
    """Disarm ``key`` (no-op when it is not armed)."""

    key: TimerKey


@dataclass(frozen=True, slots=True)
class Result:
    """Outcome of one core call: records to persist, replies to send, timer changes to apply."""

    records: tuple[Record, ...] = ()
    replies: tuple[Reply, ...] = ()
    timers: tuple[ScheduleTimer | CancelTimer, ...] = ()


EMPTY_RESULT = Result()


class Effects:
    """Accumulates one call's records, replies and timer changes."""

    __slots__ = ("_apply", "records", "replies", "timers")

    def __init__(self, apply: Callable[[Record], None]) -> None:
        self._apply = apply
        self.records: list[Record] = []
        self.replies: list[Reply] = []
        self.timers: list[ScheduleTimer | CancelTimer] = []

    def persist(self, record: Record) -> None:
        """Emit a record and apply it to hard state through the replay path."""
        self.records.append(record)
        self._apply(record)

    def event(self, record: Record) -> None:
        """Emit a history record that replay ignores."""
        self.records.append(record)

    def reply(self, token: ReplyToken, response: Response) -> None:
        """Answer the request identified by ``token``."""
        self.replies.append(Reply(token, response))

    def schedule(self, key: TimerKey, deadline_ms: int) -> None:
        """Arm (or re-arm) a timer."""
        self.timers.append(ScheduleTimer(key, deadline_ms))

    def cancel(self, key: TimerKey) -> None:
        """Disarm a timer."""
        self.timers.append(CancelTimer(key))

    def result(self) -> Result:
        """Freeze what was accumulated."""
        if not (self.records or self.replies or self.timers):
            return EMPTY_RESULT
        return Result(tuple(self.records), tuple(self.replies), tuple(self.timers))
