"""Property: whatever the coordinator does, the records it emits, written through the REAL
storage log and replayed into a fresh coordinator, rebuild exactly the live hard state.

A random program of operations -- joins (dynamic and static, several JoinGroup versions),
syncs with assignments, heartbeats, commits (member and simple, OffsetCommit v1-v9, with
retention times, leader epochs, metadata, some too large), leaves, DeleteGroups,
OffsetDelete, time advancing with every due timer firing (session, join, sync and the
offset-retention scan) -- drives one ``GroupCoordinator`` through the coordinator test
harness. Every Result's records are appended, as one batch, to a ``storage.log.Log`` in a
temporary directory (segments rolled at a few hundred bytes, any fsync policy). Mid-program
``restart`` steps close the log, reopen it, replay it into a fresh coordinator and carry on
with that one (as a restarted server does); ``compact`` steps compact the closed segments.

After each restart and at the end:
- the replayed records are exactly the emitted ones (unless a compaction rewrote the log);
- ``hard_state()`` of the replayed coordinator equals the live one's, and so does that of a
  coordinator that replayed only the live set (``Log.replay_live``, what the server does);
- a group the live coordinator holds Stable loads Stable with the same generation, leader,
  protocol and members (ids, instance ids, client ids, timeouts, assignments); a group with
  a persisted record that is live Empty loads Empty at the same generation.
"""

from __future__ import annotations

import os
import struct
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pytest
from harness import Harness, ctx, identity, partition
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coordinator.config import CoordinatorConfig
from coordinator.core import (
    DeleteGroupsRequest,
    ErrorCode,
    GroupCoordinator,
    HeartbeatRequest,
    LeaveGroupRequest,
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetDeleteRequest,
    Result,
)
from coordinator.core.classic.heartbeat import handle_heartbeat
from coordinator.core.classic.leave import handle_leave_group
from coordinator.core.delete_groups import handle_delete_groups
from coordinator.core.offset_commit import handle_offset_commit
from coordinator.core.offset_delete import handle_offset_delete
from storage.compaction import CompactionPolicy, compact
from storage.log import Log
from storage.records import Record

T0 = 1_700_000_000_000  # the fake clock starts at a realistic epoch time (ms)
CONFIG = CoordinatorConfig(
    group_min_session_timeout_ms=10,
    group_max_session_timeout_ms=60_000,
    group_initial_rebalance_delay_ms=50,
    group_max_size=3,
    offsets_retention_minutes=1,
    offsets_retention_check_interval_ms=20_000,
    offset_metadata_max_bytes=64,
)
GROUPS = ("g1", "g2", "simple")
TOPICS = ("t", "u")


def subscription(*topics: str) -> bytes:
    """A ConsumerProtocolSubscription v0 (what the coordinator parses for subscribed topics)."""
    out = struct.pack(">hi", 0, len(topics))
    for topic in topics:
        out += struct.pack(">h", len(topic)) + topic.encode()
    return out + struct.pack(">i", -1)


PROTOCOL_SETS: tuple[tuple[tuple[str, bytes], ...], ...] = (
    (("range", subscription("t")),),
    (("range", subscription("t", "u")), ("roundrobin", subscription("t", "u"))),
    (("roundrobin", b"\x00\x07garbage"),),  # unparseable: subscribed topics unknown
)

# (name, group, group.instance.id): g1 has more clients than group.max.size allows.
CLIENTS = (
    ("d1", "g1", None),
    ("d2", "g1", None),
    ("s1", "g1", "inst-1"),
    ("s2", "g1", "inst-2"),
    ("d3", "g2", None),
    ("s3", "g2", "inst-3"),
)
CLIENT_NAMES = tuple(c[0] for c in CLIENTS)


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


class LoggedHarness(Harness):
    """The coordinator harness, with every Result's records appended to a real log."""

    log: Log

    def write(self, records: Sequence[Record]) -> None:
        self.log.append(records)


# ------------------------------------------------------------------ the program


names = st.sampled_from(CLIENT_NAMES)
groups = st.sampled_from(GROUPS)
metadata = (
    st.none()
    | st.sampled_from(["", "m", "é", "x" * 65])
    | st.text(st.characters(exclude_categories=["Cs"]), max_size=6)
)
partition_specs = st.tuples(
    st.sampled_from(TOPICS),
    st.integers(0, 2),
    st.integers(0, 1000) | st.integers(-1, 2**63 - 1),
    metadata,
    st.integers(-1, 5),
)
OPS = st.one_of(
    st.tuples(
        st.just("join"),
        names,
        st.integers(0, len(PROTOCOL_SETS) - 1),
        st.sampled_from([0, 3, 5, 9]),
        st.sampled_from([100, 500, 30_000]),
        st.sampled_from([200, 1000]),
    ),
    st.tuples(st.just("sync"), names, st.integers(0, 3)),
    st.tuples(st.just("heartbeat"), names),
    st.tuples(st.just("poll"), st.sampled_from(GROUPS[:2]), st.integers(1, 6)),
    st.tuples(st.just("poll"), st.sampled_from(GROUPS[:2]), st.integers(1, 6)),
    st.tuples(st.just("leave"), names, st.booleans(), st.booleans()),
    st.tuples(
        st.just("commit"),
        names,
        st.sampled_from(["member", "simple-own", "simple"]),
        st.sampled_from([1, 2, 3, 4, 5, 6, 7, 8, 9]),
        st.lists(partition_specs, min_size=1, max_size=3),
        st.sampled_from([-1, 500, 30_000, 200_000]),
    ),
    st.tuples(
        st.just("commit"),
        st.just("d1"),
        st.just("simple"),
        st.sampled_from([2, 8]),
        st.lists(partition_specs, min_size=1, max_size=3),
        st.sampled_from([-1, 30_000]),
    ),
    st.tuples(
        st.just("delete"),
        st.lists(st.sampled_from([*GROUPS, "missing"]), min_size=1, max_size=2, unique=True),
    ),
    st.tuples(
        st.just("offset_delete"),
        groups,
        st.lists(st.tuples(st.sampled_from(TOPICS), st.integers(0, 2)), min_size=1, max_size=3),
    ),
    st.tuples(
        st.just("advance"), st.sampled_from([1, 51, 101, 501, 1001, 5000, 20_001, 60_001, 200_000])
    ),
    st.tuples(st.just("restart")),
    st.tuples(st.just("compact"), st.booleans()),
)
PROGRAMS = st.lists(OPS, min_size=4, max_size=60)
LOG_OPTIONS = st.tuples(
    st.sampled_from(["always", "interval", "never"]), st.sampled_from([200, 1024, 1 << 26])
)


class Program:
    """Runs one program against a coordinator whose records go to a real log."""

    def __init__(self, directory: str, fsync: Any, segment_bytes: int) -> None:
        self.directory = directory
        self.fsync = fsync
        self.segment_bytes = segment_bytes
        self.h = LoggedHarness(config=CONFIG, now=T0)
        self.h.log = self._open()
        self.clients = {name: Client(name, group, inst) for name, group, inst in CLIENTS}
        self.pending: dict[str, tuple[Client, str]] = {}
        self.compacted = False
        self.restarts = 0
        self.h.apply(self.h.coordinator.on_loaded(self.h.now))

    def _open(self) -> Log:
        return Log.open(
            self.directory,
            fsync=self.fsync,
            segment_bytes=self.segment_bytes,
            fsync_interval_ms=5,
            live_index=True,
        )

    # ------------------------------------------------------------------ client model

    def _track(self, client: Client, kind: str, token: str) -> None:
        self.pending[token] = (client, kind)
        self._absorb()

    def _absorb(self) -> None:
        """Let clients learn from every reply that arrived (including to parked requests)."""
        for token in [t for t in self.pending if self.h.answered(t)]:
            client, kind = self.pending.pop(token)
            response = self.h.replies[token]
            if response is None:  # its connection died in a restart
                continue
            error = response.error_code
            if kind == "join":
                if error == ErrorCode.NONE:
                    client.member_id = response.member_id
                    client.generation = response.generation_id
                    client.leader_members = tuple(m.member_id for m in response.members)
                    client.needs_sync = True
                elif error == ErrorCode.MEMBER_ID_REQUIRED:
                    client.member_id = response.member_id
                elif error in (
                    ErrorCode.UNKNOWN_MEMBER_ID,
                    ErrorCode.FENCED_INSTANCE_ID,
                    ErrorCode.GROUP_MAX_SIZE_REACHED,
                ):
                    client.member_id, client.generation = "", -1
            elif kind == "sync":
                client.needs_sync = False
            if kind in ("sync", "heartbeat"):
                if error in (ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.FENCED_INSTANCE_ID):
                    client.member_id, client.generation = "", -1
                elif error in (ErrorCode.REBALANCE_IN_PROGRESS, ErrorCode.ILLEGAL_GENERATION):
                    client.generation = -1

    def _busy(self, client: Client) -> bool:
        return any(c is client for c, _ in self.pending.values())

    # ------------------------------------------------------------------ operations

    def run(self, op: tuple[Any, ...]) -> None:
        getattr(self, f"op_{op[0]}")(*op[1:])
        self._absorb()

    def op_join(
        self, name: str, protocols: int, version: int, session: int, rebalance: int
    ) -> None:
        client = self.clients[name]
        if client.instance_id is not None:
            version = max(version, 5)
        token = self.h.send_join_group(
            client.group,
            client.member_id,
            "consumer",
            PROTOCOL_SETS[protocols],
            client.instance_id,
            session,
            rebalance,
            api_version=version,
            client_id=name,
        )
        self._track(client, "join", token)

    def op_sync(self, name: str, seed: int) -> None:
        client = self.clients[name]
        assignment = {m: f"{m}@{client.generation}#{seed}".encode() for m in client.leader_members}
        token = self.h.send_sync_group(
            client.group,
            client.generation,
            client.member_id,
            assignment,
            group_instance_id=client.instance_id,
        )
        self._track(client, "sync", token)

    def op_heartbeat(self, name: str) -> None:
        client = self.clients[name]
        token = self.h.token()
        request: HeartbeatRequest = {
            "group_id": client.group,
            "generation_id": client.generation,
            "member_id": client.member_id,
            "group_instance_id": client.instance_id,
        }
        self.h.apply(handle_heartbeat(self.h.coordinator, ctx(4), request, token, self.h.now))
        self._track(client, "heartbeat", token)

    def op_poll(self, group: str, rounds: int) -> None:
        """``rounds`` times: every idle client of the group takes its next step (join, sync
        after a join, else heartbeat), then 51 ms pass."""
        for _ in range(rounds):
            for name, client in self.clients.items():
                if client.group != group or self._busy(client):
                    continue
                if client.needs_sync:
                    self.op_sync(name, 0)
                elif client.member_id == "" or client.generation < 0:
                    self.op_join(name, 1, 9, 500, 1000)
                else:
                    self.op_heartbeat(name)
            self.op_advance(51)
            self._absorb()

    def op_leave(self, name: str, by_instance: bool, legacy: bool) -> None:
        client = self.clients[name]
        token = self.h.token()
        if legacy:
            version = 1
            request: LeaveGroupRequest = {
                "group_id": client.group, "member_id": client.member_id, "members": []
            }
        else:
            version = 5
            member_id = "" if by_instance and client.instance_id else client.member_id
            request = {
                "group_id": client.group,
                "member_id": "",
                "members": [identity(member_id, client.instance_id, "test")],
            }
        self.h.apply(handle_leave_group(
            self.h.coordinator, ctx(version), request, token, self.h.now))
        client.member_id, client.generation = "", -1

    def op_commit(
        self,
        name: str,
        mode: str,
        version: int,
        parts: list[tuple[str, int, int, str | None, int]],
        retention: int,
    ) -> None:
        client = self.clients[name]
        member = mode == "member"
        by_topic: dict[str, list[OffsetCommitRequestPartition]] = {}
        for topic, index, offset, meta, epoch in parts:
            by_topic.setdefault(topic, []).append(
                partition(
                    index,
                    offset,
                    committed_leader_epoch=epoch if version >= 6 else -1,
                    commit_timestamp=T0 - 5000 * epoch if version == 1 else -1,
                    committed_metadata=meta,
                )
            )
        request: OffsetCommitRequest = {
            "group_id": "simple" if mode == "simple" else client.group,
            "generation_id_or_member_epoch": client.generation if member else -1,
            "member_id": client.member_id if member else "",
            "group_instance_id": client.instance_id if member and version >= 7 else None,
            "retention_time_ms": retention if 2 <= version <= 4 else -1,
            "topics": [{"name": t, "partitions": ps} for t, ps in by_topic.items()],
        }
        token = self.h.token()
        self.h.apply(handle_offset_commit(
            self.h.coordinator, ctx(version), request, token, self.h.now))
        assert self.h.answered(token)

    def op_delete(self, group_ids: list[str]) -> None:
        token = self.h.token()
        request: DeleteGroupsRequest = {"groups_names": group_ids}
        self.h.apply(handle_delete_groups(self.h.coordinator, ctx(2), request, token, self.h.now))
        assert self.h.answered(token)

    def op_offset_delete(self, group: str, parts: list[tuple[str, int]]) -> None:
        by_topic: dict[str, list[int]] = {}
        for topic, index in parts:
            by_topic.setdefault(topic, []).append(index)
        token = self.h.token()
        request: OffsetDeleteRequest = {
            "group_id": group,
            "topics": [
                {"name": t, "partitions": [{"partition_index": p} for p in ps]}
                for t, ps in by_topic.items()
            ],
        }
        self.h.apply(handle_offset_delete(self.h.coordinator, ctx(0), request, token, self.h.now))
        assert self.h.answered(token)

    def op_advance(self, ms: int) -> None:
        self.h.sleep(ms)

    def op_compact(self, drop_tombstones: bool) -> None:
        policy = CompactionPolicy(tombstone_retention_ms=0 if drop_tombstones else 10**12)
        # The wall clock, not the fake one: tombstone age is measured from segment mtimes.
        if compact(self.h.log, policy) is not None:
            self.compacted = True

    def op_restart(self) -> None:
        """Close the log, reopen it and continue with a coordinator rebuilt from it: parked
        requests die with their connections; timers are whatever on_loaded arms."""
        fresh, loaded = self.check_replay()
        h = self.h
        h.coordinator = fresh
        h.timers.clear()
        for token in h.outstanding():
            h.replies[token] = None
        h.apply(loaded)
        self.restarts += 1

    # ------------------------------------------------------------------ the property

    def check_replay(self) -> tuple[GroupCoordinator, Result]:
        """Close and reopen the log, replay it into a fresh coordinator, load it and compare;
        returns the fresh coordinator and what its on_loaded asks (the log stays open)."""
        h = self.h
        h.log.close()
        h.log = self._open()
        assert h.log.recovery == [], h.log.recovery  # a clean close leaves nothing to repair
        # What the server replays (the live set, through open's index) first, then every
        # record: both must rebuild the live coordinator's state.
        live_set: list[Record] = list(h.log.replay_live())
        replayed: list[Record] = list(h.log.replay())
        if not self.compacted:
            assert replayed == h.records
        fresh = GroupCoordinator(CONFIG, h._new_uuid)
        for record in replayed:
            fresh.replay(record)
        loaded = fresh.on_loaded(h.now)
        assert fresh.hard_state() == h.coordinator.hard_state()
        assert fresh.persisted_group_ids() <= set(h.coordinator.group_ids())
        self._check_groups(h.coordinator, fresh)
        uuids = iter(range(1 << 62))
        from_live_set = GroupCoordinator(CONFIG, lambda: f"live-set-{next(uuids)}")
        for record in live_set:
            from_live_set.replay(record)
        from_live_set.on_loaded(h.now)
        assert from_live_set.hard_state() == fresh.hard_state()
        assert sorted(from_live_set.group_ids()) == sorted(fresh.group_ids())
        self._check_groups(h.coordinator, from_live_set)
        return fresh, loaded

    @staticmethod
    def _check_groups(live: GroupCoordinator, loaded: GroupCoordinator) -> None:
        persisted = live.hard_state().groups
        for group_id in live.group_ids():
            view = live.describe(group_id)
            assert view is not None
            if view.state == "Stable":
                got = loaded.describe(group_id)
                assert got is not None and got.state == "Stable", (group_id, got)
                assert _projection(got) == _projection(view)
            elif view.state == "Empty" and group_id in persisted:
                got = loaded.describe(group_id)
                assert got is not None and got.state == "Empty", (group_id, got)
                assert (got.generation_id, got.protocol_type) == (
                    view.generation_id,
                    view.protocol_type,
                )


def _projection(view: Any) -> tuple[Any, ...]:
    """What a Stable group's persisted record must carry."""
    members = sorted(
        (
            m.member_id,
            m.group_instance_id,
            m.client_id,
            m.client_host,
            m.session_timeout_ms,
            m.rebalance_timeout_ms,
            m.assignment,
        )
        for m in view.members
    )
    return (view.generation_id, view.protocol_type, view.protocol_name, view.leader_id, members)


def run_program(ops: list[tuple[Any, ...]], fsync: str, segment_bytes: int) -> Program:
    with tempfile.TemporaryDirectory(prefix="kcoord-replay-") as tmp:
        program = Program(os.path.join(tmp, "data"), fsync, segment_bytes)
        try:
            for op in ops:
                program.run(op)
            program.check_replay()
        finally:
            program.h.log.close()
        return program


SETTINGS = dict(
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@settings(max_examples=200, derandomize=True, **SETTINGS)  # type: ignore[arg-type]
@given(ops=PROGRAMS, options=LOG_OPTIONS)
def test_replay_through_the_log_rebuilds_the_live_hard_state(
    ops: list[tuple[Any, ...]], options: tuple[str, int]
) -> None:
    run_program(ops, *options)


@pytest.mark.slow
@settings(max_examples=3000, **SETTINGS)  # type: ignore[arg-type]
@given(ops=st.lists(OPS, min_size=4, max_size=150), options=LOG_OPTIONS)
def test_replay_through_the_log_rebuilds_the_live_hard_state_long(
    ops: list[tuple[Any, ...]], options: tuple[str, int]
) -> None:
    run_program(ops, *options)


def test_program_reaches_interesting_states() -> None:
    """The client model is not vacuous: a hand-written program forms a Stable group with an
    assignment, commits, restarts, expires offsets by retention and deletes a group, and
    the property holds all along."""
    ops: list[tuple[Any, ...]] = [
        ("poll", "g2", 4),
        ("commit", "d3", "member", 8, [("t", 0, 7, "m", 3)], -1),
        ("commit", "d1", "simple", 2, [("u", 1, 9, None, -1)], 30_000),
        ("restart",),
        ("poll", "g2", 2),
        ("advance", 60_001),
        ("leave", "d3", False, False),
        ("leave", "s3", True, False),
        ("advance", 1),
        ("compact", True),
        ("delete", ["g2"]),
        ("restart",),
    ]
    with tempfile.TemporaryDirectory(prefix="kcoord-replay-") as tmp:
        program = Program(os.path.join(tmp, "data"), "always", 200)
        try:
            seen_stable = False
            for op in ops:
                program.run(op)
                view = program.h.coordinator.describe("g2")
                if view is not None and view.state == "Stable":
                    seen_stable = True
                    assert all(m.assignment for m in view.members)
                if op == ("advance", 60_001):
                    # the simple group's retention-timed commit expired (tombstoned)
                    assert "simple" not in program.h.coordinator.hard_state().offsets
            assert seen_stable
            kinds = {type(r.key).__name__ for r in program.h.records}
            assert kinds >= {"GroupMetadataKey", "OffsetCommitKey", "RebalanceEventKey"}
            assert any(r.value is None for r in program.h.records)  # tombstones written
            assert program.restarts == 2
            assert program.h.coordinator.describe("g2") is None
            assert len(program.h.log.segments) > 1
            program.check_replay()
        finally:
            program.h.log.close()
