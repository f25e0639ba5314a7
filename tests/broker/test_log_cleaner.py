"""Kafka's ``LogCleanerTest``, mirrored by name where it applies without replication (see
``tests/storage/COVERAGE_log_cleaner.md``), against a durable compacted partition."""

from __future__ import annotations

from pathlib import Path

from broker_support import make_batch
from cleaner_support import Cleaning

from coordinator.broker.batches import validate_produced_batch
from storage.log_cleaner import ENTRY_COST

SMALL = {"segment.bytes": "1024"}


def test_clean_segments(tmp_path: Path) -> None:
    log = Cleaning(tmp_path, SMALL)
    for i in range(40):
        log.append([(i % 10, i)])
    log.roll()
    log.clean()
    assert log.values_by_key() == {k: 30 + k for k in range(10)}
    assert log.offsets_in_log() == list(range(30, 40))
    assert log.partition.log_start_offset == 0
    assert log.partition.log_end_offset == 40
    log.reload()
    assert log.offsets_in_log() == list(range(30, 40))
    assert (log.partition.log_start_offset, log.partition.log_end_offset) == (0, 40)
    log.close()


DAY = 86_400_000
LARGE = 1_000_000  # Kafka's largeTimestamp: some time after the records were written


def two_pass_clean(log: Cleaning, now_ms: int, first_dirty: int | None = None) -> None:
    """Kafka's runTwoPassClean: the first pass stamps the delete horizon, the second (after
    delete.retention.ms) removes what it covers."""
    log.clean(now_ms, first_dirty)
    log.clean(now_ms + DAY + 1, first_dirty)


def test_duplicate_check_after_cleaning(tmp_path: Path) -> None:
    log = Cleaning(tmp_path, {"segment.bytes": "2048"})
    log.append_idempotent(1, [1, 2, 3])
    log.append_idempotent(2, [3, 1, 4])
    log.append_idempotent(3, [1, 4])
    log.roll()
    log.clean()
    assert log.last_offsets_per_batch() == [2, 5, 7]
    assert log.keys_in_log() == [2, 3, 1, 4]
    assert log.offsets_in_log() == [1, 3, 6, 7]
    log.reload()
    # a retried batch of each producer is still recognised as a duplicate after a restart
    log.sequences.clear()
    assert log.append_idempotent(1, [1, 2, 3]) == 0
    assert log.append_idempotent(2, [3, 1, 4]) == 3
    assert log.append_idempotent(3, [1, 4]) == 6
    assert log.partition.log_end_offset == 8
    log.close()


def test_basic_transaction_aware_cleaning(tmp_path: Path) -> None:
    log = Cleaning(tmp_path, {"segment.bytes": "2048"})
    log.append_txn(1, [1, 2])
    log.append_txn(2, [2, 3])
    log.append_txn(1, [3, 4])
    log.marker(1, commit=False)
    log.marker(2, commit=True)
    log.append_txn(1, [2])
    log.marker(1, commit=True)
    aborted = log.partition.txn.aborted.all()
    log.roll()
    log.clean()
    assert log.keys_in_log() == [3, 2]
    assert log.offsets_in_log() == [3, 6, 7, 8, 9]
    assert log.partition.txn.aborted.all() == aborted  # the marker still has data
    log.close()


def test_commit_marker_removal(tmp_path: Path) -> None:
    log = Cleaning(tmp_path, {"segment.bytes": "256"})
    log.append_txn(1, [1])
    log.append_txn(1, [2, 3])
    log.marker(1, commit=True)
    log.append_txn(1, [2])
    log.marker(1, commit=True)
    log.roll()
    log.clean(LARGE)
    assert log.keys_in_log() == [1, 3, 2]
    assert log.offsets_in_log() == [0, 2, 3, 4, 5]
    log.append_txn(1, [1, 3])
    log.marker(1, commit=True)
    log.roll()
    # the first cleaning keeps the commit marker at 3: its transaction still had records
    log.clean(LARGE)
    assert log.keys_in_log() == [2, 1, 3]
    assert log.offsets_in_log() == [3, 4, 5, 6, 7, 8]
    log.clean(LARGE)  # the same time: not removed early
    assert log.offsets_in_log() == [3, 4, 5, 6, 7, 8]
    log.clean(2**62)  # past the delete horizon
    assert log.keys_in_log() == [2, 1, 3]
    assert log.offsets_in_log() == [4, 5, 6, 7, 8]
    log.close()


def test_abort_marker_removal(tmp_path: Path) -> None:
    log = Cleaning(tmp_path, {"segment.bytes": "256"})
    log.append_txn(1, [1])
    log.append_txn(1, [2, 3])
    log.marker(1, commit=False)
    log.append_txn(1, [3])
    log.marker(1, commit=True)
    log.roll()
    # aborted records are removed, the abort marker stays
    log.clean(LARGE)
    assert log.keys_in_log() == [3]
    assert log.offsets_in_log() == [3, 4, 5]
    two_pass_clean(log, LARGE)
    assert log.keys_in_log() == [3]
    assert log.offsets_in_log() == [4, 5]
    # no data of the aborted transaction is left: neither is its index entry
    assert log.partition.txn.aborted.all() == []
    log.reload()
    assert log.offsets_in_log() == [4, 5]
    assert log.partition.txn.aborted.all() == []
    log.close()


def test_cleaning_with_deletes(tmp_path: Path) -> None:
    log = Cleaning(tmp_path, SMALL)
    for i in range(20):
        log.append([(i, i)])
    for key in range(0, 20, 2):
        log.append([(key, None)])
    for i in range(20, 40):
        log.append([(i, i)])
    log.roll()
    log.clean(LARGE)
    keys = set(log.keys_in_log())
    # the tombstones stay (delete.retention.ms), the values they delete are gone
    assert log.values_by_key() == {k: (None if k < 20 and k % 2 == 0 else k) for k in keys}
    # tombstones past their horizon go in a round whose offset map covers them
    two_pass_clean(log, LARGE, first_dirty=0)
    assert not any(k in set(log.keys_in_log()) for k in range(0, 20, 2))
    log.close()


def test_clean_tombstone(tmp_path: Path) -> None:
    """The horizon counts from the cleaning that first kept the tombstone, whatever the
    record's own (old) timestamp."""
    log = Cleaning(tmp_path, {"delete.retention.ms": "1000"})
    log.append([(0, 0)])
    log.append([(0, None)])
    log.append([(1, 1)])
    log.roll()
    log.clean(5_000)
    assert log.offsets_in_log() == [1, 2]  # the tombstone stays until its horizon
    horizon = log.headers()[0]
    assert horizon.attributes & 0x40 and horizon.base_timestamp == 6_000  # type: ignore[attr-defined]
    log.clean(5_999)
    assert log.offsets_in_log() == [1, 2]
    log.clean(6_001, first_dirty=0)
    assert log.offsets_in_log() == [2]
    log.close()


def test_log_cleaner_retains_producer_last_sequence(tmp_path: Path) -> None:
    log = Cleaning(tmp_path, SMALL)
    log.append([(0, 0)])
    log.append([(0, 1)], producer_id=1, producer_epoch=0, base_sequence=0)
    log.append([(0, 2)], producer_id=2, producer_epoch=0, base_sequence=0)
    log.append([(0, 3)], producer_id=3, producer_epoch=0, base_sequence=0)
    log.append([(1, 1)], producer_id=2, producer_epoch=0, base_sequence=1)
    log.roll()
    log.clean()
    assert log.last_offsets_per_batch() == [1, 3, 4]
    assert log.keys_in_log() == [0, 1]
    assert log.offsets_in_log() == [3, 4]
    log.close()


def test_log_cleaner_retains_last_sequence_even_if_transaction_aborted(tmp_path: Path) -> None:
    log = Cleaning(tmp_path, SMALL)
    log.append_txn(1, [1])
    log.append_txn(1, [2, 3])
    log.marker(1, commit=False)
    log.roll()
    log.clean()
    assert log.last_offsets_per_batch() == [2, 3]
    assert log.keys_in_log() == []
    assert log.offsets_in_log() == [3]
    log.append_txn(1, [1, 5])
    log.roll()
    log.clean()
    assert log.last_offsets_per_batch() == [3, 5]
    assert log.keys_in_log() == [1, 5]
    assert log.offsets_in_log() == [3, 4, 5]
    log.close()


def test_cleaning_with_unkeyed_messages(tmp_path: Path) -> None:
    log = Cleaning(tmp_path, SMALL)
    for i in range(10):
        log.append([(i % 3, i)])
        batch = make_batch([b"unkeyed"])
        log.store.append("t", 0, batch, validate_produced_batch(batch, 9, 1 << 20))
    log.roll()
    log.clean()
    assert sorted(log.keys_in_log()) == [0, 1, 2]
    assert len(log.offsets_in_log()) == 3  # the unkeyed records are gone (Kafka's too)
    log.close()


def test_partial_segment_clean(tmp_path: Path) -> None:
    log = Cleaning(tmp_path, SMALL)
    log.manager.dedupe_buffer_size = 2 * ENTRY_COST  # room for one key at load factor 0.9
    for key in (0, 1, 0, 1, 0):
        log.append([(key, key)])
    log.roll()
    log.clean(first_dirty=2)
    assert log.keys_in_log() == [1, 0, 1, 0]
    assert log.offsets_in_log() == [1, 2, 3, 4]
    log.clean(first_dirty=3)
    assert log.keys_in_log() == [0, 1, 0]
    assert log.offsets_in_log() == [2, 3, 4]
    log.clean(first_dirty=4)
    assert log.keys_in_log() == [1, 0]
    assert log.offsets_in_log() == [3, 4]
    log.close()
