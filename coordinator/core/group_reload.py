"""A coordinator move, for the groups of one ``__consumer_offsets`` partition.

When a partition's leadership moves, Kafka's old coordinator unloads its groups
(``GroupMetadataManager.onUnloaded``: a parked JoinGroup or SyncGroup is answered
NOT_COORDINATOR, timers are cancelled) and the new one loads them from the log
(``onLoaded``): a classic group comes back Stable with the members of its last
GroupMetadata record, or Empty; a consumer or share group comes back from its records; every
member's session is re-armed from the load. In one process the log is the hard state the records
built, so a move is that unload and that load, in one call, against the same store.
Clients see what they would see against Kafka: NOT_COORDINATOR for what was parked, then
their group as the log has it, under the same generation and member epochs.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from coordinator.core.classic.group import ClassicGroup
from coordinator.core.classic.state import EMPTY
from coordinator.core.group_manager import GroupManager
from coordinator.core.group_rebuild import KINDS, GroupKind, arm_sessions, rebuild
from coordinator.core.messages import join_group_error, sync_group_error
from coordinator.core.result import Effects, Result
from coordinator.core.timers import HeartbeatTimerKey, JoinTimerKey, SyncTimerKey
from wire.constants import ErrorCode

__all__ = ["reload_groups"]


def _unload_classic(group: ClassicGroup, fx: Effects) -> None:
    for member in group.members.values():
        if member.join_token is not None:
            fx.reply(member.join_token, join_group_error(ErrorCode.NOT_COORDINATOR,
                                                         member.member_id))
            member.join_token = None
        if member.sync_token is not None:
            fx.reply(member.sync_token, sync_group_error(ErrorCode.NOT_COORDINATOR))
            member.sync_token = None
        fx.cancel(HeartbeatTimerKey(group.group_id, member.member_id))
    for member_id in group.pending_members:
        fx.cancel(HeartbeatTimerKey(group.group_id, member_id))
    fx.cancel(JoinTimerKey(group.group_id))
    fx.cancel(SyncTimerKey(group.group_id))


def _reload_classic(manager: GroupManager, group_id: str, now_ms: int, fx: Effects) -> None:
    old = manager.groups.get(group_id)
    if old is None:
        return
    _unload_classic(old, fx)
    value = manager.store.groups.get(group_id)
    if value is not None:
        group = ClassicGroup.from_record(group_id, value)
    elif manager.store.has_offsets(group_id) or any(
        group_id in staged for staged in manager.store.pending_txn.values()
    ):
        group = ClassicGroup(group_id, EMPTY, None)
    else:
        del manager.groups[group_id]  # never persisted: the new coordinator never hears of it
        return
    manager.groups[group_id] = group
    for member in group.members.values():
        manager.reschedule_heartbeat(member, now_ms, fx)


def _reload_modern(manager: GroupManager, kind: GroupKind[Any], group_id: str, now_ms: int,
                   fx: Effects) -> None:
    """A consumer or share group: rebuilt from its records, every member's session re-armed."""
    old = kind.live(manager).get(group_id)
    if old is None:
        return
    for member_id in old.members:
        fx.cancel(kind.session_key(group_id, member_id))
    group = rebuild(manager, kind, group_id)
    if group is not None:
        arm_sessions(manager, kind, group, now_ms, fx)


def reload_groups(manager: GroupManager, group_ids: Iterable[str], now_ms: int) -> Result:
    """Unload ``group_ids`` and load them again from the store (see the module docstring)."""
    fx = manager.effects()
    for group_id in group_ids:
        _reload_classic(manager, group_id, now_ms, fx)
        for kind in KINDS:
            _reload_modern(manager, kind, group_id, now_ms, fx)
    return fx.result()
