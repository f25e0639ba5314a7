"""TxnOffsetCommit and the end of a transaction in the group coordinator: mirrors of Kafka's
OffsetMetadataManagerTest transactional cases (classic "generic" and consumer groups), and
the marker's commit or abort of the staged offsets.

Kafka writes a transactional offset as a record at once and applies it on the marker;
kcoord stages it and writes the ordinary offset commit record when the COMMIT marker
arrives. The tests check Kafka's answers, and that the records written are the ones Kafka's
commit would leave in the group's offsets."""

from __future__ import annotations

from consumer_harness import GROUP, ConsumerHarness
from harness import GROUP_ID, PROTOCOL_TYPE, PROTOCOLS, UNKNOWN_MEMBER_ID, Harness
from txn_offset_support import txn_commit_offsets, txn_completion

from coordinator.core import ErrorCode
from storage.records import (
    OffsetCommitKey,
    OffsetCommitValue,
    Record,
    TxnOffsetCommitKey,
    TxnOffsetCommitValue,
)

PRODUCER = 10


def txn_commit(h: Harness, group_id: str, member_id: str, generation: int,
               offsets: dict[tuple[str, int], int], producer_id: int = PRODUCER) -> dict[
                   tuple[str, int], int]:
    return txn_commit_offsets(h, group_id, producer_id, offsets, member_id=member_id,
                              generation=generation)


def marker(h: Harness, committed: bool, group_id: str = GROUP_ID,
           producer_id: int = PRODUCER) -> None:
    txn_completion(h, producer_id, [group_id], committed)


def stable_classic_member(h: Harness) -> tuple[str, int]:
    join = h.dynamic_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS,
                                10_000, 10_000)
    sync = h.sync_group_leader(GROUP_ID, join.generation_id, join.member_id, {})
    assert (join.error_code, sync.error_code, join.generation_id) == (0, 0, 1)
    return join.member_id, join.generation_id


def offset_records(h: Harness) -> list[Record]:
    return [r for r in h.records if isinstance(r.key, OffsetCommitKey)]


def test_generic_group_transactional_offset_commit() -> None:
    h = Harness()
    member_id, generation = stable_classic_member(h)
    assert txn_commit(h, GROUP_ID, member_id, generation, {("bar", 0): 100}) == {
        ("bar", 0): ErrorCode.NONE}
    assert offset_records(h) == []  # staged (a TxnOffsetCommitKey record) until the marker
    marker(h, committed=True)
    assert offset_records(h) == [Record(
        OffsetCommitKey(GROUP_ID, "bar", 0),
        OffsetCommitValue(offset=100, leader_epoch=10, metadata="metadata",
                          commit_timestamp=h.now, expire_timestamp=-1))]


def test_generic_group_transactional_offset_commit_with_unknown_group_id() -> None:
    h = Harness()
    assert txn_commit(h, "foo", "member", 10, {("bar", 0): 100}) == {
        ("bar", 0): ErrorCode.ILLEGAL_GENERATION}


def test_generic_group_transactional_offset_commit_with_unknown_member_id() -> None:
    h = Harness()
    stable_classic_member(h)
    assert txn_commit(h, GROUP_ID, "member", 10, {("bar", 0): 100}) == {
        ("bar", 0): ErrorCode.UNKNOWN_MEMBER_ID}


def test_generic_group_transactional_offset_commit_with_illegal_generation_id() -> None:
    h = Harness()
    member_id, _ = stable_classic_member(h)
    assert txn_commit(h, GROUP_ID, member_id, 100, {("bar", 0): 100}) == {
        ("bar", 0): ErrorCode.ILLEGAL_GENERATION}


def test_transactional_offset_commit_with_unknown_group_id() -> None:
    h = ConsumerHarness()
    assert txn_commit(h, "foo", "member", 10, {("bar", 0): 100}) == {
        ("bar", 0): ErrorCode.ILLEGAL_GENERATION}


def test_consumer_group_transactional_offset_commit() -> None:
    h = ConsumerHarness()
    joined = h.join("member", ["foo"])
    assert joined.error_code == 0
    epoch = joined.member_epoch
    assert txn_commit(h, GROUP, "member", epoch, {("bar", 0): 100}) == {
        ("bar", 0): ErrorCode.NONE}
    marker(h, committed=True, group_id=GROUP)
    assert offset_records(h)[-1] == Record(
        OffsetCommitKey(GROUP, "bar", 0),
        OffsetCommitValue(offset=100, leader_epoch=10, metadata="metadata",
                          commit_timestamp=h.now, expire_timestamp=-1))


def test_consumer_group_transactional_offset_commit_with_unknown_member_id() -> None:
    h = ConsumerHarness()
    assert h.join("member", ["foo"]).error_code == 0
    assert txn_commit(h, GROUP, "other", 1, {("bar", 0): 100}) == {
        ("bar", 0): ErrorCode.UNKNOWN_MEMBER_ID}


def test_consumer_group_transactional_offset_commit_with_stale_member_epoch() -> None:
    h = ConsumerHarness()
    assert h.join("member", ["foo"]).error_code == 0
    assert txn_commit(h, GROUP, "member", 100, {("bar", 0): 100}) == {
        ("bar", 0): ErrorCode.ILLEGAL_GENERATION}


def test_fetch_offsets_with_pending_transactional_offsets() -> None:
    h = Harness()
    h.commit_offsets(GROUP_ID, "", -1, {("foo", 0): 100, ("foo", 1): 110, ("bar", 0): 200})
    assert txn_commit(h, GROUP_ID, "", -1, {("foo", 1): 111, ("bar", 0): 201,
                                            ("bar", 1): 211}) == dict.fromkeys(
        [("foo", 1), ("bar", 0), ("bar", 1)], ErrorCode.NONE)
    wanted = [("foo", 0), ("foo", 1), ("bar", 0), ("bar", 1)]
    unstable = ErrorCode.UNSTABLE_OFFSET_COMMIT
    _, stable = h.fetch_offsets(GROUP_ID, wanted, require_stable=True)
    assert {tp: (v[0], v[3]) for tp, v in stable.items()} == {
        ("foo", 0): (100, 0), ("foo", 1): (-1, unstable), ("bar", 0): (-1, unstable),
        ("bar", 1): (-1, unstable)}
    _, plain = h.fetch_offsets(GROUP_ID, wanted, require_stable=False)
    assert {tp: (v[0], v[3]) for tp, v in plain.items()} == {
        ("foo", 0): (100, 0), ("foo", 1): (110, 0), ("bar", 0): (200, 0), ("bar", 1): (-1, 0)}
    marker(h, committed=True)
    _, after = h.fetch_offsets(GROUP_ID, wanted, require_stable=True)
    assert {tp: (v[0], v[3]) for tp, v in after.items()} == {
        ("foo", 0): (100, 0), ("foo", 1): (111, 0), ("bar", 0): (201, 0), ("bar", 1): (211, 0)}


def test_fetch_all_offsets_with_pending_transactional_offsets() -> None:
    h = Harness()
    h.commit_offsets(GROUP_ID, "", -1, {("foo", 0): 100, ("foo", 1): 110, ("bar", 0): 200})
    txn_commit(h, GROUP_ID, "", -1, {("foo", 1): 111, ("bar", 0): 201, ("bar", 1): 211})
    unstable = ErrorCode.UNSTABLE_OFFSET_COMMIT
    _, stable = h.fetch_offsets(GROUP_ID, None, require_stable=True)
    # bar-1 exists only in the transaction: not listed until the commit.
    assert {tp: (v[0], v[3]) for tp, v in stable.items()} == {
        ("foo", 0): (100, 0), ("foo", 1): (-1, unstable), ("bar", 0): (-1, unstable)}
    _, plain = h.fetch_offsets(GROUP_ID, None, require_stable=False)
    assert {tp: v[0] for tp, v in plain.items()} == {
        ("foo", 0): 100, ("foo", 1): 110, ("bar", 0): 200}
    marker(h, committed=True)
    _, after = h.fetch_offsets(GROUP_ID, None, require_stable=True)
    assert {tp: (v[0], v[3]) for tp, v in after.items()} == {
        ("foo", 0): (100, 0), ("foo", 1): (111, 0), ("bar", 0): (201, 0), ("bar", 1): (211, 0)}


def test_an_abort_marker_drops_the_staged_offsets() -> None:
    h = Harness()
    h.commit_offsets(GROUP_ID, "", -1, {("foo", 0): 100})
    txn_commit(h, GROUP_ID, "", -1, {("foo", 0): 150})
    written = len(h.records)
    marker(h, committed=False)
    assert h.records[written:] == [Record(TxnOffsetCommitKey(PRODUCER, GROUP_ID, "foo", 0), None)]
    _, after = h.fetch_offsets(GROUP_ID, [("foo", 0)], require_stable=True)
    assert after[("foo", 0)][0] == 100
    assert h.coordinator.store.pending_txn == {}


def test_a_marker_touches_only_its_groups_and_producer() -> None:
    h = Harness()
    txn_commit(h, "g1", "", -1, {("foo", 0): 1}, producer_id=1)
    txn_commit(h, "g2", "", -1, {("foo", 0): 2}, producer_id=1)
    txn_commit(h, "g1", "", -1, {("foo", 1): 3}, producer_id=2)
    marker(h, committed=True, group_id="g1", producer_id=1)
    assert [(r.key.group, r.key.partition) for r in offset_records(h)] == [("g1", 0)]
    assert h.coordinator.store.pending_txn == {
        1: {"g2": {("foo", 0): TxnOffsetCommitValue(2, 10, "metadata", h.now)}},
        2: {"g1": {("foo", 1): TxnOffsetCommitValue(3, 10, "metadata", h.now)}}}


def test_staged_offsets_are_persisted_and_survive_a_replay() -> None:
    h = Harness()
    txn_commit(h, GROUP_ID, "", -1, {("foo", 0): 42})
    assert [r.key for r in h.records if isinstance(r.key, TxnOffsetCommitKey)] == [
        TxnOffsetCommitKey(PRODUCER, GROUP_ID, "foo", 0)]
    h.crash_and_replay()
    _, stable = h.fetch_offsets(GROUP_ID, [("foo", 0)], require_stable=True)
    assert stable[("foo", 0)][3] == ErrorCode.UNSTABLE_OFFSET_COMMIT
    marker(h, committed=True)
    h.crash_and_replay()
    _, after = h.fetch_offsets(GROUP_ID, [("foo", 0)], require_stable=True)
    assert (after[("foo", 0)][0], after[("foo", 0)][3]) == (42, 0)
    assert h.coordinator.store.pending_txn == {}
