"""The log cleaner and the rest of a partition: a crash during cleaning, open
transactions, reads at removed offsets, ListOffsets, the time index, ``compact,delete``
retention, compressed batches, the active segment (Kafka's ``testRecoveryAfterCrash``,
``testCleaningWithUncleanableSection`` and kcoord's own; see
``tests/storage/COVERAGE_log_cleaner.md``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import trio
from cleaner_support import Cleaning, keyed_batch

from coordinator.broker.batches import validate_produced_batch
from coordinator.broker.log_cleaning import run_log_cleaner
from coordinator.broker.topic_files import TOPICS_DIR
from storage.log import Log

SMALL = {"segment.bytes": "1024"}


def fill(log: Cleaning, rounds: int = 4, keys: int = 10) -> None:
    for r in range(rounds):
        for k in range(keys):
            log.append([(k, r * 100 + k)], timestamp=1_000 + r * 100 + k)


def test_recovery_after_crash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A crash before the swap's commit point leaves a .cleaned file: the restart deletes
    it and the log is as before; a crash after it leaves a .swap: the restart completes
    the swap. A round commits every group before it installs the first."""
    log = Cleaning(tmp_path, SMALL)
    fill(log)
    log.roll()
    before = log.offsets_in_log()

    def crash(self: Log, *args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt("SIGKILL")  # after the .swaps are committed, before a swap

    monkeypatch.setattr(Log, "replace_segments", crash)
    with pytest.raises(KeyboardInterrupt):
        log.clean()
    names = os.listdir(log.directory)
    assert sum(n.endswith(".swap") for n in names) == 4
    assert log.offsets_in_log() == before  # nothing installed: memory is as it was
    monkeypatch.undo()
    log.reload()
    assert not any(n.endswith((".swap", ".cleaned")) for n in os.listdir(log.directory))
    # every group's swap was committed: the restart completed them all
    assert log.offsets_in_log() == before[-10:]
    assert log.partition.log_start_offset == 0 and log.partition.log_end_offset == 40
    log.close()

    # a .cleaned file a crash left mid-write is thrown away
    (log.directory / ("0" * 20 + "-" + "0" * 19 + "9.cleaned")).write_bytes(b"torn")
    log.reload()
    assert log.offsets_in_log() == before[-10:]
    log.clean()
    assert log.offsets_in_log() == before[-10:]
    log.close()


def test_cleaning_with_uncleanable_section(tmp_path: Path) -> None:
    """An open transaction's data, and everything after its first offset, is never
    cleaned; after its commit it is."""
    log = Cleaning(tmp_path, SMALL)
    fill(log, rounds=2)
    log.append_txn(7, [1, 2])  # open: offsets 20, 21
    fill(log, rounds=2)
    log.roll()
    log.clean()
    offsets = log.offsets_in_log()
    assert 20 in offsets and 21 in offsets
    assert all(o in offsets for o in range(22, 42))  # beyond the LSO's segment: untouched
    assert log.partition.last_stable_offset == 20
    log.marker(7, commit=True)
    log.roll()
    log.clean(first_dirty=0)
    assert log.values_by_key() == {k: 100 + k for k in range(10)}
    log.close()


def test_fetch_at_a_removed_offset_returns_the_next_batch(tmp_path: Path) -> None:
    log = Cleaning(tmp_path, SMALL)
    fill(log)
    log.roll()
    log.clean()
    partition = log.partition
    (first, *_) = trio.run(partition.read, 0, 1 << 20, True, partition.high_watermark)
    assert int.from_bytes(first[:8], "big") == 30
    assert trio.run(partition.read, 35, 1 << 20, True, partition.high_watermark)[0][:8] == \
        (35).to_bytes(8, "big")
    assert partition.log_start_offset == 0  # ListOffsets earliest
    assert partition.offset_in_range(0)
    # the time index and ListOffsets by timestamp follow the batches left
    assert trio.run(partition.offset_for_timestamp, 0) == (1_300, 30)
    assert trio.run(partition.offset_for_timestamp, 1_305) == (1_305, 35)
    assert trio.run(partition.max_timestamp_offset) == (1_309, 39)
    assert partition.size_bytes == sum(len(b.data) for b in partition.batches)
    log.close()


def test_compressed_batches_are_rewritten_with_their_codec(tmp_path: Path) -> None:
    log = Cleaning(tmp_path, SMALL)
    log.append([(k, 7) for k in range(20)], compression=1)  # offsets 0-19
    log.append([(k, 8) for k in range(10)] * 2, compression=1)  # offsets 20-39
    log.roll()
    log.clean()
    assert log.values_by_key() == {k: 8 if k < 10 else 7 for k in range(20)}
    assert log.offsets_in_log() == list(range(10, 20)) + list(range(30, 40))
    first, second = log.headers()
    # the first batch rebuilt (gzip again, its offsets kept), the second shortened too
    assert first.attributes & 0x07 == 1  # type: ignore[attr-defined]
    assert (first.base_offset, first.last_offset, first.record_count) == (0, 19, 10)  # type: ignore[attr-defined]
    assert (second.base_offset, second.record_count) == (20, 10)  # type: ignore[attr-defined]
    log.reload()
    assert log.offsets_in_log() == list(range(10, 20)) + list(range(30, 40))
    log.close()


def test_the_active_segment_is_never_cleaned(tmp_path: Path) -> None:
    log = Cleaning(tmp_path, {"segment.bytes": "1000000"})
    fill(log)
    topic = log.store.get("t")
    assert topic is not None
    assert log.manager.plan(topic, 0, 0, {}) is None  # one (active) segment: nothing to do
    assert log.offsets_in_log() == list(range(40))
    log.close()


def test_compact_delete_retention_runs_with_the_cleaner(tmp_path: Path) -> None:
    log = Cleaning(tmp_path, {**SMALL, "cleanup.policy": "compact,delete",
                              "retention.ms": "1000", "min.cleanable.dirty.ratio": "0.01"})
    fill(log)
    log.roll()
    # the retention task leaves compacted topics to the cleaner
    assert log.store.enforce_retention(10_000_000, {}) == []
    clock = [10_000_000]

    async def main() -> None:
        with trio.move_on_after(3):
            await run_log_cleaner(log.store, {"log.cleaner.backoff.ms": "10"},
                                  lambda: clock[0])

    trio.run(main)
    # every closed segment was older than retention.ms: gone, the log start moved
    assert log.partition.log_start_offset == 40
    assert log.offsets_in_log() == []
    log.close()


def test_the_cleaner_loop_cleans_the_filthiest_partition(tmp_path: Path) -> None:
    log = Cleaning(tmp_path, SMALL)
    fill(log)
    log.roll()

    async def main() -> None:
        with trio.move_on_after(3):
            await run_log_cleaner(log.store, {"log.cleaner.backoff.ms": "10"}, lambda: 0)

    trio.run(main)
    assert log.offsets_in_log() == list(range(30, 40))
    disabled = Cleaning(tmp_path / "off", SMALL)
    fill(disabled)
    disabled.roll()

    async def off() -> None:
        with trio.move_on_after(1):
            await run_log_cleaner(disabled.store, {"log.cleaner.enable": "false",
                                                   "log.cleaner.backoff.ms": "10"}, lambda: 0)

    trio.run(off)
    assert disabled.offsets_in_log() == list(range(40))
    log.close()
    disabled.close()


def test_grab_filthiest_compacted_log_returns_log_with_dirtiest_ratio(tmp_path: Path) -> None:
    """LogCleanerManagerTest: of two compacted partitions, the dirtier goes first; a
    ``delete`` topic is never picked."""
    log = Cleaning(tmp_path, {**SMALL, "min.cleanable.dirty.ratio": "0.01"})
    log.store.create_topic("u", 1, {**SMALL, "cleanup.policy": "compact"})
    log.store.create_topic("plain", 1, SMALL)
    fill(log)
    log.roll()
    log.clean()  # "t" is clean up to its active segment
    fill(log, rounds=1)
    log.roll()
    for r in range(4):
        for name in ("u", "plain"):
            batch = keyed_batch([(r, r)])
            log.store.append(name, 0, batch, validate_produced_batch(batch, 9, 1 << 20))
    assert log.store.files is not None
    for name in ("u", "plain"):
        topic = log.store.get(name)
        assert topic is not None
        partition_log = log.store.files.partition_log(topic.topic_id, 0)
        assert partition_log is not None
        partition_log.roll()
    job = log.manager.grab_filthiest(0, {})
    assert job is not None and job.topic.name == "u"  # ratio 1.0 against "t"'s
    log.close()


def test_concurrent_log_cleanup_and_topic_deletion(tmp_path: Path) -> None:
    """LogCleanerManagerTest: a topic deleted while its round ran: the result is dropped,
    nothing fails, no file is left behind."""
    log = Cleaning(tmp_path, SMALL)
    fill(log)
    log.roll()
    topic = log.store.get("t")
    assert topic is not None
    job = log.manager.plan(topic, 0, 0, {})
    assert job is not None
    directory = log.directory
    result = log.manager.clean(job)
    log.store.delete_topic("t")
    log.manager.apply(job, result)  # ignored: the topic is gone
    assert not directory.exists()
    assert log.store.get("t") is None
    log.close()


def _zstd(batch: bytes) -> bytes:
    """The batch with its records zstd-compressed (attributes, length and CRC updated)."""
    import cramjam

    from wire.checksum import crc32c

    data = bytearray(batch[:61]) + bytes(cramjam.zstd.compress(batch[61:]))
    data[21:23] = (int.from_bytes(data[21:23], "big") | 4).to_bytes(2, "big")
    data[8:12] = (len(data) - 12).to_bytes(4, "big")
    data[17:21] = crc32c(bytes(data[21:])).to_bytes(4, "big")
    return bytes(data)


def test_zstd_batches_are_rewritten_with_their_codec(tmp_path: Path) -> None:
    from storage.kafka_batch import read_records
    from wire.records import parse_batches

    log = Cleaning(tmp_path, SMALL)
    for records in ([(k, 1) for k in range(6)], [(k, 2) for k in range(3)]):
        batch = _zstd(keyed_batch(records))
        log.store.append("t", 0, batch, validate_produced_batch(batch, 9, 1 << 20))
    log.roll()
    log.clean()
    first = log.partition.batches[0].data
    (header,) = parse_batches(first)  # the CRC checks
    assert header.attributes & 0x07 == 4 and header.last_offset == 5
    assert [(r.offset, r.key) for r in read_records(first, header)] == [
        (3, b"3"), (4, b"4"), (5, b"5")]
    log.close()


def test_the_checkpoint_survives_a_restart(tmp_path: Path) -> None:
    """Kafka's cleaner-offset-checkpoint: after a restart the next round starts where the
    last one ended (a missing or garbled file: from the log start)."""
    log = Cleaning(tmp_path, SMALL)
    fill(log)
    log.roll()

    async def main() -> None:
        with trio.move_on_after(2):
            await run_log_cleaner(log.store, {"log.cleaner.backoff.ms": "10"}, lambda: 0)

    trio.run(main)
    topic = log.store.get("t")
    assert topic is not None
    log.reload()
    assert log.manager.checkpoints == {(topic.topic_id, 0): 40}
    (tmp_path / TOPICS_DIR / "cleaner-offset-checkpoint").write_text("garbage")
    log.reload()
    assert log.manager.checkpoints == {}
    log.close()
