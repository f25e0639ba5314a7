"""The share shard the coordinator runtime drives (Kafka's ``SharePartitionManager`` with its
``ShareSessionCache``, over the share coordinator's ``ShareCoordinatorShard``): share
sessions, acknowledgements, acquisitions and acquisition-lock expiry, as the runtime's
``Shard`` contract and ``Result`` vocabulary.

Persist, then apply: every durable change (an acknowledgement, a release, an expired lock,
a start offset moving, a new share partition's first snapshot) leaves a handler as a record
in its Result with a callback naming the change; the runtime appends the records and only
then calls :meth:`SharePartitionManager.append_done`, which applies the changes, and then
sends the replies. A failed append applies nothing and answers :class:`ShareAppendFailed`.
Acquisitions and sessions are soft state (as in Kafka), changed at once.

The handlers (``handle_*``) have the runtime's shard-handler signature
``(shard, context, request, reply token, now_ms) -> Result``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from coordinator.core.result import (
    EMPTY_RESULT,
    CancelTimer,
    Reply,
    ReplyToken,
    Result,
    ScheduleTimer,
)
from storage.records import Record
from storage.share_records import ShareSnapshotKey
from wire.constants import ErrorCode

from .coordinator import ShareCoordinatorShard
from .durable import SharePartitionKey
from .partition import SharePartition, ShareStateChange
from .sessions import (
    DEFAULT_MAX_SHARE_SESSIONS,
    FINAL_EPOCH,
    ConnectionId,
    ShareSession,
    ShareSessionCache,
    ShareSessionKey,
)
from .states import AcknowledgementBatch, AcquiredRecords, ShareError, SharePartitionConfig
from .timers import SHARE_LOCK_TIMER

__all__ = [
    "AcquireAnswer",
    "AcquireRequest",
    "AcquireTarget",
    "ConnectionClosed",
    "EvictRequest",
    "SessionAnswer",
    "SessionRequest",
    "ShareAppendFailed",
    "SharePartitionManager",
    "handle_acquire",
    "handle_connection_closed",
    "handle_evict_closed",
    "handle_session",
]


# --------------------------------------------------------------------------- requests


@dataclass(frozen=True, slots=True)
class SessionRequest:
    """The session half of a ShareFetch or ShareAcknowledge: the session check and the
    acknowledgements it carries (by share partition, in request order)."""

    api: Literal["fetch", "acknowledge"]
    group_id: str
    member_id: str
    epoch: int
    partitions: tuple[SharePartitionKey, ...] = ()
    forgotten: tuple[SharePartitionKey, ...] = ()
    acknowledgements: Mapping[SharePartitionKey, tuple[AcknowledgementBatch, ...]] = field(
        default_factory=dict
    )
    connection_id: ConnectionId | None = None
    #: The group's ``share.record.lock.duration.ms`` (RENEW), when it sets one.
    lock_duration_ms: int | None = None


@dataclass(slots=True)
class SessionAnswer:
    """The session check's outcome: a session error (nothing else happened), or the
    session's partitions and each acknowledged partition's error (NONE when it applied)."""

    error: ShareError | None = None
    partitions: tuple[SharePartitionKey, ...] = ()
    acknowledge_errors: dict[SharePartitionKey, tuple[ErrorCode, str | None]] = field(
        default_factory=dict
    )
    closed: bool = False


@dataclass(frozen=True, slots=True)
class AcquireTarget:
    """A share partition to acquire from: the offset reads stop at (the high watermark,
    or the last stable offset under read_committed), the log start offset, where the share
    partition starts if it has no state yet (``share.auto.offset.reset``), and the ranges
    it archives instead of delivering."""

    key: SharePartitionKey
    end_offset: int
    log_start_offset: int
    start_offset_if_new: int
    #: Offset ranges never to deliver (read_committed: aborted records, control batches).
    skipped: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True, slots=True)
class AcquireRequest:
    """Acquire up to ``max_records`` records over ``targets``, in order, for ``member_id``."""

    group_id: str
    member_id: str
    targets: tuple[AcquireTarget, ...]
    max_records: int
    #: The group's ``share.record.lock.duration.ms``, when it sets one.
    lock_duration_ms: int | None = None


@dataclass(slots=True)
class AcquireAnswer:
    """What was acquired, by share partition; ``initializing``: some partitions had no
    state, whose first snapshot is now durable (ask again)."""

    acquired: dict[SharePartitionKey, list[AcquiredRecords]] = field(default_factory=dict)
    initializing: bool = False


@dataclass(frozen=True, slots=True)
class EvictRequest:
    """Drop the sessions broker ``node_id``'s closed connections opened: those not in
    ``live`` (the connection ids still open there)."""

    node_id: int
    live: frozenset[int]


@dataclass(frozen=True, slots=True)
class ConnectionClosed:
    """Client connection ``connection_id`` (broker node id, connection id) closed."""

    connection_id: ConnectionId


@dataclass(frozen=True, slots=True)
class ShareAppendFailed:
    """The answer to a request whose records could not be appended (nothing applied)."""

    error: ErrorCode


# --------------------------------------------------------------------------- callbacks


@dataclass(frozen=True, slots=True)
class _Change:
    """A share partition's change whose record is in the Result."""

    key: SharePartitionKey
    change: ShareStateChange


@dataclass(frozen=True, slots=True)
class _Initialization:
    """A new share partition's first snapshot, in the Result."""

    key: SharePartitionKey
    record: Record


@dataclass(frozen=True, slots=True)
class _Rewrite:
    """A share partition's state written anew (AlterShareGroupOffsets: a snapshot, or
    tombstones): in the Result, with the live partition it replaces."""

    key: SharePartitionKey
    records: tuple[Record, ...]
    previous: SharePartition | None


def _reply(token: ReplyToken, answer: object) -> Reply:
    """A reply carrying one of this module's answers (the share routes read them)."""
    return Reply(token, answer)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- the shard


class SharePartitionManager:
    """Share sessions and share partitions, driven by the coordinator runtime."""

    def __init__(
        self,
        config_of: Callable[[SharePartitionKey], SharePartitionConfig] | None = None,
        *,
        max_sessions: int = DEFAULT_MAX_SHARE_SESSIONS,
        on_change: Callable[[], None] | None = None,
    ) -> None:
        self.coordinator = ShareCoordinatorShard(config_of)
        self.sessions = ShareSessionCache(max_sessions)
        #: Called after durable changes are applied (records may have become available).
        self.on_change = on_change
        self._initializing: set[SharePartitionKey] = set()

    @property
    def partitions(self) -> dict[SharePartitionKey, SharePartition]:
        """The live share partitions."""
        return self.coordinator.partitions

    # ------------------------------------------------------------------ Shard contract

    def replay(self, record: Record) -> None:
        """Apply one record read back from the log."""
        self.coordinator.replay(record)

    def on_loaded(self, now_ms: int) -> Result:
        """Replay is over: the partitions go live, acquired records available again."""
        self.coordinator.load()
        return Result(timers=self.lock_timer())

    def append_done(self, result: Result, now_ms: int) -> Result:
        """``result``'s records are durable: apply the changes they carry."""
        for callback in result.callbacks:
            if isinstance(callback, _Change) and callback.key not in self.partitions:
                self._revive(callback.key, callback.change.record)  # deleted meanwhile
            elif isinstance(callback, _Change):
                self.coordinator.append_done(callback.key, callback.change)
            elif isinstance(callback, _Initialization):
                self._initializing.discard(callback.key)
                self.coordinator.initialized(callback.key, callback.record)
            elif isinstance(callback, _Rewrite):
                self._initializing.discard(callback.key)
                for record in callback.records:
                    self.coordinator.replay(record)
                self._rebuild(callback.key)
        self._changed()
        return Result(timers=self.lock_timer())

    def append_failed(self, result: Result, error: ErrorCode, now_ms: int) -> Result:
        """Nothing of ``result`` applies; its requesters are answered ``error``."""
        for callback in reversed(result.callbacks):
            if isinstance(callback, _Change):
                self.coordinator.append_failed(callback.key, callback.change)
            elif isinstance(callback, _Initialization):
                self._initializing.discard(callback.key)
            elif isinstance(callback, _Rewrite):
                self._initializing.discard(callback.key)
                if callback.previous is not None:
                    self.partitions.setdefault(callback.key, callback.previous)
        replies = tuple(_reply(r.token, ShareAppendFailed(error)) for r in result.replies)
        self._changed()
        return Result(replies=replies, timers=self.lock_timer())

    def fire_timer(self, key: Any, now_ms: int) -> Result:
        """Acquisition locks whose deadline passed: their records are released (archived
        at the delivery count limit), persisted before they are available again."""
        if key != SHARE_LOCK_TIMER:
            return EMPTY_RESULT
        changes = self.coordinator.expire_locks(now_ms)
        return self._result(changes, ())

    def forget(self, tombstones: Sequence[Record]) -> None:
        """Share-state tombstones the group shard wrote are in the log (DeleteGroups,
        DeleteShareGroupOffsets): those share partitions go, as replaying them makes them go."""
        for record in tombstones:
            key = record.key
            if self.coordinator.replay(record) and isinstance(key, ShareSnapshotKey):
                self.partitions.pop(
                    SharePartitionKey(key.group_id, key.topic_id, key.partition), None)
        self._changed()

    def _revive(self, key: SharePartitionKey, record: Record) -> None:
        """A change of a share partition forgotten while its record was being appended: the
        record counts as replay counts it (a snapshot brings the partition back)."""
        self.coordinator.replay(record)
        self._rebuild(key)

    def _rebuild(self, key: SharePartitionKey) -> None:
        """The live partition ``key`` as its replayed records leave it (none if deleted)."""
        self.partitions.pop(key, None)
        log = self.coordinator.store.partitions.get(key)
        if log is not None:
            config = self.coordinator.config_of(key)
            self.partitions[key] = SharePartition.from_log(key, log, config)

    # ------------------------------------------------------------------ helpers

    def rewrite(self, key: SharePartitionKey, records: tuple[Record, ...]) -> _Rewrite:
        """Replace share partition ``key``'s state by ``records`` (to append): it is not
        served (``initializing``) until they are durable, then rebuilt from them."""
        previous = self.partitions.pop(key, None)
        self._initializing.add(key)
        return _Rewrite(key, records, previous)

    def lock_timer(self) -> tuple[ScheduleTimer | CancelTimer, ...]:
        """The lock timer armed at the earliest acquisition lock deadline, or disarmed."""
        deadline = self.coordinator.next_lock_deadline()
        if deadline is None:
            return (CancelTimer(SHARE_LOCK_TIMER),)
        return (ScheduleTimer(SHARE_LOCK_TIMER, deadline),)

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change()

    def _result(
        self,
        changes: Sequence[tuple[SharePartitionKey, ShareStateChange]],
        replies: tuple[Reply, ...],
        initializations: Sequence[_Initialization] = (),
    ) -> Result:
        callbacks: list[Any] = [*initializations, *(_Change(k, c) for k, c in changes)]
        records = tuple(
            [i.record for i in initializations] + [c.record for _, c in changes]
        )
        return Result(records=records, replies=replies, timers=self.lock_timer(),
                      callbacks=tuple(callbacks))

    def release_member(
        self, member_id: str, keys: Sequence[SharePartitionKey], now_ms: int
    ) -> list[tuple[SharePartitionKey, ShareStateChange]]:
        """Release what ``member_id`` holds on ``keys`` (its session closed)."""
        changes = []
        for key in keys:
            partition = self.partitions.get(key)
            if partition is not None:
                change = partition.release_member(member_id, now_ms)
                if change is not None:
                    changes.append((key, change))
        return changes

    def acknowledge(
        self, member_id: str, acknowledgements: Mapping[
            SharePartitionKey, tuple[AcknowledgementBatch, ...]], now_ms: int,
        lock_duration_ms: int | None = None,
    ) -> tuple[list[tuple[SharePartitionKey, ShareStateChange]],
               dict[SharePartitionKey, tuple[ErrorCode, str | None]]]:
        """Apply each partition's acknowledgements (all of a partition's or none); the
        changes to persist and each partition's error."""
        changes = []
        errors: dict[SharePartitionKey, tuple[ErrorCode, str | None]] = {}
        for key, batches in acknowledgements.items():
            partition = self.partitions.get(key)
            if partition is None:
                errors[key] = (ErrorCode.INVALID_RECORD_STATE,
                               "The share partition has no acquired records.")
                continue
            try:
                change = partition.acknowledge(member_id, batches, now_ms, lock_duration_ms)
            except ShareError as exc:
                errors[key] = (exc.error_code, exc.message)
                continue
            errors[key] = (ErrorCode.NONE, None)
            if change is not None:
                changes.append((key, change))
        return changes, errors


# --------------------------------------------------------------------------- handlers


def handle_session(
    shard: SharePartitionManager, ctx: Any, request: SessionRequest, token: ReplyToken,
    now_ms: int,
) -> Result:
    """The session check of a ShareFetch or ShareAcknowledge, then its acknowledgements
    (persisted before the answer); epoch -1 then releases what the member holds on the
    session's partitions and closes the session."""
    key = ShareSessionKey(request.group_id, request.member_id)
    cache = shard.sessions
    try:
        if request.api == "fetch":
            session = cache.fetch_context(
                key, request.epoch, request.partitions, request.forgotten,
                has_acknowledgements=bool(request.acknowledgements),
                connection_id=request.connection_id,
            )
        else:
            session = cache.acknowledge_context(key, request.epoch)
    except ShareError as exc:
        return Result(replies=(_reply(token, SessionAnswer(exc)),))
    changes, errors = shard.acknowledge(request.member_id, request.acknowledgements, now_ms,
                                        request.lock_duration_ms)
    partitions = tuple(session.partitions)
    closed = request.epoch == FINAL_EPOCH
    if closed:
        cache.remove(key)
        changes += shard.release_member(request.member_id, partitions, now_ms)
    answer = SessionAnswer(None, partitions, errors, closed)
    return shard._result(changes, (_reply(token, answer),))


def handle_acquire(
    shard: SharePartitionManager, ctx: Any, request: AcquireRequest, token: ReplyToken,
    now_ms: int,
) -> Result:
    """Acquire records for a ShareFetch: share partitions with no state get their first
    snapshot first (answered ``initializing``: ask again); the log start offset moving and
    skipped records are persisted before the answer."""
    initializations = []
    for target in request.targets:
        key = target.key
        if key in shard.partitions or key in shard._initializing:
            continue
        if key in shard.coordinator.store.partitions:  # replayed, not yet live
            continue
        record = shard.coordinator.initialize(key, target.start_offset_if_new, now_ms)
        shard._initializing.add(key)
        initializations.append(_Initialization(key, record))
    if initializations:  # nothing acquired: a failed append then loses nothing soft
        answer = AcquireAnswer(initializing=True)
        return shard._result((), (_reply(token, answer),), initializations)
    answer = AcquireAnswer(initializing=any(t.key in shard._initializing for t in request.targets))
    changes: list[tuple[SharePartitionKey, ShareStateChange]] = []
    remaining = request.max_records
    for target in request.targets:
        partition = shard.partitions.get(target.key)
        if partition is None:
            continue
        if target.log_start_offset > partition.log_start_offset:
            moved = partition.advance_log_start_offset(target.log_start_offset, now_ms)
            if moved is not None:
                changes.append((target.key, moved))
        if remaining <= 0:
            continue
        acquisition = partition.acquire(request.member_id, remaining, target.end_offset, now_ms,
                                        skipped=target.skipped,
                                        lock_duration_ms=request.lock_duration_ms)
        if acquisition.change is not None:
            changes.append((target.key, acquisition.change))
        if acquisition.records:
            answer.acquired[target.key] = acquisition.records
            remaining -= sum(r.last_offset - r.first_offset + 1 for r in acquisition.records)
    return shard._result(changes, (_reply(token, answer),),
                         initializations)


def handle_evict_closed(
    shard: SharePartitionManager, ctx: Any, request: EvictRequest, token: ReplyToken,
    now_ms: int,
) -> Result:
    """Remove the sessions whose connection closed, releasing what their members hold (what
    Kafka's ShareSessionCache does when a client disconnects; kcoord does it when the cache
    is full, in case a close went unreported); answers how many were removed."""
    closed = [s for s in shard.sessions.sessions.values()
              if s.connection_id is not None and s.connection_id[0] == request.node_id
              and s.connection_id[1] not in request.live]
    return _evict(shard, closed, token, now_ms)


def handle_connection_closed(
    shard: SharePartitionManager, ctx: Any, request: ConnectionClosed, token: ReplyToken,
    now_ms: int,
) -> Result:
    """A client connection closed: the sessions opened over it go and their members'
    acquired records are released (Kafka's ShareSessionCache ConnectionDisconnectListener
    and SharePartitionManager.releaseSession); answers how many were removed."""
    return _evict(shard, shard.sessions.sessions_of_connection(request.connection_id), token,
                  now_ms)


def _evict(shard: SharePartitionManager, sessions: Sequence[ShareSession], token: ReplyToken,
           now_ms: int) -> Result:
    changes = []
    for session in sessions:
        shard.sessions.remove(session.key)
        changes += shard.release_member(session.key.member_id, list(session.partitions), now_ms)
    return shard._result(changes, (_reply(token, len(sessions)),))
