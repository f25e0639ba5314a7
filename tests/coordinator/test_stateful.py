"""Hypothesis state machine: random clients join, sync, heartbeat, leave and commit against the
core while time advances and the coordinator crashes and replays its log.

Invariants after every step:
- at most one leader, and it is a member; bookkeeping (awaiting counts, static map, pending
  sets) is consistent;
- a group's generation never decreases while the coordinator lives; after a crash it comes
  back at the last persisted generation (Kafka does not persist CompletingRebalance);
- every transition is legal (asserted inside the core: an illegal one raises);
- replaying the records appended so far gives the live hard state, and every group with
  persisted state is live -- also after appends that failed (a rule fails the next one);
- every unanswered reply token is parked on a live member (none is stranded), and at the end
  letting time run answers every one of them;
- a Stable group's members all hold the assignment the leader gave them.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from harness import Harness, ctx, identity
from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from coordinator.config import CoordinatorConfig
from coordinator.core import ErrorCode, GroupCoordinator, HeartbeatRequest
from coordinator.core.classic.heartbeat import handle_heartbeat
from coordinator.core.classic.state import STABLE

GROUPS = ("g1", "g2")
CONFIG = CoordinatorConfig(
    group_min_session_timeout_ms=10,
    group_max_session_timeout_ms=60_000,
    group_initial_rebalance_delay_ms=50,
    group_max_size=3,
    offsets_retention_minutes=1,
    offsets_retention_check_interval_ms=20_000,
)
PROTOCOL_SETS = (
    (("range", b"r"),),
    (("range", b"r"), ("roundrobin", b"rr")),
    (("roundrobin", b"rr"),),
)


@dataclass
class Client:
    """What a client remembers about its membership."""

    name: str
    group: str
    instance_id: str | None
    member_id: str = ""
    generation: int = -1
    leader_members: tuple[str, ...] = ()
    needs_sync: bool = False


CLIENTS = [
    ("d1", "g1", None), ("d2", "g1", None), ("d3", "g1", None), ("s1", "g1", "inst-1"),
    ("s2", "g1", "inst-2"), ("d4", "g2", None), ("s3", "g2", "inst-3"),
]


class CoordinatorMachine(RuleBasedStateMachine):
    """Random traffic against one coordinator with crash-and-replay."""

    def __init__(self) -> None:
        super().__init__()
        self.h = Harness(config=CONFIG)
        self.h.apply(self.h.coordinator.on_loaded(0))
        self.clients = {name: Client(name, group, inst) for name, group, inst in CLIENTS}
        self.pending: dict[str, tuple[Client, str]] = {}
        self.generations: dict[str, int] = {}

    # ------------------------------------------------------------------ helpers

    def _track(self, client: Client, kind: str, token: str) -> None:
        self.pending[token] = (client, kind)
        self._absorb()

    def _absorb(self) -> None:
        """Let clients learn from every reply that arrived (including to parked requests)."""
        for token in [t for t in self.pending if self.h.answered(t)]:
            client, kind = self.pending.pop(token)
            response = self.h.replies[token]
            if response is None:  # the connection died in a crash
                continue
            if kind == "join":
                if response.error_code == ErrorCode.NONE:
                    client.member_id = response.member_id
                    client.generation = response.generation_id
                    client.leader_members = tuple(m.member_id for m in response.members)
                    client.needs_sync = True
                elif response.error_code == ErrorCode.MEMBER_ID_REQUIRED:
                    client.member_id = response.member_id
                elif response.error_code in (ErrorCode.UNKNOWN_MEMBER_ID,
                                             ErrorCode.FENCED_INSTANCE_ID,
                                             ErrorCode.GROUP_MAX_SIZE_REACHED):
                    client.member_id = ""
                    client.generation = -1
            if kind == "sync":
                client.needs_sync = False
            if kind in ("sync", "heartbeat") and response.error_code in (
                ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.FENCED_INSTANCE_ID
            ):
                client.member_id = ""
                client.generation = -1
            elif kind in ("sync", "heartbeat") and response.error_code in (
                ErrorCode.REBALANCE_IN_PROGRESS, ErrorCode.ILLEGAL_GENERATION
            ):
                client.generation = -1  # rejoin with the same member id

    # ------------------------------------------------------------------ rules

    @rule(name=st.sampled_from([c[0] for c in CLIENTS]),
          protocols=st.sampled_from(PROTOCOL_SETS),
          version=st.sampled_from([3, 9]),
          session=st.sampled_from([100, 500]),
          rebalance=st.sampled_from([200, 1000]))
    def join(self, name: str, protocols: tuple[tuple[str, bytes], ...], version: int,
             session: int, rebalance: int) -> None:
        client = self.clients[name]
        api_version = version if client.instance_id is None else max(version, 5)
        token = self.h.send_join_group(client.group, client.member_id, "consumer", protocols,
                                       client.instance_id, session, rebalance,
                                       api_version=api_version, client_id=name)
        self._track(client, "join", token)

    @rule(name=st.sampled_from([c[0] for c in CLIENTS]))
    def sync(self, name: str) -> None:
        client = self.clients[name]
        assignment = {m: f"{m}@{client.generation}".encode() for m in client.leader_members}
        token = self.h.send_sync_group(client.group, client.generation, client.member_id,
                                       assignment, group_instance_id=client.instance_id)
        self._track(client, "sync", token)

    @rule(name=st.sampled_from([c[0] for c in CLIENTS]))
    def heartbeat(self, name: str) -> None:
        client = self.clients[name]
        token = self.h.token()
        request: HeartbeatRequest = {"group_id": client.group, "generation_id": client.generation,
                                     "member_id": client.member_id,
                                     "group_instance_id": client.instance_id}
        self.h.apply(handle_heartbeat(self.h.coordinator, ctx(4), request, token, self.h.now))
        self._track(client, "heartbeat", token)

    @rule(name=st.sampled_from([c[0] for c in CLIENTS]), by_instance=st.booleans())
    def leave(self, name: str, by_instance: bool) -> None:
        client = self.clients[name]
        member_id = "" if by_instance and client.instance_id else client.member_id
        self.h.batch_leave_group(client.group,
                                 [identity(member_id, client.instance_id)])
        client.member_id = ""
        client.generation = -1
        self._absorb()

    @rule(name=st.sampled_from([c[0] for c in CLIENTS]), simple=st.booleans(),
          partition=st.integers(0, 2), offset=st.integers(0, 1000))
    def commit(self, name: str, simple: bool, partition: int, offset: int) -> None:
        client = self.clients[name]
        if simple:
            self.h.commit_offsets(client.group, "", -1, {("t", partition): offset})
        else:
            self.h.commit_offsets(client.group, client.member_id, client.generation,
                                  {("t", partition): offset}, client.instance_id)
        self._absorb()

    def _busy(self, client: Client) -> bool:
        return any(c is client for c, _ in self.pending.values())

    @rule(name=st.sampled_from([c[0] for c in CLIENTS]))
    def poll(self, name: str) -> None:
        """A well-behaved client does its next step: join, sync after a join, else heartbeat."""
        client = self.clients[name]
        if self._busy(client):
            return
        if client.needs_sync:
            self.sync(name)
        elif client.member_id == "" or client.generation < 0:
            self.join(name, PROTOCOL_SETS[1], 9, 500, 1000)
        else:
            self.heartbeat(name)

    @rule(group=st.sampled_from(GROUPS))
    def poll_group(self, group: str) -> None:
        """Every idle client of a group polls once, then 51 ms pass."""
        for name, client in self.clients.items():
            if client.group == group:
                self.poll(name)
        self.advance_time(51)

    @rule(ms=st.sampled_from([1, 51, 100, 250, 501, 1001, 5000, 60_000]))
    def advance_time(self, ms: int) -> None:
        self.h.sleep(ms)
        self._absorb()

    @rule(error=st.sampled_from([ErrorCode.KAFKA_STORAGE_ERROR, ErrorCode.MESSAGE_TOO_LARGE,
                                 ErrorCode.NOT_LEADER_OR_FOLLOWER]))
    def fail_next_append(self, error: ErrorCode) -> None:
        """The next append (whatever it carries) fails with ``error``."""
        self.h.fail_appends(error)

    @rule()
    def crash_and_replay(self) -> None:
        before = {g: grp.generation_id for g, grp in self.h.coordinator.groups.items()}
        self.h.crash_and_replay()
        self._absorb()
        persisted = self.h.coordinator.hard_state().groups
        for group_id, group in self.h.coordinator.groups.items():
            if group_id in persisted:
                assert group.generation_id == persisted[group_id].generation
            if group_id in before:
                assert group.generation_id <= before[group_id]
            self.generations[group_id] = group.generation_id
        for group_id in list(self.generations):
            if group_id not in self.h.coordinator.groups:
                del self.generations[group_id]

    # ------------------------------------------------------------------ invariants

    @invariant()
    def groups_are_consistent(self) -> None:
        for group in self.h.coordinator.groups.values():
            members = group.members
            if members:
                assert group.leader_id in members
            else:
                assert group.leader_id is None
            assert group.num_awaiting_join == sum(m.join_token is not None
                                                  for m in members.values())
            assert group.static_members == {m.group_instance_id: mid for mid, m in members.items()
                                            if m.group_instance_id is not None}
            assert not set(group.pending_members) & set(members)
            assert all(m.member_id == mid for mid, m in members.items())
            assert group.state.value in ("Empty", "PreparingRebalance", "CompletingRebalance",
                                         "Stable")
            event(f"state {group.state.value}")
            if group.state is STABLE:
                for member in members.values():
                    assert member.assignment, f"{member.member_id} has no assignment"
                    assert member.join_token is None and member.sync_token is None

    @invariant()
    def generation_never_decreases(self) -> None:
        for group_id, group in self.h.coordinator.groups.items():
            assert group.generation_id >= self.generations.get(group_id, 0)
            self.generations[group_id] = group.generation_id
        for group_id in list(self.generations):
            if group_id not in self.h.coordinator.groups:
                del self.generations[group_id]

    @invariant()
    def replay_equals_live(self) -> None:
        replayed = GroupCoordinator(CONFIG, lambda: "x")
        for record in self.h.records:
            replayed.replay(record)
        replayed.on_loaded(self.h.now)
        live = self.h.coordinator
        assert replayed.hard_state() == live.hard_state()
        assert replayed.persisted_group_ids() == live.persisted_group_ids()
        assert live.persisted_group_ids() <= set(live.group_ids())

    @invariant()
    def no_stranded_reply_tokens(self) -> None:
        parked = set()
        for group in self.h.coordinator.groups.values():
            for member in group.members.values():
                parked.update(t for t in (member.join_token, member.sync_token) if t is not None)
        assert set(self.h.outstanding()) == parked

    def teardown(self) -> None:
        # Let time run: every parked request is answered or its member expires.
        for _ in range(6):
            if not self.h.outstanding():
                break
            self.h.sleep(310_000)
        assert self.h.outstanding() == []


DEFAULT_SETTINGS = settings(max_examples=500, stateful_step_count=30, deadline=None,
                            derandomize=True, database=None,
                            suppress_health_check=[HealthCheck.too_slow])

TestCoordinatorStateMachine = CoordinatorMachine.TestCase
TestCoordinatorStateMachine.settings = DEFAULT_SETTINGS


@pytest.mark.slow
def test_coordinator_state_machine_long() -> None:
    """The slow variant: more and longer runs with random seeds."""
    from hypothesis.stateful import run_state_machine_as_test

    run_state_machine_as_test(
        CoordinatorMachine,
        settings=settings(max_examples=3000, stateful_step_count=60, deadline=None,
                          database=None, suppress_health_check=[HealthCheck.too_slow]),
    )
