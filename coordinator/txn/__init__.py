"""Kafka transactions as pure, sans-I/O code: the transaction coordinator (state machine,
log records, loading, timeouts), placement of ids on internal-topic partitions, and a
partition's producer state (idempotence, ongoing transactions, last stable offset,
aborted-transaction index).

Only the standard library and ``wire.constants``: no I/O, no clock, no other coordinator
module. The runtime feeds requests with ``now_ms`` and carries out the returned records,
replies, timers and markers.
"""

from coordinator.txn.config import KAFKA_CONFIG_NAMES, TxnConfig
from coordinator.txn.coordinator import TransactionCoordinator
from coordinator.txn.log import (
    ProducerIdsRecord,
    TransactionLogKey,
    TransactionLogRecord,
    TransactionLogValue,
    TxnPartitions,
    TxnRecord,
)
from coordinator.txn.placement import (
    OFFSETS_TOPIC,
    TRANSACTION_STATE_TOPIC,
    java_string_hash,
    kafka_abs,
    partition_for,
)
from coordinator.txn.result import (
    ABORT_TIMED_OUT_TRANSACTIONS,
    REMOVE_EXPIRED_TRANSACTIONAL_IDS,
    CancelTimer,
    Reply,
    ReplyToken,
    ScheduleTimer,
    TxnMarker,
    TxnResult,
    TxnTimerKey,
)
from coordinator.txn.state import (
    TopicPartition,
    TransactionMetadata,
    TransactionResult,
    TransactionState,
)

__all__ = [
    "ABORT_TIMED_OUT_TRANSACTIONS",
    "KAFKA_CONFIG_NAMES",
    "OFFSETS_TOPIC",
    "REMOVE_EXPIRED_TRANSACTIONAL_IDS",
    "TRANSACTION_STATE_TOPIC",
    "CancelTimer",
    "ProducerIdsRecord",
    "Reply",
    "ReplyToken",
    "ScheduleTimer",
    "TopicPartition",
    "TransactionCoordinator",
    "TransactionLogKey",
    "TransactionLogRecord",
    "TransactionLogValue",
    "TransactionMetadata",
    "TransactionResult",
    "TransactionState",
    "TxnConfig",
    "TxnMarker",
    "TxnPartitions",
    "TxnRecord",
    "TxnResult",
    "TxnTimerKey",
    "java_string_hash",
    "kafka_abs",
    "partition_for",
]
