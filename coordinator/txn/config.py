"""The transaction coordinator's settings, with Kafka's config names and defaults.

Sources: ``TransactionStateManagerConfig`` / ``TransactionLogConfig`` (transaction-coordinator
module) and ``GroupCoordinatorConfig`` (``offsets.topic.num.partitions``).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from coordinator.txn.placement import (
    DEFAULT_OFFSETS_TOPIC_PARTITIONS,
    DEFAULT_TRANSACTION_STATE_PARTITIONS,
)
from wire.constants import MAX_TRANSACTION_VERSION

__all__ = ["KAFKA_CONFIG_NAMES", "MAX_TRANSACTION_VERSION", "TxnConfig"]


@dataclass(frozen=True, slots=True)
class TxnConfig:
    """Defaults are Kafka's; ``KAFKA_CONFIG_NAMES`` maps each field to its config name."""

    transaction_max_timeout_ms: int = 900_000
    transactional_id_expiration_ms: int = 604_800_000
    abort_timed_out_transaction_cleanup_interval_ms: int = 10_000
    remove_expired_transactional_id_cleanup_interval_ms: int = 3_600_000
    transaction_state_log_num_partitions: int = DEFAULT_TRANSACTION_STATE_PARTITIONS
    offsets_topic_num_partitions: int = DEFAULT_OFFSETS_TOPIC_PARTITIONS
    # transaction.version, the finalized TransactionVersion feature level: 0 writes
    # TransactionLogValue v0; 1 and 2 write v1 (flexible, with the previous/next producer
    # ids); 2 (KIP-890 part 2) also bumps the epoch when the coordinator itself aborts (a
    # fence, a timeout) and lets Produce v12+ / TxnOffsetCommit v5+ add partitions
    # implicitly. Kafka 4's default for a new cluster (MetadataVersion 4.0) is 2.
    transaction_version: int = 2
    broker_id: int = 0

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            low = 0 if f.name in ("transaction_version", "broker_id") else 1
            if value < low:
                raise ValueError(f"{KAFKA_CONFIG_NAMES.get(f.name, f.name)} must be >= {low}")
        if self.transaction_version > MAX_TRANSACTION_VERSION:
            raise ValueError(
                f"transaction.version must be <= {MAX_TRANSACTION_VERSION} "
                f"(got {self.transaction_version})"
            )

    @property
    def log_value_version(self) -> int:
        """The TransactionLogValue version written (``transactionLogValueVersion``)."""
        return 1 if self.transaction_version >= 1 else 0

    @property
    def supports_epoch_bump(self) -> bool:
        """Transaction version 2 (``TransactionVersion.supportsEpochBump``)."""
        return self.transaction_version >= 2


KAFKA_CONFIG_NAMES = {
    "transaction_max_timeout_ms": "transaction.max.timeout.ms",
    "transactional_id_expiration_ms": "transactional.id.expiration.ms",
    "abort_timed_out_transaction_cleanup_interval_ms": (
        "transaction.abort.timed.out.transaction.cleanup.interval.ms"
    ),
    "remove_expired_transactional_id_cleanup_interval_ms": (
        "transaction.remove.expired.transaction.cleanup.interval.ms"
    ),
    "transaction_state_log_num_partitions": "transaction.state.log.num.partitions",
    "offsets_topic_num_partitions": "offsets.topic.num.partitions",
    "transaction_version": "transaction.version",
    "broker_id": "node.id",
}
