"""Kafka's ``LogCleanerTest`` transaction cases spanning segments and empty batches (see
``tests/storage/COVERAGE_log_cleaner.md``)."""

from __future__ import annotations

from pathlib import Path

from cleaner_support import Cleaning

DAY = 86_400_000
LARGE = 1_000_000
LONG_MAX = 2**63 - 1


def two_pass_clean(log: Cleaning, now_ms: int) -> None:
    log.clean(now_ms, first_dirty=0)
    log.clean(now_ms + DAY + 1, first_dirty=0)


def test_clean_with_transactions_spanning_segments(tmp_path: Path) -> None:
    log = Cleaning(tmp_path, {"segment.bytes": "1024"})
    log.append_txn(1, [1, 2])
    log.append_txn(3, [2, 3])
    log.append_txn(2, [3, 4])
    log.roll()
    log.append_txn(2, [5, 6])
    log.append_txn(3, [6, 7])
    log.append_txn(1, [7, 8])
    log.marker(2, commit=False)
    log.append_txn(3, [8, 9])
    log.marker(3, commit=True)
    log.append_txn(1, [9, 10])
    log.marker(1, commit=False)
    # only the first segment is below the last stable offset's segment... here every
    # transaction is decided, so both segments are cleaned up to the active one
    log.roll()
    log.clean()
    assert log.keys_in_log() == [2, 3, 6, 7, 8, 9]
    log.roll()
    log.append_txn(2, [11])
    log.append_txn(1, [12])
    log.roll()
    log.clean(first_dirty=0)
    assert log.keys_in_log() == [2, 3, 6, 7, 8, 9, 11, 12]
    log.close()


def test_committed_transaction_spanning_segments(tmp_path: Path) -> None:
    log = Cleaning(tmp_path, {"segment.bytes": "128"})
    log.append_txn(1, [1])
    log.roll()
    log.marker(1, commit=True)
    log.roll()
    two_pass_clean(log, LARGE)
    assert log.offsets_in_log() == [0, 1]
    assert log.last_offsets_per_batch() == [0, 1]
    log.close()


def test_aborted_transaction_spanning_segments(tmp_path: Path) -> None:
    log = Cleaning(tmp_path, {"segment.bytes": "128"})
    log.append_txn(1, [1])
    log.roll()
    log.marker(1, commit=False)
    log.roll()
    # the batch stays (empty: the producer's last), the marker too (its data was seen)
    log.clean(LARGE, first_dirty=0)
    assert log.offsets_in_log() == [1]
    assert log.last_offsets_per_batch() == [0, 1]
    log.clean(LONG_MAX, first_dirty=0)
    assert log.offsets_in_log() == [1]
    assert log.last_offsets_per_batch() == [0, 1]
    log.reload()  # the empty batch and the marker replay as a closed transaction
    assert log.last_offsets_per_batch() == [0, 1]
    assert log.partition.last_stable_offset == log.partition.log_end_offset == 2
    log.close()


def test_commit_marker_retention_with_empty_batch(tmp_path: Path) -> None:
    log = Cleaning(tmp_path, {"segment.bytes": "256"})
    log.append_txn(1, [2, 3])  # offsets 0, 1
    log.roll()
    log.append_txn(2, [2, 3])  # offsets 2, 3
    log.marker(2, commit=True)  # 4
    log.roll()
    log.append([(2, 2)])  # 5
    log.append([(3, 3)])  # 6
    log.marker(1, commit=True)  # 7
    log.roll()
    log.clean(LARGE, first_dirty=0)
    assert log.keys_in_log() == [2, 3]
    assert log.offsets_in_log() == [4, 5, 6, 7]
    assert log.last_offsets_per_batch() == [1, 3, 4, 5, 6, 7]
    # the empty batches stay: they hold the producers' last sequences
    log.clean(LARGE, first_dirty=0)
    assert log.offsets_in_log() == [4, 5, 6, 7]
    assert log.last_offsets_per_batch() == [1, 3, 4, 5, 6, 7]
    log.append_txn(2, [1])  # 8
    log.marker(2, commit=True)  # 9
    log.roll()
    log.clean(LARGE, first_dirty=0)
    assert log.keys_in_log() == [2, 3, 1]
    assert log.offsets_in_log() == [4, 5, 6, 7, 8, 9]
    assert log.last_offsets_per_batch() == [1, 4, 5, 6, 7, 8, 9]
    two_pass_clean(log, LARGE)
    assert log.keys_in_log() == [2, 3, 1]
    assert log.offsets_in_log() == [5, 6, 7, 8, 9]
    assert log.last_offsets_per_batch() == [1, 5, 6, 7, 8, 9]
    log.close()


def test_clean_empty_control_batch(tmp_path: Path) -> None:
    log = Cleaning(tmp_path, {"segment.bytes": "256"})
    log.marker(1, commit=True)  # 0: a marker without a transaction
    log.append([(2, 2)])  # 1
    log.append([(3, 3)])  # 2
    log.roll()
    two_pass_clean(log, LARGE)
    assert log.keys_in_log() == [2, 3]
    assert log.offsets_in_log() == [1, 2]
    assert log.last_offsets_per_batch() == [0, 1, 2]  # an empty batch keeps the epoch
    log.clean(LONG_MAX, first_dirty=0)  # an empty control batch cleans without error
    assert log.offsets_in_log() == [1, 2]
    assert log.last_offsets_per_batch() == [0, 1, 2]
    log.reload()  # and replays
    assert log.last_offsets_per_batch() == [0, 1, 2]
    log.close()
