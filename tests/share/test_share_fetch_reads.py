"""What a ShareFetch returns for its acquired ranges: the whole batches holding them, in log
order, and no others; ranges cut to the request's batch size."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import trio

from coordinator.broker.partition_log import StoredBatch
from coordinator.server.share_support import read_acquired, split_by_batch_size
from coordinator.share import AcquiredRecords


def _log(*spans: tuple[int, int]) -> Any:
    return SimpleNamespace(batches=[
        StoredBatch(first, last, 0, f"[{first}-{last}]".encode()) for first, last in spans])


LOG = _log((0, 4), (5, 9), (10, 14), (15, 19))


def _read(log: Any, acquired: list[AcquiredRecords]) -> bytes:
    return trio.run(read_acquired, log, acquired)


def test_whole_batches_holding_the_acquired_offsets() -> None:
    assert _read(LOG, [AcquiredRecords(6, 7, 1)]) == b"[5-9]"
    assert _read(LOG, [AcquiredRecords(4, 5, 1)]) == b"[0-4][5-9]"
    assert _read(LOG, [AcquiredRecords(0, 19, 1)]) == b"[0-4][5-9][10-14][15-19]"


def test_batches_between_acquired_ranges_are_left_out() -> None:
    ranges = [AcquiredRecords(16, 16, 2), AcquiredRecords(1, 2, 1)]  # any order
    assert _read(LOG, ranges) == b"[0-4][15-19]"


def test_nothing_acquired_reads_nothing() -> None:
    assert _read(LOG, []) == b""
    assert _read(_log(), [AcquiredRecords(0, 3, 1)]) == b""


def test_ranges_cut_to_the_batch_size() -> None:
    runs = [AcquiredRecords(0, 6, 1), AcquiredRecords(9, 9, 3)]
    assert split_by_batch_size(runs, 3) == [
        AcquiredRecords(0, 2, 1), AcquiredRecords(3, 5, 1), AcquiredRecords(6, 6, 1),
        AcquiredRecords(9, 9, 3)]
    assert split_by_batch_size(runs, 0) == runs
