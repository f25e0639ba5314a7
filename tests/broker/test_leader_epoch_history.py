"""A partition's leader-epoch history (``coordinator.broker.leader_epochs``): Kafka's
``LeaderEpochFileCache`` rules (tests named after ``LeaderEpochFileCacheTest``'s), and the
history a partition reads off its batches' stamps -- the same after a restore from the same
batches, cut at the log start offset."""

from __future__ import annotations

from broker_support import make_batch

from coordinator.broker.leader_epochs import LeaderEpochs
from coordinator.broker.partition_log import PartitionLog
from coordinator.broker.topics import TopicStore
from coordinator.txn.producer_state import AppendOrigin
from wire.records import parse_batches

UNDEFINED = (-1, -1)


def history(*entries: tuple[int, int]) -> LeaderEpochs:
    epochs = LeaderEpochs()
    for epoch, start in entries:
        epochs.assign(epoch, start)
    return epochs


def test_should_return_log_end_offset_if_latest_epoch_requested() -> None:
    epochs = history((2, 5), (3, 6), (4, 7))
    assert epochs.end_offset_for(4, 4, 10) == (4, 10)


def test_should_return_undefined_offset_if_undefined_epoch_requested() -> None:
    assert history((2, 5)).end_offset_for(-1, 2, 10) == UNDEFINED


def test_should_return_undefined_if_requested_epoch_is_newer_than_every_known() -> None:
    assert history((2, 5)).end_offset_for(3, 2, 10) == UNDEFINED


def test_should_get_first_offset_of_subsequent_epoch_when_previous_epoch_requested() -> None:
    epochs = history((0, 0), (1, 4), (2, 10))
    assert epochs.end_offset_for(1, 2, 20) == (1, 10)
    assert epochs.end_offset_for(0, 2, 20) == (0, 4)


def test_should_return_next_available_epoch_if_there_is_no_exact_epoch_for_the_one_requested(
) -> None:
    epochs = history((0, 0), (2, 10), (5, 17))
    assert epochs.end_offset_for(1, 5, 20) == (0, 10)
    assert epochs.end_offset_for(3, 5, 20) == (2, 17)


def test_an_epoch_older_than_every_known_answers_itself_and_the_first_start() -> None:
    # Kafka's code (not its javadoc): the data before the first epoch is gone; the caller
    # learns where the log's history begins.
    assert history((3, 100), (4, 150)).end_offset_for(1, 4, 200) == (1, 100)


def test_should_not_overwrite_an_epoch_or_go_back() -> None:
    epochs = history((2, 6), (2, 9), (1, 12), (3, 12))
    assert epochs.entries == [(2, 6), (3, 12)]


def test_the_current_epoch_counts_from_the_log_end_before_a_batch_carries_it() -> None:
    # Kafka assigns (epoch, log end) when the broker becomes leader (Partition.makeLeader).
    epochs = history((0, 0))
    assert epochs.end_offset_for(1, 1, 600) == (1, 600)
    assert epochs.end_offset_for(0, 1, 600) == (0, 600)
    assert epochs.end_offset_for(0, 0, 600) == (0, 600)
    assert epochs.entries == [(0, 0)]  # a read changes nothing
    assert LeaderEpochs().end_offset_for(0, 0, 0) == (0, 0)


def test_should_update_saved_offset_when_offset_to_clear_to_is_between_epochs() -> None:
    epochs = history((2, 6), (3, 8), (4, 11))
    epochs.truncate_from_start(9)
    assert epochs.entries == [(3, 9), (4, 11)]


def test_should_retain_latest_epoch_on_clear_all_earliest_and_update_its_offset() -> None:
    epochs = history((2, 6), (3, 8), (4, 11))
    epochs.truncate_from_start(15)
    assert epochs.entries == [(4, 15)]


def test_should_not_clear_anything_if_offset_to_first_offset() -> None:
    epochs = history((2, 6), (3, 8))
    epochs.truncate_from_start(5)
    assert epochs.entries == [(2, 6), (3, 8)]
    epochs.truncate_from_start(6)
    assert epochs.entries == [(2, 6), (3, 8)]


# -- the history a partition reads off its batches ------------------------------------------


def fill(log: PartitionLog, stamps: list[int]) -> None:
    for i, epoch in enumerate(stamps):
        log.leader_epoch = epoch
        data = make_batch([b"v%d" % i, b"w"])
        (header,) = parse_batches(data)
        log.append(data, header)


def stored(log: PartitionLog) -> list[int]:
    return [h.partition_leader_epoch for h in parse_batches(b"".join(b.data for b in log.batches))]


def test_appends_start_an_epoch_at_the_first_batch_stamped_with_it() -> None:
    log = PartitionLog(0)
    fill(log, [0, 0, 1, 3, 3])
    assert stored(log) == [0, 0, 1, 3, 3]
    assert log.epochs.entries == [(0, 0), (1, 4), (3, 6)]
    assert log.epochs.end_offset_for(2, 3, log.log_end_offset) == (1, 6)


def test_a_restore_from_the_same_batches_has_the_same_history() -> None:
    log = PartitionLog(0)
    fill(log, [0, 2, 2, 5])
    log.advance_log_start(3)
    restored = PartitionLog(0)
    for batch in log.batches:
        restored.restore(batch.data)
    restored.advance_log_start(3)
    assert restored.epochs.entries == log.epochs.entries == [(2, 3), (5, 6)]
    assert restored.leader_epoch == 5


def test_a_marker_stamped_with_an_older_epoch_starts_nothing() -> None:
    store = TopicStore()
    store.create_topic("t", 1)
    log = store.partition("t", 0)
    assert log is not None
    fill(log, [0, 2])
    log.leader_epoch = 1  # (a stale stamp)
    producer_id = store.next_producer_id()
    data = make_batch([b"x"], producer_id=producer_id, producer_epoch=0, base_sequence=0,
                      transactional=True)
    (header,) = parse_batches(data)
    store.append("t", 0, data, header, AppendOrigin.CLIENT)
    store.write_marker("t", 0, producer_id, 0, 0, True, 1)
    assert log.epochs.entries == [(0, 0), (2, 2)]
