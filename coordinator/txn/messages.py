"""The transaction coordinator's messages: its API handlers read the decoded wire request
(``body["transactional_id"]``, the version from the request context) and answer with the
dict the wire encodes, as the group core does; and ``TxnMarker``, the WriteTxnMarkers entry a
Result asks the runtime to write.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from coordinator.txn.state import TopicPartition
from coordinator.txn.transaction_state import TransactionResult

__all__ = ["TxnMarker", "TxnRequest", "TxnResponse"]

TxnRequest = Mapping[str, Any]
"""A decoded transaction API request body (InitProducerId, AddPartitionsToTxn, ...)."""

TxnResponse = dict[str, Any]
"""A transaction API answer, as the wire encodes it."""


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
