"""``offset_commit_record`` builds the same records as the dataclasses' constructors and
shares one key object per (group, topic, partition), in a cache that stays within
``COMMIT_KEYS_LIMIT``."""

from __future__ import annotations

from storage import records
from storage.records import OffsetCommitKey, OffsetCommitValue, Record, offset_commit_record


def test_records_equal_the_constructed_ones() -> None:
    built = offset_commit_record("g", "t", 3, 42, 7, "meta", 1000, -1)
    assert built == Record(OffsetCommitKey("g", "t", 3),
                           OffsetCommitValue(42, 7, "meta", 1000, -1))
    assert hash(built.key) == hash(OffsetCommitKey("g", "t", 3))
    again = offset_commit_record("g", "t", 3, 43, 7, "", 1001, -1)
    assert again.key is built.key  # shared
    assert again.value == OffsetCommitValue(43, 7, "", 1001, -1)
    assert offset_commit_record("g", "t", 4, 1, -1, "", 1, -1).key == OffsetCommitKey("g", "t", 4)


def test_shared_keys_stay_within_their_bound() -> None:
    limit = records.COMMIT_KEYS_LIMIT
    for partition in range(limit * 2 + 5):
        record = offset_commit_record("bound", "t", partition, 1, -1, "", 1, -1)
        assert record.key == OffsetCommitKey("bound", "t", partition)
        assert len(records._COMMIT_KEYS) <= limit
    assert 0 < len(records._COMMIT_KEYS) <= limit
