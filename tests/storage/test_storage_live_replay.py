"""The live index and ``Log.replay_live``: open checks segments in bounded chunks and
remembers each key's newest entry; replay decodes only those (plus every transaction-state
entry), completing the index over appends and rebuilding it after repairs or compaction."""

from __future__ import annotations

import logging
import os

import pytest

from storage import full_replay, live_index
from storage.compaction import CompactionPolicy, compact
from storage.errors import CorruptLogError
from storage.log import Log
from storage.record_codec import encode_record
from storage.records import (
    GroupMetadataKey,
    GroupMetadataValue,
    OffsetCommitKey,
    OffsetCommitValue,
    RebalanceEventKey,
    RebalanceEventValue,
    Record,
    TransactionStateKey,
    TransactionStateValue,
)
from storage.segment import HEADER_SIZE, encode_entry


def commit(i: int, partition: int = 0, metadata: str = "") -> Record:
    return Record(OffsetCommitKey("g", "t", partition), OffsetCommitValue(i, 1, metadata, i))


def txn(producer_id: int) -> Record:
    return Record(
        TransactionStateKey("tx"),
        TransactionStateValue(producer_id, 0, 60_000, 0, (), 0, 0, -1, -1, 0),
    )


EVENT = Record(RebalanceEventKey("g"), RebalanceEventValue("rebalance_start", 1, 1))
GROUP = Record(GroupMetadataKey("g"), GroupMetadataValue("consumer", 3, "range", None, 5))

# Three partitions overwritten, a group written then deleted, history, transaction states:
# what survives is each key's newest entry (the tombstone included), every transaction state.
RECORDS = [
    commit(1, 0), GROUP, EVENT, commit(2, 1), txn(7), commit(3, 0, "x" * 300),
    Record(GroupMetadataKey("g"), None), EVENT, txn(8), commit(4, 2), commit(5, 1),
]
LIVE = [
    commit(3, 0, "x" * 300), Record(GroupMetadataKey("g"), None), txn(7), txn(8),
    commit(4, 2), commit(5, 1),
]
LIVE.sort(key=RECORDS.index)


def _expected_live(records: list[Record]) -> list[Record]:
    last = {r.key: i for i, r in enumerate(records)}
    return [
        r for i, r in enumerate(records)
        if isinstance(r.key, TransactionStateKey)
        or (last[r.key] == i and not isinstance(r.key, RebalanceEventKey))
    ]


def _write(directory: str, records: list[Record], segment_bytes: int = 1 << 20) -> None:
    with Log.open(directory, segment_bytes=segment_bytes, fsync="never") as log:
        for record in records:
            log.append([record])


@pytest.mark.parametrize("segment_bytes", [250, 1 << 20])
@pytest.mark.parametrize("indexed", [True, False])
def test_replay_live_is_the_newest_entry_per_key_in_log_order(
    data_dir: str, segment_bytes: int, indexed: bool
) -> None:
    _write(data_dir, RECORDS, segment_bytes)
    with Log.open(data_dir, segment_bytes=segment_bytes, live_index=indexed) as log:
        assert list(log.replay_live()) == LIVE
        stats = (log.live_bytes, log.event_bytes)
        assert list(log.replay()) == RECORDS
        assert (log.live_bytes, log.event_bytes) == stats
        assert stats[1] > 0
        assert list(log.replay_live()) == LIVE  # again, without open's index


def test_chunks_smaller_than_entries(data_dir: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Entries straddle chunk boundaries, and one is longer than a chunk: same counts, same
    live set as reading whole segments, and the full replay reads in chunks too."""
    _write(data_dir, RECORDS * 3, segment_bytes=900)
    with Log.open(data_dir) as log:
        counts = [(s.base, s.size, s.count) for s in log.segments]
    monkeypatch.setattr(live_index, "READ_CHUNK", 64)
    monkeypatch.setattr(full_replay, "READ_CHUNK", 64)
    assert len(encode_entry(*encode_record(RECORDS[5]))) > 300
    with Log.open(data_dir, live_index=True) as log:
        assert [(s.base, s.size, s.count) for s in log.segments] == counts
        assert list(log.replay_live()) == _expected_live(RECORDS * 3)
        log.append(RECORDS)  # unverified bytes: a chunk never straddles the boundary
        assert list(log.replay()) == RECORDS * 4


def test_appends_after_open_are_indexed_at_replay(data_dir: str) -> None:
    _write(data_dir, RECORDS[:6], segment_bytes=250)
    with Log.open(data_dir, segment_bytes=250, live_index=True) as log:
        for record in RECORDS[6:]:
            log.append([record])
        assert len(log.segments) > 2
        assert list(log.replay_live()) == LIVE


def test_repair_at_open_then_replay_live(data_dir: str) -> None:
    _write(data_dir, RECORDS)
    path = os.path.join(data_dir, "00000000000000000000.log")
    torn = encode_entry(*encode_record(commit(9, 0)))[:-3]
    with open(path, "ab") as f:
        f.write(torn)
    with Log.open(data_dir, live_index=True) as log:
        assert "torn tail" in log.recovery[0].reason
        assert list(log.replay_live()) == LIVE


def test_compaction_between_open_and_replay(data_dir: str) -> None:
    _write(data_dir, RECORDS, segment_bytes=250)
    with Log.open(data_dir, segment_bytes=250, live_index=True) as log:
        assert compact(log, CompactionPolicy(tombstone_retention_ms=10**12)) is not None
        live = list(log.replay_live())
        every = list(log.replay())
        assert len(every) < len(RECORDS)  # the index open built describes a replaced log
        assert live == _expected_live(every)


def test_segment_changed_after_open(data_dir: str) -> None:
    _write(data_dir, RECORDS, segment_bytes=250)
    with Log.open(data_dir, segment_bytes=250) as log:
        seg = log.segments[0]
        with open(seg.path, "r+b") as f:
            f.truncate(seg.size - 1)
        with pytest.raises(CorruptLogError, match="changed on disk"):
            list(log.replay_live())


def test_undecodable_and_unknown_live_entries(
    data_dir: str, caplog: pytest.LogCaptureFixture
) -> None:
    _write(data_dir, [commit(0)])
    path = os.path.join(data_dir, "00000000000000000000.log")
    unknown = encode_entry(b"\x00\x63\x00\x01g", b"\x00\x00")
    from storage import record_codec

    record_codec._warned_key_versions.discard(99)
    with open(path, "ab") as f:
        f.write(unknown)
    with caplog.at_level(logging.WARNING), Log.open(data_dir, live_index=True) as log:
        assert list(log.replay_live()) == [commit(0)]
    assert any("unknown key version 99" in r.message for r in caplog.records)
    key, _ = encode_record(commit(1))
    with open(path, "ab") as f:
        f.write(encode_entry(key, b"\x00\x03garbage"))
    with Log.open(data_dir, live_index=True) as log, pytest.raises(CorruptLogError) as info:
        list(log.replay_live())
    assert info.value.path == path and "does not decode" in str(info.value)
    assert info.value.offset > HEADER_SIZE
