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

from coordinator.core.classic.group import ClassicGroup
from coordinator.core.classic.state import EMPTY
from coordinator.core.consumer.group import ConsumerGroup
from coordinator.core.engine import Engine
from coordinator.core.messages import join_group_error, sync_group_error
from coordinator.core.result import Effects, Result
from coordinator.core.share_group.group import ShareGroup
from coordinator.core.timers import (
    ConsumerSessionTimerKey,
    HeartbeatTimerKey,
    JoinTimerKey,
    ShareSessionTimerKey,
    SyncTimerKey,
)
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


def _reload_classic(engine: Engine, group_id: str, now_ms: int, fx: Effects) -> None:
    old = engine.groups.get(group_id)
    if old is None:
        return
    _unload_classic(old, fx)
    value = engine.store.groups.get(group_id)
    if value is not None:
        group = ClassicGroup.from_record(group_id, value)
    elif group_id in engine.store.offsets or any(
        group_id in staged for staged in engine.store.pending_txn.values()
    ):
        group = ClassicGroup(group_id, EMPTY, None)
    else:
        del engine.groups[group_id]  # never persisted: the new coordinator never hears of it
        return
    engine.groups[group_id] = group
    for member in group.members.values():
        engine.reschedule_heartbeat(member, now_ms, fx)


def _reload_consumer(engine: Engine, group_id: str, now_ms: int, fx: Effects) -> None:
    old = engine.consumer_groups.get(group_id)
    if old is None:
        return
    for member_id in old.members:
        fx.cancel(ConsumerSessionTimerKey(group_id, member_id))
    records = engine.store.consumer.get(group_id)
    if not records:
        del engine.consumer_groups[group_id]
        return
    group = ConsumerGroup.from_records(group_id, records.values())
    engine.consumer_groups[group_id] = group
    session_ms = engine.config.group_consumer_session_timeout_ms
    for member_id in group.members:
        fx.schedule(ConsumerSessionTimerKey(group_id, member_id), now_ms + session_ms)


def _reload_share(engine: Engine, group_id: str, now_ms: int, fx: Effects) -> None:
    old = engine.share_groups.get(group_id)
    if old is None:
        return
    for member_id in old.members:
        fx.cancel(ShareSessionTimerKey(group_id, member_id))
    records = engine.store.share.get(group_id)
    if not records:
        del engine.share_groups[group_id]
        return
    group = engine.share_groups[group_id] = ShareGroup.from_records(group_id, records.values())
    session_ms = engine.config.group_share_session_timeout_ms
    for member_id in group.members:
        fx.schedule(ShareSessionTimerKey(group_id, member_id), now_ms + session_ms)


def reload_groups(engine: Engine, group_ids: Iterable[str], now_ms: int) -> Result:
    """Unload ``group_ids`` and load them again from the store (see the module docstring)."""
    fx = engine.effects()
    for group_id in group_ids:
        _reload_classic(engine, group_id, now_ms, fx)
        _reload_consumer(engine, group_id, now_ms, fx)
        _reload_share(engine, group_id, now_ms, fx)
    return fx.result()
