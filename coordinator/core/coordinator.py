"""The sans-I/O group coordinator facade the runtime drives.

Every handler takes a typed request, an opaque reply token and ``now_ms`` and returns a
``Result``: records to append, replies to send (to this token and/or to earlier parked ones)
and timers to set. ``replay`` rebuilds hard state from the log at startup and ``on_loaded``
re-arms session timers, rebalances over-capacity groups and starts the retention scan.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from coordinator.config import CoordinatorConfig
from coordinator.core.admin import (
    handle_delete_groups,
    handle_describe_groups,
    handle_list_groups,
    handle_offset_delete,
)
from coordinator.core.engine import Engine
from coordinator.core.group import ClassicGroup
from coordinator.core.heartbeat import handle_heartbeat
from coordinator.core.join import handle_join_group
from coordinator.core.leave import handle_leave_group
from coordinator.core.messages import (
    DeleteGroupsRequest,
    DescribeGroupsRequest,
    HeartbeatRequest,
    JoinGroupRequest,
    LeaveGroupRequest,
    ListGroupsRequest,
    OffsetCommitRequest,
    OffsetDeleteRequest,
    OffsetFetchRequest,
    SyncGroupRequest,
)
from coordinator.core.offsets import (
    expire_offsets,
    handle_offset_commit,
    handle_offset_fetch,
    schedule_retention_scan,
)
from coordinator.core.result import ReplyToken, Result
from coordinator.core.state import EMPTY
from coordinator.core.store import HardStateSnapshot
from coordinator.core.sync import handle_sync_group
from coordinator.core.timers import (
    HeartbeatTimerKey,
    JoinTimerKey,
    RetentionTimerKey,
    SyncTimerKey,
    TimerKey,
)
from storage.records import GroupMetadataKey, OffsetCommitKey, OffsetCommitValue, Record

__all__ = ["GroupCoordinator", "GroupView", "MemberView"]


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


class GroupCoordinator:
    """Kafka's classic group coordinator as a deterministic, sans-I/O state machine."""

    __slots__ = ("_engine",)

    def __init__(self, config: CoordinatorConfig, new_uuid: Callable[[], str]) -> None:
        self._engine = Engine(config, new_uuid)

    @property
    def config(self) -> CoordinatorConfig:
        """The configuration in force."""
        return self._engine.config

    @property
    def engine(self) -> Engine:
        """Internal state (tests only: lets them force states Kafka's tests force)."""
        return self._engine

    # ------------------------------------------------------------------ group membership

    def join_group(self, req: JoinGroupRequest, token: ReplyToken, now_ms: int) -> Result:
        """JoinGroup; the reply may come in a later Result (parked until the join completes)."""
        fx = self._engine.effects()
        handle_join_group(self._engine, req, token, now_ms, fx)
        return fx.result()

    def sync_group(self, req: SyncGroupRequest, token: ReplyToken, now_ms: int) -> Result:
        """SyncGroup; followers' replies are parked until the leader's assignment arrives."""
        fx = self._engine.effects()
        handle_sync_group(self._engine, req, token, now_ms, fx)
        return fx.result()

    def heartbeat(self, req: HeartbeatRequest, token: ReplyToken, now_ms: int) -> Result:
        """Heartbeat (always answered at once)."""
        return handle_heartbeat(self._engine, req, token, now_ms)

    def leave_group(self, req: LeaveGroupRequest, token: ReplyToken, now_ms: int) -> Result:
        """LeaveGroup."""
        fx = self._engine.effects()
        handle_leave_group(self._engine, req, token, now_ms, fx)
        return fx.result()

    # ------------------------------------------------------------------ offsets

    def offset_commit(self, req: OffsetCommitRequest, token: ReplyToken, now_ms: int) -> Result:
        """OffsetCommit."""
        fx = self._engine.effects()
        handle_offset_commit(self._engine, req, token, now_ms, fx)
        return fx.result()

    def offset_fetch(self, req: OffsetFetchRequest, token: ReplyToken, now_ms: int) -> Result:
        """OffsetFetch (one or several groups)."""
        fx = self._engine.effects()
        handle_offset_fetch(self._engine, req, token, now_ms, fx)
        return fx.result()

    # ------------------------------------------------------------------ admin

    def describe_groups(
        self, req: DescribeGroupsRequest, token: ReplyToken, now_ms: int
    ) -> Result:
        """DescribeGroups."""
        fx = self._engine.effects()
        handle_describe_groups(self._engine, req, token, now_ms, fx)
        return fx.result()

    def list_groups(self, req: ListGroupsRequest, token: ReplyToken, now_ms: int) -> Result:
        """ListGroups."""
        fx = self._engine.effects()
        handle_list_groups(self._engine, req, token, now_ms, fx)
        return fx.result()

    def delete_groups(self, req: DeleteGroupsRequest, token: ReplyToken, now_ms: int) -> Result:
        """DeleteGroups."""
        fx = self._engine.effects()
        handle_delete_groups(self._engine, req, token, now_ms, fx)
        return fx.result()

    def offset_delete(self, req: OffsetDeleteRequest, token: ReplyToken, now_ms: int) -> Result:
        """OffsetDelete."""
        fx = self._engine.effects()
        handle_offset_delete(self._engine, req, token, now_ms, fx)
        return fx.result()

    # ------------------------------------------------------------------ timers

    def fire_timer(self, key: TimerKey, now_ms: int) -> Result:
        """A scheduled deadline passed; a key no longer armed for it is ignored."""
        engine = self._engine
        fx = engine.effects()
        if isinstance(key, HeartbeatTimerKey):
            engine.expire_heartbeat(key, now_ms, fx)
        elif isinstance(key, JoinTimerKey):
            engine.expire_join(key, now_ms, fx)
        elif isinstance(key, SyncTimerKey):
            engine.expire_sync(key, now_ms, fx)
        elif isinstance(key, RetentionTimerKey):
            expire_offsets(engine, now_ms, fx)
        return fx.result()

    # ------------------------------------------------------------------ loading

    def replay(self, record: Record) -> None:
        """Apply one log record at startup (last record per key wins, tombstones remove).

        A group record with members loads the group Stable, without members Empty; offsets
        without a group record make an Empty offset-only group. Event records are ignored.
        """
        engine = self._engine
        engine.store.apply(record)
        key = record.key
        if isinstance(key, GroupMetadataKey):
            group_id = key.group
            persisted = engine.store.groups.get(group_id)
            if persisted is not None:
                engine.groups[group_id] = ClassicGroup.from_record(group_id, persisted)
            elif engine.store.group_offsets(group_id):
                engine.groups[group_id] = ClassicGroup(group_id, EMPTY, None)
            else:
                engine.groups.pop(group_id, None)
        elif isinstance(key, OffsetCommitKey):
            group_id = key.group
            has_offsets = bool(engine.store.group_offsets(group_id))
            if group_id not in engine.groups:
                if has_offsets:
                    engine.groups[group_id] = ClassicGroup(group_id, EMPTY, None)
            elif not has_offsets and group_id not in engine.store.groups:
                del engine.groups[group_id]

    def on_loaded(self, now_ms: int) -> Result:
        """After replay: arm every member's session timer, rebalance over-capacity groups and
        start the offset-retention scan."""
        engine = self._engine
        fx = engine.effects()
        max_size = engine.config.group_max_size
        for group in list(engine.groups.values()):
            for member in group.members.values():
                engine.reschedule_heartbeat(member, now_ms, fx)
            if group.size > max_size:
                engine.prepare_rebalance(group, now_ms, "over capacity on load", fx)
        schedule_retention_scan(engine, now_ms, fx)
        return fx.result()

    # ------------------------------------------------------------------ read-only views

    def group_ids(self) -> list[str]:
        """Ids of the groups currently known (any state)."""
        return list(self._engine.groups)

    def describe(self, group_id: str) -> GroupView | None:
        """A snapshot of the group's live state, or None if unknown."""
        group = self._engine.groups.get(group_id)
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
        return dict(self._engine.store.group_offsets(group_id))

    def hard_state(self) -> HardStateSnapshot:
        """A comparable snapshot of persisted state (offsets + last group record per group)."""
        return self._engine.store.snapshot()
