"""Retention of topic data (issue 12): whole old segments go by ``retention.ms`` and
``retention.bytes`` (topic configs, else the broker's ``log.retention.*``), the log start
offset follows, readers see it, and a restart keeps it. The active segment always stays."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from broker_support import make_batch
from test_topic_files import close, open_store, produce

from coordinator.broker.topic_files import TOPICS_DIR
from coordinator.broker.topics import TopicStore

NOW = 10_000_000
OLD = NOW - 60_000  # a minute old
# Each batch below is one 99-byte entry: 230-byte segments (a 24-byte header) hold two.
SMALL_SEGMENTS = {"segment.bytes": "230"}


def segments(tmp_path: Path, store: TopicStore, topic: str, partition: int) -> list[str]:
    found = store.get(topic)
    assert found is not None
    directory = tmp_path / TOPICS_DIR / str(found.topic_id) / str(partition)
    return sorted(n for n in os.listdir(directory) if n.endswith(".log"))


def fill(store: TopicStore, old: int, new: int) -> None:
    for i in range(old):
        produce(store, "t", 0, make_batch([b"old-%d" % i], [OLD]))
    for i in range(new):
        produce(store, "t", 0, make_batch([b"new-%d" % i], [NOW]))


def test_retention_ms_deletes_whole_expired_segments(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    store.create_topic("t", 1, {**SMALL_SEGMENTS, "retention.ms": "30000"})
    fill(store, old=5, new=3)
    before = segments(tmp_path, store, "t", 0)
    assert len(before) == 4
    changed = store.enforce_retention(NOW, {})
    partition = store.partition("t", 0)
    assert partition is not None
    # Segments [0,1] and [2,3] are all old; [4,5] holds a new record, so it stays.
    assert changed == ["t-0: log start offset now 4"]
    assert (partition.log_start_offset, partition.high_watermark) == (4, 8)
    assert segments(tmp_path, store, "t", 0) == before[2:]
    assert [b.base_offset for b in partition.batches][:1] == [4]
    assert store.enforce_retention(NOW, {}) == []  # nothing more to do
    close(store)

    again = open_store(tmp_path)
    restored = again.partition("t", 0)
    assert restored is not None
    assert (restored.log_start_offset, restored.high_watermark) == (4, 8)
    close(again)


def test_retention_bytes_keeps_the_newest_data(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    store.create_topic("t", 1, {**SMALL_SEGMENTS, "retention.bytes": "300"})
    fill(store, old=0, new=8)
    store.enforce_retention(NOW, {})
    partition = store.partition("t", 0)
    assert partition is not None
    # Four segments of 198 entry bytes: the two oldest go, 396 bytes stay (not under 300:
    # Kafka deletes a segment only while what remains is still at least retention.bytes).
    assert (partition.log_start_offset, partition.high_watermark) == (4, 8)
    assert len(segments(tmp_path, store, "t", 0)) == 2
    close(store)


@pytest.mark.parametrize(
    ("broker", "expect_start"),
    [({}, 0), ({"log.retention.ms": "30000"}, 4), ({"log.retention.minutes": "-1"}, 0)],
)
def test_broker_defaults_apply_to_topics_without_their_own(
    tmp_path: Path, broker: dict[str, str], expect_start: int
) -> None:
    store = open_store(tmp_path)
    store.create_topic("t", 1, dict(SMALL_SEGMENTS))
    fill(store, old=5, new=3)
    store.enforce_retention(NOW, broker)
    partition = store.partition("t", 0)
    assert partition is not None and partition.log_start_offset == expect_start
    close(store)


def test_compacted_topics_and_the_active_segment_stay(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    store.create_topic("t", 1, {**SMALL_SEGMENTS, "retention.ms": "0",
                                "cleanup.policy": "compact"})
    store.create_topic("u", 1, {"retention.ms": "0"})  # one (active) segment only
    fill(store, old=5, new=0)
    produce(store, "u", 0, make_batch([b"x"], [OLD]))
    assert store.enforce_retention(NOW, {}) == []
    close(store)
