"""A chunk of parsed entries: up to ``chunk_entries`` entries of one segment, gathered per
record type (offset commits, the bulk of a log, as flat lists), and the per-segment key
table they refer to."""

from __future__ import annotations

from collections.abc import Iterator

from storage.config_records import ClientQuotaRecordKey, ConfigRecordKey
from storage.directory import SegmentFile
from storage.record_codec import UnknownKey, decode_key
from storage.records import (
    GroupMetadataKey,
    GroupMetadataValue,
    OffsetCommitKey,
    RebalanceEventValue,
    RecordKey,
    TransactionStateKey,
    TxnOffsetCommitKey,
)
from storage.security_records import AccessControlEntryKey, UserScramCredentialKey
from storage.share_records import ShareSnapshotKey, ShareUpdateKey

from .columns import (
    GROUP_METADATA,
    OFFSET_COMMIT,
    REBALANCE_EVENT,
    TXN_OFFSET_COMMIT,
    Columns,
    member_row,
)

__all__ = ["NOT_IN_DATASETS", "Chunk", "KeyTable"]

#: Record keys the datasets leave out: transaction state, share state, configs and quotas,
#: ACLs and SCRAM users (a fresh server writes a config record: ELR's min.insync.replicas).
NOT_IN_DATASETS = (TransactionStateKey, ShareSnapshotKey, ShareUpdateKey, ConfigRecordKey,
                   ClientQuotaRecordKey, AccessControlEntryKey, UserScramCredentialKey)

# Key kinds in the key table.
_OC, _GM, _EV, _TX = 0, 1, 2, 3


class KeyTable:
    """Decoded keys by id (ids are per segment): kind, group, topic, partition (None for
    group keys). ``cache`` is the raw-bytes -> key cache storage's decoder fills."""

    __slots__ = ("by_object", "cache", "group", "kind", "partition", "topic")

    def __init__(self) -> None:
        self.cache: dict[bytes, RecordKey] = {}
        self.by_object: dict[int, int] = {}  # id(key object) -> key id
        self.kind: list[int] = []
        self.group: list[str] = []
        self.topic: list[str | None] = []
        self.partition: list[int | None] = []

    def id_of(self, key: RecordKey) -> int:
        """Id of a decoded key (key objects come from ``cache``, one per raw key)."""
        kid = self.by_object.get(id(key))
        if kid is not None:
            return kid
        if isinstance(key, NOT_IN_DATASETS):
            raise ValueError("transaction, share, config and security records are not in the "
                             "datasets")
        kid = len(self.kind)
        if isinstance(key, OffsetCommitKey | TxnOffsetCommitKey):
            self.kind.append(_OC if isinstance(key, OffsetCommitKey) else _TX)
            self.topic.append(key.topic)
            self.partition.append(key.partition)
        else:
            self.kind.append(_GM if isinstance(key, GroupMetadataKey) else _EV)
            self.topic.append(None)
            self.partition.append(None)
        self.group.append(key.group)
        self.by_object[id(key)] = kid
        return kid

    def add(self, raw: bytes) -> int:
        """Id of ``raw`` (decoding it); -1 for an unknown record type. Raises
        RecordDecodeError for bad bytes of a known type."""
        key = self.cache.get(raw)
        if key is None:
            decoded = decode_key(raw)
            if isinstance(decoded, (UnknownKey, *NOT_IN_DATASETS)):
                return -1  # unknown, transaction, share, config or security: not in datasets
            key = self.cache[raw] = decoded
        return self.id_of(key)


class Chunk:
    """Up to ``chunk_entries`` entries of one segment, gathered per record type (offset
    commits, the bulk of a log, as flat lists). :meth:`groups` gives them as columns."""

    __slots__ = (
        "c_epoch",
        "c_exp",
        "c_idx",
        "c_key",
        "c_meta",
        "c_off",
        "c_pos",
        "c_ts",
        "ev_rows",
        "gm_rows",
        "keys",
        "problems",
        "seg",
        "t_idx",
        "t_key",
        "t_pos",
    )

    def __init__(self, seg: SegmentFile, keys: KeyTable) -> None:
        self.seg = seg
        self.keys = keys
        # offset commits: position, index, key id, offset, epoch, commit timestamp; the
        # metadata and expire timestamp only where not "" / -1 (commit row -> value)
        self.c_pos: list[int] = []
        self.c_idx: list[int] = []
        self.c_key: list[int] = []
        self.c_off: list[int] = []
        self.c_epoch: list[int] = []
        self.c_ts: list[int] = []
        self.c_meta: dict[int, str] = {}
        self.c_exp: dict[int, int] = {}
        # tombstones (any key type): position, index, key id
        self.t_pos: list[int] = []
        self.t_idx: list[int] = []
        self.t_key: list[int] = []
        self.gm_rows: list[tuple[int, int, int, GroupMetadataValue]] = []
        self.ev_rows: list[tuple[int, int, int, RebalanceEventValue]] = []
        #: (record_type, byte offset, description)
        self.problems: list[tuple[str, int, str]] = []

    def __len__(self) -> int:
        return (
            len(self.c_pos)
            + len(self.t_pos)
            + len(self.gm_rows)
            + len(self.ev_rows)
            + len(self.problems)
        )

    def _origin(self, n: int, record_type: str | list[str], tombstone: bool) -> Columns:
        return {
            "data_dir": [self.seg.data_dir] * n,
            "segment": [self.seg.name] * n,
            "record_type": record_type if isinstance(record_type, list) else [record_type] * n,
            "tombstone": [tombstone] * n,
        }

    def commit_columns(self) -> Columns:
        """The offset commits (not tombstones) as columns."""
        keys = self.keys
        kg, kt, kp = keys.group, keys.topic, keys.partition
        ids = self.c_key
        cols = self._origin(len(ids), OFFSET_COMMIT, False)
        cols.update(
            position=self.c_pos,
            log_index=self.c_idx,
            group=[kg[k] for k in ids],
            topic=[kt[k] for k in ids],
            partition=[kp[k] for k in ids],
            offset=self.c_off,
            leader_epoch=self.c_epoch,
            metadata=self.metadata(),
            commit_timestamp=self.c_ts,
            expire_timestamp=self.expire_timestamps(),
            timestamp=self.c_ts,
        )
        return cols

    def metadata(self) -> list[str]:
        """The commits' metadata strings."""
        out = [""] * len(self.c_pos)
        for i, meta in self.c_meta.items():
            out[i] = meta
        return out

    def expire_timestamps(self) -> list[int]:
        """The commits' expire timestamps (-1: none)."""
        out = [-1] * len(self.c_pos)
        for i, ts in self.c_exp.items():
            out[i] = ts
        return out

    def tombstone_columns(self) -> Columns:
        """The tombstones (of every key type) as columns."""
        keys = self.keys
        ids = self.t_key
        names = (OFFSET_COMMIT, GROUP_METADATA, REBALANCE_EVENT, TXN_OFFSET_COMMIT)
        cols = self._origin(len(ids), [names[keys.kind[k]] for k in ids], True)
        cols.update(
            position=self.t_pos,
            log_index=self.t_idx,
            group=[keys.group[k] for k in ids],
            topic=[keys.topic[k] for k in ids],
            partition=[keys.partition[k] for k in ids],
        )
        return cols

    def group_metadata_columns(self) -> Columns:
        """The GroupMetadata records as columns (members with decoded assignments)."""
        rows = self.gm_rows
        values = [r[3] for r in rows]
        cols = self._origin(len(rows), GROUP_METADATA, False)
        cols.update(
            position=[r[0] for r in rows],
            log_index=[r[1] for r in rows],
            group=[self.keys.group[r[2]] for r in rows],
            generation=[v.generation for v in values],
            protocol_type=[v.protocol_type for v in values],
            protocol=[v.protocol for v in values],
            leader=[v.leader for v in values],
            state_timestamp=[v.current_state_timestamp for v in values],
            timestamp=[v.current_state_timestamp for v in values],
            members=[
                [member_row(m, v.protocol_type == "consumer") for m in v.members] for v in values
            ],
        )
        return cols

    def event_columns(self) -> Columns:
        """The RebalanceEvent records as columns."""
        rows = self.ev_rows
        values = [r[3] for r in rows]
        cols = self._origin(len(rows), REBALANCE_EVENT, False)
        cols.update(
            position=[r[0] for r in rows],
            log_index=[r[1] for r in rows],
            group=[self.keys.group[r[2]] for r in rows],
            generation=[v.generation for v in values],
            event=[v.event for v in values],
            reason=[v.reason for v in values],
            event_member_id=[v.member_id for v in values],
            event_instance_id=[v.group_instance_id for v in values],
            event_members=[list(v.members) for v in values],
            event_timestamp=[v.timestamp for v in values],
            timestamp=[v.timestamp for v in values],
        )
        return cols

    def problem_columns(self) -> Columns:
        """The torn-tail / corruption reports as columns (no log_index)."""
        problems = self.problems
        cols = self._origin(len(problems), [p[0] for p in problems], False)
        cols.update(
            position=[p[1] for p in problems],
            log_index=[None] * len(problems),
            problem=[p[2] for p in problems],
        )
        return cols

    def groups(self) -> Iterator[Columns]:
        """The chunk as one Columns per record type present (only the columns that type
        uses; the others are null)."""
        if self.c_pos:
            yield self.commit_columns()
        if self.t_pos:
            yield self.tombstone_columns()
        if self.gm_rows:
            yield self.group_metadata_columns()
        if self.ev_rows:
            yield self.event_columns()
        if self.problems:
            yield self.problem_columns()
