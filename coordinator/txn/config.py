"""The transaction coordinator's settings, with Kafka's config names and defaults.

Sources: ``TransactionStateManagerConfig`` / ``TransactionLogConfig`` (transaction-coordinator
module), ``GroupCoordinatorConfig`` (``offsets.topic.num.partitions``) and
``ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE``.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

__all__ = ["KAFKA_CONFIG_NAMES", "PRODUCER_ID_BLOCK_SIZE", "TxnConfig"]

PRODUCER_ID_BLOCK_SIZE = 1000


@dataclass(frozen=True, slots=True)
class TxnConfig:
    """Defaults are Kafka's; ``KAFKA_CONFIG_NAMES`` maps each field to its config name."""

    transaction_max_timeout_ms: int = 900_000
    transactional_id_expiration_ms: int = 604_800_000
    abort_timed_out_transaction_cleanup_interval_ms: int = 10_000
    remove_expired_transactional_id_cleanup_interval_ms: int = 3_600_000
    transaction_state_log_num_partitions: int = 50
    offsets_topic_num_partitions: int = 50
    # transaction.version: 0 writes TransactionLogValue v0; 1 writes v1 (flexible, with
    # the previous/next producer ids). 2 (epoch bump per transaction) is not served.
    transaction_version: int = 1
    broker_id: int = 0
    producer_id_block_size: int = PRODUCER_ID_BLOCK_SIZE

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            low = 0 if f.name in ("transaction_version", "broker_id") else 1
            if value < low:
                raise ValueError(f"{KAFKA_CONFIG_NAMES.get(f.name, f.name)} must be >= {low}")
        if self.transaction_version > 1:
            raise ValueError("transaction.version 2 (KIP-890 part 2) is not supported")


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
