"""Segment files -> columns: the pipeline's record parser, in plain Python (no Spark).

It reads a data directory exactly as ``storage/FORMAT.md`` says (segment header, entry
framing, then :mod:`storage.record_codec` for the key and value) and turns each entry
into one row of the pipeline's schema (:data:`COLUMNS`). The Spark Data Source
(``source.py``) converts the column lists to Arrow; tests and the replay oracle use them
directly.

Rows come out per segment, in chunks of at most ``chunk_entries`` entries; each chunk
gives one dict of equally long column lists (:data:`Columns`) per record type in it,
holding only the columns that type uses (a missing column is null in those rows; the
Arrow conversion fills it in). Rows are grouped by type, so the log order is
``log_index``, never row order.

Besides records, the parser emits *problem* rows (``record_type`` ``torn_tail`` or
``corrupt``), carrying the file (``data_dir``, ``segment``), the byte offset
(``position``) and a description (``problem``):

- ``torn_tail``: the last segment of a directory ends inside an entry or with garbage and
  nothing valid follows (a writer died mid-write; kcoord truncates it at startup). Entries
  before it are read. Never an error, even with ``strict``.
- ``corrupt``: a bad header, a bad entry anywhere else, an entry that does not decode, an
  unknown entry format. The segment is read up to the bad entry, as kcoord's
  ``--recover=truncate`` would (an entry that frames correctly but does not decode is
  skipped alone). With ``strict`` a :class:`PipelineInputError` is raised instead.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import Any

from crc32c import crc32c

from storage.directory import SegmentFile, find_segments
from storage.record_codec import RecordDecodeError, UnknownKey, decode_key, decode_value
from storage.records import (
    GroupMetadataKey,
    GroupMetadataValue,
    MemberMetadata,
    OffsetCommitKey,
    OffsetCommitValue,
    RebalanceEventKey,
    RebalanceEventValue,
)
from storage.segment import (
    ENTRY_FORMAT_VERSION,
    HEADER_SIZE,
    MAX_ENTRY_LENGTH,
    SegmentHeaderError,
    decode_header,
    find_next_valid_entry,
    scan_entries,
)
from wire.consumer_protocol import decode_assignment

__all__ = [
    "COLUMNS",
    "COLUMN_NAMES",
    "DEFAULT_CHUNK_ENTRIES",
    "MEMBER_FIELDS",
    "RECORD_TYPES",
    "Chunk",
    "Columns",
    "KeyTable",
    "PipelineInputError",
    "SegmentFile",
    "decode_assigned",
    "parse_directory",
    "parse_segment",
    "parse_segment_chunks",
    "rows",
]

#: One chunk: column name -> values, every list as long as the chunk.
Columns = dict[str, list[Any]]

OFFSET_COMMIT = "offset_commit"
GROUP_METADATA = "group_metadata"
REBALANCE_EVENT = "rebalance_event"
TORN_TAIL = "torn_tail"
CORRUPT = "corrupt"
RECORD_TYPES = (OFFSET_COMMIT, GROUP_METADATA, REBALANCE_EVENT, TORN_TAIL, CORRUPT)

#: Fields of one element of ``members`` (Spark SQL types).
MEMBER_FIELDS: tuple[tuple[str, str], ...] = (
    ("member_id", "string"),
    ("group_instance_id", "string"),
    ("client_id", "string"),
    ("client_host", "string"),
    ("session_timeout", "int"),
    ("rebalance_timeout", "int"),
    ("assigned", "array<struct<topic:string,partition:int>>"),
)

#: The pipeline's schema: (column, Spark SQL type). Timestamps are epoch milliseconds as
#: written (-1 = none, as in Kafka's records). Keys and values are exactly the record's.
COLUMNS: tuple[tuple[str, str], ...] = (
    # origin
    ("data_dir", "string"),  # the data directory (absolute path): one kcoord instance
    ("segment", "string"),  # segment file name
    ("position", "bigint"),  # byte offset of the entry in the segment file
    ("log_index", "bigint"),  # entry index (segment base + ordinal): the log order
    ("record_type", "string"),  # one of RECORD_TYPES
    ("tombstone", "boolean"),
    ("timestamp", "bigint"),  # commit / state / event timestamp; null for tombstones
    # keys
    ("group", "string"),
    ("topic", "string"),
    ("partition", "int"),
    # OffsetCommitValue
    ("offset", "bigint"),
    ("leader_epoch", "int"),
    ("metadata", "string"),
    ("commit_timestamp", "bigint"),
    ("expire_timestamp", "bigint"),
    # GroupMetadataValue (and the event's generation)
    ("generation", "int"),
    ("protocol_type", "string"),
    ("protocol", "string"),
    ("leader", "string"),
    ("state_timestamp", "bigint"),
    (
        "members",
        "array<struct<" + ",".join(f"{n}:{t}" for n, t in MEMBER_FIELDS) + ">>",
    ),
    # RebalanceEventValue
    ("event", "string"),
    ("reason", "string"),
    ("event_member_id", "string"),
    ("event_instance_id", "string"),
    ("event_members", "array<string>"),
    ("event_timestamp", "bigint"),
    # torn_tail / corrupt rows
    ("problem", "string"),
)
COLUMN_NAMES = tuple(name for name, _ in COLUMNS)

DEFAULT_CHUNK_ENTRIES = 65536


class PipelineInputError(ValueError):
    """A corrupt or unreadable input: names the file and the byte offset."""

    def __init__(self, path: str, offset: int, reason: str) -> None:
        super().__init__(f"{path}: byte {offset}: {reason}")
        self.path = path
        self.offset = offset
        self.reason = reason


_ASSIGNED_CACHE: dict[bytes, list[dict[str, Any]] | None] = {}


def decode_assigned(assignment: bytes) -> list[dict[str, Any]] | None:
    """A consumer-protocol assignment as [{topic, partition}] (sorted); None when the bytes
    are not a ConsumerProtocolAssignment. An empty assignment is []."""
    cached = _ASSIGNED_CACHE.get(assignment, False)
    if cached is not False:
        return cached  # type: ignore[return-value]
    result: list[dict[str, Any]] | None
    if not assignment:
        result = []
    else:
        try:
            _, body = decode_assignment(assignment)
            result = sorted(
                (
                    {"topic": str(tp.topic), "partition": int(p)}
                    for tp in body.assigned_partitions
                    for p in tp.partitions
                ),
                key=lambda d: (d["topic"], d["partition"]),
            )
        except Exception:  # not the consumer protocol (e.g. Connect): no decoded assignment
            result = None
    if len(_ASSIGNED_CACHE) > 4096:
        _ASSIGNED_CACHE.clear()
    _ASSIGNED_CACHE[assignment] = result
    return result


def _member_row(m: MemberMetadata, consumer: bool) -> dict[str, Any]:
    return {
        "member_id": m.member_id,
        "group_instance_id": m.group_instance_id,
        "client_id": m.client_id,
        "client_host": m.client_host,
        "session_timeout": m.session_timeout,
        "rebalance_timeout": m.rebalance_timeout,
        "assigned": decode_assigned(m.assignment) if consumer else None,
    }


# --------------------------------------------------------------------------------------
# The chunk builder

_HEAD = struct.Struct(">IIHi")  # length, crc, entry format, key length
_I32 = struct.Struct(">i")
_OCV3 = struct.Struct(">ihqih")  # value length, value version, offset, leader epoch, meta len
_OCV3_EMPTY = struct.Struct(">ihqihq")  # ... and, when the metadata is empty, the timestamp
_I64 = struct.Struct(">q")

# Key kinds in the key table.
_OC, _GM, _EV = 0, 1, 2


class KeyTable:
    """Decoded keys by id (ids are per segment): kind, group, topic, partition (None for
    group keys)."""

    __slots__ = ("group", "ids", "kind", "partition", "topic")

    def __init__(self) -> None:
        self.ids: dict[bytes, int] = {}
        self.kind: list[int] = []
        self.group: list[str] = []
        self.topic: list[str | None] = []
        self.partition: list[int | None] = []

    def add(self, raw: bytes) -> int:
        """Id of ``raw`` (decoding it); -1 for an unknown record type. Raises
        RecordDecodeError for bad bytes of a known type."""
        key = decode_key(raw)
        if isinstance(key, UnknownKey):
            return -1
        kid = len(self.kind)
        if isinstance(key, OffsetCommitKey):
            self.kind.append(_OC)
            self.topic.append(key.topic)
            self.partition.append(key.partition)
        else:
            self.kind.append(_GM if isinstance(key, GroupMetadataKey) else _EV)
            self.topic.append(None)
            self.partition.append(None)
        self.group.append(key.group)
        self.ids[raw] = kid
        return kid


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
        names = (OFFSET_COMMIT, GROUP_METADATA, REBALANCE_EVENT)
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
                [_member_row(m, v.protocol_type == "consumer") for m in v.members] for v in values
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


def parse_segment_chunks(
    seg: SegmentFile,
    *,
    strict: bool = False,
    chunk_entries: int = DEFAULT_CHUNK_ENTRIES,
    data: bytes | None = None,
) -> Iterator[Chunk]:
    """Parse one segment file into chunks of at most ``chunk_entries`` entries (plus
    problem reports). ``data`` is the file's bytes if already read. Raises
    PipelineInputError for corruption when ``strict`` (a torn tail never raises) and
    OSError when the file is unreadable."""
    if data is None:
        with open(seg.path, "rb") as f:
            data = f.read()
    keys = KeyTable()
    try:
        header_base = decode_header(data)
        if header_base != seg.base:
            raise SegmentHeaderError(f"header names base {header_base}, file name {seg.base}")
    except SegmentHeaderError as exc:
        if strict:
            raise PipelineInputError(seg.path, 0, f"bad segment header: {exc}") from None
        chunk = Chunk(seg, keys)
        chunk.problems.append((CORRUPT, 0, f"bad segment header: {exc}; segment not read"))
        yield chunk
        return
    pos = HEADER_SIZE
    index = seg.base
    end = len(data)
    while True:
        chunk = Chunk(seg, keys)
        pos, index, done = _fill(data, pos, end, index, chunk, strict, chunk_entries)
        if len(chunk):
            yield chunk
        if done:
            return


def parse_segment(
    seg: SegmentFile,
    *,
    strict: bool = False,
    chunk_entries: int = DEFAULT_CHUNK_ENTRIES,
    data: bytes | None = None,
) -> Iterator[Columns]:
    """:func:`parse_segment_chunks` as Columns (one per record type per chunk)."""
    for chunk in parse_segment_chunks(seg, strict=strict, chunk_entries=chunk_entries, data=data):
        yield from chunk.groups()


def _fill(
    data: bytes,
    pos: int,
    end: int,
    index: int,
    chunk: Chunk,
    strict: bool,
    limit: int,
) -> tuple[int, int, bool]:
    """Decode up to ``limit`` entries from ``pos`` into ``chunk``: (next position, next
    index, whether the segment is finished).

    The hot path is an OffsetCommitValue v3 with empty metadata (what Kafka's clients
    commit): one ``struct`` unpack of the whole value. Anything else goes through
    :func:`storage.record_codec.decode_value`."""
    keys = chunk.keys
    seg = chunk.seg
    head = _HEAD.unpack_from
    i32 = _I32.unpack_from
    ocv3 = _OCV3.unpack_from
    ocv3_empty = _OCV3_EMPTY.unpack_from
    i64 = _I64.unpack_from
    ids = keys.ids
    kinds = keys.kind
    c_pos, c_idx, c_key = chunk.c_pos.append, chunk.c_idx.append, chunk.c_key.append
    c_off, c_epoch, c_ts = chunk.c_off.append, chunk.c_epoch.append, chunk.c_ts.append
    c_meta, c_exp = chunk.c_meta, chunk.c_exp
    commits = chunk.c_pos
    oc_kind = _OC
    fmt_version = ENTRY_FORMAT_VERSION
    stop_at = min(end, len(data))
    while limit > 0:
        if stop_at - pos < 18:
            if pos == stop_at:
                return pos, index, True
            break  # a short tail: classified below
        length, crc, fmt, klen = head(data, pos)
        body = pos + 8
        estop = body + length
        if length < 10 or length > MAX_ENTRY_LENGTH or estop > stop_at:
            break
        if crc32c(data[body:estop]) != crc:
            break
        kstart = pos + 14
        kend = kstart + klen
        if fmt != fmt_version or klen < 0 or kend + 4 > estop:
            break
        kb = data[kstart:kend]
        kid = ids.get(kb)
        if kid is None:
            try:
                kid = keys.add(kb)
            except RecordDecodeError as exc:
                _bad_record(chunk, seg, pos, index, f"key does not decode: {exc}", strict)
                pos = estop
                index += 1
                limit -= 1
                continue
            if kid < 0:  # unknown record type: skipped, as replay does
                pos = estop
                index += 1
                limit -= 1
                continue
        if kinds[kid] == oc_kind:
            if estop - kend == 28:  # value v3 with empty metadata: 24 bytes
                vlen, version, offset, epoch, mlen, ts = ocv3_empty(data, kend)
                if version == 3 and vlen == 24 and mlen == 0:
                    c_pos(pos)
                    c_idx(index)
                    c_key(kid)
                    c_off(offset)
                    c_epoch(epoch)
                    c_ts(ts)
                    pos = estop
                    index += 1
                    limit -= 1
                    continue
            elif estop - kend > 28:
                vlen, version, offset, epoch, mlen = ocv3(data, kend)
                mstart = kend + 20
                mend = mstart + mlen
                if version == 3 and vlen == estop - kend - 4 and mlen > 0 and mend + 8 == estop:
                    try:
                        meta = data[mstart:mend].decode("utf-8")
                    except UnicodeDecodeError:
                        meta = None
                    if meta is not None:
                        c_meta[len(commits)] = meta
                        c_pos(pos)
                        c_idx(index)
                        c_key(kid)
                        c_off(offset)
                        c_epoch(epoch)
                        c_ts(i64(data, mend)[0])
                        pos = estop
                        index += 1
                        limit -= 1
                        continue
        (vlen,) = i32(data, kend)
        if vlen == -1:
            if kend + 4 != estop:
                break
            chunk.t_pos.append(pos)
            chunk.t_idx.append(index)
            chunk.t_key.append(kid)
        elif vlen < 0 or kend + 4 + vlen != estop:
            break
        else:
            key = _key_object(keys, kid)
            try:
                value = decode_value(key, data[kend + 4 : estop])
            except (RecordDecodeError, UnicodeDecodeError) as exc:
                _bad_record(chunk, seg, pos, index, f"value does not decode: {exc}", strict)
                value = None
            if isinstance(value, OffsetCommitValue):
                if value.metadata:
                    c_meta[len(commits)] = value.metadata
                if value.expire_timestamp != -1:
                    c_exp[len(commits)] = value.expire_timestamp
                c_pos(pos)
                c_idx(index)
                c_key(kid)
                c_off(value.offset)
                c_epoch(value.leader_epoch)
                c_ts(value.commit_timestamp)
            elif isinstance(value, GroupMetadataValue):
                chunk.gm_rows.append((pos, index, kid, value))
            elif isinstance(value, RebalanceEventValue):
                chunk.ev_rows.append((pos, index, kid, value))
        pos = estop
        index += 1
        limit -= 1
    else:
        return pos, index, pos >= stop_at
    _stopped(data, pos, chunk, seg, strict)
    return pos, index, True


def _key_object(keys: KeyTable, kid: int) -> OffsetCommitKey | GroupMetadataKey | RebalanceEventKey:
    kind = keys.kind[kid]
    group = keys.group[kid]
    if kind == _OC:
        topic, partition = keys.topic[kid], keys.partition[kid]
        assert topic is not None and partition is not None
        return OffsetCommitKey(group, topic, partition)
    return GroupMetadataKey(group) if kind == _GM else RebalanceEventKey(group)


def _bad_record(
    chunk: Chunk, seg: SegmentFile, pos: int, index: int, why: str, strict: bool
) -> None:
    text = f"entry {index} {why}; entry skipped"
    if strict:
        raise PipelineInputError(seg.path, pos, f"entry {index} {why}")
    chunk.problems.append((CORRUPT, pos, text))


def _stopped(data: bytes, pos: int, chunk: Chunk, seg: SegmentFile, strict: bool) -> None:
    """Classify why decoding stopped at ``pos`` (before the end of the file)."""
    scan = scan_entries(data, pos)  # the storage framing check names the reason
    assert scan.stop is not None
    reason = f"{scan.stop.value} ({scan.stop_detail})"
    dropped = len(data) - pos
    if scan.stop.name == "UNSUPPORTED_FORMAT":
        reason += "; written by a newer kcoord?"
    elif seg.last:
        after = find_next_valid_entry(data, pos)
        if after is None:
            chunk.problems.append(
                (TORN_TAIL, pos, f"torn tail: {reason}; {dropped} bytes after it not read")
            )
            return
        reason += f", followed by a valid entry at byte {after}"
    else:
        reason += ", in a segment that is not the last"
    if strict:
        raise PipelineInputError(seg.path, pos, reason)
    chunk.problems.append((CORRUPT, pos, f"{reason}; {dropped} bytes from here not read"))


def parse_directory(
    data_dir: str, *, strict: bool = False, chunk_entries: int = DEFAULT_CHUNK_ENTRIES
) -> Iterator[Columns]:
    """Every chunk of every segment of ``data_dir``, in segment order."""
    for seg in find_segments(data_dir):
        yield from parse_segment(seg, strict=strict, chunk_entries=chunk_entries)


def rows(chunks: Iterator[Columns] | list[Columns]) -> list[dict[str, Any]]:
    """Chunks as row dicts with every column (absent ones None), in log order (problem
    rows last within their segment). For tests and small inputs."""
    out: list[dict[str, Any]] = []
    for cols in chunks:
        n = len(cols["position"])
        for i in range(n):
            out.append({name: (cols[name][i] if name in cols else None) for name in COLUMN_NAMES})
    out.sort(
        key=lambda r: (
            r["data_dir"],
            r["log_index"] is None,
            r["log_index"] if r["log_index"] is not None else r["position"],
            r["segment"],
        )
    )
    return out
