"""The transaction coordinator's settings: the typed frozen view of its keys.

Sources: ``TransactionStateManagerConfig`` / ``TransactionLogConfig`` (transaction-coordinator
module) and ``GroupCoordinatorConfig`` (``offsets.topic.num.partitions``). Names, defaults and
bounds are the keys' (``coordinator.configs.broker_keys``; a field is its key with
underscores for dots).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from coordinator.configs.broker_keys import SERVER_PROPERTIES
from coordinator.configs.config_key import KAFKA_DEFAULT, field_key, kafka_defaults
from wire.constants import MAX_TRANSACTION_VERSION

__all__ = ["MAX_TRANSACTION_VERSION", "TxnConfig"]


@dataclass(frozen=True, slots=True)
@kafka_defaults(SERVER_PROPERTIES)
class TxnConfig:
    """Defaults are Kafka's; each field but ``broker_id`` (``node.id``) is a config key."""

    transaction_max_timeout_ms: int = KAFKA_DEFAULT
    transactional_id_expiration_ms: int = KAFKA_DEFAULT
    transaction_abort_timed_out_transaction_cleanup_interval_ms: int = KAFKA_DEFAULT
    transaction_remove_expired_transaction_cleanup_interval_ms: int = KAFKA_DEFAULT
    transaction_state_log_num_partitions: int = KAFKA_DEFAULT
    offsets_topic_num_partitions: int = KAFKA_DEFAULT
    # transaction.version, the finalized TransactionVersion feature level: 0 writes
    # TransactionLogValue v0; 1 and 2 write v1 (flexible, with the previous/next producer
    # ids); 2 (KIP-890 part 2) also bumps the epoch when the coordinator itself aborts (a
    # fence, a timeout) and lets Produce v12+ / TxnOffsetCommit v5+ add partitions
    # implicitly. Kafka 4's default for a new cluster (MetadataVersion 4.0) is 2.
    transaction_version: int = KAFKA_DEFAULT
    broker_id: int = 0

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            name = "node.id" if f.name == "broker_id" else field_key(f.name)
            low, high = (0, None) if f.name == "broker_id" else SERVER_PROPERTIES[name].bounds
            if value < low:
                raise ValueError(f"{name} must be >= {low}")
            if high is not None and value > high:
                raise ValueError(f"{name} must be <= {high} (got {value})")

    @property
    def log_value_version(self) -> int:
        """The TransactionLogValue version written (``transactionLogValueVersion``)."""
        return 1 if self.transaction_version >= 1 else 0

    @property
    def supports_epoch_bump(self) -> bool:
        """Transaction version 2 (``TransactionVersion.supportsEpochBump``)."""
        return self.transaction_version >= 2
