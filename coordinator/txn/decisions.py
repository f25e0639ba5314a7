"""The transaction coordinator's per-request decisions, as pure functions of the metadata.

Each takes what ``TransactionStateManager.get_transaction_state`` found (an error code, or
the coordinator epoch and the metadata or None) and returns the answer, or the transition
the coordinator must write. ``TransactionCoordinator`` strings them together.
"""

from __future__ import annotations

from collections.abc import Callable

from coordinator.txn.messages import TxnMarker, TxnResponse
from coordinator.txn.state import (
    SHORT_MAX,
    IllegalTransitionError,
    TopicPartition,
    TransactionMetadata,
    TxnTransitMetadata,
    is_epoch_exhausted,
)
from coordinator.txn.transaction_state import TransactionResult, TransactionState
from wire.constants import NO_PRODUCER_EPOCH, ErrorCode

__all__ = [
    "Found",
    "check_add_partitions",
    "check_end_txn",
    "describe",
    "marker_for",
    "old_fenced",
    "prepare_init_producer_id",
    "verify_partitions",
]

_S = TransactionState
_E = ErrorCode
_PREPARED = (_S.PREPARE_COMMIT, _S.PREPARE_ABORT)

Found = ErrorCode | tuple[int, TransactionMetadata | None]
"""What a metadata lookup gives: an error, or (coordinator epoch, metadata or None)."""


def old_fenced(error: ErrorCode, version: int, first_version_knowing_fenced: int) -> ErrorCode:
    """Clients older than PRODUCER_FENCED's introduction get INVALID_PRODUCER_EPOCH
    (InitProducerId < v4; AddPartitionsToTxn, AddOffsetsToTxn, EndTxn < v2)."""
    if error == _E.PRODUCER_FENCED and version < first_version_knowing_fenced:
        return _E.INVALID_PRODUCER_EPOCH
    return error


def prepare_init_producer_id(
    metadata: TransactionMetadata,
    timeout: int,
    expected_producer_id: int,
    expected_epoch: int | None,
    now_ms: int,
    new_producer_id: Callable[[], int],
) -> ErrorCode | TxnTransitMetadata:
    """InitProducerId for an existing (or just created) transactional id: the transition to
    write, or the error. A PrepareEpochFence transit means "abort the open transaction and
    answer CONCURRENT_TRANSACTIONS"."""
    if metadata.pending_transition_in_progress:
        return _E.CONCURRENT_TRANSACTIONS
    if expected_epoch is not None and not (
        # Just created (recovering from UNKNOWN_PRODUCER_ID), the current producer id,
        # or the previous one at an exhausted epoch (a retry of a rotation).
        metadata.producer_epoch == NO_PRODUCER_EPOCH
        or expected_producer_id == metadata.producer_id
        or (
            expected_producer_id == metadata.prev_producer_id and is_epoch_exhausted(expected_epoch)
        )
    ):
        return _E.PRODUCER_FENCED
    state = metadata.state
    if state in _PREPARED:
        return _E.CONCURRENT_TRANSACTIONS
    if state in (_S.COMPLETE_ABORT, _S.COMPLETE_COMMIT, _S.EMPTY):
        if metadata.is_producer_epoch_exhausted and expected_epoch in (
            None,
            metadata.producer_epoch,
        ):
            return metadata.prepare_producer_id_rotation(
                new_producer_id(), timeout, now_ms, expected_epoch is not None
            )
        transit = metadata.prepare_increment_producer_epoch(timeout, expected_epoch, now_ms)
        return _E.PRODUCER_FENCED if transit is None else transit
    if state == _S.ONGOING:
        # The bumped epoch is never returned: the client retries after the abort and bumps
        # again (rotating the producer id if this fence exhausted the epochs).
        return metadata.prepare_fence_producer_epoch()
    raise IllegalTransitionError(f"{metadata.transactional_id} found in state {state.name}")


def check_end_txn(
    metadata: TransactionMetadata, producer_id: int, producer_epoch: int, from_client: bool
) -> ErrorCode:
    """EndTxn's producer checks (``endTransaction``): INVALID_PRODUCER_ID_MAPPING,
    PRODUCER_FENCED or CONCURRENT_TRANSACTIONS, else NONE.

    Metadata last written by a transaction-version-2 end has the epoch already bumped, so
    a prepared or completed transaction is matched by the request's epoch + 1 (a retry),
    or after a rollover by the previous producer id at epoch 32766; the same epoch there
    is the next EndTxn of a producer that was never told the new one: fenced. Otherwise
    a client must present the current epoch, and the coordinator's own abort the epoch it
    fences with (which may be ahead)."""
    fencing = metadata.pending_state == _S.PREPARE_EPOCH_FENCE
    version2 = not fencing and metadata.supports_epoch_bump
    retry_on_overflow = (
        version2
        and metadata.prev_producer_id == producer_id
        and producer_epoch == SHORT_MAX - 1
        and metadata.producer_epoch == 0
    )
    retry_on_epoch_bump = version2 and metadata.producer_epoch == producer_epoch + 1
    if version2:
        if metadata.state in _PREPARED:
            valid = retry_on_epoch_bump
        elif metadata.state in (_S.COMPLETE_COMMIT, _S.COMPLETE_ABORT):
            valid = retry_on_epoch_bump or retry_on_overflow
        else:
            valid = producer_epoch == metadata.producer_epoch
    else:
        valid = (
            not from_client or producer_epoch == metadata.producer_epoch
        ) and producer_epoch >= metadata.producer_epoch
    if metadata.producer_id != producer_id and not retry_on_overflow:
        return _E.INVALID_PRODUCER_ID_MAPPING
    if not valid:
        return _E.PRODUCER_FENCED
    if metadata.pending_transition_in_progress and not fencing:
        return _E.CONCURRENT_TRANSACTIONS
    return _E.NONE


def check_add_partitions(
    found: Found, producer_id: int, producer_epoch: int, partitions: set[TopicPartition]
) -> ErrorCode | TransactionMetadata:
    """AddPartitionsToTxn / AddOffsetsToTxn: the error to answer (NONE when the partitions
    are already in the open transaction), or the metadata to add them to."""
    if isinstance(found, ErrorCode):
        return found
    metadata = found[1]
    if metadata is None or metadata.producer_id != producer_id:
        return _E.INVALID_PRODUCER_ID_MAPPING
    if metadata.producer_epoch != producer_epoch:
        return _E.PRODUCER_FENCED
    if metadata.pending_transition_in_progress or metadata.state in _PREPARED:
        return _E.CONCURRENT_TRANSACTIONS
    if metadata.state == _S.ONGOING and partitions <= metadata.topic_partitions:
        return _E.NONE
    return metadata


def verify_partitions(
    found: Found, txn_id: str, producer_id: int, producer_epoch: int,
    partitions: tuple[TopicPartition, ...],
) -> dict[TopicPartition, int]:
    """KIP-890 part 1 (AddPartitionsToTxn v4+ ``VerifyOnly``): is each partition in the open
    transaction? TRANSACTION_ABORTABLE when not; a pending state does not matter."""

    def every(code: ErrorCode) -> dict[TopicPartition, int]:
        return dict.fromkeys(partitions, code)

    if not txn_id:
        return every(_E.INVALID_REQUEST)
    if isinstance(found, ErrorCode):
        return every(found)
    metadata = found[1]
    if metadata is None or metadata.producer_id != producer_id:
        return every(_E.INVALID_PRODUCER_ID_MAPPING)
    if metadata.producer_epoch != producer_epoch:
        return every(_E.PRODUCER_FENCED)
    if metadata.state in _PREPARED:
        return every(_E.CONCURRENT_TRANSACTIONS)
    return {
        tp: _E.NONE if tp in metadata.topic_partitions else _E.TRANSACTION_ABORTABLE
        for tp in partitions
    }


def describe(txn_id: str, found: Found) -> TxnResponse:
    """One DescribeTransactions ``TransactionStates`` entry."""
    if not txn_id:
        return {"error_code": _E.INVALID_REQUEST, "transactional_id": txn_id}
    if isinstance(found, ErrorCode):
        return {"error_code": found, "transactional_id": txn_id}
    m = found[1]
    if m is None or m.state == _S.DEAD:
        return {"error_code": _E.TRANSACTIONAL_ID_NOT_FOUND, "transactional_id": txn_id}
    topics: dict[str, list[int]] = {}
    for tp in sorted(m.topic_partitions):
        topics.setdefault(tp.topic, []).append(tp.partition)
    return {
        "error_code": _E.NONE,
        "transactional_id": txn_id,
        "transaction_state": m.state.kafka_name,
        "transaction_timeout_ms": m.txn_timeout_ms,
        "transaction_start_time_ms": m.txn_start_timestamp,
        "producer_id": m.producer_id,
        "producer_epoch": m.producer_epoch,
        "topics": [{"topic": topic, "partitions": ps} for topic, ps in topics.items()],
    }


def marker_for(metadata: TransactionMetadata, coordinator_epoch: int) -> TxnMarker:
    """The markers a prepared commit or abort still needs, for its remaining partitions."""
    result = (
        TransactionResult.COMMIT if metadata.state == _S.PREPARE_COMMIT else TransactionResult.ABORT
    )
    return TxnMarker(
        metadata.transactional_id,
        metadata.producer_id,
        metadata.producer_epoch,
        coordinator_epoch,
        result,
        tuple(sorted(metadata.topic_partitions)),
    )
