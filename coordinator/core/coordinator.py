"""The sans-I/O group coordinator the runtime drives.

Every handler (``handle_join_group``, ``handle_heartbeat``, ... one module per API) takes
the coordinator, the request's context, the decoded request, an opaque reply token and
``now_ms``, and returns a ``Result``: records to append, replies to send (to this token
and/or to earlier parked ones), timers to set, and callbacks for the append's outcome. The
runtime appends the records and reports back: ``append_done`` applies them to hard state
(nothing else does, besides replay) and runs the callbacks; ``append_failed`` runs the
callbacks' failure branch, which reverts soft state coupled to the write and answers with
Kafka's mapped error. ``replay`` rebuilds hard state from the log at startup and
``on_loaded`` builds the groups from it, re-arms session timers, rebalances over-capacity
groups and starts the retention scan.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from coordinator.config import CoordinatorConfig
from coordinator.core.classic.group import ClassicGroup
from coordinator.core.classic.state import EMPTY
from coordinator.core.consumer.group import ConsumerGroup
from coordinator.core.consumer.migration import expire_classic_member, expire_consumer_member
from coordinator.core.group_manager import GroupManager
from coordinator.core.group_rebuild import CONSUMER, KINDS, SHARE, arm_sessions, rebuild, replayed
from coordinator.core.messages import RequestContext
from coordinator.core.offset_expiration import expire_offsets, schedule_retention_scan
from coordinator.core.result import EMPTY_RESULT, ReplyToken, Result
from coordinator.core.share_group.group import ShareGroup
from coordinator.core.share_group.heartbeat import expire_share_member
from coordinator.core.store import HardStateSnapshot, OffsetPacker, PackedOffsets
from coordinator.core.timers import (
    ClassicMemberJoinTimerKey,
    ClassicMemberSyncTimerKey,
    ConsumerRebalanceTimerKey,
    ConsumerSessionTimerKey,
    HeartbeatTimerKey,
    JoinTimerKey,
    RetentionTimerKey,
    ShareSessionTimerKey,
    SyncTimerKey,
    TimerKey,
)
from storage.records import OffsetCommitValue, RebalanceEventKey, Record
from wire.constants import ErrorCode

__all__ = ["CoreHandler", "GroupCoordinator", "GroupView", "MemberView"]

RequestT = TypeVar("RequestT")

CoreHandler = Callable[[GroupManager, RequestContext, RequestT, ReplyToken, int], Result]
"""A group API's handler: (coordinator, context, request, reply token, now_ms) -> Result."""


@dataclass(frozen=True, slots=True)
class MemberView:
    """Read-only snapshot of one member."""

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    protocols: tuple[str, ...]
    assignment: bytes
    awaiting_join: bool
    awaiting_sync: bool
    is_new: bool


@dataclass(frozen=True, slots=True)
class GroupView:
    """Read-only snapshot of one group's live state."""

    group_id: str
    state: str
    generation_id: int
    protocol_type: str | None
    protocol_name: str | None
    leader_id: str | None
    members: tuple[MemberView, ...]
    pending_members: tuple[str, ...]
    pending_sync_members: tuple[str, ...]
    current_state_timestamp: int | None


class GroupCoordinator(GroupManager):
    """Kafka's classic group coordinator as a deterministic, sans-I/O state machine."""

    __slots__ = ()

    def __init__(self, config: CoordinatorConfig, new_uuid: Callable[[], str]) -> None:
        super().__init__(config, new_uuid)

    # ------------------------------------------------------------------ append outcomes

    def append_done(self, result: Result, now_ms: int) -> Result:
        """``result.records`` are in the log: apply them to hard state and run the Result's
        callbacks. The runtime sends ``result.replies`` and then processes what this returns."""
        records = result.records
        self.store.apply_appended(records)
        if self.pending.by_group:
            self.pending.settle(records)
        if not result.callbacks:
            return EMPTY_RESULT
        fx = self.effects()
        for callback in result.callbacks:
            callback.appended(now_ms, fx)
        return fx.result()

    def staged_offset_groups(self, producer_id: int) -> list[str]:
        """The groups holding offsets that ``producer_id``'s open transaction staged (its
        markers commit or drop them)."""
        return list(self.store.pending_txn.get(producer_id, ()))

    def count_in_flight(self, result: Result) -> None:
        """The runtime queues an ``at_once`` Result (it could not answer it inline): count its
        offset records as writes in flight, as a handler's Effects counts the others'."""
        add = self.pending.add
        for record in result.records:
            add(record)
        self.pending.seal()

    def append_failed(self, result: Result, error: ErrorCode, now_ms: int) -> Result:
        """Appending ``result.records`` failed with Kafka log-append error ``error``: nothing
        is applied, soft state coupled to the write is reverted, and the returned Result
        carries every reply to send instead of ``result.replies`` (a reply whose answer
        depended on the records now carries the mapped error). RebalanceEvent records are
        dropped and counted: losing history never fails a request."""
        self.pending.settle(result.records)
        self.dropped_events += sum(
            1 for record in result.records if isinstance(record.key, RebalanceEventKey)
        )
        fx = self.effects()
        at_once = result.at_once
        if at_once is not None:  # the API's mapping of its answer
            for reply in result.replies:
                fx.reply(reply.token, at_once(reply.response, error))
        for callback in result.callbacks:
            callback.append_failed(error, now_ms, fx)
        replaced = {reply.token for reply in fx.replies}
        kept = [reply for reply in result.replies if reply.token not in replaced]
        return Result(
            tuple(fx.records),
            tuple(kept) + tuple(fx.replies),
            tuple(fx.timers),
            tuple(fx.callbacks),
        )

    # ------------------------------------------------------------------ timers

    def fire_timer(self, key: TimerKey, now_ms: int) -> Result:
        """A scheduled deadline passed; a key no longer armed for it is ignored."""
        fx = self.effects()
        if isinstance(key, HeartbeatTimerKey):
            self.expire_heartbeat(key, now_ms, fx)
        elif isinstance(key, JoinTimerKey):
            self.expire_join(key, now_ms, fx)
        elif isinstance(key, SyncTimerKey):
            self.expire_sync(key, now_ms, fx)
        elif isinstance(key, RetentionTimerKey):
            expire_offsets(self, now_ms, fx)
        elif isinstance(key, ConsumerSessionTimerKey | ConsumerRebalanceTimerKey):
            expire_consumer_member(self, key, fx, now_ms)
        elif isinstance(key, ClassicMemberJoinTimerKey | ClassicMemberSyncTimerKey):
            expire_classic_member(self, key, fx, now_ms)
        elif isinstance(key, ShareSessionTimerKey):
            expire_share_member(self, key, fx)
        return fx.result()

    # ------------------------------------------------------------------ loading

    def replay(self, record: Record) -> None:
        """Apply one log record at startup (last record per key wins, tombstones remove;
        event records are ignored). Groups are built from the result by ``on_loaded``."""
        self.store.apply(record)

    def replay_packed(self, groups: Mapping[str, PackedOffsets]) -> None:
        """Take groups whose offset records a snapshot holds packed, before any other
        record is replayed (each group's are applied when it is first asked for)."""
        self.store.adopt_packed(groups)

    def pack_offsets_with(self, pack: OffsetPacker) -> None:
        """Keep committed offsets packed by ``pack`` until their group is read, as a
        snapshot's are after a restart (``HardState.pack``)."""
        self.store.pack = pack

    def on_loaded(self, now_ms: int) -> Result:
        """After replay: build the groups (a group record with members loads Stable, without
        members Empty; offsets without a group record make an Empty offset-only group), arm
        every member's session timer, rebalance over-capacity groups and start the
        offset-retention scan."""
        groups = self.groups
        for group_id, value in self.store.groups.items():
            groups[group_id] = ClassicGroup.from_record(group_id, value)
        for kind in KINDS:
            for group_id in kind.stored(self):
                rebuild(self, kind, group_id)
        for group_id in self.store.offset_group_ids():
            if group_id not in groups and group_id not in self.consumer_groups:
                groups[group_id] = ClassicGroup(group_id, EMPTY, None)
        fx = self.effects()
        for kind in KINDS:
            for modern in kind.live(self).values():
                arm_sessions(self, kind, modern, now_ms, fx)
        max_size = self.config.group_max_size
        for group in list(groups.values()):
            for member in group.members.values():
                self.reschedule_heartbeat(member, now_ms, fx)
            if group.size > max_size:
                self.prepare_rebalance(group, now_ms, "over capacity on load", fx)
        schedule_retention_scan(self, now_ms, fx)
        return fx.result()

    # ------------------------------------------------------------------ read-only views

    def group_ids(self) -> list[str]:
        """Ids of the groups currently known (any state, every group type)."""
        return list(self.groups) + list(self.consumer_groups) + list(self.share_groups)

    def describe(self, group_id: str) -> GroupView | None:
        """A snapshot of the group's live state, or None if unknown."""
        group = self.groups.get(group_id)
        if group is None:
            return None
        return GroupView(
            group_id=group.group_id,
            state=group.state.value,
            generation_id=group.generation_id,
            protocol_type=group.protocol_type,
            protocol_name=group.protocol_name,
            leader_id=group.leader_id,
            members=tuple(
                MemberView(
                    member_id=member_id,
                    group_instance_id=m.group_instance_id,
                    client_id=m.client_id,
                    client_host=m.client_host,
                    session_timeout_ms=m.session_timeout_ms,
                    rebalance_timeout_ms=m.rebalance_timeout_ms,
                    protocols=tuple(name for name, _ in m.protocols),
                    assignment=m.assignment,
                    awaiting_join=m.join_token is not None,
                    awaiting_sync=m.sync_token is not None,
                    is_new=m.is_new,
                )
                for member_id, m in group.members.items()
            ),
            pending_members=tuple(group.pending_members),
            pending_sync_members=tuple(sorted(group.pending_sync_members)),
            current_state_timestamp=group.current_state_timestamp,
        )

    def committed_offsets(self, group_id: str) -> dict[tuple[str, int], OffsetCommitValue]:
        """The group's committed offsets keyed by (topic, partition)."""
        return dict(self.store.group_offsets(group_id))

    def hard_state(self) -> HardStateSnapshot:
        """A comparable snapshot of persisted state (offsets + last group record per group)."""
        return self.store.snapshot()

    def persisted_group_ids(self) -> set[str]:
        """Groups with persisted state (a group record, consumer group records or committed
        offsets): exactly the groups a restart would load."""
        return (set(self.store.groups) | self.store.offset_group_ids() | set(self.store.consumer)
                | set(self.store.share))

    def consumer_group(self, group_id: str) -> ConsumerGroup | None:
        """The live consumer group (KIP-848), or None (read-only by convention)."""
        return self.consumer_groups.get(group_id)

    def share_group(self, group_id: str) -> ShareGroup | None:
        """The live share group (KIP-932), or None (read-only by convention)."""
        return self.share_groups.get(group_id)

    def replayed_share_group(self, group_id: str) -> ShareGroup | None:
        """The share group as a restart would rebuild it from the log."""
        return replayed(self, SHARE, group_id)

    def replayed_consumer_group(self, group_id: str) -> ConsumerGroup | None:
        """The consumer group as a restart would rebuild it from the log."""
        return replayed(self, CONSUMER, group_id)

