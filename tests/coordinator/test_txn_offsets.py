"""Transactional offsets in the classic group coordinator: mirrors of GroupCoordinatorTest's
14 transactional cases (13 apply; KIP-890 verification of TxnOffsetCommit v4+ is not served).

Kafka's ``handleTxnCompletion(producerId, offsetsPartitions, result)`` is the marker that
reaches the group's ``__consumer_offsets`` partition: here ``txn_completion`` with the
groups of that partition. ``require_stable`` fetches are Kafka 4's: only offsets pending in
a transaction are UNSTABLE_OFFSET_COMMIT."""

from __future__ import annotations

from harness import (
    GROUP_ID,
    GROUP_INSTANCE_ID,
    PROTOCOL_TYPE,
    PROTOCOLS,
    UNKNOWN_MEMBER_ID,
    Harness,
)
from txn_offset_support import txn_commit_offsets, txn_completion

from coordinator.config import CoordinatorConfig
from coordinator.core import ErrorCode

TP = ("topic", 0)
PRODUCER = 1000
OTHER_GROUP_ID = "otherGroup"


def fetched(h: Harness, group_id: str, *tps: tuple[str, int],
            require_stable: bool = False) -> dict[tuple[str, int], tuple[int, int]]:
    """{tp: (offset, error)} of an OffsetFetch."""
    error, data = h.fetch_offsets(group_id, list(tps), require_stable=require_stable)
    assert error == ErrorCode.NONE
    return {tp: (v[0], v[3]) for tp, v in data.items()}


def stable_member(h: Harness, instance_id: str | None = None) -> tuple[str, int]:
    if instance_id is None:
        join = h.dynamic_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    else:
        join = h.static_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, instance_id, PROTOCOL_TYPE,
                                   PROTOCOLS)
    assert join.error_code == ErrorCode.NONE
    sync = h.sync_group_leader(GROUP_ID, join.generation_id, join.member_id, {})
    assert sync.error_code == ErrorCode.NONE
    return join.member_id, join.generation_id


def test_basic_fetch_txn_offsets(h: Harness) -> None:
    assert txn_commit_offsets(h, GROUP_ID, PRODUCER, {TP: 0}) == {TP: ErrorCode.NONE}
    assert fetched(h, GROUP_ID, TP) == {TP: (-1, 0)}  # not materialized yet
    txn_completion(h, PRODUCER, [GROUP_ID], committed=True)
    assert fetched(h, GROUP_ID, TP) == {TP: (0, 0)}


def test_fetch_txn_offsets_with_abort(h: Harness) -> None:
    assert txn_commit_offsets(h, GROUP_ID, PRODUCER, {TP: 0}) == {TP: ErrorCode.NONE}
    assert fetched(h, GROUP_ID, TP) == {TP: (-1, 0)}
    txn_completion(h, PRODUCER, [GROUP_ID], committed=False)
    assert fetched(h, GROUP_ID, TP) == {TP: (-1, 0)}


def test_fetch_pending_txn_offsets_with_abort(h: Harness) -> None:
    assert txn_commit_offsets(h, GROUP_ID, PRODUCER, {TP: 25}) == {TP: ErrorCode.NONE}
    assert fetched(h, GROUP_ID, TP, require_stable=True) == {
        TP: (-1, ErrorCode.UNSTABLE_OFFSET_COMMIT)}
    txn_completion(h, PRODUCER, [GROUP_ID], committed=False)
    assert fetched(h, GROUP_ID, TP, require_stable=True) == {TP: (-1, 0)}


def test_fetch_pending_txn_offsets_with_commit(h: Harness) -> None:
    assert txn_commit_offsets(h, GROUP_ID, PRODUCER, {TP: 25}) == {TP: ErrorCode.NONE}
    assert fetched(h, GROUP_ID, TP, require_stable=True) == {
        TP: (-1, ErrorCode.UNSTABLE_OFFSET_COMMIT)}
    txn_completion(h, PRODUCER, [GROUP_ID], committed=True)
    assert fetched(h, GROUP_ID, TP, require_stable=True) == {TP: (25, 0)}


def test_fetch_txn_offsets_ignore_spurious_commit(h: Harness) -> None:
    assert txn_commit_offsets(h, GROUP_ID, PRODUCER, {TP: 0}) == {TP: ErrorCode.NONE}
    txn_completion(h, PRODUCER, [GROUP_ID], committed=False)
    assert fetched(h, GROUP_ID, TP) == {TP: (-1, 0)}
    txn_completion(h, PRODUCER, [GROUP_ID], committed=True)  # spurious: nothing pending
    assert fetched(h, GROUP_ID, TP) == {TP: (-1, 0)}


def test_fetch_txn_offsets_one_producer_multiple_groups(h: Harness) -> None:
    tp1, tp2 = ("topic1", 0), ("topic2", 0)
    assert txn_commit_offsets(h, GROUP_ID, PRODUCER, {tp1: 10}) == {tp1: ErrorCode.NONE}
    assert txn_commit_offsets(h, OTHER_GROUP_ID, PRODUCER, {tp2: 15}) == {tp2: ErrorCode.NONE}
    # The marker of only the first group's offsets partition: only its offsets materialize.
    txn_completion(h, PRODUCER, [GROUP_ID], committed=True)
    assert fetched(h, GROUP_ID, tp1, tp2) == {tp1: (10, 0), tp2: (-1, 0)}
    assert fetched(h, OTHER_GROUP_ID, tp1, tp2) == {tp1: (-1, 0), tp2: (-1, 0)}
    txn_completion(h, PRODUCER, [OTHER_GROUP_ID], committed=True)
    assert fetched(h, GROUP_ID, tp1, tp2) == {tp1: (10, 0), tp2: (-1, 0)}
    assert fetched(h, OTHER_GROUP_ID, tp1, tp2) == {tp1: (-1, 0), tp2: (15, 0)}


def test_fetch_txn_offsets_multiple_producers_one_group(h: Harness) -> None:
    tp1, tp2 = ("topic1", 0), ("topic2", 0)
    assert txn_commit_offsets(h, GROUP_ID, 1000, {tp1: 10}) == {tp1: ErrorCode.NONE}
    assert txn_commit_offsets(h, GROUP_ID, 1005, {tp2: 15}) == {tp2: ErrorCode.NONE}
    txn_completion(h, 1000, [GROUP_ID], committed=True)
    assert fetched(h, GROUP_ID, tp1, tp2) == {tp1: (10, 0), tp2: (-1, 0)}
    txn_completion(h, 1005, [GROUP_ID], committed=True)
    assert fetched(h, GROUP_ID, tp1, tp2) == {tp1: (10, 0), tp2: (15, 0)}


def test_txn_commit_offset_with_fenced_instance_id(h: Harness) -> None:
    _, generation = stable_member(h, GROUP_INSTANCE_ID)
    assert txn_commit_offsets(h, GROUP_ID, PRODUCER, {TP: 0}, member_id="invalid-member",
                              generation=generation, group_instance_id=GROUP_INSTANCE_ID) == {
        TP: ErrorCode.FENCED_INSTANCE_ID}


def test_txn_commit_offset_with_invalid_member_id(h: Harness) -> None:
    _, generation = stable_member(h)
    assert txn_commit_offsets(h, GROUP_ID, PRODUCER, {TP: 0}, member_id="invalid-member",
                              generation=generation) == {TP: ErrorCode.UNKNOWN_MEMBER_ID}


def test_txn_commit_offset_with_known_member_id(h: Harness) -> None:
    member_id, generation = stable_member(h)
    assert txn_commit_offsets(h, GROUP_ID, PRODUCER, {TP: 0}, member_id=member_id,
                              generation=generation) == {TP: ErrorCode.NONE}


def test_txn_commit_offset_with_illegal_generation(h: Harness) -> None:
    member_id, generation = stable_member(h)
    assert txn_commit_offsets(h, GROUP_ID, PRODUCER, {TP: 0}, member_id=member_id,
                              generation=generation + 1) == {TP: ErrorCode.ILLEGAL_GENERATION}


def test_txn_commit_offset_with_legal_generation(h: Harness) -> None:
    member_id, generation = stable_member(h)
    assert txn_commit_offsets(h, GROUP_ID, PRODUCER, {TP: 0}, member_id=member_id,
                              generation=generation) == {TP: ErrorCode.NONE}
    txn_completion(h, PRODUCER, [GROUP_ID], committed=True)
    assert fetched(h, GROUP_ID, TP) == {TP: (0, 0)}


def test_txn_offset_metadata_too_large() -> None:
    h = Harness(config=CoordinatorConfig(offset_metadata_max_bytes=4096))
    assert txn_commit_offsets(h, GROUP_ID, PRODUCER, {TP: (0, "s" * 4097)}) == {
        TP: ErrorCode.OFFSET_METADATA_TOO_LARGE}
    assert txn_commit_offsets(h, GROUP_ID, PRODUCER, {TP: (0, "s" * 4096)}) == {
        TP: ErrorCode.NONE}
