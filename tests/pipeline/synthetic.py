"""Synthetic kcoord logs for the pipeline's tests and benchmark.

:func:`write_log` writes, through the storage API (:class:`storage.log.Log`), the record
sequence kcoord's coordinator emits for a scripted life of some consumer groups: members
join (RebalanceEvent ``member_join``, ``rebalance_start``, ``rebalance_end``, then the
leader's GroupMetadata with consumer-protocol assignments), commit offsets, leave, expire,
are statically replaced, delete offsets (tombstones) and whole groups (offset and group
tombstones, ``group_deleted``). It returns what happened (the generations and their
triggers) so tests can check the pipeline against it.

:func:`write_commits` writes a bulk of offset commits quickly (pre-encoded keys), for the
benchmark.
"""

from __future__ import annotations

import os
import random
import struct
from dataclasses import dataclass, field

from storage.log import Log
from storage.record_codec import encode_key
from storage.records import (
    GroupMetadataKey,
    GroupMetadataValue,
    MemberMetadata,
    OffsetCommitKey,
    OffsetCommitValue,
    RebalanceEventKey,
    RebalanceEventValue,
    Record,
)
from storage.segment import encode_entry, encode_header
from wire.consumer_protocol_schema import encode_assignment, encode_subscription

__all__ = ["Generation", "SyntheticLog", "write_commits", "write_log"]


@dataclass(frozen=True, slots=True)
class Generation:
    """One completed rebalance as the generator caused it."""

    group: str
    incarnation: int
    generation: int
    reason: str
    members: tuple[str, ...]


@dataclass
class SyntheticLog:
    """What :func:`write_log` wrote."""

    data_dir: str
    records: list[Record] = field(default_factory=list)
    generations: list[Generation] = field(default_factory=list)


@dataclass
class _Member:
    member_id: str
    instance_id: str | None
    client_id: str


@dataclass
class _Group:
    name: str
    incarnation: int = 0
    generation: int = 0
    members: dict[str, _Member] = field(default_factory=dict)
    leader: str | None = None
    offsets: dict[tuple[str, int], int] = field(default_factory=dict)
    next_member: int = 0


class _Writer:
    def __init__(
        self,
        out: SyntheticLog,
        topics: list[str],
        partitions: int,
        rng: random.Random,
        start_ms: int,
    ) -> None:
        self.out = out
        self.topics = topics
        self.partitions = partitions
        self.rng = rng
        self.now = start_ms

    def emit(self, record: Record) -> None:
        self.out.records.append(record)

    def tick(self, lo: int, hi: int) -> int:
        self.now += self.rng.randint(lo, hi)
        return self.now

    def event(
        self,
        g: _Group,
        event: str,
        *,
        reason: str = "",
        member: _Member | None = None,
        members: tuple[str, ...] = (),
    ) -> None:
        self.emit(
            Record(
                RebalanceEventKey(g.name),
                RebalanceEventValue(
                    event=event,
                    timestamp=self.now,
                    generation=g.generation,
                    member_id="" if member is None else member.member_id,
                    group_instance_id=None if member is None else member.instance_id,
                    reason=reason,
                    members=members,
                ),
            )
        )

    def assignment(self, g: _Group) -> dict[str, bytes]:
        """Range-assign every partition of every topic to the sorted member ids."""
        ids = sorted(g.members)
        owned: dict[str, dict[str, list[int]]] = {m: {} for m in ids}
        for topic in self.topics:
            for p in range(self.partitions):
                owner = ids[p * len(ids) // self.partitions] if ids else None
                if owner is not None:
                    owned[owner].setdefault(topic, []).append(p)
        return {
            m: encode_assignment(
                0,
                {
                    "assigned_partitions": [
                        {"topic": t, "partitions": ps} for t, ps in sorted(owned[m].items())
                    ],
                    "user_data": None,
                },
            )
            for m in ids
        }

    def group_metadata(self, g: _Group, assignment: dict[str, bytes]) -> None:
        subscription = encode_subscription(0, {"topics": self.topics, "user_data": None})
        members = tuple(
            MemberMetadata(
                member_id=m.member_id,
                group_instance_id=m.instance_id,
                client_id=m.client_id,
                client_host="/127.0.0.1",
                rebalance_timeout=30000,
                session_timeout=10000,
                subscription=subscription if g.members else b"",
                assignment=assignment.get(m.member_id, b""),
            )
            for m in g.members.values()
        )
        self.emit(
            Record(
                GroupMetadataKey(g.name),
                GroupMetadataValue(
                    protocol_type="consumer",
                    generation=g.generation,
                    protocol="range" if g.members else None,
                    leader=g.leader if g.members else None,
                    current_state_timestamp=self.now,
                    members=members,
                ),
            )
        )

    def rebalance(self, g: _Group, reason: str) -> None:
        """rebalance_start, the join phase, rebalance_end, then the leader's SyncGroup."""
        self.event(g, "rebalance_start", reason=reason)
        self.tick(5, 3000)
        g.generation += 1
        g.leader = min(g.members) if g.members else None
        self.out.generations.append(
            Generation(g.name, g.incarnation, g.generation, reason, tuple(g.members))
        )
        if not g.members:
            self.group_metadata(g, {})
            self.event(g, "rebalance_end", members=())
            return
        self.event(g, "rebalance_end", members=tuple(g.members))
        self.tick(1, 50)
        self.group_metadata(g, self.assignment(g))

    def new_member(self, g: _Group, static: bool) -> _Member:
        g.next_member += 1
        n = g.next_member
        instance = f"{g.name}-instance-{n}" if static else None
        return _Member(
            f"consumer-{g.name}-{n}-{self.rng.getrandbits(32):08x}", instance, f"client-{n}"
        )

    def join(self, g: _Group, static: bool = False) -> None:
        m = self.new_member(g, static)
        g.members[m.member_id] = m
        self.event(g, "member_join", member=m)
        self.rebalance(g, "member join")

    def leave(self, g: _Group) -> None:
        m = g.members.pop(self.rng.choice(sorted(g.members)))
        self.event(g, "member_leave", reason="the consumer is being closed", member=m)
        self.rebalance(g, "member leave")

    def expire(self, g: _Group) -> None:
        m = g.members.pop(self.rng.choice(sorted(g.members)))
        self.event(g, "member_expired", reason="session timeout", member=m)
        self.rebalance(g, "session timeout")

    def metadata_change(self, g: _Group) -> None:
        self.rebalance(g, "member metadata changed")

    def static_replace(self, g: _Group) -> None:
        """A static member restarts with a new member id: no rebalance, new GroupMetadata."""
        statics = sorted(m for m, mm in g.members.items() if mm.instance_id)
        if not statics:
            return
        before = self.assignment(g)
        old = g.members.pop(statics[0])
        new = _Member(
            f"consumer-{g.name}-r{self.rng.getrandbits(32):08x}", old.instance_id, old.client_id
        )
        g.members[new.member_id] = new
        if g.leader == old.member_id:
            g.leader = new.member_id
        self.event(g, "static_replace", reason=f"replaced {old.member_id}", member=new)
        # The stored assignment moves to the new member id (same instance).
        assignment = {m: a for m, a in before.items() if m != old.member_id}
        assignment[new.member_id] = before[old.member_id]
        self.group_metadata(g, assignment)

    def commit(self, g: _Group, count: int) -> None:
        for _ in range(count):
            topic = self.rng.choice(self.topics)
            p = self.rng.randrange(self.partitions)
            offset = g.offsets.get((topic, p), 0) + self.rng.randint(1, 500)
            g.offsets[(topic, p)] = offset
            ts = self.tick(1, 400)
            self.emit(
                Record(OffsetCommitKey(g.name, topic, p), OffsetCommitValue(offset, 3, "", ts))
            )

    def delete_offset(self, g: _Group) -> None:
        if g.offsets:
            topic, p = self.rng.choice(sorted(g.offsets))
            del g.offsets[(topic, p)]
            self.emit(Record(OffsetCommitKey(g.name, topic, p), None))

    def delete_group(self, g: _Group) -> None:
        """DeleteGroups of an Empty group: offset tombstones, group tombstone, event."""
        for topic, p in sorted(g.offsets):
            self.emit(Record(OffsetCommitKey(g.name, topic, p), None))
        g.offsets.clear()
        self.emit(Record(GroupMetadataKey(g.name), None))
        self.event(g, "group_deleted", reason="DeleteGroups")
        g.incarnation += 1
        g.generation = 0
        g.leader = None


def write_log(
    data_dir: str,
    *,
    groups: int = 3,
    topics: int = 2,
    partitions: int = 4,
    steps: int = 60,
    commits_per_step: int = 20,
    seed: int = 0,
    segment_bytes: int = 1 << 20,
    start_ms: int = 1_700_000_000_000,
) -> SyntheticLog:
    """Script ``steps`` steps of the life of ``groups`` groups and write their records to
    a new log in ``data_dir`` (through :class:`storage.log.Log`)."""
    rng = random.Random(seed)
    out = SyntheticLog(os.path.abspath(data_dir))
    w = _Writer(out, [f"topic-{i}" for i in range(topics)], partitions, rng, start_ms)
    gs = [_Group(f"group-{i}") for i in range(groups)]
    for g in gs:
        w.join(g, static=True)
        w.join(g)
    for _ in range(steps):
        g = rng.choice(gs)
        w.tick(100, 20000)
        roll = rng.random()
        if not g.members:
            if g.generation > 0 and g.incarnation == 0 and roll < 0.5:
                w.delete_group(g)
            w.join(g, static=rng.random() < 0.5)
        elif roll < 0.55:
            w.commit(g, commits_per_step)
        elif roll < 0.65:
            w.join(g, static=rng.random() < 0.5)
        elif roll < 0.75:
            w.leave(g)
        elif roll < 0.82:
            w.expire(g)
        elif roll < 0.88:
            w.static_replace(g)
        elif roll < 0.93:
            w.metadata_change(g)
        else:
            w.delete_offset(g)
    with Log.open(data_dir, fsync="never", segment_bytes=segment_bytes) as log:
        for i in range(0, len(out.records), 64):
            log.append(out.records[i : i + 64])
    return out


_COMMIT_V3 = struct.Struct(">hqih")  # version 3, offset, leader epoch, metadata length ("")
_I64 = struct.Struct(">q")


def write_commits(
    data_dir: str,
    count: int,
    *,
    groups: int = 10,
    topics: int = 10,
    partitions: int = 100,
    tombstone_every: int = 200,
    segments: int = 4,
    seed: int = 0,
    start_ms: int = 1_700_000_000_000,
) -> None:
    """``count`` offset commits (every ``tombstone_every``-th a tombstone) over
    ``groups * topics * partitions`` keys, in ``segments`` segment files of equal entry
    counts. Entries are framed with :func:`storage.segment.encode_entry`; keys encoded
    once with :func:`storage.record_codec.encode_key`, values packed in the layout of
    OffsetCommitValue v3 (tests check it equals ``encode_value``)."""
    rng = random.Random(seed)
    os.makedirs(data_dir, exist_ok=True)
    keys = [
        encode_key(OffsetCommitKey(f"group-{g}", f"topic-{t}", p))
        for g in range(groups)
        for t in range(topics)
        for p in range(partitions)
    ]
    per_segment = -(-count // segments)
    written = 0
    offset = 0
    while written < count:
        base = written
        n = min(per_segment, count - written)
        parts = [encode_header(base)]
        for i in range(n):
            key = keys[rng.randrange(len(keys))]
            if tombstone_every and (base + i) % tombstone_every == tombstone_every - 1:
                parts.append(encode_entry(key, None))
            else:
                offset += 1
                value = _COMMIT_V3.pack(3, offset, -1, 0) + _I64.pack(start_ms + base + i)
                parts.append(encode_entry(key, value))
        with open(os.path.join(data_dir, f"{base:020d}.log"), "wb") as f:
            f.write(b"".join(parts))
        written += n
