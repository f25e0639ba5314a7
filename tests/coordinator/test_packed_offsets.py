"""Groups whose offsets a snapshot left packed (``HardState.packed``, issue 33): decoded
when first asked for, and read by the retention scan a few at a time without being kept
decoded (``offset_expiration.PACKED_GROUPS_PER_SCAN``)."""

from __future__ import annotations

import dataclasses
import tracemalloc
from typing import Any

from harness import Harness
from harness_core import KAFKA_TEST_CONFIG
from hypothesis import given, settings
from hypothesis import strategies as st

from coordinator.config import CoordinatorConfig
from coordinator.core import RetentionTimerKey
from coordinator.core.offset_expiration import PACKED_GROUPS_PER_SCAN, PACKED_SCAN_GAP_MS
from coordinator.core.store import HardState
from storage.live_snapshot import pack_offsets
from storage.records import OffsetCommitKey, OffsetCommitValue, Record

RETENTION_MS = 60_000
INTERVAL_MS = 600_000


class Packed:
    """A packed group as a snapshot gives it (``storage.live_snapshot.PackedEntries``),
    counting its decodes."""

    def __init__(self, records: list[Record]) -> None:
        self._records = records
        self.decodes = 0

    def records(self) -> list[Record]:
        self.decodes += 1
        return list(self._records)


def _commit(group: str, partition: int, offset: int, timestamp: int) -> Record:
    return Record(OffsetCommitKey(group, "t", partition),
                  OffsetCommitValue(offset, -1, "", timestamp))


def _loaded(packed: dict[str, Packed], interval_ms: int = INTERVAL_MS) -> Harness:
    h = Harness(config=CoordinatorConfig(offsets_retention_minutes=1,
                                         offsets_retention_check_interval_ms=interval_ms))
    h.coordinator.replay_packed(packed)
    h.apply(h.coordinator.on_loaded(h.now))
    return h


def test_a_packed_group_is_decoded_once_when_asked_for() -> None:
    packed = Packed([_commit("g", 0, 5, 0), _commit("g", 1, 6, 0)])
    h = _loaded({"g": packed})
    store = h.coordinator.store
    assert packed.decodes == 0 and h.coordinator.persisted_group_ids() == {"g"}
    assert h.maybe_group("g") is not None  # an offset-only group, as after a full replay
    assert {tp: v.offset for tp, v in h.coordinator.committed_offsets("g").items()} == {
        ("t", 0): 5, ("t", 1): 6}
    h.coordinator.committed_offsets("g")
    assert packed.decodes == 1 and "g" not in store.packed


def test_retention_scan_reads_a_packed_group_without_keeping_it_decoded() -> None:
    packed = Packed([_commit("g", 0, 5, timestamp=0)])
    h = _loaded({"g": packed}, interval_ms=10_000)
    store = h.coordinator.store
    h.sleep(10_001)  # the first scan: nothing expires yet
    assert packed.decodes == 1 and "g" in store.packed and "g" not in store.offsets
    assert store.packed_due["g"] == RETENTION_MS
    h.sleep(4 * 10_000)  # scans before it is due do not decode it again
    assert packed.decodes == 1
    h.sleep(2 * 10_000)  # due: expired, tombstoned, dropped
    assert h.coordinator.committed_offsets("g") == {}
    assert h.maybe_group("g") is None
    assert [r.value for r in h.records if r.key == OffsetCommitKey("g", "t", 0)] == [None]


def test_retention_scan_decodes_packed_groups_a_few_at_a_time() -> None:
    count = PACKED_GROUPS_PER_SCAN + 10
    packed = {f"g{i}": Packed([_commit(f"g{i}", 0, i, INTERVAL_MS)]) for i in range(count)}
    h = _loaded(packed)
    h.sleep(INTERVAL_MS + 1)
    assert sum(p.decodes for p in packed.values()) == PACKED_GROUPS_PER_SCAN
    assert h.deadline(RetentionTimerKey()) == h.now + PACKED_SCAN_GAP_MS  # the rest soon
    h.sleep(PACKED_SCAN_GAP_MS + 1)
    assert all(p.decodes == 1 for p in packed.values())
    assert h.deadline(RetentionTimerKey()) == h.now + INTERVAL_MS
    assert len(h.coordinator.store.packed) == count


# ---------------------------------------------------------------------------------------
# Offsets packed while running (``HardState.pack``): the same state as decoding every commit

_GROUPS = st.sampled_from(["g1", "g2", "g3"])
_COMMITS = st.builds(
    lambda group, topic, partition, offset, metadata, expire: Record(
        OffsetCommitKey(group, topic, partition),
        OffsetCommitValue(offset, -1, metadata, 1_000, expire)),
    _GROUPS, st.sampled_from(["t", "u"]), st.integers(0, 3), st.integers(0, 2**40),
    st.sampled_from(["", "m", "x" * 300]), st.sampled_from([-1, 5_000]))
_TOMBSTONES = st.builds(lambda group, topic, partition: Record(
    OffsetCommitKey(group, topic, partition), None),
    _GROUPS, st.sampled_from(["t", "u"]), st.integers(0, 3))
_STEPS = st.lists(st.one_of(
    st.tuples(st.just("append"), st.lists(st.one_of(_COMMITS, _COMMITS, _TOMBSTONES),
                                          max_size=12)),
    st.tuples(st.sampled_from(["read", "peek"]), _GROUPS)), max_size=30)


@settings(max_examples=300, deadline=None)
@given(_STEPS)
def test_packing_appended_commits_changes_no_answer(steps: list[tuple[str, Any]]) -> None:
    """Any appends and reads: a HardState packing the first commits of groups without
    offsets answers every question (offsets in the same order included) as one decoding
    every commit."""
    plain, packing = HardState(), HardState()
    packing.pack = pack_offsets
    for step, arg in steps:
        if step == "append":
            plain.apply_appended(arg)
            packing.apply_appended(arg)
        else:
            read = "group_offsets" if step == "read" else "peek_offsets"
            assert list(getattr(plain, read)(arg).items()) == list(
                getattr(packing, read)(arg).items())
        assert plain.offset_group_ids() == packing.offset_group_ids()
        assert all(plain.has_offsets(g) == packing.has_offsets(g) for g in ("g1", "g2", "g3"))
    assert plain.snapshot() == packing.snapshot()
    assert all(list(plain.group_offsets(g).items()) == list(packing.group_offsets(g).items())
               for g in ("g1", "g2", "g3"))


def test_first_commits_stay_packed_until_read_or_committed_again() -> None:
    """1,000 partitions of 10 groups committed once: packed, under 100 bytes of traced
    memory a partition (decoded objects cost about 250). A group committed again, or read,
    is decoded (once), as a group a snapshot loaded packed is."""
    state = HardState()
    state.pack = pack_offsets
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for g in range(10):
            state.apply_appended([_commit(f"group-{g}", p, 7, 1_000) for p in range(100)])
        used = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert set(state.packed) == {f"group-{g}" for g in range(10)} and not state.offsets
    assert used / 1000 < 100, used / 1000
    state.apply_appended([_commit("group-1", 0, 8, 2_000)])
    assert "group-1" in state.offsets and "group-1" not in state.packed
    assert {p: v.offset for (_, p), v in state.group_offsets("group-1").items()} == {
        p: 8 if p == 0 else 7 for p in range(100)}
    assert len(state.group_offsets("group-2")) == 100 and "group-2" not in state.packed


def test_retention_scan_does_not_decode_a_packed_group_none_of_whose_offsets_can_expire(
) -> None:
    """A Stable classic group (protocol type "consumer", subscriptions unknown): KIP-211
    expires none of its offsets, so the scan leaves its packed offsets undecoded."""
    h = Harness(config=dataclasses.replace(KAFKA_TEST_CONFIG, offsets_retention_minutes=1,
                                           offsets_retention_check_interval_ms=10_000))
    h.apply(h.coordinator.on_loaded(h.now))  # arms the retention scan
    h.static_members_join_and_rebalance("leader", "follower", session_timeout=300_000)
    group = h.group("groupId")
    assert group.state.value == "Stable" and group.subscribed_topics is None
    packed = Packed([_commit("groupId", 0, 5, timestamp=0)])
    h.coordinator.store.packed["groupId"] = packed
    h.sleep(3 * 10_000)  # scans run, long after the offset's commit timestamp
    assert packed.decodes == 0 and "groupId" in h.coordinator.store.packed
    assert group.state.value == "Stable"
    h.coordinator.committed_offsets("groupId")  # read: decoded once
    assert packed.decodes == 1
