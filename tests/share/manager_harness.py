"""The share shard (``SharePartitionManager``) driven as the coordinator runtime drives it:
each handler's Result has its records written through the storage codec into a list (the
log), then ``append_done`` applies them and the replies are read; ``fire_timer`` when the
lock timer's deadline passes; ``restart`` rebuilds a shard from the log alone."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from coordinator.core.result import CancelTimer, Result, ScheduleTimer
from coordinator.share import AcknowledgementBatch, SharePartitionConfig, SharePartitionKey
from coordinator.share.manager import (
    AcquireAnswer,
    AcquireRequest,
    AcquireTarget,
    SessionAnswer,
    SessionRequest,
    ShareAppendFailed,
    SharePartitionManager,
    handle_acquire,
    handle_session,
)
from coordinator.share.timers import SHARE_LOCK_TIMER
from storage.record_codec import decode_record, encode_record
from storage.records import Record
from wire.constants import ErrorCode

GROUP = "share-group"
TOPIC_ID = uuid.UUID("5a5a5a5a-6a1e-4c1f-9c39-3c0c1d2e3f40")
MEMBER_1 = "member-1"
MEMBER_2 = "member-2"

__all__ = ["GROUP", "MEMBER_1", "MEMBER_2", "TOPIC_ID", "ManagerHarness", "key"]


def key(partition: int = 0, group: str = GROUP) -> SharePartitionKey:
    """The share partition ``partition`` of the test topic in ``group``."""
    return SharePartitionKey(group, TOPIC_ID, partition)


class ManagerHarness:
    """One share shard, its log, a clock and the high watermark of every partition."""

    def __init__(self, config: SharePartitionConfig | None = None, *, max_sessions: int = 2000,
                 log: list[Record] | None = None) -> None:
        self.config = config or SharePartitionConfig()
        self.now = 0
        self.log: list[Record] = [] if log is None else log
        self.fail_next_append = False
        self.end_offsets: dict[SharePartitionKey, int] = {}
        self.log_start_offsets: dict[SharePartitionKey, int] = {}
        self.lock_deadline: int | None = None
        self.changes = 0
        self.shard = SharePartitionManager(lambda _k: self.config, max_sessions=max_sessions,
                                           on_change=self._changed)
        for record in self.log:
            self.shard.replay(record)
        self._finish(self.shard.on_loaded(self.now))

    def _changed(self) -> None:
        self.changes += 1

    def restart(self) -> ManagerHarness:
        """A new shard over the same log (a crash: soft state gone)."""
        again = ManagerHarness(self.config, log=self.log)
        again.now, again.end_offsets = self.now, dict(self.end_offsets)
        again.log_start_offsets = dict(self.log_start_offsets)
        return again

    # ------------------------------------------------------------------ the runtime's side

    def _finish(self, result: Result) -> list[Any]:
        """Persist ``result``'s records, apply them, and return its replies' answers."""
        self._timers(result)
        if result.records:
            if self.fail_next_append:
                self.fail_next_append = False
                follow = self.shard.append_failed(result, ErrorCode.KAFKA_STORAGE_ERROR, self.now)
                self._timers(follow)
                return [r.response for r in follow.replies]
            for record in result.records:
                encoded_key, encoded_value = encode_record(record)
                decoded = decode_record(encoded_key, encoded_value)
                assert decoded == record
                self.log.append(decoded)
            self._timers(self.shard.append_done(result, self.now))
        return [r.response for r in result.replies]

    def _timers(self, result: Result) -> None:
        for change in result.timers:
            assert change.key == SHARE_LOCK_TIMER
            if isinstance(change, ScheduleTimer):
                self.lock_deadline = change.deadline_ms
            elif isinstance(change, CancelTimer):
                self.lock_deadline = None

    def sleep(self, ms: int) -> None:
        """Move the clock, firing the lock timer when its deadline passes."""
        self.now += ms
        while self.lock_deadline is not None and self.lock_deadline <= self.now:
            self.lock_deadline = None
            self._finish(self.shard.fire_timer(SHARE_LOCK_TIMER, self.now))

    # ------------------------------------------------------------------ requests

    def session(
        self, api: str, member: str, epoch: int, partitions: Sequence[SharePartitionKey] = (),
        acks: Mapping[SharePartitionKey, Sequence[tuple[int, int, int]]] | None = None,
        forgotten: Sequence[SharePartitionKey] = (), group: str = GROUP,
    ) -> SessionAnswer | ShareAppendFailed:
        batches = {
            k: tuple(AcknowledgementBatch(first, last, (t,)) for first, last, t in v)
            for k, v in (acks or {}).items()
        }
        request = SessionRequest(api, group, member, epoch, tuple(partitions),  # type: ignore[arg-type]
                                 tuple(forgotten), batches)
        (answer,) = self._finish(handle_session(self.shard, None, request, 1, self.now))
        assert isinstance(answer, SessionAnswer | ShareAppendFailed)
        return answer

    def acquire(
        self, member: str, keys: Sequence[SharePartitionKey] = (), max_records: int = 500,
        start_offset_if_new: int = 0,
    ) -> dict[SharePartitionKey, list[tuple[int, int, int]]]:
        """Acquire as a ShareFetch does (a new partition's snapshot first)."""
        keys = keys or [key()]
        found: dict[SharePartitionKey, list[tuple[int, int, int]]] = {}
        for _ in range(3):
            targets = tuple(
                AcquireTarget(k, self.end_offsets.get(k, 0), self.log_start_offsets.get(k, 0),
                              start_offset_if_new)
                for k in keys
            )
            request = AcquireRequest(keys[0].group_id, member, targets, max_records)
            (answer,) = self._finish(handle_acquire(self.shard, None, request, 1, self.now))
            if isinstance(answer, ShareAppendFailed):
                continue  # a new partition's snapshot was not written: ask again
            assert isinstance(answer, AcquireAnswer)
            for k, runs in answer.acquired.items():
                found.setdefault(k, []).extend(
                    (r.first_offset, r.last_offset, r.delivery_count) for r in runs)
                max_records -= sum(r.last_offset - r.first_offset + 1 for r in runs)
            if not answer.initializing:
                return found
        raise AssertionError("the share partition never initialized")
