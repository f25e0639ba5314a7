"""The machinery of the coordinator test harness (``harness.Harness`` adds the request
helpers): a fake clock around the coordinator core, in the spirit of Kafka's MockTimer-driven
GroupCoordinatorTest and GroupMetadataManagerTestContext, and the values of Kafka's tests.

- Every request gets a fresh reply token; replies (immediate or to parked requests) are
  collected per token, and a token answered twice fails the test.
- Timers are kept in a dict keyed like the runtime's; ``sleep(ms)`` advances the clock and
  fires due timers in deadline order. By default a timer is due when ``deadline < now``,
  exactly like Kafka's MockTimer (``now > expirationMs``), which is why Kafka's tests advance
  by ``x + 1``; ``strict=False`` gives the Java context's ``deadline <= now``.
- Every Result's records are "appended" at once, as the runtime does, and the core is told
  (``append_done``), so hard state changes only then; ``fail_appends(error)`` makes the next
  appends fail instead (``append_failed``), and ``hold_appends()`` keeps them in flight until
  ``release()`` (Kafka's test context completes its append futures by hand the same way).
  Appended records are collected; ``crash_and_replay()`` rebuilds a coordinator from them, as
  a restart would.
- Responses are dicts (what the wire encodes); the harness hands them out as ``Answer``s,
  dicts that also read by attribute (``response.error_code``).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from coordinator.config import CoordinatorConfig
from coordinator.core import (
    CancelTimer,
    ErrorCode,
    GroupCoordinator,
    HeartbeatTimerKey,
    LocalContext,
    MemberIdentity,
    OffsetCommitRequestPartition,
    Result,
    ScheduleTimer,
    TimerKey,
)
from coordinator.core.classic.group import ClassicGroup
from storage.errors import append_error_of
from storage.live_snapshot import pack_offsets
from storage.records import Record

# GroupCoordinatorTest.scala's configuration.
GROUP_MIN_SESSION_TIMEOUT = 10
GROUP_MAX_SESSION_TIMEOUT = 10 * 60 * 1000
GROUP_MAX_SIZE = 4
DEFAULT_REBALANCE_TIMEOUT = 500
DEFAULT_SESSION_TIMEOUT = 500
GROUP_INITIAL_REBALANCE_DELAY = 50

GROUP_ID = "groupId"
PROTOCOL_TYPE = "consumer"
PROTOCOL_NAME = "range"
MEMBER_ID = "memberId"
GROUP_INSTANCE_ID = "groupInstanceId"
LEADER_INSTANCE_ID = "leader"
FOLLOWER_INSTANCE_ID = "follower"
INVALID_MEMBER_ID = "invalidMember"
METADATA = b""
PROTOCOLS: tuple[tuple[str, bytes], ...] = ((PROTOCOL_NAME, METADATA),)
PROTOCOL_SUPERSET: tuple[tuple[str, bytes], ...] = (
    (PROTOCOL_NAME, METADATA),
    ("roundrobin", METADATA),
)
UNKNOWN_MEMBER_ID = ""

KAFKA_TEST_CONFIG = CoordinatorConfig(
    group_min_session_timeout_ms=GROUP_MIN_SESSION_TIMEOUT,
    group_max_session_timeout_ms=GROUP_MAX_SESSION_TIMEOUT,
    group_max_size=GROUP_MAX_SIZE,
    group_initial_rebalance_delay_ms=GROUP_INITIAL_REBALANCE_DELAY,
)

Token = str
Offsets = Mapping[tuple[str, int], int | tuple[int, str] | OffsetCommitRequestPartition]


class Answer(dict[str, Any]):
    """A response dict that also reads by attribute (``answer.error_code``)."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def answer(value: Any) -> Any:
    """``value`` with every dict an Answer and every list a tuple (recursively)."""
    if isinstance(value, dict):
        return Answer({k: answer(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return tuple(answer(v) for v in value)
    return value


def ctx(api_version: int, client_id: str | None = "clientId",
        client_host: str = "clientHost") -> LocalContext:
    """A request context at ``api_version``."""
    return LocalContext(api_version=api_version, client_id=client_id, client_host=client_host)


def partition(partition_index: int, committed_offset: int, committed_metadata: str | None = "",
              committed_leader_epoch: int = -1,
              commit_timestamp: int = -1) -> OffsetCommitRequestPartition:
    """One partition of an OffsetCommit (the fields a version lacks at their defaults)."""
    return {"partition_index": partition_index, "committed_offset": committed_offset,
            "committed_leader_epoch": committed_leader_epoch,
            "commit_timestamp": commit_timestamp, "committed_metadata": committed_metadata}


def identity(member_id: str, group_instance_id: str | None = None,
             reason: str | None = None) -> MemberIdentity:
    """One member of a v3+ LeaveGroup."""
    return {"member_id": member_id, "group_instance_id": group_instance_id, "reason": reason}


@dataclass
class RebalanceResult:
    """Outcome of ``static_members_join_and_rebalance``."""

    generation: int
    leader_id: str
    leader_assignment: bytes
    follower_id: str
    follower_assignment: bytes


@dataclass
class CoordinatorDriver:
    """Drives one GroupCoordinator with a fake clock, collecting replies and records
    (the request helpers are on ``harness.Harness``)."""

    config: CoordinatorConfig = KAFKA_TEST_CONFIG
    strict: bool = True
    now: int = 0
    coordinator: GroupCoordinator = field(init=False)
    timers: dict[TimerKey, tuple[int, int]] = field(default_factory=dict)
    replies: dict[Any, Any] = field(default_factory=dict)
    sent: list[Token] = field(default_factory=list)
    records: list[Record] = field(default_factory=list)
    results: list[Result] = field(default_factory=list)
    fired: list[TimerKey] = field(default_factory=list)
    #: Kafka append errors the next appends fail with, in order.
    append_errors: list[ErrorCode] = field(default_factory=list)
    #: Results whose append is held in flight (``hold_appends``).
    in_flight: list[Result] = field(default_factory=list)
    holding: bool = False
    #: Keep committed offsets packed until read, as the server does (``HardState.pack``).
    pack: bool = True

    def __post_init__(self) -> None:
        self._uuids = itertools.count(1)
        self._tokens = itertools.count(1)
        self._timer_seq = itertools.count()
        self.coordinator = self._new_coordinator()

    def _new_coordinator(self) -> GroupCoordinator:
        coordinator = GroupCoordinator(self.config, self._new_uuid)
        if self.pack:
            coordinator.pack_offsets_with(pack_offsets)
        return coordinator

    def _new_uuid(self) -> str:
        return f"uuid{next(self._uuids):04d}"

    # ------------------------------------------------------------------ plumbing

    def token(self) -> Token:
        """A fresh reply token."""
        token = f"t{next(self._tokens)}"
        self.sent.append(token)
        return token

    def apply(self, result: Result) -> Result:
        """Do what the runtime does with a Result: set timers, append the records and tell
        the core how that went, send replies (after the append)."""
        self.results.append(result)
        for change in result.timers:
            if isinstance(change, ScheduleTimer):
                self.timers[change.key] = (change.deadline_ms, next(self._timer_seq))
            else:
                assert isinstance(change, CancelTimer)
                self.timers.pop(change.key, None)
        if not (result.records or result.callbacks):
            self._deliver(result)
        elif self.holding or self.in_flight:
            if result.at_once is not None:  # queued, not answered inline: count it in flight
                self.coordinator.count_in_flight(result)
            self.in_flight.append(result)
        else:
            self._complete(result)
        return result

    def _deliver(self, result: Result) -> None:
        for reply in result.replies:
            assert reply.token not in self.replies, f"token {reply.token} answered twice"
            self.replies[reply.token] = answer(reply.response)

    def write(self, records: Sequence[Record]) -> None:
        """Persist ``records``; raise to fail the append (a subclass writes to a real log)."""

    def _complete(self, result: Result) -> None:
        error: ErrorCode | None = None
        if self.append_errors:
            error = self.append_errors.pop(0)
        else:
            try:
                self.write(result.records)
            except Exception as exc:
                error = append_error_of(exc)
        if error is not None:
            self.apply(self.coordinator.append_failed(result, error, self.now))
            return
        self.records.extend(result.records)
        follow = self.coordinator.append_done(result, self.now)
        self._deliver(result)
        self.apply(follow)

    def fail_appends(self, error: ErrorCode = ErrorCode.KAFKA_STORAGE_ERROR,
                     count: int = 1) -> None:
        """The next ``count`` appends fail with Kafka append error ``error``."""
        self.append_errors.extend([error] * count)

    @contextmanager
    def hold_appends(self) -> Iterator[None]:
        """Keep the appends of Results applied inside the block in flight (``release``)."""
        self.holding = True
        try:
            yield
        finally:
            self.holding = False

    def release(self, error: ErrorCode | None = None, count: int | None = None) -> None:
        """Complete held appends in order -- the first ``count``, or all (and what they
        lead to) by default -- failing them with ``error`` if given."""
        n = len(self.in_flight) if count is None else count
        batch = self.in_flight[:n]
        del self.in_flight[:n]
        for result in batch:
            if error is not None:
                self.append_errors.insert(0, error)
            self._complete(result)
        if count is None and not self.holding:
            while self.in_flight:
                self._complete(self.in_flight.pop(0))

    def sleep(self, ms: int) -> None:
        """Advance the clock by ``ms`` and fire every due timer in deadline order."""
        self.now += ms
        while True:
            due = [
                (deadline, seq, key)
                for key, (deadline, seq) in self.timers.items()
                if deadline < self.now or (not self.strict and deadline <= self.now)
            ]
            if not due:
                return
            # Equal deadlines: group timers (join / sync phase) before member sessions, which
            # is the order Kafka's tests rely on (e.g. a rebalance timeout and a non-rejoined
            # member's session expiring in the same millisecond: the join completes first and
            # re-arms every session).
            _, _, key = min(due, key=lambda d: (d[0], isinstance(d[2], HeartbeatTimerKey), d[1]))
            del self.timers[key]
            self.fired.append(key)
            self.apply(self.coordinator.fire_timer(key, self.now))

    def answered(self, token: Token) -> bool:
        """Whether ``token`` got its reply."""
        return token in self.replies

    def reply(self, token: Token) -> Any:
        """The reply to ``token``; fails if it is still parked."""
        assert token in self.replies, f"request {token} is still parked"
        return self.replies[token]

    def outstanding(self) -> list[Token]:
        """Tokens still waiting for a reply."""
        return [t for t in self.sent if t not in self.replies]

    def group(self, group_id: str = GROUP_ID) -> ClassicGroup:
        """The live group object (Kafka's tests poke it directly too)."""
        group = self.coordinator.groups.get(group_id)
        assert group is not None, f"group {group_id} not found"
        return group

    def maybe_group(self, group_id: str = GROUP_ID) -> ClassicGroup | None:
        """The live group object or None."""
        return self.coordinator.groups.get(group_id)

    def state(self, group_id: str = GROUP_ID) -> str:
        """The group's state name."""
        return self.group(group_id).state.value

    def deadline(self, key: TimerKey) -> int | None:
        """When ``key`` fires, or None if unarmed."""
        entry = self.timers.get(key)
        return None if entry is None else entry[0]

    def crash_and_replay(self) -> None:
        """Restart: a fresh coordinator replays every record so far, then on_loaded.
        Parked requests die with their connections; timers are whatever on_loaded sets."""
        fresh = self._new_coordinator()
        for record in self.records:
            fresh.replay(record)
        self.coordinator = fresh
        self.timers.clear()
        self.in_flight.clear()
        for token in self.outstanding():
            self.replies[token] = None
        self.apply(fresh.on_loaded(self.now))

    # ------------------------------------------------------------------ JoinGroup
