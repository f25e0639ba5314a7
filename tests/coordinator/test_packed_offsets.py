"""Groups whose offsets a snapshot left packed (``HardState.packed``, issue 33): decoded
when first asked for, and read by the retention scan a few at a time without being kept
decoded (``offset_expiration.PACKED_GROUPS_PER_SCAN``)."""

from __future__ import annotations

from harness import Harness

from coordinator.config import CoordinatorConfig
from coordinator.core import RetentionTimerKey
from coordinator.core.offset_expiration import PACKED_GROUPS_PER_SCAN, PACKED_SCAN_GAP_MS
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
