"""The group coordinator's groups and the steps over them (Kafka's GroupMetadataManager).

``GroupManager`` owns the live groups, the hard state, the writes in flight and the config,
and implements the steps Kafka's classic coordinator composes its handlers from: prepare a
rebalance, complete the join phase, propagate assignments, expire heartbeats / joins /
pending syncs, persist a group, drop a group. Handlers (join.py, sync.py, ...) are functions
over a GroupManager (``manager``) returning a ``Result``; ``GroupCoordinator``
(coordinator.py), the object the runtime drives, is a GroupManager with the lifecycle
(replay, load, append outcomes) and read-only views added.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from coordinator.config import CoordinatorConfig
from coordinator.core.classic.group import ClassicGroup
from coordinator.core.classic.group_member import Member
from coordinator.core.classic.state import (
    COMPLETING_REBALANCE,
    DEAD,
    EMPTY,
    PREPARING_REBALANCE,
    STABLE,
)
from coordinator.core.consumer.group import ConsumerGroup
from coordinator.core.messages import SyncGroupResponse, join_group_error, sync_group_error
from coordinator.core.result import Effects
from coordinator.core.share_group.group import ShareGroup
from coordinator.core.store import HardState, PendingWrites, TopicPartition
from coordinator.core.timers import HeartbeatTimerKey, JoinTimerKey, SyncTimerKey
from coordinator.core.topics_image import EMPTY_IMAGE
from storage.records import (
    GroupMetadataKey,
    OffsetCommitKey,
    RebalanceEventKey,
    RebalanceEventValue,
    Record,
)
from wire.bounded_cache import BoundedCache
from wire.constants import ErrorCode

__all__ = ["GroupManager", "renew_session", "valid_group_id"]


def valid_group_id(group_id: str | None, allow_empty: bool) -> bool:
    """Kafka's isValidGroupId: never null; "" only where Kafka allows it for compatibility."""
    if group_id is None:
        return False
    return allow_empty or group_id != ""


#: The most commit shapes whose shared answer a manager keeps (``GroupManager.shared_answers``).
SHARED_ANSWERS_LIMIT = 1024


def renew_session(member: Member, now_ms: int, timeout_ms: int | None = None) -> int:
    """Move ``member``'s session deadline to ``now_ms`` plus its session timeout (or
    ``timeout_ms``); the new deadline, for the caller to arm the member's timer at."""
    deadline = now_ms + (member.session_timeout_ms if timeout_ms is None else timeout_ms)
    member.heartbeat_deadline = deadline
    return deadline


class GroupManager:
    """Live groups + hard state + writes in flight + config, and the shared rebalance steps."""

    __slots__ = (
        "config",
        "consumer_groups",
        "dropped_events",
        "group_configs",
        "groups",
        "new_uuid",
        "pending",
        "retention_deadline",
        "share_groups",
        "share_state_deleted",
        "shared_answers",
        "store",
        "topics_image",
    )

    def __init__(self, config: CoordinatorConfig, new_uuid: Callable[[], str]) -> None:
        self.config = config
        self.new_uuid = new_uuid
        self.groups: dict[str, ClassicGroup] = {}
        #: Consumer groups (KIP-848), built from their records; a group id is in at most one
        #: of ``groups`` and ``consumer_groups``.
        self.consumer_groups: dict[str, ConsumerGroup] = {}
        #: Share groups (KIP-932), built from their records; a group id is in at most one
        #: of ``groups``, ``consumer_groups`` and ``share_groups``.
        self.share_groups: dict[str, ShareGroup] = {}
        #: The broker's topics, as the consumer group protocol reads them.
        self.topics_image = EMPTY_IMAGE
        self.store = HardState()
        #: Each group's dynamic configs (IncrementalAlterConfigs on a GROUP resource; the
        #: server's config shard fills it): what overrides ``config`` for that group.
        self.group_configs: dict[str, dict[str, str]] = {}
        self.pending = PendingWrites()
        self.retention_deadline = -1
        #: RebalanceEvent history records lost to failed appends (they never fail a request).
        self.dropped_events = 0
        #: Told a deleted share group's share-state tombstones once they are in the log (the
        #: share coordinator forgets those partitions; set by the server).
        self.share_state_deleted: Callable[[list[Record]], None] | None = None
        #: The all-NONE OffsetCommit answer per commit shape (``offset_commit.shared_answer``).
        self.shared_answers: BoundedCache[Any, Any] = BoundedCache(SHARED_ANSWERS_LIMIT)

    def consumer_session_timeout_ms(self, group_id: str) -> int:
        """The group's ``consumer.session.timeout.ms``, else the broker's (``GroupConfig``;
        the ``share.*`` keys are read the same way once share groups are served)."""
        configs = self.group_configs.get(group_id)
        if configs is not None and "consumer.session.timeout.ms" in configs:
            return int(configs["consumer.session.timeout.ms"])
        return self.config.group_consumer_session_timeout_ms

    def consumer_heartbeat_interval_ms(self, group_id: str) -> int:
        """The group's ``consumer.heartbeat.interval.ms``, else the broker's."""
        configs = self.group_configs.get(group_id)
        if configs is not None and "consumer.heartbeat.interval.ms" in configs:
            return int(configs["consumer.heartbeat.interval.ms"])
        return self.config.group_consumer_heartbeat_interval_ms

    def effects(self) -> Effects:
        """A fresh accumulator whose persisted records count as in flight here."""
        pending = self.pending
        if pending.unreturned:  # left by a call that raised (a bug) before returning
            pending.discard_unreturned()
        return Effects(pending)

    # ------------------------------------------------------------------ records

    def event(
        self,
        fx: Effects,
        group: ClassicGroup,
        event: str,
        now_ms: int,
        *,
        reason: str = "",
        member: Member | None = None,
        members: tuple[str, ...] = (),
    ) -> None:
        """Emit a RebalanceEvent history record (ignored by replay)."""
        fx.event(
            Record(
                RebalanceEventKey(group.group_id),
                RebalanceEventValue(
                    event=event,
                    timestamp=now_ms,
                    generation=group.generation_id,
                    member_id="" if member is None else member.member_id,
                    group_instance_id=None if member is None else member.group_instance_id,
                    reason=reason,
                    members=members,
                ),
            )
        )

    def store_group(
        self, group: ClassicGroup, assignment: Mapping[str, bytes], fx: Effects
    ) -> None:
        """Persist the group's metadata with ``assignment`` (Kafka's storeGroup)."""
        fx.persist(Record(GroupMetadataKey(group.group_id), group.to_record_value(assignment)))

    # ------------------------------------------------------------------ offsets in flight

    def has_offsets(self, group_id: str) -> bool:
        """Whether the group has committed offsets, counting writes in flight (Kafka's
        hasOffsets counts pending commits)."""
        if group_id not in self.pending.by_group:  # a packed group stays packed
            return self.store.has_offsets(group_id)
        return self.pending.has_offsets(group_id, self.store.group_offsets(group_id))

    def offset_keys(self, group_id: str) -> list[TopicPartition]:
        """Every key of the group that is committed or has a write in flight, sorted."""
        keys = set(self.store.group_offsets(group_id))
        keys.update(self.pending.keys(group_id))
        return sorted(keys)

    def delete_offsets(
        self, group_id: str, partitions: list[TopicPartition], fx: Effects
    ) -> None:
        """Tombstone the partitions that are committed or have a write in flight (so a commit
        landing before the tombstone cannot outlive it)."""
        committed = self.store.group_offsets(group_id)
        in_flight = self.pending.keys(group_id)
        for topic, partition in partitions:
            tp = (topic, partition)
            if tp in committed or tp in in_flight:
                fx.persist(Record(OffsetCommitKey(group_id, topic, partition), None))

    # ------------------------------------------------------------------ dropping groups

    def maybe_drop_group(self, group: ClassicGroup, now_ms: int, reason: str, fx: Effects) -> bool:
        """Kafka's cleanupGroupMetadata tail: an Empty group without offsets becomes Dead, is
        forgotten, and gets a tombstone unless it only ever stored offsets (generation 0)."""
        if group.state is not EMPTY or self.has_offsets(group.group_id):
            return False
        self.drop_group(group, now_ms, reason, fx)
        return True

    def drop_group(self, group: ClassicGroup, now_ms: int, reason: str, fx: Effects) -> None:
        """Move the group to Dead, write its tombstone if it has a record, and forget it; if
        the append fails, the group comes back as it was."""
        fx.after_append(_RestoreDroppedGroup(self, group))
        group.transition_to(DEAD, now_ms)
        group_id = group.group_id
        if group.generation_id > 0 or group_id in self.store.groups:
            fx.persist(Record(GroupMetadataKey(group_id), None))
        self.groups.pop(group_id, None)
        self.event(fx, group, "group_deleted", now_ms, reason=reason)

    # ------------------------------------------------------------------ heartbeats

    def reschedule_heartbeat(
        self, member: Member, now_ms: int, fx: Effects, timeout_ms: int | None = None
    ) -> None:
        """(Re)arm the member's session timer (Kafka's completeAndScheduleNextHeartbeat)."""
        fx.schedule(member.heartbeat_key, renew_session(member, now_ms, timeout_ms))

    def cancel_heartbeat(self, member: Member, fx: Effects) -> None:
        """Disarm the member's session timer."""
        if member.heartbeat_deadline != -1:
            member.heartbeat_deadline = -1
            fx.cancel(member.heartbeat_key)

    def expire_heartbeat(self, key: HeartbeatTimerKey, now_ms: int, fx: Effects) -> None:
        """A session (or pending / new-member join) timer fired."""
        group = self.groups.get(key.group_id)
        if group is None or group.state is DEAD:
            return
        member_id = key.member_id
        pending_deadline = group.pending_members.get(member_id)
        if pending_deadline is not None:
            if pending_deadline <= now_ms:
                self.remove_pending_member_and_update_group(group, member_id, now_ms, fx)
            return
        member = group.members.get(member_id)
        if member is None:
            return
        deadline = member.heartbeat_deadline
        if deadline == -1 or deadline > now_ms:
            return
        member.heartbeat_deadline = -1
        if not member.has_satisfied_heartbeat():
            reason = "new member join timeout" if member.is_new else "session timeout"
            self.event(fx, group, "member_expired", now_ms, reason=reason, member=member)
            self.remove_member_and_update_group(group, member, now_ms, reason, fx)

    # ------------------------------------------------------------------ membership changes

    def remove_member_and_update_group(
        self, group: ClassicGroup, member: Member, now_ms: int, reason: str, fx: Effects
    ) -> None:
        """Remove a member (answering its parked requests) and rebalance or finish the join."""
        unknown = ErrorCode.UNKNOWN_MEMBER_ID
        group.complete_join(member, join_group_error(unknown), fx)
        # Kafka leaves a removed member's parked SyncGroup unanswered; kcoord answers it so
        # that no reply token is ever stranded.
        group.complete_sync(member, sync_group_error(unknown), fx)
        group.remove(member.member_id)
        state = group.state
        if state is STABLE or state is COMPLETING_REBALANCE:
            self.maybe_prepare_rebalance(group, now_ms, reason, fx)
        elif state is PREPARING_REBALANCE:
            self.maybe_complete_join(group, now_ms, fx)

    def remove_pending_member_and_update_group(
        self, group: ClassicGroup, member_id: str, now_ms: int, fx: Effects
    ) -> None:
        """Forget a pending member id and re-check join completion."""
        group.remove(member_id)
        if group.state is PREPARING_REBALANCE:
            self.maybe_complete_join(group, now_ms, fx)

    # ------------------------------------------------------------------ join phase

    def maybe_prepare_rebalance(
        self, group: ClassicGroup, now_ms: int, reason: str, fx: Effects
    ) -> None:
        """Start a rebalance if the group's state allows one."""
        if group.can_rebalance():
            self.prepare_rebalance(group, now_ms, reason, fx)

    def prepare_rebalance(self, group: ClassicGroup, now_ms: int, reason: str, fx: Effects) -> None:
        """Kafka's prepareRebalance: cancel syncs, move to PreparingRebalance, arm the join
        timer (the initial delay when coming from Empty) or complete the join at once."""
        if group.state is COMPLETING_REBALANCE:
            self.reset_and_propagate_assignment_error(
                group, ErrorCode.REBALANCE_IN_PROGRESS, now_ms, fx
            )
        self.remove_sync_expiration(group, fx)
        initial = group.state is EMPTY
        delay = self.config.group_initial_rebalance_delay_ms
        remaining = max(group.rebalance_timeout_ms - delay, 0)
        group.transition_to(PREPARING_REBALANCE, now_ms)
        self.event(fx, group, "rebalance_start", now_ms, reason=reason)
        if initial:
            if delay <= 0:
                # A zero delay expires at once, as Kafka's timer runs it immediately.
                self.complete_join(group, now_ms, fx)
            else:
                group.initial_delay = (delay, remaining)
                self.schedule_join(group, now_ms + delay, fx)
        elif group.has_all_members_joined():
            self.complete_join(group, now_ms, fx)
        else:
            self.schedule_join(group, now_ms + group.rebalance_timeout_ms, fx)

    def schedule_join(self, group: ClassicGroup, deadline_ms: int, fx: Effects) -> None:
        """Arm the group's join timer."""
        group.join_deadline = deadline_ms
        fx.schedule(JoinTimerKey(group.group_id), deadline_ms)

    def maybe_complete_join(self, group: ClassicGroup, now_ms: int, fx: Effects) -> None:
        """Complete the join phase once every member rejoined (never during the initial delay)."""
        if (
            group.state is PREPARING_REBALANCE
            and group.initial_delay is None
            and group.has_all_members_joined()
        ):
            self.complete_join(group, now_ms, fx)

    def expire_join(self, key: JoinTimerKey, now_ms: int, fx: Effects) -> None:
        """The join timer fired: extend the initial delay or complete the join phase."""
        group = self.groups.get(key.group_id)
        if group is None:
            return
        deadline = group.join_deadline
        if deadline == -1 or deadline > now_ms:
            return
        group.join_deadline = -1
        if group.initial_delay is not None:
            delay_ms, remaining_ms = group.initial_delay
            if group.new_member_added and remaining_ms != 0:
                group.new_member_added = False
                new_delay = min(self.config.group_initial_rebalance_delay_ms, remaining_ms)
                group.initial_delay = (new_delay, max(remaining_ms - delay_ms, 0))
                self.schedule_join(group, now_ms + new_delay, fx)
                return
        self.complete_join(group, now_ms, fx)

    def complete_join(self, group: ClassicGroup, now_ms: int, fx: Effects) -> None:
        """Kafka's onCompleteJoin: drop dynamic members that did not rejoin, elect a leader,
        bump the generation and answer every parked JoinGroup (or persist an Empty group)."""
        if group.join_deadline != -1:
            group.join_deadline = -1
            fx.cancel(JoinTimerKey(group.group_id))
        group.initial_delay = None
        for member in group.not_yet_rejoined():
            if member.group_instance_id is None:
                group.remove(member.member_id)
                self.cancel_heartbeat(member, fx)
                self.event(fx, group, "member_expired", now_ms, reason="rebalance timeout",
                           member=member)
        if group.state is DEAD:
            return
        if not group.maybe_elect_new_joined_leader() and group.members:
            # Nobody rejoined: wait another rebalance timeout for the session timeouts to act.
            self.schedule_join(group, now_ms + group.rebalance_timeout_ms, fx)
            return
        group.init_next_generation(now_ms)
        if group.state is EMPTY:
            self.store_group(group, {}, fx)
        else:
            leader = group.leader_id or ""
            all_members = group.current_member_metadata()
            for member_id, member in group.members.items():
                response = group.join_response(
                    member_id, leader=leader, members=all_members if member_id == leader else ()
                )
                group.complete_join(member, response, fx)
                self.reschedule_heartbeat(member, now_ms, fx)
                member.is_new = False
                group.pending_sync_members.add(member_id)
            self.schedule_pending_sync(group, now_ms, fx)
        self.event(fx, group, "rebalance_end", now_ms, members=tuple(group.members))

    # ------------------------------------------------------------------ sync phase

    def schedule_pending_sync(self, group: ClassicGroup, now_ms: int, fx: Effects) -> None:
        """Arm the pending-sync timer for the new generation."""
        deadline = now_ms + group.rebalance_timeout_ms
        group.sync_deadline = deadline
        group.sync_generation = group.generation_id
        fx.schedule(SyncTimerKey(group.group_id), deadline)

    def remove_sync_expiration(self, group: ClassicGroup, fx: Effects) -> None:
        """Forget pending syncs and disarm the pending-sync timer."""
        group.pending_sync_members.clear()
        if group.sync_deadline != -1:
            group.sync_deadline = -1
            fx.cancel(SyncTimerKey(group.group_id))

    def remove_pending_sync_member(self, group: ClassicGroup, member_id: str, fx: Effects) -> None:
        """A member synced; disarm the timer once nobody is pending or the phase is over."""
        group.pending_sync_members.discard(member_id)
        state = group.state
        done = state is not COMPLETING_REBALANCE and state is not STABLE
        if (done or not group.pending_sync_members) and group.sync_deadline != -1:
            group.sync_deadline = -1
            fx.cancel(SyncTimerKey(group.group_id))

    def expire_sync(self, key: SyncTimerKey, now_ms: int, fx: Effects) -> None:
        """The pending-sync timer fired: remove members that did not sync and rebalance."""
        group = self.groups.get(key.group_id)
        if group is None:
            return
        deadline = group.sync_deadline
        if deadline == -1 or deadline > now_ms:
            return
        group.sync_deadline = -1
        if group.sync_generation != group.generation_id:
            return
        if group.state is not COMPLETING_REBALANCE and group.state is not STABLE:
            return
        if group.has_received_sync_from_all_members():
            return
        for member_id in sorted(group.pending_sync_members):
            member = group.members.get(member_id)
            group.remove(member_id)
            if member is not None:
                self.cancel_heartbeat(member, fx)
                self.event(fx, group, "member_expired", now_ms, reason="pending sync timeout",
                           member=member)
        self.prepare_rebalance(group, now_ms, "pending sync timeout", fx)

    def reset_and_propagate_assignment_error(
        self, group: ClassicGroup, error: ErrorCode, now_ms: int, fx: Effects
    ) -> None:
        """Clear assignments and answer every parked SyncGroup with ``error``."""
        for member in group.members.values():
            member.assignment = b""
        self.propagate_assignment(group, error, now_ms, fx)

    def set_and_propagate_assignment(
        self, group: ClassicGroup, assignment: Mapping[str, bytes], now_ms: int, fx: Effects
    ) -> None:
        """Store every member's assignment and answer every parked SyncGroup."""
        for member_id, member in group.members.items():
            member.assignment = assignment.get(member_id, b"")
        self.propagate_assignment(group, ErrorCode.NONE, now_ms, fx)

    def propagate_assignment(
        self, group: ClassicGroup, error: ErrorCode, now_ms: int, fx: Effects
    ) -> None:
        """Answer parked SyncGroups; members answered get a fresh session."""
        ok = error == ErrorCode.NONE
        protocol_type = group.protocol_type if ok else None
        protocol_name = group.protocol_name if ok else None
        for member in group.members.values():
            if member.sync_token is None:
                continue
            response: SyncGroupResponse = {
                "error_code": error,
                "protocol_type": protocol_type,
                "protocol_name": protocol_name,
                "assignment": member.assignment,
            }
            group.complete_sync(member, response, fx)
            self.reschedule_heartbeat(member, now_ms, fx)

    # ------------------------------------------------------------------ ids

    def new_member_id(self, client_id: str, group_instance_id: str | None) -> str:
        """``clientId-uuid`` for dynamic members, ``instanceId-uuid`` for static ones."""
        prefix = client_id if group_instance_id is None else group_instance_id
        return f"{prefix}-{self.new_uuid()}"


class _RestoreDroppedGroup:
    """Brings a dropped group back if the append of its tombstones fails (Kafka's Java
    coordinator reverts its timeline), unless a new group took its id meanwhile."""

    __slots__ = ("group", "manager", "previous_state", "state", "timestamp")

    def __init__(self, manager: GroupManager, group: ClassicGroup) -> None:
        self.manager = manager
        self.group = group
        self.state = group.state
        self.previous_state = group.previous_state
        self.timestamp = group.current_state_timestamp

    def appended(self, now_ms: int, fx: Effects) -> None:
        """The group is gone for good."""

    def append_failed(self, error: ErrorCode, now_ms: int, fx: Effects) -> None:
        """Restore the group object as it was before the drop."""
        group = self.group
        if group.group_id in self.manager.groups:
            return
        # A revert, not a transition: Dead -> Empty is not a legal move of the state machine.
        group.state = self.state
        group.previous_state = self.previous_state
        group.current_state_timestamp = self.timestamp
        self.manager.groups[group.group_id] = group
