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

from collections.abc import Iterator
from typing import Any

from storage.directory import SegmentFile, find_segments
from storage.fast_decode import CommitTuple, fast_decode
from storage.record_codec import RecordDecodeError, decode_value
from storage.records import (
    CONSUMER_GROUP_KEY_TYPES,
    GroupMetadataValue,
    OffsetCommitValue,
    RebalanceEventValue,
    Record,
    TxnOffsetCommitKey,
)
from storage.segment import (
    HEADER_SIZE,
    ScanResult,
    SegmentHeaderError,
    decode_header,
    find_next_valid_entry,
    scan_entries,
)
from storage.share_group_records import SHARE_GROUP_KEY_TYPES
from storage.share_records import SHARE_KEY_TYPES

from .chunk import NOT_IN_DATASETS, Chunk, KeyTable
from .columns import COLUMN_NAMES, CORRUPT, TORN_TAIL, Columns

__all__ = [
    "DEFAULT_CHUNK_ENTRIES",
    "PipelineInputError",
    "PipelineReadError",
    "check_header",
    "fill_chunk",
    "parse_directory",
    "parse_segment",
    "parse_segment_chunks",
    "read_segment",
    "rows",
]

DEFAULT_CHUNK_ENTRIES = 262144


class PipelineInputError(ValueError):
    """A corrupt or unreadable input: names the file and the byte offset."""

    def __init__(self, path: str, offset: int, reason: str) -> None:
        super().__init__(f"{path}: byte {offset}: {reason}")
        self.path = path
        self.offset = offset
        self.reason = reason


class PipelineReadError(OSError):
    """An input file that cannot be read (missing, no permission): names the file. Not a
    corrupt input: nothing of the file was read."""

    def __init__(self, path: str, cause: OSError) -> None:
        reason = cause.strerror or str(cause)
        super().__init__(cause.errno, f"cannot read {path}: {reason}")
        self.path = path
        self.reason = reason

    def __str__(self) -> str:
        return str(self.strerror)


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
    PipelineReadError (an OSError) when the file cannot be read."""
    if data is None:
        data = read_segment(seg)
    keys = KeyTable()
    problem = check_header(seg, data, keys, strict)
    if problem is not None:
        yield problem
        return
    pos = HEADER_SIZE
    index = seg.base
    end = len(data)
    while True:
        chunk = Chunk(seg, keys)
        pos, index, done = fill_chunk(data, pos, end, index, chunk, strict, chunk_entries)
        if len(chunk):
            yield chunk
        if done:
            return


def read_segment(seg: SegmentFile) -> bytes:
    """The segment file's bytes (PipelineReadError if it cannot be read)."""
    try:
        with open(seg.path, "rb") as f:
            return f.read()
    except OSError as exc:
        raise PipelineReadError(seg.path, exc) from None


def check_header(seg: SegmentFile, data: bytes, keys: KeyTable, strict: bool) -> Chunk | None:
    """None if the segment header is good; else a chunk holding the problem row (or
    PipelineInputError with ``strict``)."""
    try:
        header_base = decode_header(data)
        if header_base != seg.base:
            raise SegmentHeaderError(f"header names base {header_base}, file name {seg.base}")
    except SegmentHeaderError as exc:
        if strict:
            raise PipelineInputError(seg.path, 0, f"bad segment header: {exc}") from None
        chunk = Chunk(seg, keys)
        chunk.problems.append((CORRUPT, 0, f"bad segment header: {exc}; segment not read"))
        return chunk
    return None


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


def fill_chunk(
    data: bytes,
    pos: int,
    end: int,
    index: int,
    chunk: Chunk,
    strict: bool,
    limit: int,
) -> tuple[int, int, bool]:
    """Decode up to ``limit`` entries from ``pos`` into ``chunk``: (next position, next
    index, whether the segment is finished). Also the vectorised parser's path for the
    entries it does not read itself.

    Entries go through storage's own readers, as replay does: the fused fast decoder
    (``storage.fast_decode``) while it can, and for an entry it stops at, the general
    scanner and codec, which name what is wrong."""
    end = min(end, len(data))
    live: dict[bytes, int] = {}
    positions: list[int] = []
    while limit > 0 and pos < end:
        positions.clear()
        records, pos, _ = fast_decode(
            data,
            pos,
            end,
            live,
            chunk.keys.cache,
            limit=limit,
            positions=positions,
            commit_tuples=True,
        )
        _add_records(chunk, records, positions, index)
        index += len(records)
        limit -= len(records)
        if limit == 0 or pos >= end:
            break
        scan = scan_entries(data, pos, end, limit=1)
        if scan.stop is not None:
            _stopped(data, pos, scan, chunk, chunk.seg, strict)
            return pos, index, True
        _add_entry(chunk, pos, index, scan.entries[0], strict)
        pos += scan.valid_bytes
        index += 1
        limit -= 1
    return pos, index, pos >= end


def _add_records(
    chunk: Chunk, records: list[Record | CommitTuple], positions: list[int], index: int
) -> None:
    """Records the fast decoder read (one per entry, from ``index`` on) into the chunk."""
    keys = chunk.keys
    id_of = keys.id_of
    by_object = keys.by_object
    c_pos, c_idx, c_key = chunk.c_pos.append, chunk.c_idx.append, chunk.c_key.append
    c_off, c_epoch, c_ts = chunk.c_off.append, chunk.c_epoch.append, chunk.c_ts.append
    c_meta, c_exp = chunk.c_meta, chunk.c_exp
    commits = chunk.c_pos
    oc_value = OffsetCommitValue
    skipped_keys = (*CONSUMER_GROUP_KEY_TYPES, *NOT_IN_DATASETS, *SHARE_KEY_TYPES,
                    *SHARE_GROUP_KEY_TYPES)
    for epos, record in zip(positions, records, strict=True):
        if type(record) is tuple:  # the common commit, as columns
            key, offset, epoch, meta, ts = record
            kid = by_object.get(id(key))
            if kid is None:
                kid = id_of(key)
            if meta:
                c_meta[len(commits)] = meta
            c_pos(epos)
            c_idx(index)
            c_key(kid)
            c_off(offset)
            c_epoch(epoch)
            c_ts(ts)
            index += 1
            continue
        assert isinstance(record, Record)
        key = record.key
        if type(key) in skipped_keys or (  # consumer group and transaction state, and
            type(key) is TxnOffsetCommitKey and record.value is not None  # staged offsets:
        ):  # not in the datasets (a staged offset's end, its tombstone, is)
            index += 1
            continue
        kid = by_object.get(id(key))
        if kid is None:
            kid = id_of(key)
        value = record.value
        if type(value) is oc_value:
            if value.metadata:
                c_meta[len(commits)] = value.metadata
            if value.expire_timestamp != -1:
                c_exp[len(commits)] = value.expire_timestamp
            c_pos(epos)
            c_idx(index)
            c_key(kid)
            c_off(value.offset)
            c_epoch(value.leader_epoch)
            c_ts(value.commit_timestamp)
        elif value is None:
            chunk.t_pos.append(epos)
            chunk.t_idx.append(index)
            chunk.t_key.append(kid)
        elif isinstance(value, GroupMetadataValue):
            chunk.gm_rows.append((epos, index, kid, value))
        elif isinstance(value, RebalanceEventValue):
            chunk.ev_rows.append((epos, index, kid, value))
        index += 1


def _add_entry(
    chunk: Chunk, pos: int, index: int, entry: tuple[bytes, bytes | None], strict: bool
) -> None:
    """One entry the fast decoder stopped at: an unknown record type is skipped (as replay
    does), bytes that do not decode are reported, anything else is added."""
    raw_key, raw_value = entry
    try:
        kid = chunk.keys.add(raw_key)
    except RecordDecodeError as exc:
        _bad_record(chunk, chunk.seg, pos, index, f"key does not decode: {exc}", strict)
        return
    if kid < 0:
        return
    key = chunk.keys.cache[raw_key]
    try:
        value = None if raw_value is None else decode_value(key, raw_value)
    except (RecordDecodeError, UnicodeDecodeError) as exc:
        _bad_record(chunk, chunk.seg, pos, index, f"value does not decode: {exc}", strict)
        return
    _add_records(chunk, [Record(key, value)], [pos], index)


def _bad_record(
    chunk: Chunk, seg: SegmentFile, pos: int, index: int, why: str, strict: bool
) -> None:
    text = f"entry {index} {why}; entry skipped"
    if strict:
        raise PipelineInputError(seg.path, pos, f"entry {index} {why}")
    chunk.problems.append((CORRUPT, pos, text))


def _stopped(
    data: bytes, pos: int, scan: ScanResult, chunk: Chunk, seg: SegmentFile, strict: bool
) -> None:
    """Classify why the scan stopped at ``pos`` (before the end of the file)."""
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
