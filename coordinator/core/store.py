"""Hard state (committed offsets, the last group metadata record per group) and the writes
still in flight to the log.

``HardState`` changes only through ``apply(record)``, fed with records that were appended:
by the runtime once an append succeeds (``GroupCoordinator.append_done``) and by replay at
startup, so live hard state is the replay of the log by construction. kcoord's
RebalanceEvent records are history and are ignored here.

``PendingWrites`` is Kafka's ``GroupMetadata.pendingOffsetCommits``: offset records emitted
but not yet appended, last one per key. Decisions that must count them (does the group still
have offsets? which keys to tombstone?) read hard state through it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, cast

from storage.records import (
    CONSUMER_GROUP_KEY_TYPES,
    SHARE_GROUP_KEY_TYPES,
    ConsumerGroupKey,
    GroupMetadataKey,
    GroupMetadataValue,
    OffsetCommitKey,
    OffsetCommitValue,
    RebalanceEventKey,
    Record,
    ShareGroupKey,
    TxnOffsetCommitKey,
    TxnOffsetCommitValue,
)

__all__ = ["HardState", "HardStateSnapshot", "OffsetPacker", "PackedOffsets", "PendingWrites",
           "TopicPartition"]

TopicPartition = tuple[str, int]


class PackedOffsets(Protocol):
    """One group's offset commit records, kept packed until the group is asked for."""

    def records(self) -> list[Record]: ...


#: Packs a group's first offset commits (records in log order) -> its packed offsets
#: (``storage.live_snapshot.pack_offsets``, set by the server: the core frames no bytes).
OffsetPacker = Callable[[Sequence[Record]], PackedOffsets]


@dataclass(frozen=True, slots=True)
class HardStateSnapshot:
    """A comparable copy of hard state: offsets per group and the last group record per group."""

    offsets: Mapping[str, Mapping[TopicPartition, OffsetCommitValue]]
    groups: Mapping[str, GroupMetadataValue]
    consumer: Mapping[str, Mapping[ConsumerGroupKey, Record]]
    share: Mapping[str, Mapping[ShareGroupKey, Record]]
    pending_txn: Mapping[int, Mapping[str, Mapping[TopicPartition, TxnOffsetCommitValue]]]


class HardState:
    """Committed offsets and persisted group metadata, as the log says (last record wins)."""

    __slots__ = ("consumer", "groups", "offsets", "pack", "packed", "packed_due", "pending_txn",
                 "share")

    def __init__(self) -> None:
        self.offsets: dict[str, dict[TopicPartition, OffsetCommitValue]] = {}
        #: Groups whose committed offsets are still packed, as a snapshot gave them at load
        #: or ``apply_appended`` packed them (never also in ``offsets``): their records are
        #: applied when the group is first asked for (``_unpacked``), by ``apply`` like any
        #: replayed record.
        self.packed: dict[str, PackedOffsets] = {}
        #: When set, ``apply_appended`` packs the commits of a group that has none (neither
        #: decoded nor packed): a committed partition then costs its log entry's bytes
        #: until its group is read or committed again, as after a restart from a snapshot
        #: (issue 33). A group committed again is decoded (``_unpacked``), as one loaded
        #: packed is: a group that commits on and on pays no packing per commit.
        self.pack: OffsetPacker | None = None
        #: Packed groups the retention scan looked at: when their first offset expires.
        self.packed_due: dict[str, int] = {}
        self.groups: dict[str, GroupMetadataValue] = {}
        #: Consumer groups' (KIP-848) live records per group, last per key, in log order.
        self.consumer: dict[str, dict[ConsumerGroupKey, Record]] = {}
        #: Share groups' (KIP-932) live records per group, last per key, in log order.
        self.share: dict[str, dict[ShareGroupKey, Record]] = {}
        #: Offsets staged by open transactions: producer id -> group -> partition.
        self.pending_txn: dict[int, dict[str, dict[TopicPartition, TxnOffsetCommitValue]]] = {}

    def apply(self, record: Record) -> None:
        """Apply one appended record: last value per key wins, a None value is a tombstone."""
        key = record.key
        value = record.value
        if type(value) is OffsetCommitValue and type(key) is OffsetCommitKey:  # a commit
            group_offsets = self.offsets.get(key.group)
            if group_offsets is None:
                group_offsets = self._unpacked(key.group, create=True)
            group_offsets[(key.topic, key.partition)] = value
        elif isinstance(key, OffsetCommitKey):
            if value is None:
                group_offsets = self.offsets.get(key.group) or self._unpacked(key.group)
                if group_offsets:
                    group_offsets.pop((key.topic, key.partition), None)
                    if not group_offsets:
                        del self.offsets[key.group]
            elif isinstance(value, OffsetCommitValue):
                group_offsets = self.offsets.get(key.group)
                if group_offsets is None:
                    group_offsets = self._unpacked(key.group, create=True)
                group_offsets[(key.topic, key.partition)] = value
        elif isinstance(key, GroupMetadataKey):
            if value is None:
                self.groups.pop(key.group, None)
            elif isinstance(value, GroupMetadataValue):
                self.groups[key.group] = value
        elif isinstance(key, CONSUMER_GROUP_KEY_TYPES):
            self._apply_group_record(self.consumer, cast(ConsumerGroupKey, key), record)
        elif isinstance(key, SHARE_GROUP_KEY_TYPES):
            self._apply_group_record(self.share, cast(ShareGroupKey, key), record)
        elif isinstance(key, TxnOffsetCommitKey):
            self._apply_pending_txn(key, value)

    def apply_appended(self, records: Iterable[Record]) -> None:
        """``apply`` each of ``records`` but RebalanceEvent history (nothing to apply); with
        a ``pack``er, the commits of a group without offsets are packed instead (the state
        decoding them later gives is the same)."""
        apply = self.apply
        pack = self.pack
        if pack is None:
            for record in records:
                if type(record.key) is not RebalanceEventKey:
                    apply(record)
            return
        decoded = self.offsets
        packed = self.packed
        run: list[Record] = []  # consecutive commits of ``group``, a group without offsets
        group = ""
        for record in records:
            key = record.key
            if type(key) is OffsetCommitKey and type(record.value) is OffsetCommitValue:
                offsets = decoded.get(key.group)
                if offsets is not None:
                    if not run:  # the usual commit, into a decoded group: ``apply``'s store
                        offsets[(key.topic, key.partition)] = record.value
                        continue
                elif key.group not in packed:
                    if run and key.group != group:
                        self._pack(pack, group, run)
                        run = []
                    group = key.group
                    run.append(record)
                    continue
            if run:
                self._pack(pack, group, run)
                run = []
            if type(key) is not RebalanceEventKey:
                apply(record)
        if run:
            self._pack(pack, group, run)

    def _pack(self, pack: OffsetPacker, group_id: str, records: list[Record]) -> None:
        """Pack the first commits of a group without offsets."""
        self.packed[group_id] = pack(records)

    def _apply_pending_txn(self, key: TxnOffsetCommitKey, value: object) -> None:
        by_group = self.pending_txn.get(key.producer_id)
        if isinstance(value, TxnOffsetCommitValue):
            if by_group is None:
                by_group = self.pending_txn[key.producer_id] = {}
            by_group.setdefault(key.group, {})[(key.topic, key.partition)] = value
            return
        if by_group is None:
            return
        staged = by_group.get(key.group)
        if staged is not None:
            staged.pop((key.topic, key.partition), None)
            if not staged:
                del by_group[key.group]
        if not by_group:
            del self.pending_txn[key.producer_id]

    @staticmethod
    def _apply_group_record(
        by_group: dict[str, dict[Any, Record]], key: ConsumerGroupKey | ShareGroupKey,
        record: Record,
    ) -> None:
        """A modern group's record: kept per group, last per key, in log order."""
        records = by_group.get(key.group)
        if record.value is None:
            if records is not None:
                records.pop(key, None)
                if not records:
                    del by_group[key.group]
            return
        if records is None:
            records = by_group[key.group] = {}
        records.pop(key, None)  # keep log order: the newest record goes last
        records[key] = record

    def adopt_packed(self, groups: Mapping[str, PackedOffsets]) -> None:
        """Take the packed groups of a load (before any record of them is applied)."""
        self.packed.update(groups)

    def _unpacked(self, group_id: str, *, create: bool = False,
                  ) -> dict[TopicPartition, OffsetCommitValue]:
        """The offsets of a group not in ``offsets``: its packed records applied (they are
        in log order, before anything applied since), or a new empty dict in ``offsets``
        (``create``), or an empty one that is not stored."""
        packed = self.packed.pop(group_id, None)
        if packed is not None:
            self.packed_due.pop(group_id, None)
            self.offsets[group_id] = {}
            for record in packed.records():
                self.apply(record)
            if not self.offsets.get(group_id, True):
                del self.offsets[group_id]
        group_offsets = self.offsets.get(group_id)
        if group_offsets is None:
            if not create:
                return _NO_OFFSETS
            group_offsets = self.offsets[group_id] = {}
        return group_offsets

    def peek_offsets(self, group_id: str) -> Mapping[TopicPartition, OffsetCommitValue]:
        """The group's committed offsets; a packed group's decoded into a scratch state,
        the group staying packed (the retention scan reads them without keeping them)."""
        packed = self.packed.get(group_id)
        if packed is None:
            return self.group_offsets(group_id)
        scratch = HardState()
        scratch.apply_appended(packed.records())
        return scratch.offsets.get(group_id, _NO_OFFSETS)

    def offset_group_ids(self) -> set[str]:
        """Every group with committed offsets (packed ones included, none decoded)."""
        return self.offsets.keys() | self.packed.keys()

    def has_offsets(self, group_id: str) -> bool:
        """Whether the group has committed offsets (a packed group always has)."""
        return group_id in self.offsets or group_id in self.packed

    def group_offsets(self, group_id: str) -> dict[TopicPartition, OffsetCommitValue]:
        """The group's committed offsets (a live view; do not mutate)."""
        group_offsets = self.offsets.get(group_id)
        if group_offsets is None:
            return self._unpacked(group_id) if self.packed else _NO_OFFSETS
        return group_offsets

    def snapshot(self) -> HardStateSnapshot:
        """A detached, comparable copy (every packed group decoded)."""
        for group_id in list(self.packed):
            self._unpacked(group_id)
        return HardStateSnapshot(
            offsets={gid: dict(offsets) for gid, offsets in self.offsets.items()},
            groups=dict(self.groups),
            consumer={gid: dict(records) for gid, records in self.consumer.items()},
            share={gid: dict(records) for gid, records in self.share.items()},
            pending_txn={
                pid: {gid: dict(staged) for gid, staged in by_group.items()}
                for pid, by_group in self.pending_txn.items()
            },
        )


class PendingWrites:
    """Offset records emitted but not yet appended, per group, in emission order (appends
    complete in that order, so the last record of a key is the one that lands last).
    Recording and settling are the commit hot path, so they only queue and dequeue; the
    questions below replay the (short) queue when a rarer decision needs them."""

    __slots__ = ("by_group", "unreturned")

    def __init__(self) -> None:
        #: The records in flight per group (empty: nothing in flight; read, never written,
        #: outside this class -- a plain attribute, as ``bool(self)`` costs a call).
        self.by_group: dict[str, deque[Record]] = {}
        #: Offset records of the call in progress, until its Result is returned (``seal``).
        self.unreturned: list[Record] = []

    def add(self, record: Record) -> None:
        """Count an emitted record (only offset records matter here)."""
        key = record.key
        if type(key) is OffsetCommitKey:
            queue = self.by_group.get(key.group)
            if queue is None:
                queue = self.by_group[key.group] = deque()
            queue.append(record)
            self.unreturned.append(record)

    def add_offsets(self, group_id: str, records: list[Record]) -> None:
        """Count emitted offset records of one group at once (``add`` for each, in order;
        every key is an OffsetCommitKey of ``group_id``)."""
        queue = self.by_group.get(group_id)
        if queue is None:
            queue = self.by_group[group_id] = deque()
        queue.extend(records)
        self.unreturned.extend(records)

    def seal(self) -> None:
        """The call's Result is returned: its records are on their way to the log."""
        self.unreturned.clear()

    def discard_unreturned(self) -> None:
        """A call raised before returning its Result: its records will never be appended
        (they are the newest of their queues)."""
        for record in reversed(self.unreturned):
            key = record.key
            assert isinstance(key, OffsetCommitKey)
            queue = self.by_group[key.group]
            queue.pop()
            if not queue:
                del self.by_group[key.group]
        self.unreturned.clear()

    def settle(self, records: Iterable[Record]) -> None:
        """These records' appends completed (either way), in emission order."""
        groups = self.by_group
        for record in records:
            key = record.key
            if type(key) is OffsetCommitKey:
                queue = groups.get(key.group)
                if queue:
                    queue.popleft()
                    if not queue:
                        del groups[key.group]

    def __bool__(self) -> bool:
        return bool(self.by_group)

    def latest(self, group_id: str) -> dict[TopicPartition, OffsetCommitValue | None]:
        """The last value in flight per key of the group (None: a tombstone)."""
        out: dict[TopicPartition, OffsetCommitValue | None] = {}
        for record in self.by_group.get(group_id, ()):
            key = record.key
            assert isinstance(key, OffsetCommitKey)
            value = record.value
            out[(key.topic, key.partition)] = (
                value if isinstance(value, OffsetCommitValue) else None
            )
        return out

    def has_offsets(self, group_id: str, committed: Mapping[TopicPartition, object]) -> bool:
        """Whether the group has offsets once every write in flight lands (Kafka's
        ``hasOffsets``, which counts pending commits)."""
        if group_id not in self.by_group:
            return bool(committed)
        latest = self.latest(group_id)
        if any(value is not None for value in latest.values()):
            return True
        return any(tp not in latest for tp in committed)

    def keys(self, group_id: str) -> set[TopicPartition]:
        """Keys of the group with a write in flight."""
        return set(self.latest(group_id)) if group_id in self.by_group else set()


_NO_OFFSETS: dict[TopicPartition, OffsetCommitValue] = {}
