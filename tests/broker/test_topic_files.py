"""Durable topics (issue 12): a topic store persisted in a real data directory comes back
after a restart with its ids, partitions, configs, offsets, records and producer state; a
torn tail is truncated and reported; a failed write applies nothing; a deleted topic stays
deleted."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest
from broker_support import make_batch

from coordinator.broker.batches import validate_produced_batch
from coordinator.broker.errors import BrokerError
from coordinator.broker.topic_files import TOPICS_DIR, TopicFiles
from coordinator.broker.topics import TopicStore
from wire import ErrorCode


def open_store(data_dir: Path, recover: str = "truncate") -> TopicStore:
    store = TopicStore()
    store.restore(TopicFiles(str(data_dir), "always", recover))  # type: ignore[arg-type]
    return store


def produce(store: TopicStore, topic: str, partition: int, batch: bytes) -> int:
    return store.append(topic, partition, batch, validate_produced_batch(batch, 9, 1 << 20))


def close(store: TopicStore) -> None:
    assert store.files is not None
    store.files.close()


def test_topics_records_and_offsets_survive_a_restart(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    topic = store.create_topic("t", 3, {"cleanup.policy": "delete"})
    assert produce(store, "t", 0, make_batch([b"a", b"b"])) == 0
    assert produce(store, "t", 0, make_batch([b"c"])) == 2
    assert produce(store, "t", 2, make_batch([b"x"])) == 0
    store.ensure_topic("auto", 1)
    close(store)

    again = open_store(tmp_path)
    restored = again.get("t")
    assert restored is not None
    assert restored.topic_id == topic.topic_id
    assert len(restored.partitions) == 3
    assert restored.configs == {"cleanup.policy": "delete"}
    assert [p.high_watermark for p in restored.partitions] == [3, 0, 1]
    assert [b.data for b in restored.partitions[0].batches] == [
        b.data for b in topic.partitions[0].batches]
    assert again.get("auto") is not None
    # appends continue at the restored end
    assert produce(again, "t", 0, make_batch([b"d"])) == 3
    close(again)


def test_idempotent_producer_state_survives_a_restart(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    store.create_topic("t", 1)
    first = make_batch([b"a"], producer_id=7, producer_epoch=0, base_sequence=0)
    assert produce(store, "t", 0, first) == 0
    close(store)
    again = open_store(tmp_path)
    # the retried batch is a duplicate: its original offset, nothing appended
    assert produce(again, "t", 0, first) == 0
    assert again.get("t").partitions[0].high_watermark == 1  # type: ignore[union-attr]
    nxt = make_batch([b"b"], producer_id=7, producer_epoch=0, base_sequence=1)
    assert produce(again, "t", 0, nxt) == 1
    gap = make_batch([b"c"], producer_id=7, producer_epoch=0, base_sequence=5)
    with pytest.raises(BrokerError) as info:
        produce(again, "t", 0, gap)
    assert info.value.code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    # producer ids handed out after the restart do not reuse a persisted one
    assert again.next_producer_id() == 8
    close(again)


def test_a_torn_tail_is_truncated_and_reported(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = open_store(tmp_path)
    topic = store.create_topic("t", 1)
    produce(store, "t", 0, make_batch([b"kept"]))
    close(store)
    partition_dir = tmp_path / TOPICS_DIR / str(topic.topic_id) / "0"
    (segment,) = sorted(p for p in os.listdir(partition_dir) if p.endswith(".log"))
    with open(partition_dir / segment, "ab") as f:
        f.write(b"\x00\x00\x01\x00torn")  # a write cut short by a crash
    with caplog.at_level(logging.WARNING):
        again = open_store(tmp_path)
    assert again.get("t").partitions[0].high_watermark == 1  # type: ignore[union-attr]
    assert any("topic t partition 0" in r.message for r in caplog.records)
    close(again)


def test_a_failed_write_applies_nothing(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    store.create_topic("t", 1)
    assert store.files is not None

    def broken(*args: object) -> None:
        raise BrokerError(ErrorCode.KAFKA_STORAGE_ERROR, "disk on fire")

    store.files.appended = broken  # type: ignore[method-assign]
    with pytest.raises(BrokerError) as info:
        produce(store, "t", 0, make_batch([b"a"]))
    assert info.value.code == ErrorCode.KAFKA_STORAGE_ERROR
    assert store.get("t").partitions[0].high_watermark == 0  # type: ignore[union-attr]
    close(store)


def test_a_deleted_topic_stays_deleted(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    store.create_topic("gone", 2)
    produce(store, "gone", 1, make_batch([b"a"]))
    store.delete_topic("gone")
    close(store)
    again = open_store(tmp_path)
    assert again.get("gone") is None
    assert os.listdir(tmp_path / TOPICS_DIR) == []
    close(again)


def test_a_replication_factor_given_at_creation_survives_a_restart(tmp_path: Path) -> None:
    """Issue 13: a topic created with 3 replicas keeps them (and grows with them); a topic
    created without one keeps following default.replication.factor."""
    store = open_store(tmp_path)
    store.create_topic("rf3", 2, {}, replication_factor=3)
    store.create_topic("default", 1)
    store.add_partitions("rf3", 4)
    close(store)
    again = open_store(tmp_path)
    rf3, default = again.get("rf3"), again.get("default")
    assert rf3 is not None and default is not None
    assert (rf3.replication_factor, len(rf3.partitions)) == (3, 4)
    assert default.replication_factor == -1
    close(again)


def _open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_partition_files_stay_within_the_open_file_bound(tmp_path: Path) -> None:
    """Issue 32 item 6: every partition written to kept two descriptors open forever."""
    store = TopicStore()
    store.restore(TopicFiles(str(tmp_path), "interval", "fail", max_open_files=4))
    store.create_topic("many", 40)
    before = _open_descriptors()
    for rounds in range(2):
        for index in range(40):
            produce(store, "many", index, make_batch([b"%d-%d" % (rounds, index)]))
    assert store.files is not None
    assert store.files.fs.open_count <= 4
    assert _open_descriptors() - before <= 4
    close(store)
    again = TopicStore()
    again.restore(TopicFiles(str(tmp_path), "interval", "fail", max_open_files=4))
    assert _open_descriptors() - before <= 4  # starting holds no more
    partitions = again.get("many").partitions  # type: ignore[union-attr]
    assert [p.high_watermark for p in partitions] == [2] * 40
    assert produce(again, "many", 7, make_batch([b"after"])) == 2
    close(again)


def test_a_refused_descriptor_is_a_storage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The OS refusing a descriptor (EMFILE) answers KAFKA_STORAGE_ERROR, not a traceback,
    and the partition takes the next append once descriptors are back."""
    import errno

    store = open_store(tmp_path)
    store.create_topic("t", 2)
    real_open = os.open

    def refuse(*args: object, **kwargs: object) -> int:
        raise OSError(errno.EMFILE, "Too many open files")

    monkeypatch.setattr(os, "open", refuse)
    with pytest.raises(BrokerError) as refused:
        produce(store, "t", 1, make_batch([b"x"]))
    monkeypatch.setattr(os, "open", real_open)
    assert refused.value.code == ErrorCode.KAFKA_STORAGE_ERROR
    assert produce(store, "t", 1, make_batch([b"y"])) == 0
    close(store)
