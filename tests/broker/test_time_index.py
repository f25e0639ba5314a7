"""ListOffsets by timestamp is bounded work (issue 32 item 2, the time index): a batch whose
header claims a later max timestamp than its records hold made one search decode 10 MB of
records on the event loop. The partition's time index starts the search at the first batch
that can hold the answer, and a search decodes at most ``SCAN_BUDGET_BYTES`` of records."""

from __future__ import annotations

from typing import Any

import crc32c
import pytest
import trio
from broker_support import make_batch

from coordinator.broker import partition_log as partition_log_module
from coordinator.broker.partition_log import PartitionLog
from storage.time_index import SCAN_BUDGET_BYTES, TimeIndex
from wire.records import with_base_offset


def _claiming(batch: bytes, max_timestamp: int) -> bytes:
    """``batch`` with its header's max timestamp replaced (CRC recomputed)."""
    data = bytearray(batch)
    data[35:43] = max_timestamp.to_bytes(8, "big")
    data[17:21] = crc32c.crc32c(bytes(data[21:])).to_bytes(4, "big")
    return bytes(data)


@pytest.fixture
def decoded(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The sizes of the batches a search decodes."""
    sizes: list[int] = []
    real = partition_log_module.record_timestamps

    def counting(batch: bytes) -> Any:
        sizes.append(len(batch))
        return real(batch)

    monkeypatch.setattr(partition_log_module, "record_timestamps", counting)
    return sizes


def test_lying_max_timestamps_do_not_make_one_search_decode_everything(
    decoded: list[int],
) -> None:
    log = PartitionLog(0)
    value = b"x" * 50_000
    for offset in range(200):  # 10 MB of records at 1,000 whose headers claim 10^12
        log.restore(with_base_offset(_claiming(make_batch([value], [1_000]), 10**12), offset))
    log.restore(with_base_offset(make_batch([b"late"], [5_000]), 200))
    found = trio.run(log.offset_for_timestamp, 4_000)
    assert found is not None and found[1] <= 200  # never past the wanted record
    assert sum(decoded) <= SCAN_BUDGET_BYTES + 60_000


def test_the_index_starts_the_search_at_the_batch_holding_the_answer(
    decoded: list[int],
) -> None:
    log = PartitionLog(0)
    for offset in range(1_000):
        log.restore(with_base_offset(make_batch([b"v", b"w"], [offset * 10, offset * 10 + 5]),
                                     2 * offset))
    assert len(log.time_index) == 1_000
    assert trio.run(log.offset_for_timestamp, 5_003) == (5_005, 1_001)
    assert trio.run(log.offset_for_timestamp, 0) == (0, 0)
    assert trio.run(log.offset_for_timestamp, 9_996) is None
    assert len(decoded) == 2  # one batch per search that found one
    assert trio.run(log.max_timestamp_offset) == (9_995, 1_999)
    log.advance_log_start(1_500)  # DeleteRecords: the index follows the batches left
    assert trio.run(log.offset_for_timestamp, 0) == (7_500, 1_500)
    assert trio.run(log.max_timestamp_offset) == (9_995, 1_999)


def test_out_of_order_timestamps_keep_only_rising_entries() -> None:
    index = TimeIndex()
    for max_timestamp, offset in [(100, 0), (50, 3), (300, 5), (200, 9), (300, 12), (400, 20)]:
        index.append(max_timestamp, offset)
    assert list(zip(index.timestamps, index.offsets, strict=True)) == [
        (100, 0), (300, 5), (400, 20)]
    assert [index.lookup(t) for t in (0, 100, 101, 300, 301, 400, 401)] == [
        0, 0, 5, 5, 20, 20, None]
    assert index.largest() == (400, 20)
    index.rebuild([(50, 3), (200, 9)])
    assert index.lookup(60) == 9 and index.largest() == (200, 9)
