"""The server side of the share shard: the ``SharePartitionManager`` runs in the coordinator
runtime beside the group and transaction shards (one append queue, one timer loop: the
acquisition-lock timer is a runtime timer, so ``MockClock`` drives lock expiry), and this
module gives it what lives outside the sans-I/O core: the broker's settings, the topic
store, a Trio event waking long-polling ShareFetches when records may have become
available, and ``share.auto.offset.reset`` per group.

``ShareRuntime.run`` attaches the shard once the groups are loaded: the share records the
runtime met during replay are replayed into it, and acquired records come back available.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import trio

from coordinator.config import CoordinatorConfig
from coordinator.configs.definitions import GROUP_KEYS
from coordinator.server.runtime import CoordinatorRuntime, ShardHandler
from coordinator.server.waiters import PendingReply, RuntimeClosed
from coordinator.share.manager import (
    ConnectionClosed,
    SharePartitionManager,
    handle_connection_closed,
)
from coordinator.share.sessions import ConnectionId
from coordinator.share.states import SharePartitionConfig
from coordinator.share.timers import ShareLockTimerKey

__all__ = ["DEFAULT_AUTO_OFFSET_RESET", "ShareRuntime", "share_partition_config",
           "start_share_runtime"]

RequestT = TypeVar("RequestT")
#: ``share.auto.offset.reset``'s default (KIP-932).
DEFAULT_AUTO_OFFSET_RESET = str(GROUP_KEYS["share.auto.offset.reset"].default)


def share_partition_config(config: CoordinatorConfig) -> SharePartitionConfig:
    """The ``group.share.*`` settings a share partition obeys."""
    return SharePartitionConfig(
        delivery_count_limit=config.group_share_delivery_count_limit,
        record_lock_duration_ms=config.group_share_record_lock_duration_ms,
        max_record_locks=config.group_share_partition_max_record_locks,
    )


class ShareRuntime:
    """The share shard's server side."""

    def __init__(
        self, topics: Any, groups: CoordinatorRuntime, config: CoordinatorConfig
    ) -> None:
        self.topics = topics
        self.groups = groups
        self.partition_config = share_partition_config(config)
        self.manager = SharePartitionManager(
            lambda _key: self.partition_config,
            max_sessions=config.group_share_max_share_sessions,
            on_change=self._notify,
        )
        self._changed = trio.Event()
        #: Client connections (node id, connection id) that sent a ShareFetch or
        #: ShareAcknowledge: when one closes, its sessions go (``connection_closed``).
        self._share_connections: set[ConnectionId] = set()
        #: A group's ``share.auto.offset.reset`` (tests may replace it).
        self.auto_offset_reset: Callable[[str], str] = self._group_auto_offset_reset

        #: Whether a group reads committed records only (``share.isolation.level``).
        self.read_committed: Callable[[str], bool] = lambda group_id: (
            self.group_config(group_id, "share.isolation.level") == "read_committed")

    def group_config(self, group_id: str, name: str) -> str | None:
        """A group's dynamic config ``name`` (IncrementalAlterConfigs on the GROUP resource,
        where the group coordinator keeps them), if set."""
        configs: Mapping[str, Mapping[str, str]] = (
            getattr(self.groups.coordinator, "group_configs", None) or {})
        return configs.get(group_id, {}).get(name)

    def _group_auto_offset_reset(self, group_id: str) -> str:
        """The group's ``share.auto.offset.reset``, else latest."""
        return self.group_config(group_id, "share.auto.offset.reset") or DEFAULT_AUTO_OFFSET_RESET

    def lock_duration_ms(self, group_id: str) -> int:
        """How long a group's acquisitions lock records: its ``share.record.lock.duration.ms``,
        else the broker's ``group.share.record.lock.duration.ms``."""
        value = self.group_config(group_id, "share.record.lock.duration.ms")
        return self.partition_config.record_lock_duration_ms if value is None else int(value)

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Attach the shard once the groups are loaded, report started."""
        await self.groups.wait_loaded()
        self.groups.coordinator.share_state_deleted = self.manager.forget
        self.groups.attach_share(self.manager, ShareLockTimerKey)
        task_status.started()

    async def call(self, handler: ShardHandler[RequestT], ctx: Any, request: RequestT) -> Any:
        """Run one of the shard's handlers in the runtime; its reply (once its records are
        durable)."""
        return await self.groups.call(handler, ctx, request, self.manager)

    def served(self, connection: ConnectionId) -> None:
        """``connection`` sent a share-session request."""
        self._share_connections.add(connection)

    def connection_closed(self, node_id: int, connection_id: int) -> None:
        """A client connection closed: if it sent share-session requests, the sessions it
        opened go and their members' acquired records are released at once (Kafka's
        ConnectionDisconnectListener), not after their acquisition locks expire. Called
        from the connection's teardown: submitted, not awaited."""
        connection = (node_id, connection_id)
        if connection not in self._share_connections:
            return
        self._share_connections.discard(connection)
        try:
            pending = self.groups.submit(handle_connection_closed, None,  # type: ignore[arg-type]
                                         ConnectionClosed(connection), self.manager)
        except RuntimeClosed:  # the server is stopping: sessions go with it
            return
        if isinstance(pending, PendingReply):
            pending.discard()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    def changed(self) -> trio.Event:
        """Set at the next applied change (records released, acknowledged, expired)."""
        return self._changed


async def start_share_runtime(
    nursery: trio.Nursery, topics: Any, groups: CoordinatorRuntime, config: CoordinatorConfig
) -> ShareRuntime:
    """The share shard, started once the group coordinator has loaded."""
    shares = ShareRuntime(topics, groups, config)
    await nursery.start(shares.run)
    return shares
