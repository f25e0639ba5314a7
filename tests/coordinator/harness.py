"""A fake-clock harness around the coordinator core, in the spirit of Kafka's MockTimer-driven
GroupCoordinatorTest and GroupMetadataManagerTestContext.

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
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from coordinator.config import CoordinatorConfig
from coordinator.core import (
    CancelTimer,
    DeleteGroupsRequest,
    DescribeGroupsRequest,
    ErrorCode,
    GroupCoordinator,
    HeartbeatRequest,
    HeartbeatTimerKey,
    JoinGroupRequest,
    LeaveGroupRequest,
    ListGroupsRequest,
    LocalContext,
    MemberIdentity,
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetDeleteRequest,
    OffsetFetchRequest,
    OffsetFetchRequestGroup,
    Result,
    ScheduleTimer,
    SyncGroupRequest,
    TimerKey,
)
from coordinator.core.group import ClassicGroup
from storage.errors import append_error_of
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
class Harness:
    """Drives one GroupCoordinator with a fake clock, collecting replies and records."""

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

    def __post_init__(self) -> None:
        self._uuids = itertools.count(1)
        self._tokens = itertools.count(1)
        self._timer_seq = itertools.count()
        self.coordinator = GroupCoordinator(self.config, self._new_uuid)

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
        group = self.coordinator.engine.groups.get(group_id)
        assert group is not None, f"group {group_id} not found"
        return group

    def maybe_group(self, group_id: str = GROUP_ID) -> ClassicGroup | None:
        """The live group object or None."""
        return self.coordinator.engine.groups.get(group_id)

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
        fresh = GroupCoordinator(self.config, self._new_uuid)
        for record in self.records:
            fresh.replay(record)
        self.coordinator = fresh
        self.timers.clear()
        self.in_flight.clear()
        for token in self.outstanding():
            self.replies[token] = None
        self.apply(fresh.on_loaded(self.now))

    # ------------------------------------------------------------------ JoinGroup

    def send_join_group(
        self,
        group_id: str,
        member_id: str,
        protocol_type: str,
        protocols: Iterable[tuple[str, bytes]],
        group_instance_id: str | None = None,
        session_timeout: int = DEFAULT_SESSION_TIMEOUT,
        rebalance_timeout: int = DEFAULT_REBALANCE_TIMEOUT,
        require_known_member_id: bool = False,
        support_skipping_assignment: bool = True,
        api_version: int | None = None,
        client_id: str = "clientId",
        reason: str | None = None,
    ) -> Token:
        """Send a JoinGroup at the version matching Kafka's test flags; returns its token."""
        if api_version is None:
            if group_instance_id is not None:
                api_version = 9 if support_skipping_assignment else 8
            else:
                api_version = 9 if require_known_member_id else 3
        token = self.token()
        request: JoinGroupRequest = {
            "group_id": group_id,
            "member_id": member_id,
            "group_instance_id": group_instance_id,
            "session_timeout_ms": session_timeout,
            "rebalance_timeout_ms": rebalance_timeout,
            "protocol_type": protocol_type,
            "protocols": [{"name": name, "metadata": metadata} for name, metadata in protocols],
            "reason": reason,
        }
        self.apply(self.coordinator.join_group(ctx(api_version, client_id), request, token,
                                               self.now))
        return token

    def dynamic_join_group(
        self,
        group_id: str,
        member_id: str,
        protocol_type: str,
        protocols: Iterable[tuple[str, bytes]],
        session_timeout: int = DEFAULT_SESSION_TIMEOUT,
        rebalance_timeout: int = DEFAULT_REBALANCE_TIMEOUT,
    ) -> Any:
        """Kafka's dynamicJoinGroup: a v4+ join that bounces on MEMBER_ID_REQUIRED, then waits
        out the initial rebalance delay."""
        protocols = tuple(protocols)
        token = self.send_join_group(group_id, member_id, protocol_type, protocols, None,
                                     session_timeout, rebalance_timeout, True)
        if member_id == UNKNOWN_MEMBER_ID:
            first: Any = self.reply(token)
            if first.error_code != ErrorCode.MEMBER_ID_REQUIRED:
                return first
            token = self.send_join_group(group_id, first.member_id, protocol_type, protocols,
                                         None, session_timeout, rebalance_timeout, True)
        self.sleep(GROUP_INITIAL_REBALANCE_DELAY + 1)
        response: Any = self.reply(token)
        return response

    def static_join_group(
        self,
        group_id: str,
        member_id: str,
        group_instance_id: str,
        protocol_type: str,
        protocols: Iterable[tuple[str, bytes]],
        clock_advance: int = GROUP_INITIAL_REBALANCE_DELAY + 1,
        session_timeout: int = DEFAULT_SESSION_TIMEOUT,
        rebalance_timeout: int = DEFAULT_REBALANCE_TIMEOUT,
        support_skipping_assignment: bool = True,
    ) -> Any:
        """Kafka's staticJoinGroup: join, advance the clock, expect an answer."""
        token = self.send_join_group(group_id, member_id, protocol_type, protocols,
                                     group_instance_id, session_timeout, rebalance_timeout,
                                     support_skipping_assignment=support_skipping_assignment)
        self.sleep(clock_advance)
        response: Any = self.reply(token)
        return response

    def join_group_partial(
        self,
        group_id: str,
        member_id: str,
        protocol_type: str,
        protocols: Iterable[tuple[str, bytes]],
        session_timeout: int = DEFAULT_SESSION_TIMEOUT,
        rebalance_timeout: int = DEFAULT_REBALANCE_TIMEOUT,
    ) -> Any:
        """Kafka's joinGroupPartial: one v4+ join, answered at once."""
        token = self.send_join_group(group_id, member_id, protocol_type, protocols, None,
                                     session_timeout, rebalance_timeout, True)
        response: Any = self.reply(token)
        return response

    # ------------------------------------------------------------------ SyncGroup

    def send_sync_group(
        self,
        group_id: str,
        generation: int,
        member_id: str,
        assignment: Mapping[str, bytes] | None = None,
        protocol_type: str | None = None,
        protocol_name: str | None = None,
        group_instance_id: str | None = None,
        api_version: int = 5,
    ) -> Token:
        """Send a SyncGroup; returns its token."""
        token = self.token()
        request: SyncGroupRequest = {
            "group_id": group_id,
            "generation_id": generation,
            "member_id": member_id,
            "group_instance_id": group_instance_id,
            "protocol_type": protocol_type,
            "protocol_name": protocol_name,
            "assignments": [{"member_id": m, "assignment": a}
                            for m, a in (assignment or {}).items()],
        }
        self.apply(self.coordinator.sync_group(ctx(api_version), request, token, self.now))
        return token

    def sync_group_leader(
        self,
        group_id: str,
        generation: int,
        member_id: str,
        assignment: Mapping[str, bytes],
        protocol_type: str | None = None,
        protocol_name: str | None = None,
        group_instance_id: str | None = None,
    ) -> Any:
        """A leader's SyncGroup, expected to be answered at once."""
        token = self.send_sync_group(group_id, generation, member_id, assignment, protocol_type,
                                     protocol_name, group_instance_id)
        response: Any = self.reply(token)
        return response

    def sync_group_follower(
        self,
        group_id: str,
        generation: int,
        member_id: str,
        protocol_type: str | None = None,
        protocol_name: str | None = None,
        group_instance_id: str | None = None,
    ) -> Any:
        """A follower's SyncGroup, expected to be answered at once."""
        token = self.send_sync_group(group_id, generation, member_id, None, protocol_type,
                                     protocol_name, group_instance_id)
        response: Any = self.reply(token)
        return response

    # ------------------------------------------------------------------ Heartbeat / Leave

    def heartbeat(
        self, group_id: str, member_id: str, generation: int,
        group_instance_id: str | None = None,
    ) -> int:
        """A Heartbeat's error code."""
        token = self.token()
        request: HeartbeatRequest = {"group_id": group_id, "generation_id": generation,
                                     "member_id": member_id,
                                     "group_instance_id": group_instance_id}
        self.apply(self.coordinator.heartbeat(ctx(4), request, token, self.now))
        error: int = self.reply(token).error_code
        return error

    def single_leave_group(
        self, group_id: str, member_id: str, group_instance_id: str | None = None,
    ) -> Any:
        """Kafka's singleLeaveGroup: a batch (v3+) of one member."""
        return self.batch_leave_group(group_id, [identity(member_id, group_instance_id)])

    def batch_leave_group(
        self, group_id: str, members: Sequence[MemberIdentity], api_version: int = 5
    ) -> Any:
        """A v3+ LeaveGroup."""
        token = self.token()
        request: LeaveGroupRequest = {"group_id": group_id, "member_id": "",
                                      "members": list(members)}
        self.apply(self.coordinator.leave_group(ctx(api_version), request, token, self.now))
        response: Any = self.reply(token)
        return response

    def legacy_leave_group(self, group_id: str, member_id: str, api_version: int = 1
                           ) -> Any:
        """A v0-2 LeaveGroup."""
        token = self.token()
        request: LeaveGroupRequest = {"group_id": group_id, "member_id": member_id,
                                      "members": []}
        self.apply(self.coordinator.leave_group(ctx(api_version), request, token, self.now))
        response: Any = self.reply(token)
        return response

    # ------------------------------------------------------------------ offsets

    def commit_offsets(
        self,
        group_id: str,
        member_id: str,
        generation: int,
        offsets: Offsets,
        group_instance_id: str | None = None,
        api_version: int = 8,
        retention_time_ms: int = -1,
    ) -> dict[tuple[str, int], int]:
        """An OffsetCommit; returns each partition's error code."""
        by_topic: dict[str, list[OffsetCommitRequestPartition]] = {}
        for (topic, index), spec in offsets.items():
            if isinstance(spec, dict):
                part = spec
            elif isinstance(spec, tuple):
                part = partition(index, spec[0], spec[1])
            else:
                part = partition(index, spec)
            by_topic.setdefault(topic, []).append(part)
        token = self.token()
        request: OffsetCommitRequest = {
            "group_id": group_id, "generation_id_or_member_epoch": generation,
            "member_id": member_id, "group_instance_id": group_instance_id,
            "retention_time_ms": retention_time_ms,
            "topics": [{"name": t, "partitions": ps} for t, ps in by_topic.items()],
        }
        self.apply(self.coordinator.offset_commit(ctx(api_version), request, token, self.now))
        response = self.reply(token)
        return {(t.name, p.partition_index): p.error_code
                for t in response.topics for p in t.partitions}

    def fetch_offsets_response(
        self,
        groups: Sequence[tuple[str, Sequence[tuple[str, int]] | None]],
        require_stable: bool = True,
        api_version: int = 8,
    ) -> Any:
        """An OffsetFetch for several groups."""
        request_groups: list[OffsetFetchRequestGroup] = []
        for group_id, partitions in groups:
            if partitions is None:
                request_groups.append({"group_id": group_id, "topics": None})
                continue
            by_topic: dict[str, list[int]] = {}
            for topic, index in partitions:
                by_topic.setdefault(topic, []).append(index)
            request_groups.append({"group_id": group_id, "topics": [
                {"name": t, "partition_indexes": ps} for t, ps in by_topic.items()]})
        token = self.token()
        request: OffsetFetchRequest = {"groups": request_groups,
                                       "require_stable": require_stable}
        self.apply(self.coordinator.offset_fetch(ctx(api_version), request, token, self.now))
        response: Any = self.reply(token)
        return response

    def fetch_offsets(
        self, group_id: str, partitions: Sequence[tuple[str, int]] | None = None,
        require_stable: bool = True,
    ) -> tuple[int, dict[tuple[str, int], tuple[int, int, str, int]]]:
        """Kafka's handleFetchOffsets: (group error, {tp: (offset, epoch, metadata, error)})."""
        response = self.fetch_offsets_response([(group_id, partitions)], require_stable)
        group = response.groups[0]
        data = {
            (t.name, p.partition_index): (p.committed_offset, p.committed_leader_epoch,
                                          p.metadata, p.error_code)
            for t in group.topics for p in t.partitions
        }
        return group.error_code, data

    def delete_offsets(
        self, group_id: str, partitions: Sequence[tuple[str, int]]
    ) -> tuple[int, dict[tuple[str, int], int]]:
        """Kafka's handleDeleteOffsets: (group error, {tp: error})."""
        by_topic: dict[str, list[int]] = {}
        for topic, index in partitions:
            by_topic.setdefault(topic, []).append(index)
        token = self.token()
        request: OffsetDeleteRequest = {"group_id": group_id, "topics": [
            {"name": t, "partitions": [{"partition_index": p} for p in ps]}
            for t, ps in by_topic.items()]}
        self.apply(self.coordinator.offset_delete(ctx(0), request, token, self.now))
        response = self.reply(token)
        return response.error_code, {(t.name, p.partition_index): p.error_code
                                     for t in response.topics for p in t.partitions}

    # ------------------------------------------------------------------ admin

    def describe_group(self, group_id: str, api_version: int = 5) -> Any:
        """DescribeGroups for one group."""
        token = self.token()
        request: DescribeGroupsRequest = {"groups": [group_id]}
        self.apply(self.coordinator.describe_groups(ctx(api_version), request, token, self.now))
        described: Any = self.reply(token).groups[0]
        return described

    def list_groups(
        self, states: Iterable[str] = (), types: Iterable[str] = ()
    ) -> tuple[int, tuple[Any, ...]]:
        """ListGroups: (error, groups)."""
        token = self.token()
        request: ListGroupsRequest = {"states_filter": list(states), "types_filter": list(types)}
        self.apply(self.coordinator.list_groups(ctx(5), request, token, self.now))
        response = self.reply(token)
        return response.error_code, response.groups

    def delete_groups(self, group_ids: Iterable[str]) -> dict[str, int]:
        """DeleteGroups: {group: error}."""
        token = self.token()
        request: DeleteGroupsRequest = {"groups_names": list(group_ids)}
        self.apply(self.coordinator.delete_groups(ctx(2), request, token, self.now))
        return {r.group_id: r.error_code for r in self.reply(token).results}

    # ------------------------------------------------------------------ composite setups

    def static_members_join_and_rebalance(
        self,
        leader_instance_id: str = LEADER_INSTANCE_ID,
        follower_instance_id: str = FOLLOWER_INSTANCE_ID,
        session_timeout: int = DEFAULT_SESSION_TIMEOUT,
        rebalance_timeout: int = DEFAULT_REBALANCE_TIMEOUT,
        group_id: str = GROUP_ID,
    ) -> RebalanceResult:
        """Kafka's staticMembersJoinAndRebalance: two static members, generation 1, Stable."""
        leader_token = self.send_join_group(group_id, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE,
                                            PROTOCOL_SUPERSET, leader_instance_id,
                                            session_timeout, rebalance_timeout)
        follower_token = self.send_join_group(group_id, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE,
                                              PROTOCOL_SUPERSET, follower_instance_id,
                                              session_timeout, rebalance_timeout)
        # First advance lets the initial delay expire once and be extended for the follower;
        # the second completes the join.
        self.sleep(GROUP_INITIAL_REBALANCE_DELAY + 1)
        self.sleep(DEFAULT_REBALANCE_TIMEOUT + 1)
        leader = self.reply(leader_token)
        follower = self.reply(follower_token)
        assert leader.error_code == ErrorCode.NONE and leader.generation_id == 1
        assert follower.error_code == ErrorCode.NONE and follower.generation_id == 1
        leader_sync = self.sync_group_leader(group_id, 1, leader.member_id,
                                             {leader.member_id: b""})
        assert leader_sync.error_code == ErrorCode.NONE
        assert self.state(group_id) == "Stable"
        follower_sync = self.sync_group_follower(group_id, 1, follower.member_id)
        assert follower_sync.error_code == ErrorCode.NONE
        assert self.state(group_id) == "Stable"
        return RebalanceResult(1, leader.member_id, leader_sync.assignment,
                               follower.member_id, follower_sync.assignment)

    def join_with_n_members(self, n: int) -> list[Any]:
        """Kafka's joinWithNMembers: n v4+ members join and complete the join phase."""
        first = [self.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS,
                                      require_known_member_id=True) for _ in range(n)]
        member_ids = [self.reply(t).member_id for t in first]
        second = [self.send_join_group(GROUP_ID, m, PROTOCOL_TYPE, PROTOCOLS,
                                       require_known_member_id=True) for m in member_ids]
        self.sleep(GROUP_INITIAL_REBALANCE_DELAY + 1)
        self.sleep(DEFAULT_REBALANCE_TIMEOUT + 1)
        return [self.reply(t) for t in second]

    def add_group(self, group: ClassicGroup) -> ClassicGroup:
        """Inject a group object (Kafka's tests call groupManager.addGroup)."""
        self.coordinator.engine.groups[group.group_id] = group
        return group
