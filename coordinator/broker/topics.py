"""The in-memory topic store behind Produce, Fetch, ListOffsets, Metadata and the admin APIs.

A topic has a stable random topic id and partitions; a partition is a list of magic-v2
record batches whose base offsets the store assigns by rewriting them on append (the CRC
does not cover the base offset, so the client's CRC stays valid). Each partition's
producer state, open transactions, last stable offset and aborted-transaction index are
``coordinator.txn.partition.PartitionTransactions`` (Kafka's ProducerStateManager and
transaction index); with one replica the high watermark is the log end offset.

Everything is plain methods, testable without Trio, except :meth:`TopicStore.wait_for_data`,
the Fetch long-poll: every change (append, create, delete) sets the store's current
``trio.Event`` and replaces it, so a waiting fetch re-checks its targets. The store lives
in the server's single Trio loop; it takes no locks.
"""

from __future__ import annotations

import re
import struct
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import trio

from coordinator.broker import config as broker_config
from coordinator.broker.errors import BrokerError
from coordinator.configs.definitions import TOPIC_KEYS
from coordinator.txn.placement import OFFSETS_TOPIC, TRANSACTION_STATE_TOPIC
from wire import ErrorCode

if TYPE_CHECKING:
    from coordinator.broker.partition_log import PartitionLog
    from coordinator.broker.topic_files import TopicFiles
    from coordinator.txn.producer_state import AppendOrigin
    from wire.records import RecordBatchHeader

__all__ = [
    "FetchTarget",
    "Topic",
    "TopicStore",
    "validate_topic_name",
]

_CLEANUP_POLICY = str(TOPIC_KEYS["cleanup.policy"].default)  # (its default)

MAX_TOPIC_NAME_LENGTH = 249
_LEGAL_TOPIC_NAME = re.compile(r"[a-zA-Z0-9._-]+")
_NO_LEADER_EPOCH = struct.pack(">i", -1)


def validate_topic_name(name: str) -> None:
    """Kafka's ``Topic.validate``: raises BrokerError(INVALID_TOPIC_EXCEPTION)."""
    if not name:
        reason = "Topic name is illegal, it can't be empty"
    elif name in (".", ".."):
        reason = 'Topic name cannot be "." or ".."'
    elif len(name) > MAX_TOPIC_NAME_LENGTH:
        reason = (
            f"Topic name is illegal, it can't be longer than {MAX_TOPIC_NAME_LENGTH} characters, "
            f"topic name: {name}"
        )
    elif not _LEGAL_TOPIC_NAME.fullmatch(name):
        reason = (
            f'Topic name "{name}" is illegal, it contains a character other than ASCII '
            "alphanumerics, '.', '_' and '-'"
        )
    else:
        return
    raise BrokerError(ErrorCode.INVALID_TOPIC_EXCEPTION, reason)


def _collision_key(name: str) -> str:
    return name.replace(".", "_")


def _new_partitions(start: int, stop: int,
                    files: TopicFiles | None) -> list[PartitionLog]:
    """Empty partitions ``start``..``stop - 1``. The partition log and what it imports
    (producer state, record batches, control batches) load with the first partition: a
    broker with no topic answers its first Metadata without them (issue 33)."""
    from coordinator.broker.partition_log import PartitionLog

    source = files.fs if files is not None else None
    return [PartitionLog(i, source) for i in range(start, stop)]


@dataclass(slots=True)
class Topic:
    """A topic: name, stable id, partitions and the configs it was created with."""

    name: str
    topic_id: uuid.UUID
    partitions: list[PartitionLog]
    configs: dict[str, str] = field(default_factory=dict)
    #: Replicas per partition as created; -1: ``default.replication.factor`` (``--brokers``).
    replication_factor: int = -1

    def partition(self, index: int) -> PartitionLog | None:
        """The partition, or None when out of range."""
        if 0 <= index < len(self.partitions):
            return self.partitions[index]
        return None

    @property
    def compacted(self) -> bool:
        """Whether ``cleanup.policy`` includes ``compact`` (the log cleaner cleans it, and
        applies its retention when it also includes ``delete``)."""
        policies = self.configs.get("cleanup.policy", _CLEANUP_POLICY).replace(" ", "").split(",")
        return "compact" in policies

    @property
    def deletes_records(self) -> bool:
        """Whether ``cleanup.policy`` includes ``delete`` (retention and DeleteRecords apply)."""
        policies = self.configs.get("cleanup.policy", _CLEANUP_POLICY).replace(" ", "").split(",")
        return "delete" in policies


@dataclass(frozen=True, slots=True)
class FetchTarget:
    """One partition a Fetch waits on: where it reads from and how much it may take."""

    topic: str
    partition: int
    fetch_offset: int
    max_bytes: int
    topic_id: uuid.UUID | None = None  # when given, the topic must still have this id


class TopicStore:
    """Every topic, by name and by id; ``TopicStore()`` starts empty."""

    def __init__(self, topic_id_factory: Callable[[], uuid.UUID] = uuid.uuid4) -> None:
        self._topics: dict[str, Topic] = {}
        self._by_id: dict[uuid.UUID, Topic] = {}
        self._collision_keys: dict[str, str] = {}
        self._new_topic_id = topic_id_factory
        self._next_producer_id = 0
        self._changed = trio.Event()
        #: Bumped by every topic creation and deletion (consumer groups compare it).
        self.version = 0
        #: Where topics persist (``topic_files.TopicFiles``); None: in memory only.
        self.files: TopicFiles | None = None
        #: One read of segment bytes in a worker thread at a time, for the whole store
        #: (``stored_batch.read_batches``: what would wait on the event loop).
        self.read_limiter = trio.CapacityLimiter(1)
        #: (topic id, partition) of the log cleaner's round in progress: retention leaves
        #: it alone (its policy may have changed to ``delete`` meanwhile).
        self.cleaning: set[tuple[uuid.UUID, int]] = set()

    def restore(self, files: TopicFiles) -> int:
        """Bring back every topic of ``files`` (ids, partitions, configs, batches), then
        persist new ones there; the number of batches restored."""
        restored = 0
        for loaded in files.load():
            topic = Topic(loaded.name, loaded.topic_id,
                          _new_partitions(0, loaded.partitions, files), loaded.configs,
                          loaded.replication_factor)
            for index in files.read_partitions(loaded):
                partition = topic.partitions[index]
                # Taken out: the partition's bytes go once restored (``read_partitions``).
                batches, locations = loaded.batches.pop(index), loaded.locations.pop(index)
                for data, located in zip(batches, locations, strict=True):
                    partition.restore(data, located)
                restored += len(batches)
                del batches, locations
                if index in loaded.cleaned_starts:
                    partition.restore_cleaned_start(loaded.cleaned_starts[index])
                if index in loaded.log_starts:
                    partition.advance_log_start(loaded.log_starts[index])
                for producer_id in partition.producer_ids:
                    self._next_producer_id = max(self._next_producer_id, producer_id + 1)
            self._register(topic)
        self.version += 1
        self.files = files
        return restored

    # -- topics -----------------------------------------------------------------------

    def __contains__(self, name: object) -> bool:
        return name in self._topics

    def __len__(self) -> int:
        return len(self._topics)

    def names(self) -> list[str]:
        """Every topic name, sorted."""
        return sorted(self._topics)

    def get(self, name: str) -> Topic | None:
        """The topic called ``name``, or None."""
        return self._topics.get(name)

    def by_id(self, topic_id: uuid.UUID) -> Topic | None:
        """The topic with this id, or None."""
        return self._by_id.get(topic_id)

    def partition(self, name: str, index: int) -> PartitionLog | None:
        """One partition, or None when the topic or partition does not exist."""
        topic = self._topics.get(name)
        return topic.partition(index) if topic is not None else None

    def has_partition(self, name: str, index: int) -> bool:
        """Whether the partition exists (OffsetCommit's UNKNOWN_TOPIC_OR_PARTITION check)."""
        return self.partition(name, index) is not None

    def check_new_topic(self, name: str, num_partitions: int) -> None:
        """BrokerError unless ``create_topic(name, num_partitions)`` would succeed."""
        validate_topic_name(name)
        if name in self._topics or name in (OFFSETS_TOPIC, TRANSACTION_STATE_TOPIC):
            # The internal topics exist already (kept by the coordinators, not here).
            raise BrokerError(ErrorCode.TOPIC_ALREADY_EXISTS, f"Topic '{name}' already exists.")
        existing = self._collision_keys.get(_collision_key(name))
        if existing is not None:
            raise BrokerError(
                ErrorCode.INVALID_TOPIC_EXCEPTION,
                f"Topic '{name}' collides with existing topic: {existing}",
            )
        if num_partitions <= 0:
            raise BrokerError(
                ErrorCode.INVALID_PARTITIONS,
                "Number of partitions was set to an invalid non-positive value.",
            )

    def create_topic(
        self, name: str, num_partitions: int, configs: Mapping[str, str] | None = None,
        replication_factor: int = -1,
    ) -> Topic:
        """Create a topic (BrokerError for a bad name, an existing topic, <= 0 partitions);
        ``replication_factor`` -1 follows ``default.replication.factor``."""
        self.check_new_topic(name, num_partitions)
        topic_id = self._new_topic_id()
        while topic_id.int == 0 or topic_id in self._by_id:
            topic_id = uuid.uuid4()
        if self.files is not None:
            self.files.created(name, topic_id, num_partitions, configs or {},
                               replication_factor)
        topic = Topic(
            name, topic_id, _new_partitions(0, num_partitions, self.files), dict(configs or {}),
            replication_factor,
        )
        self._register(topic)
        self.version += 1
        self.notify()
        return topic

    def unopened_logs(self, topics: Iterable[Topic] | None = None) -> list[tuple[uuid.UUID, int]]:
        """(topic id, partition) of the partitions of ``topics`` (None: every topic) whose
        log is not open yet; none without files."""
        if self.files is None:
            return []
        chosen = self._topics.values() if topics is None else topics
        return self.files.unopened((topic.topic_id, partition.index)
                                   for topic in chosen for partition in topic.partitions)

    async def open_logs(self, topic: Topic | None) -> None:
        """Open the logs of ``topic``'s partitions (None: every topic's) that are not open
        yet, in a worker thread (``TopicFiles.open_partitions``: a new partition's directory
        lock and first segment take three fsyncs, which on the event loop held every
        connection). Called where partitions are created (CreateTopics, auto-creation,
        CreatePartitions) so that an append finds its partition's log open, and by the
        startup for the configured topics once the broker surface answers."""
        files = self.files
        missing = self.unopened_logs(None if topic is None else (topic,))
        if files is not None and missing:
            await trio.to_thread.run_sync(files.open_partitions, missing)

    def _register(self, topic: Topic) -> None:
        self._topics[topic.name] = topic
        self._by_id[topic.topic_id] = topic
        self._collision_keys[_collision_key(topic.name)] = topic.name

    def ensure_topic(self, name: str, num_partitions: int) -> Topic:
        """The topic, auto-created with ``num_partitions`` if it does not exist."""
        topic = self._topics.get(name)
        return topic if topic is not None else self.create_topic(name, num_partitions)

    def add_partitions(self, name: str, count: int) -> Topic:
        """Grow topic ``name`` to ``count`` partitions (the new count persisted first)."""
        topic = self._topics[name]
        if count <= len(topic.partitions):
            raise ValueError(f"{name} has {len(topic.partitions)} partitions already")
        if self.files is not None:
            self.files.created(name, topic.topic_id, count, topic.configs,
                               topic.replication_factor)
        topic.partitions.extend(_new_partitions(len(topic.partitions), count, self.files))
        self.version += 1
        self.notify()
        return topic

    def delete_records(self, name: str, index: int, offset: int) -> int:
        """Move a partition's log start offset to ``offset`` (-1: the high watermark), the
        move persisted first; the new low watermark. BrokerError as Kafka answers:
        UNKNOWN_TOPIC_OR_PARTITION, OFFSET_OUT_OF_RANGE, POLICY_VIOLATION (compact only)."""
        topic = self._topics.get(name)
        partition = topic.partition(index) if topic is not None else None
        if topic is None or partition is None:
            raise BrokerError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                              "This server does not host this topic-partition.")
        if not topic.deletes_records:
            raise BrokerError(
                ErrorCode.POLICY_VIOLATION,
                f"Records of partition {name}-{index} can not be deleted due to the "
                "configured policy",
            )
        target = partition.high_watermark if offset == -1 else offset
        if target < 0 or target > partition.high_watermark:
            raise BrokerError(
                ErrorCode.OFFSET_OUT_OF_RANGE,
                f"Cannot increment the log start offset to {target} of partition {name}-"
                f"{index} since it is larger than the high watermark "
                f"{partition.high_watermark}",
            )
        if target > partition.log_start_offset:
            if self.files is not None:
                self.files.log_start_moved(topic.topic_id, index, target)
            partition.advance_log_start(target)
            self.notify()
        return partition.log_start_offset

    def enforce_retention(self, now_ms: int, broker: Mapping[str, str],
                          compacted: bool = False) -> list[str]:
        """Apply every ``cleanup.policy=delete`` topic's retention (its ``retention.ms`` and
        ``retention.bytes``, else the broker's ``log.retention.*``): whole old segments are
        deleted and the log start offsets move; one line per partition that changed.
        ``compact,delete`` topics only with ``compacted`` (the log cleaner applies theirs,
        between its rounds, as Kafka's does)."""
        if self.files is None:
            return []
        changed: list[str] = []
        for topic in list(self._topics.values()):
            configs = topic.configs
            if not topic.deletes_records or topic.compacted != compacted:
                continue
            try:
                by_time = int(configs.get("retention.ms", broker_config.retention_ms(broker)))
                by_size = int(configs.get("retention.bytes",
                                          broker_config.retention_bytes(broker)))
            except ValueError:
                continue
            for partition in topic.partitions:
                if (topic.topic_id, partition.index) in self.cleaning:
                    continue
                start = self.files.expire(topic.topic_id, partition.index, by_time, by_size,
                                          now_ms)
                if start is not None and start > partition.log_start_offset:
                    partition.advance_log_start(start)
                    changed.append(f"{topic.name}-{partition.index}: log start offset now "
                                   f"{partition.log_start_offset}")
        if changed:
            self.notify()
        return changed

    def delete_topic(self, name: str) -> Topic:
        """Remove a topic and its data (BrokerError UNKNOWN_TOPIC_OR_PARTITION if absent)."""
        topic = self._topics.get(name)
        if topic is None:
            raise BrokerError(
                ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                "This server does not host this topic-partition.",
            )
        if self.files is not None:
            self.files.deleted(topic.topic_id)
        del self._topics[name]
        del self._by_id[topic.topic_id]
        self._collision_keys.pop(_collision_key(name), None)
        self.version += 1
        self.notify()
        return topic

    # -- produce ----------------------------------------------------------------------

    def append(
        self,
        topic: str | Topic,
        index: int,
        batch: bytes,
        header: RecordBatchHeader,
        origin: AppendOrigin | None = None,
        verified: bool = True,
    ) -> int:
        """Append a validated batch to a partition of ``topic`` (its name, or the topic a
        caller looked up already: Produce); its base offset. Wakes waiting fetches.
        ``origin`` None: the partition's default (a client's batch)."""
        found = self._topics.get(topic) if isinstance(topic, str) else topic
        partition = None if found is None else found.partition(index)
        if found is None or partition is None:
            raise BrokerError(
                ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                "This server does not host this topic-partition.",
            )
        end = partition.log_end_offset
        persist = None
        if self.files is not None:
            files, topic_id = self.files, found.topic_id

            def persist(base: int, data: bytes) -> tuple[str, int]:
                return files.appended(topic_id, index, base, data)

        base_offset = (partition.append(batch, header, persist, verified=verified)
                       if origin is None else
                       partition.append(batch, header, persist, origin, verified))
        if partition.log_end_offset != end:
            self.notify()
        return base_offset

    def write_marker(
        self,
        name: str,
        index: int,
        producer_id: int,
        producer_epoch: int,
        coordinator_epoch: int,
        commit: bool,
        timestamp: int,
    ) -> None:
        """End ``producer_id``'s transaction on a partition with a COMMIT or ABORT marker
        (Kafka's WriteTxnMarkers). A partition that no longer exists is skipped, as Kafka's
        marker channel drops markers for deleted partitions."""
        if self.partition(name, index) is None:
            return
        from coordinator.broker.control_batches import control_batch
        from coordinator.txn.producer_state import AppendOrigin
        from wire.records import parse_batches

        data = control_batch(producer_id, producer_epoch, coordinator_epoch, commit, timestamp)
        (header,) = parse_batches(data)
        self.append(name, index, data, header, AppendOrigin.COORDINATOR)

    def reserve_producer_id(self, producer_id: int) -> None:
        """``producer_id`` is in use (the transaction coordinator's state holds it): never
        hand it out again."""
        self._next_producer_id = max(self._next_producer_id, producer_id + 1)

    def next_producer_id(self) -> int:
        """A producer id never handed out before by this store (InitProducerId)."""
        producer_id = self._next_producer_id
        self._next_producer_id += 1
        return producer_id

    # -- fetch long-poll --------------------------------------------------------------

    def notify(self) -> None:
        """Wake every waiting fetch (something changed)."""
        self._changed.set()
        self._changed = trio.Event()

    def fetch_ready(
        self, targets: Iterable[FetchTarget], min_bytes: int, read_committed: bool = False
    ) -> bool:
        """Whether a fetch over ``targets`` should answer now: ``min_bytes`` are readable
        (each partition counted up to its max bytes) or a partition is in error."""
        accumulated = 0
        for target in targets:
            if target.topic_id is not None:
                topic = self._by_id.get(target.topic_id)
                partition = topic.partition(target.partition) if topic is not None else None
            else:
                partition = self.partition(target.topic, target.partition)
            if partition is None or not partition.offset_in_range(target.fetch_offset):
                return True
            available = partition.bytes_available(
                target.fetch_offset, partition.fetchable_offset(read_committed), target.max_bytes
            )
            accumulated += min(available, target.max_bytes)
            if accumulated >= min_bytes:
                return True
        return accumulated >= min_bytes

    async def wait_for_data(
        self,
        targets: Sequence[FetchTarget],
        deadline: float,
        min_bytes: int = 1,
        read_committed: bool = False,
    ) -> bool:
        """Wait until :meth:`fetch_ready` or the Trio clock reaches ``deadline``; whether
        the fetch became ready."""
        while not self.fetch_ready(targets, min_bytes, read_committed):
            if trio.current_time() >= deadline:
                return False
            with trio.move_on_at(deadline):
                await self._changed.wait()
        return True
