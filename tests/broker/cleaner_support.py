"""Helpers for the log cleaner tests: a durable topic store, keyed batches (kafka-python's
builder), transactional producers, and one cleaning round driven like Kafka's tests drive
``Cleaner.clean(LogToClean(...))``."""

from __future__ import annotations

from pathlib import Path

from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder
from test_topic_files import close, open_store

from coordinator.broker.batches import validate_produced_batch
from coordinator.broker.log_cleaning import LogCleanerManager
from coordinator.broker.partition_log import PartitionLog
from coordinator.broker.topic_files import TOPICS_DIR
from coordinator.broker.topics import TopicStore
from storage.log_cleaner import CleanResult
from wire.records import parse_batches

__all__ = ["Cleaning", "keyed_batch"]

KV = tuple[int, int | None]  # key, value (None: tombstone); encoded as decimal strings


def keyed_batch(records: list[KV], *, producer_id: int = -1, producer_epoch: int = -1,
                base_sequence: int = -1, transactional: bool = False,
                timestamp: int = 1_000, compression: int = 0) -> bytes:
    builder = DefaultRecordBatchBuilder(
        magic=2, compression_type=compression, is_transactional=transactional,
        producer_id=producer_id, producer_epoch=producer_epoch,
        base_sequence=base_sequence, batch_size=1 << 24)
    for i, (key, value) in enumerate(records):
        builder.append(i, timestamp=timestamp + i, key=str(key).encode(),
                       value=None if value is None else str(value).encode(), headers=[])
    return bytes(builder.build())


class Cleaning:
    """One compacted partition ("t"-0) on disk, with Kafka-test verbs."""

    def __init__(self, data_dir: Path, configs: dict[str, str] | None = None) -> None:
        self.data_dir = data_dir
        self.configs = {"cleanup.policy": "compact", **(configs or {})}
        self.store = open_store(data_dir)
        self.store.create_topic("t", 1, self.configs)
        self.manager = LogCleanerManager(self.store)
        self.sequences: dict[int, int] = {}

    @property
    def directory(self) -> Path:
        """The partition's directory of segment files."""
        topic = self.store.get("t")
        assert topic is not None
        return self.data_dir / TOPICS_DIR / str(topic.topic_id) / "0"

    @property
    def partition(self) -> PartitionLog:
        found = self.store.partition("t", 0)
        assert found is not None
        return found

    def append(self, records: list[KV], **kwargs: object) -> int:
        batch = keyed_batch(records, **kwargs)  # type: ignore[arg-type]
        return self.store.append("t", 0, batch, validate_produced_batch(batch, 9, 1 << 24))

    def append_txn(self, producer_id: int, keys: list[int], epoch: int = 0) -> int:
        """A transactional batch of ``producer_id`` with value = key."""
        seq = self.sequences.get(producer_id, 0)
        self.sequences[producer_id] = seq + len(keys)
        return self.append([(k, k) for k in keys], producer_id=producer_id,
                           producer_epoch=epoch, base_sequence=seq, transactional=True)

    def append_idempotent(self, producer_id: int, keys: list[int], epoch: int = 0) -> int:
        seq = self.sequences.get(producer_id, 0)
        self.sequences[producer_id] = seq + len(keys)
        return self.append([(k, k) for k in keys], producer_id=producer_id,
                           producer_epoch=epoch, base_sequence=seq)

    def marker(self, producer_id: int, commit: bool, epoch: int = 0) -> None:
        self.store.write_marker("t", 0, producer_id, epoch, 0, commit, 1_000)

    def roll(self) -> None:
        topic = self.store.get("t")
        assert topic is not None and self.store.files is not None
        partition_log = self.store.files.partition_log(topic.topic_id, 0)
        assert partition_log is not None
        partition_log.roll()

    def clean(self, now_ms: int = 0, first_dirty: int | None = None,
              broker: dict[str, str] | None = None) -> CleanResult:
        """One round from ``first_dirty`` (else the checkpoint) up to the active segment."""
        topic = self.store.get("t")
        assert topic is not None
        if first_dirty is not None:
            self.manager.checkpoints[(topic.topic_id, 0)] = first_dirty
        job = self.manager.plan(topic, 0, now_ms, broker or {})
        assert job is not None
        result = self.manager.clean(job)
        self.manager.apply(job, result)
        return result

    def reload(self) -> None:
        close(self.store)
        self.store = open_store(self.data_dir)
        self.manager = LogCleanerManager(self.store)

    def close(self) -> None:
        close(self.store)

    # -- what the log holds (memory), Kafka's LogTestUtils names --------------------------

    def _records(self) -> list[tuple[int, bytes | None, bytes | None, bool]]:
        out = []
        for stored in self.partition.batches:
            batch = DefaultRecordBatch(stored.data)
            control = batch.is_control_batch
            for record in batch:
                out.append((record.offset, record.key, record.value, control))
        return out

    def keys_in_log(self) -> list[int]:
        return [int(k) for _, k, _, control in self._records() if not control and k is not None]

    def offsets_in_log(self) -> list[int]:
        return [o for o, _, _, _ in self._records()]

    def batch_base_offsets(self) -> list[int]:
        return [b.base_offset for b in self.partition.batches]

    def last_offsets_per_batch(self) -> list[int]:
        return [b.last_offset for b in self.partition.batches]

    def values_by_key(self) -> dict[int, int | None]:
        out: dict[int, int | None] = {}
        for _, key, value, control in self._records():
            if not control and key is not None:
                out[int(key)] = None if value is None else int(value)
        return out

    def headers(self) -> list[object]:
        return [parse_batches(b.data)[0] for b in self.partition.batches]


def fresh_store(data_dir: Path) -> TopicStore:
    return open_store(data_dir)
