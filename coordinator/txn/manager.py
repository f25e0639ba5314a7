"""The metadata cache of the transaction coordinator (Kafka's ``TransactionStateManager``).

Metadata lives per ``__transaction_state`` partition, each owned at a *coordinator epoch*
(the partition's leader epoch in Kafka). A partition is first *loading* (its records are
replayed into a fresh map; requests for its ids answer COORDINATOR_LOAD_IN_PROGRESS), then
owned; ids of a partition that is neither answer NOT_COORDINATOR. With one broker every
partition is owned at epoch 0 once the log is replayed; with several, partitions load and
unload as they move.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from coordinator.txn.config import TxnConfig
from coordinator.txn.log import TransactionLogRecord, metadata_from_value
from coordinator.txn.messages import TxnResponse
from coordinator.txn.placement import partition_for
from coordinator.txn.state import TopicPartition, TransactionMetadata, TxnTransitMetadata
from coordinator.txn.transaction_state import TransactionState
from wire.constants import ErrorCode

__all__ = ["PendingCompletion", "TransactionStateManager", "TxnIdAndEpoch"]


@dataclass(slots=True)
class _PartitionCache:
    coordinator_epoch: int
    metadata: dict[str, TransactionMetadata] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class TxnIdAndEpoch:
    """A transaction found timed out: the id, and its producer id and epoch at that moment."""

    transactional_id: str
    producer_id: int
    producer_epoch: int


@dataclass(frozen=True, slots=True)
class PendingCompletion:
    """A prepared commit or abort waiting for its markers, the completion to write then,
    and the partitions it was prepared with."""

    coordinator_epoch: int
    metadata: TransactionMetadata
    transit: TxnTransitMetadata
    partitions: frozenset[TopicPartition] = frozenset()


class TransactionStateManager:
    """Per-partition metadata maps, loading state and the periodic scans."""

    __slots__ = ("_caches", "_config", "_loading")

    def __init__(self, config: TxnConfig) -> None:
        self._config = config
        self._caches: dict[int, _PartitionCache] = {}
        self._loading: dict[int, _PartitionCache] = {}

    @property
    def config(self) -> TxnConfig:
        """The configuration in force."""
        return self._config

    def partition_for(self, transactional_id: str) -> int:
        """The ``__transaction_state`` partition of ``transactional_id``."""
        return partition_for(transactional_id, self._config.transaction_state_log_num_partitions)

    def validate_transaction_timeout_ms(self, txn_timeout_ms: int) -> bool:
        """0 < timeout <= transaction.max.timeout.ms."""
        return 0 < txn_timeout_ms <= self._config.transaction_max_timeout_ms

    # ------------------------------------------------------------------ lookups

    def get_transaction_state(
        self, transactional_id: str
    ) -> ErrorCode | tuple[int, TransactionMetadata | None]:
        """(coordinator epoch, metadata or None), or the error a request answers with."""
        partition = self.partition_for(transactional_id)
        if partition in self._loading:
            return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        cache = self._caches.get(partition)
        if cache is None:
            return ErrorCode.NOT_COORDINATOR
        return cache.coordinator_epoch, cache.metadata.get(transactional_id)

    def put_transaction_state_if_not_exists(
        self, metadata: TransactionMetadata
    ) -> ErrorCode | tuple[int, TransactionMetadata]:
        """Cache ``metadata`` unless its id is already there; the cached one either way."""
        partition = self.partition_for(metadata.transactional_id)
        if partition in self._loading:
            return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        cache = self._caches.get(partition)
        if cache is None:
            return ErrorCode.NOT_COORDINATOR
        cached = cache.metadata.setdefault(metadata.transactional_id, metadata)
        return cache.coordinator_epoch, cached

    def remove(self, transactional_id: str) -> None:
        """Drop an expired id from its partition's map."""
        cache = self._caches.get(self.partition_for(transactional_id))
        if cache is not None:
            cache.metadata.pop(transactional_id, None)

    def all_metadata(self) -> list[tuple[int, TransactionMetadata]]:
        """Every cached id with its partition's coordinator epoch, in a stable order."""
        return [
            (cache.coordinator_epoch, cache.metadata[txn_id])
            for _, cache in sorted(self._caches.items())
            for txn_id in sorted(cache.metadata)
        ]

    def coordinator_epoch_of(self, transactional_id: str) -> int | None:
        """The coordinator epoch of the partition owning the id, if owned."""
        cache = self._caches.get(self.partition_for(transactional_id))
        return None if cache is None else cache.coordinator_epoch

    # ------------------------------------------------------------------ scans

    def timed_out_transactions(self, now_ms: int) -> list[TxnIdAndEpoch]:
        """Ongoing transactions past their timeout and not already being changed."""
        return [
            TxnIdAndEpoch(m.transactional_id, m.producer_id, m.producer_epoch)
            for _, m in self.all_metadata()
            if not m.pending_transition_in_progress
            and m.state == TransactionState.ONGOING
            and m.txn_start_timestamp + m.txn_timeout_ms < now_ms
        ]

    def expirable_transactional_ids(self, now_ms: int) -> list[TransactionMetadata]:
        """Idle ids (Empty/Complete*, nothing pending) not updated for
        transactional.id.expiration.ms."""
        horizon = now_ms - self._config.transactional_id_expiration_ms
        return [
            m
            for _, m in self.all_metadata()
            if m.pending_state is None
            and m.state.is_expiration_allowed
            and m.txn_last_update_timestamp <= horizon
        ]

    def list_transaction_states(
        self,
        producer_ids: frozenset[int],
        state_names: Sequence[str],
        duration_ms: int,
        now_ms: int,
    ) -> TxnResponse:
        """ListTransactions: filters by producer id, state name and minimum running time."""
        if self._loading:
            return {"throttle_time_ms": 0, "error_code": ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
                    "unknown_state_filters": [], "transaction_states": []}
        states: set[TransactionState] = set()
        unknown: list[str] = []
        for name in state_names:
            state = TransactionState.from_name(name)
            if state is None:
                unknown.append(name)
            else:
                states.add(state)
        listed = []
        for _, m in self.all_metadata():
            if m.state == TransactionState.DEAD:
                continue  # being expired
            if producer_ids and m.producer_id not in producer_ids:
                continue
            if state_names and m.state not in states:
                continue
            if duration_ms >= 0 and now_ms - m.txn_start_timestamp <= duration_ms:
                continue
            listed.append({"transactional_id": m.transactional_id, "producer_id": m.producer_id,
                           "transaction_state": m.state.kafka_name})
        return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE,
                "unknown_state_filters": unknown, "transaction_states": listed}

    # ------------------------------------------------------------------ loading

    def loading_epochs(self) -> dict[int, int]:
        """Partitions whose records are being replayed, with their coordinator epochs."""
        return {p: cache.coordinator_epoch for p, cache in self._loading.items()}

    @property
    def owned_partitions(self) -> dict[int, int]:
        """Loaded partitions and their coordinator epochs."""
        return {p: cache.coordinator_epoch for p, cache in self._caches.items()}

    def begin_loading(self, partition: int, coordinator_epoch: int) -> None:
        """Start (re)loading ``partition``: its ids answer COORDINATOR_LOAD_IN_PROGRESS."""
        self._caches.pop(partition, None)
        self._loading[partition] = _PartitionCache(coordinator_epoch)

    def replay(self, record: TransactionLogRecord) -> None:
        """Apply one record of a loading partition (last record per id wins)."""
        txn_id = record.key.transactional_id
        partition = self.partition_for(txn_id)
        cache = self._loading.get(partition)
        if cache is None:
            raise ValueError(f"partition {partition} of {txn_id!r} is not loading")
        if record.value is None:
            cache.metadata.pop(txn_id, None)
        else:
            cache.metadata[txn_id] = metadata_from_value(txn_id, record.value)

    def complete_loading(self, partition: int, coordinator_epoch: int) -> list[TransactionMetadata]:
        """The partition is loaded: own it; the transactions caught in PrepareCommit or
        PrepareAbort are returned (their markers must be written again)."""
        cache = self._loading.get(partition)
        if cache is None or cache.coordinator_epoch != coordinator_epoch:
            return []
        del self._loading[partition]
        self._caches[partition] = cache
        prepared = (TransactionState.PREPARE_COMMIT, TransactionState.PREPARE_ABORT)
        return [
            cache.metadata[txn_id]
            for txn_id in sorted(cache.metadata)
            if cache.metadata[txn_id].state in prepared
        ]

    def remove_partition(self, partition: int, coordinator_epoch: int | None = None) -> None:
        """Stop owning ``partition``; a load in progress stops only if it is at
        ``coordinator_epoch`` (or when no epoch is given), as in Kafka."""
        loading = self._loading.get(partition)
        if loading is not None and coordinator_epoch in (None, loading.coordinator_epoch):
            del self._loading[partition]
        self._caches.pop(partition, None)
