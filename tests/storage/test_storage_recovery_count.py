"""Recovery counts a segment's entries in batches (bounded memory on a 64 MiB segment) with
the same outcome as one scan of the whole segment."""

from __future__ import annotations

import pytest

from storage import recovery
from storage.log import Log
from storage.records import OffsetCommitKey, OffsetCommitValue, Record
from storage.segment import HEADER_SIZE, encode_entry, encode_header, scan_entries


def _segment(entries: int) -> bytes:
    return encode_header(0) + b"".join(
        encode_entry(f"key-{i}".encode(), None if i % 5 == 4 else f"value-{i}".encode())
        for i in range(entries)
    )


@pytest.mark.parametrize("batch", [1, 3, 7, 1 << 16])
@pytest.mark.parametrize(
    "damage",
    ["none", "torn tail", "short tail", "bad checksum in the middle", "empty"],
)
def test_batched_count_equals_one_scan(monkeypatch: pytest.MonkeyPatch, batch: int,
                                       damage: str) -> None:
    monkeypatch.setattr(recovery, "_COUNT_BATCH", batch)
    data = _segment(0 if damage == "empty" else 20)
    if damage == "torn tail":
        data = data[:-5]
    elif damage == "short tail":
        data += b"\x00\x00"
    elif damage == "bad checksum in the middle":
        whole = scan_entries(data, HEADER_SIZE, collect=False)
        at = whole.positions[9] + 4
        data = data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1 :]
    count, scan = recovery._count_entries(data)
    whole = scan_entries(data, HEADER_SIZE, collect=False)
    assert count == len(whole.positions)
    assert (scan.valid_bytes, scan.stop, scan.stop_detail) == (
        whole.valid_bytes, whole.stop, whole.stop_detail)


def test_a_log_reopens_with_its_counts(monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> None:
    monkeypatch.setattr(recovery, "_COUNT_BATCH", 4)
    path = str(tmp_path)
    records = [Record(OffsetCommitKey("g", "t", i % 3), OffsetCommitValue(i, 0, "", i))
               for i in range(50)]
    with Log.open(path, fsync="never") as log:
        log.append(records)
    with Log.open(path) as log:
        assert log.next_index == 50
        assert list(log.replay()) == records
