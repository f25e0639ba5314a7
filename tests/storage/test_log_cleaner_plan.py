"""The log cleaner's planning (``storage.log_cleaner_plan``), mirroring Kafka's
``LogCleanerTest`` grouping and ``LogToClean`` cases and ``LogCleanerManagerTest``'s
cleanable-offset cases (see ``COVERAGE_log_cleaner.md``)."""

from __future__ import annotations

from storage.log_cleaner import OffsetMap
from storage.log_cleaner_plan import (
    CleanerLogConfig,
    SegmentInfo,
    group_segments_by_size,
    log_to_clean,
)

CONFIG = CleanerLogConfig()


def segments(count: int, size: int = 100, per: int = 10, ts: int = 1_000) -> list[SegmentInfo]:
    """``count`` segments of ``per`` offsets each; the last is the active one."""
    return [SegmentInfo(i * per, size, i * per, i * per + per - 1, ts + i, ts + i)
            for i in range(count)]


def test_segment_grouping() -> None:
    segs = segments(10, size=100)[:-1]
    groups = group_segments_by_size(segs, 250, end_offset=90)
    assert [[s.index for s in g] for g in groups] == [[0, 10], [20, 30], [40, 50], [60, 70],
                                                      [80]]
    # a segment larger than the limit is a group of its own
    assert [len(g) for g in group_segments_by_size(segs, 50, end_offset=90)] == [1] * 9
    # only the segments starting before the end offset
    assert [s.index for g in group_segments_by_size(segs, 10_000, 35) for s in g] == [0, 10,
                                                                                       20, 30]


def test_segment_grouping_with_sparse_offsets_and_empty_segments() -> None:
    segs = [SegmentInfo(0, 100, 0, 5), SegmentInfo(3, 24), SegmentInfo(4, 100, 50, 99)]
    groups = group_segments_by_size(segs, 1_000, end_offset=100)
    assert [[s.index for s in g] for g in groups] == [[0, 3, 4]]


def test_log_to_clean() -> None:
    segs = segments(5)
    plan = log_to_clean(segs, 0, 50, 50, None, 10_000, CONFIG)
    assert (plan.first_dirty_offset, plan.first_uncleanable_offset) == (0, 40)
    assert (plan.clean_bytes, plan.cleanable_bytes, plan.cleanable_segments) == (0, 400, 4)
    assert plan.cleanable_ratio == 1.0 and plan.should_clean(CONFIG)
    # after a round to 20: half is clean
    plan = log_to_clean(segs, 0, 50, 50, 20, 10_000, CONFIG)
    assert (plan.clean_bytes, plan.cleanable_bytes) == (200, 200)
    assert not plan.should_clean(CONFIG)  # 0.5 is not above min.cleanable.dirty.ratio 0.5
    assert plan.should_clean(CleanerLogConfig(min_cleanable_dirty_ratio=0.4))


def test_log_to_clean_with_uncleanable_section() -> None:
    # an open transaction from offset 25: the segment holding it and later are uncleanable
    plan = log_to_clean(segments(5), 0, 50, 25, None, 10_000, CONFIG)
    assert (plan.first_uncleanable_offset, plan.cleanable_segments) == (20, 2)
    assert plan.cleanable_bytes == 200


def test_cleanable_offsets_for_none() -> None:
    """LogCleanerManagerTest: no checkpoint, the dirty range starts at the log start."""
    plan = log_to_clean(segments(3), 10, 30, 30, None, 10_000, CONFIG)
    assert plan.first_dirty_offset == 10 and plan.first_uncleanable_offset == 20


def test_cleanable_offsets_for_time() -> None:
    """LogCleanerManagerTest: min.compaction.lag.ms keeps young segments uncleanable."""
    segs = segments(5, ts=1_000)  # max timestamps 1000..1004
    config = CleanerLogConfig(min_compaction_lag_ms=100)
    plan = log_to_clean(segs, 0, 50, 50, None, 1_102, config)
    # segments with max timestamp > 1102 - 100 (the fourth on) are too young
    assert plan.first_uncleanable_offset == 30 and plan.cleanable_segments == 3


def test_cleanable_offsets_needs_checkpoint_reset() -> None:
    """LogCleanerManagerTest: a checkpoint below the log start is reset to it."""
    plan = log_to_clean(segments(5), 20, 50, 50, 5, 10_000, CONFIG)
    assert plan.first_dirty_offset == 20 and plan.force_update_checkpoint
    plan = log_to_clean(segments(5), 0, 50, 50, 60, 10_000, CONFIG)  # past the end
    assert plan.first_dirty_offset == 0 and plan.force_update_checkpoint


def test_max_compaction_lag() -> None:
    """Dirty data older than max.compaction.lag.ms is cleaned whatever the ratio."""
    segs = segments(5, ts=1_000)
    config = CleanerLogConfig(max_compaction_lag_ms=500)
    plan = log_to_clean(segs, 0, 50, 50, 30, 2_000, config)  # ratio 0.25
    assert plan.need_compaction_now and plan.should_clean(config)
    assert not log_to_clean(segs, 0, 50, 50, 30, 1_200, config).should_clean(config)


def test_build_offset_map_fake_large() -> None:
    """The map's size follows log.cleaner.dedupe.buffer.size."""
    offset_map = OffsetMap(1 << 20)
    assert 8_000 < offset_map.slots < 9_000
    for i in range(100):
        offset_map.put(b"key-%d" % (i % 10), i)
    assert len(offset_map) == 10 and offset_map.get(b"key-3") == 93
    assert offset_map.get(b"absent") == -1 and offset_map.latest_offset == 99
