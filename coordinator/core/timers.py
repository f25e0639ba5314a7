"""Keys of the coordinator's timers (Kafka's CoordinatorTimer keys, as hashable values).

Scheduling a key again replaces its deadline. The runtime calls
``GroupCoordinator.fire_timer(key, now_ms)`` once a deadline has passed; the core checks the
key is still armed for that deadline, so a stale firing is a no-op.

Each key is a NamedTuple whose last field, ``kind``, names its class: keys of different
kinds never compare equal (one timer table holds them all), and hashing and comparing are
the tuple's, in C -- a heartbeat's or commit's key is hashed and compared in every timer
move, where a frozen dataclass's generated ``__hash__`` and ``__eq__`` were Python calls.
"""

from __future__ import annotations

from typing import NamedTuple

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


class HeartbeatTimerKey(NamedTuple):
    """A member's session expiry; also its 5-minute new-member join timeout and, for a
    pending (MEMBER_ID_REQUIRED) member id, its pending expiry: Kafka uses one key for all."""

    group_id: str
    member_id: str
    kind: str = "heartbeat"


class JoinTimerKey(NamedTuple):
    """A group's join phase deadline: the initial rebalance delay or the rebalance timeout."""

    group_id: str
    kind: str = "join"


class SyncTimerKey(NamedTuple):
    """A group's pending-sync deadline (members that do not SyncGroup in time are removed)."""

    group_id: str
    kind: str = "sync"


class RetentionTimerKey(NamedTuple):
    """The periodic offset-expiration scan (offsets.retention.check.interval.ms)."""

    kind: str = "retention"


class ConsumerSessionTimerKey(NamedTuple):
    """A consumer-protocol member's session expiry (Kafka's consumer-group-session-timeout)."""

    group_id: str
    member_id: str
    kind: str = "consumer_session"


class ConsumerRebalanceTimerKey(NamedTuple):
    """A consumer-protocol member's deadline to revoke partitions at ``member_epoch``
    (Kafka's consumer-group-rebalance-timeout)."""

    group_id: str
    member_id: str
    member_epoch: int
    kind: str = "consumer_rebalance"


class ClassicMemberJoinTimerKey(NamedTuple):
    """A classic member of a consumer group told to rejoin must do so within its rebalance
    timeout (Kafka's consumer-group-join-timeout)."""

    group_id: str
    member_id: str
    kind: str = "classic_member_join"


class ClassicMemberSyncTimerKey(NamedTuple):
    """A classic member of a consumer group that joined must send SyncGroup within its
    rebalance timeout (Kafka's consumer-group-sync-timeout)."""

    group_id: str
    member_id: str
    kind: str = "classic_member_sync"


class ShareSessionTimerKey(NamedTuple):
    """A share group member's session expiry (Kafka's share-group-session-timeout)."""

    group_id: str
    member_id: str
    kind: str = "share_session"


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
