"""Typed requests and responses of the transaction coordinator's APIs.

Only the fields the coordinator decides on; the server's handlers map them from and to the
wire (``version`` is the request's API version: it selects PRODUCER_FENCED or the older
INVALID_PRODUCER_EPOCH, as ``KafkaApis`` does). AddPartitionsToTxn is one transaction per
call: v0-3 carry one, v4+ (broker-to-broker, KIP-890) batch several and the handler calls
once per transaction, with ``verify_only`` from the request.
"""

from __future__ import annotations

from dataclasses import dataclass

from coordinator.txn.state import (
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    TopicPartition,
    TransactionResult,
)

__all__ = [
    "AddOffsetsToTxnRequest",
    "AddOffsetsToTxnResponse",
    "AddPartitionsToTxnRequest",
    "AddPartitionsToTxnResponse",
    "DescribeTransactionsRequest",
    "DescribeTransactionsResponse",
    "EndTxnRequest",
    "EndTxnResponse",
    "InitProducerIdRequest",
    "InitProducerIdResponse",
    "ListTransactionsRequest",
    "ListTransactionsResponse",
    "TransactionDescription",
    "TransactionListing",
    "TxnMarker",
    "TxnResponse",
]


@dataclass(frozen=True, slots=True)
class InitProducerIdRequest:
    """InitProducerId (22): ``producer_id`` / ``producer_epoch`` are v3+ (KIP-360)."""

    transactional_id: str | None
    transaction_timeout_ms: int
    producer_id: int = NO_PRODUCER_ID
    producer_epoch: int = NO_PRODUCER_EPOCH
    version: int = 4


@dataclass(frozen=True, slots=True)
class InitProducerIdResponse:
    error_code: int
    producer_id: int = NO_PRODUCER_ID
    producer_epoch: int = NO_PRODUCER_EPOCH


@dataclass(frozen=True, slots=True)
class AddPartitionsToTxnRequest:
    """AddPartitionsToTxn (24) for one transaction."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    partitions: tuple[TopicPartition, ...]
    version: int = 3
    verify_only: bool = False


@dataclass(frozen=True, slots=True)
class AddPartitionsToTxnResponse:
    """One error per requested partition, in request order."""

    results: tuple[tuple[TopicPartition, int], ...]

    @property
    def errors(self) -> dict[TopicPartition, int]:
        """The error of each partition."""
        return dict(self.results)


@dataclass(frozen=True, slots=True)
class AddOffsetsToTxnRequest:
    """AddOffsetsToTxn (25): adds the group's ``__consumer_offsets`` partition."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    group_id: str
    version: int = 3


@dataclass(frozen=True, slots=True)
class AddOffsetsToTxnResponse:
    error_code: int


@dataclass(frozen=True, slots=True)
class EndTxnRequest:
    """EndTxn (26): ``committed`` True commits, False aborts."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    committed: bool
    version: int = 3


@dataclass(frozen=True, slots=True)
class EndTxnResponse:
    """``producer_id`` / ``producer_epoch`` are on the wire from v5 only."""

    error_code: int
    producer_id: int = NO_PRODUCER_ID
    producer_epoch: int = NO_PRODUCER_EPOCH


@dataclass(frozen=True, slots=True)
class DescribeTransactionsRequest:
    """DescribeTransactions (65)."""

    transactional_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class TransactionDescription:
    """One ``TransactionStates`` entry of DescribeTransactions."""

    error_code: int
    transactional_id: str
    transaction_state: str = ""
    transaction_timeout_ms: int = 0
    transaction_start_time_ms: int = 0
    producer_id: int = 0
    producer_epoch: int = 0
    topics: tuple[tuple[str, tuple[int, ...]], ...] = ()


@dataclass(frozen=True, slots=True)
class DescribeTransactionsResponse:
    transaction_states: tuple[TransactionDescription, ...]


@dataclass(frozen=True, slots=True)
class ListTransactionsRequest:
    """ListTransactions (66); ``duration_filter`` is v1+ (-1: no filter)."""

    state_filters: tuple[str, ...] = ()
    producer_id_filters: tuple[int, ...] = ()
    duration_filter: int = -1


@dataclass(frozen=True, slots=True)
class TransactionListing:
    transactional_id: str
    producer_id: int
    transaction_state: str


@dataclass(frozen=True, slots=True)
class ListTransactionsResponse:
    error_code: int
    unknown_state_filters: tuple[str, ...] = ()
    transaction_states: tuple[TransactionListing, ...] = ()


TxnResponse = (
    InitProducerIdResponse
    | AddPartitionsToTxnResponse
    | AddOffsetsToTxnResponse
    | EndTxnResponse
    | DescribeTransactionsResponse
    | ListTransactionsResponse
)


@dataclass(frozen=True, slots=True)
class TxnMarker:
    """Write a ``result`` control batch for ``producer_id``/``producer_epoch`` to each partition
    (Kafka's ``TxnMarkerEntry`` of WriteTxnMarkers), for ``transactional_id``."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    coordinator_epoch: int
    result: TransactionResult
    partitions: tuple[TopicPartition, ...]
