"""Keys of the coordinator's timers (Kafka's CoordinatorTimer keys, as hashable values).

Scheduling a key again replaces its deadline. The runtime calls
``GroupCoordinator.fire_timer(key, now_ms)`` once a deadline has passed; the core checks the
key is still armed for that deadline, so a stale firing is a no-op.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "NEW_MEMBER_JOIN_TIMEOUT_MS",
    "ClassicMemberJoinTimerKey",
    "ClassicMemberSyncTimerKey",
    "ConsumerRebalanceTimerKey",
    "ConsumerSessionTimerKey",
    "HeartbeatTimerKey",
    "JoinTimerKey",
    "RetentionTimerKey",
    "ShareSessionTimerKey",
    "SyncTimerKey",
    "TimerKey",
]

# GroupCoordinator.NewMemberJoinTimeoutMs: a brand-new member parked in JoinGroup expires after
# 5 minutes so defunct retrying clients do not pile up (KAFKA-9752).
NEW_MEMBER_JOIN_TIMEOUT_MS = 5 * 60 * 1000


@dataclass(frozen=True, slots=True)
class HeartbeatTimerKey:
    """A member's session expiry; also its 5-minute new-member join timeout and, for a
    pending (MEMBER_ID_REQUIRED) member id, its pending expiry: Kafka uses one key for all."""

    group_id: str
    member_id: str


@dataclass(frozen=True, slots=True)
class JoinTimerKey:
    """A group's join phase deadline: the initial rebalance delay or the rebalance timeout."""

    group_id: str


@dataclass(frozen=True, slots=True)
class SyncTimerKey:
    """A group's pending-sync deadline (members that do not SyncGroup in time are removed)."""

    group_id: str


@dataclass(frozen=True, slots=True)
class RetentionTimerKey:
    """The periodic offset-expiration scan (offsets.retention.check.interval.ms)."""


@dataclass(frozen=True, slots=True)
class ConsumerSessionTimerKey:
    """A consumer-protocol member's session expiry (Kafka's consumer-group-session-timeout)."""

    group_id: str
    member_id: str


@dataclass(frozen=True, slots=True)
class ConsumerRebalanceTimerKey:
    """A consumer-protocol member's deadline to revoke partitions at ``member_epoch``
    (Kafka's consumer-group-rebalance-timeout)."""

    group_id: str
    member_id: str
    member_epoch: int


@dataclass(frozen=True, slots=True)
class ClassicMemberJoinTimerKey:
    """A classic member of a consumer group told to rejoin must do so within its rebalance
    timeout (Kafka's consumer-group-join-timeout)."""

    group_id: str
    member_id: str


@dataclass(frozen=True, slots=True)
class ClassicMemberSyncTimerKey:
    """A classic member of a consumer group that joined must send SyncGroup within its
    rebalance timeout (Kafka's consumer-group-sync-timeout)."""

    group_id: str
    member_id: str


@dataclass(frozen=True, slots=True)
class ShareSessionTimerKey:
    """A share group member's session expiry (Kafka's share-group-session-timeout)."""

    group_id: str
    member_id: str


TimerKey = (
    HeartbeatTimerKey
    | JoinTimerKey
    | SyncTimerKey
    | RetentionTimerKey
    | ConsumerSessionTimerKey
    | ConsumerRebalanceTimerKey
    | ClassicMemberJoinTimerKey
    | ClassicMemberSyncTimerKey
    | ShareSessionTimerKey
)
