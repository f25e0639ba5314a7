"""A partition's transactional state in the topic store (issue 12): markers are CRC-valid
control batches, the last stable offset and the aborted index follow data and markers, and
a restart rebuilds all of it, and an idempotent producer's sequence state, from the batches
in the data directory alone."""

from __future__ import annotations

from pathlib import Path

import pytest
from broker_support import make_batch
from test_topic_files import close, open_store, produce

from coordinator.broker.control_batches import batch_info, control_batch
from coordinator.broker.errors import BrokerError
from coordinator.broker.topics import TopicStore
from coordinator.txn.producer_entry import ControlType
from wire import ErrorCode
from wire.records import parse_batches

PID = 7


def txn_batch(values: list[bytes], sequence: int, epoch: int = 0) -> bytes:
    return make_batch(values, producer_id=PID, producer_epoch=epoch, base_sequence=sequence,
                      transactional=True)


def test_a_marker_is_a_crc_valid_control_batch() -> None:
    data = control_batch(PID, 3, 5, commit=True, timestamp=1_234)
    (header,) = parse_batches(data, verify_crc=True)
    assert header.is_control and header.is_transactional
    assert (header.producer_id, header.producer_epoch, header.base_sequence) == (PID, 3, -1)
    assert (header.record_count, header.max_timestamp) == (1, 1_234)
    info = batch_info(header, data)
    assert (info.control, info.coordinator_epoch) == (ControlType.COMMIT, 5)
    abort = control_batch(PID, 3, 0, commit=False, timestamp=0)
    assert batch_info(parse_batches(abort)[0], abort).control == ControlType.ABORT


def test_lso_and_aborted_index_follow_data_and_markers() -> None:
    store = TopicStore()
    store.create_topic("t", 1)
    partition = store.partition("t", 0)
    assert partition is not None
    assert produce(store, "t", 0, make_batch([b"plain"])) == 0
    assert produce(store, "t", 0, txn_batch([b"a", b"b"], 0)) == 1
    assert (partition.high_watermark, partition.last_stable_offset) == (3, 1)
    store.write_marker("t", 0, PID, 0, 0, commit=False, timestamp=0)
    assert (partition.high_watermark, partition.last_stable_offset) == (4, 4)
    assert [(a.producer_id, a.first_offset, a.last_offset)
            for a in partition.aborted_transactions(0, 4)] == [(PID, 1, 3)]
    assert partition.aborted_transactions(4, 5) == []


def test_a_client_cannot_write_control_batches_or_reuse_a_fenced_epoch() -> None:
    store = TopicStore()
    store.create_topic("t", 1)
    assert produce(store, "t", 0, txn_batch([b"a"], 0, epoch=1)) == 0
    store.write_marker("t", 0, PID, 2, 0, commit=False, timestamp=0)
    with pytest.raises(BrokerError) as refused:
        produce(store, "t", 0, txn_batch([b"zombie"], 1, epoch=1))
    assert refused.value.code == ErrorCode.INVALID_PRODUCER_EPOCH


def test_a_restart_rebuilds_lso_aborted_index_and_open_transactions(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    store.create_topic("t", 1)
    produce(store, "t", 0, txn_batch([b"a"], 0))
    store.write_marker("t", 0, PID, 0, 0, commit=False, timestamp=0)
    produce(store, "t", 0, txn_batch([b"b"], 1))
    store.write_marker("t", 0, PID, 0, 0, commit=True, timestamp=0)
    produce(store, "t", 0, txn_batch([b"open"], 2))
    close(store)

    again = open_store(tmp_path)
    partition = again.partition("t", 0)
    assert partition is not None
    assert (partition.high_watermark, partition.last_stable_offset) == (5, 4)
    assert [(a.first_offset, a.last_offset) for a in partition.aborted_transactions(0, 5)] == [
        (0, 1)]
    assert partition.txn.has_ongoing_transaction(PID)
    close(again)


def test_an_idempotent_retry_across_a_restart_is_deduplicated(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    store.create_topic("t", 1)
    first = make_batch([b"a", b"b"], producer_id=PID, producer_epoch=0, base_sequence=0)
    assert produce(store, "t", 0, first) == 0
    close(store)

    again = open_store(tmp_path)
    # The same batch again (the client never saw the answer): its offset, nothing written.
    assert produce(again, "t", 0, first) == 0
    partition = again.partition("t", 0)
    assert partition is not None and partition.high_watermark == 2
    following = make_batch([b"c"], producer_id=PID, producer_epoch=0, base_sequence=2)
    assert produce(again, "t", 0, following) == 2
    gap = make_batch([b"e"], producer_id=PID, producer_epoch=0, base_sequence=9)
    with pytest.raises(BrokerError) as refused:
        produce(again, "t", 0, gap)
    assert refused.value.code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    close(again)
