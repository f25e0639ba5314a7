"""The share coordinator's shard: every share partition of this coordinator, live, beside the
record log they are rebuilt from (Kafka's ``ShareCoordinatorShard`` and the broker's
``SharePartitionManager`` cache, without the RPC between them).

The runtime's side of persist-then-apply is: append ``change.record`` (or the record of
:meth:`ShareCoordinatorShard.initialize`), then call :meth:`append_done` /
:meth:`initialized`; on a failed append, :meth:`append_failed`. Loading is
:meth:`replay` of every record in log order, then :meth:`load`.
"""

from __future__ import annotations

from collections.abc import Callable

from storage.records import Record

from .durable import SharePartitionKey, ShareStateStore
from .partition import SharePartition, ShareStateChange
from .states import SharePartitionConfig

__all__ = ["ShareCoordinatorShard"]


class ShareCoordinatorShard:
    """Live share partitions and their replayed record log."""

    __slots__ = ("_config_of", "partitions", "store")

    def __init__(
        self, config_of: Callable[[SharePartitionKey], SharePartitionConfig] | None = None
    ) -> None:
        self.store = ShareStateStore()
        self.partitions: dict[SharePartitionKey, SharePartition] = {}
        self._config_of = config_of or (lambda key: SharePartitionConfig())

    def config_of(self, key: SharePartitionKey) -> SharePartitionConfig:
        """The settings share partition ``key`` obeys."""
        return self._config_of(key)

    def replay(self, record: Record) -> bool:
        """Apply one record read back from the log (False: not a share record)."""
        return self.store.replay(record)

    def load(self) -> None:
        """Build the live partitions from the replayed records (after a start or a move):
        acquired records come back available."""
        self.partitions = {
            key: SharePartition.from_log(key, log, self._config_of(key))
            for key, log in self.store.partitions.items()
        }

    def initialize(self, key: SharePartitionKey, start_offset: int, now_ms: int) -> Record:
        """The first record of a share partition with no state (its start offset from
        ``share.auto.offset.reset``); the partition exists once it is appended."""
        if key in self.store.partitions:
            raise ValueError(f"share partition {key} already has state")
        return SharePartition.initial_record(key, start_offset, now_ms, self._config_of(key))

    def initialized(self, key: SharePartitionKey, record: Record) -> SharePartition:
        """The initial record of ``key`` is in the log: the partition is live."""
        self.store.replay(record)
        log = self.store.partitions[key]
        partition = self.partitions[key] = SharePartition.from_log(key, log, self._config_of(key))
        return partition

    def append_done(self, key: SharePartitionKey, change: ShareStateChange) -> None:
        """``change``'s record is in the log: replay it and apply it."""
        self.store.replay(change.record)
        self.partitions[key].append_done(change)

    def append_failed(self, key: SharePartitionKey, change: ShareStateChange) -> None:
        """``change``'s append failed."""
        self.partitions[key].append_failed(change)

    def expire_locks(self, now_ms: int) -> list[tuple[SharePartitionKey, ShareStateChange]]:
        """Every partition's lock expiries due at ``now_ms``, as changes to persist."""
        found = []
        for key, partition in self.partitions.items():
            change = partition.expire_locks(now_ms)
            if change is not None:
                found.append((key, change))
        return found

    def next_lock_deadline(self) -> int | None:
        """The earliest acquisition lock deadline over all partitions (the timer to arm)."""
        deadlines = [
            d for p in self.partitions.values() if (d := p.next_lock_deadline()) is not None
        ]
        return min(deadlines, default=None)
