"""Segment bytes -> Arrow batches, vectorised: the ``kcoord-log`` reader's parser.

It gives the same rows as :func:`storage.pipeline.parse.parse_segment_chunks` followed by
:func:`storage.pipeline.source.chunk_batches` (tests compare the two on generated logs),
without a Python object per offset commit:

1. a Python loop over the entries' length fields only finds the entry boundaries
   (``storage/FORMAT.md`` section 3: length in range, the entry present);
2. the CRC-32C of every entry body (``crc32c`` mapped over memoryview slices, no Python
   loop) is compared with the stored ones, and the framing rules (entry format 1, key and
   value lengths exactly filling the entry) are checked with numpy over all entries at
   once; the first entry failing any of them ends the fast part;
3. each distinct key's bytes are decoded once (storage's codec, :class:`KeyTable`); for
   entries whose key is an OffsetCommit key, the value's fixed fields (OffsetCommitValue
   v3: version, offset, leader epoch, metadata length, commit timestamp) are gathered
   with numpy at computed offsets and become Arrow columns directly.

Every other entry (tombstones, GroupMetadata, RebalanceEvent, other value versions, an
entry that does not decode, and the entry where framing stops) goes, in log order and in
runs of consecutive entries, through the per-record parser (``parse.fill_chunk``): the
same decoding, the same problem rows and the same :class:`PipelineInputError` with
``strict``.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import Any

import numpy as np
import pyarrow as pa

from storage.directory import SegmentFile
from storage.record_codec import decode_key
from storage.records import OffsetCommitKey
from storage.segment import HEADER_SIZE, MAX_ENTRY_LENGTH
from wire.checksum import crc32c

from .arrow_rows import chunk_batches
from .chunk import Chunk, KeyTable
from .columns import OFFSET_COMMIT
from .parse import DEFAULT_CHUNK_ENTRIES, check_header, fill_chunk, read_segment

__all__ = ["segment_batches"]

_U32 = struct.Struct(">I")
_WIDTHS = {np.dtype(t).itemsize: np.arange(np.dtype(t).itemsize, dtype=np.int64)
           for t in (">i2", ">i4", ">i8")}
_MAX_VIEW_OFFSET = 2**31 - 1
_INLINE = np.arange(12, dtype=np.int64)
_Int = np.ndarray[Any, np.dtype[np.int64]]
_Bool = np.ndarray[Any, np.dtype[np.bool_]]


def segment_batches(
    seg: SegmentFile,
    schema: pa.Schema,
    *,
    strict: bool = False,
    chunk_entries: int = DEFAULT_CHUNK_ENTRIES,
    data: bytes | None = None,
) -> Iterator[pa.RecordBatch]:
    """One segment file as Arrow batches of ``schema`` (the Data Source's schema or a
    subset of its columns), each from at most ``chunk_entries`` entries. ``data`` is the
    file's bytes if already read. Raises what ``parse_segment_chunks`` raises."""
    if data is None:
        data = read_segment(seg)
    keys = KeyTable()
    known: dict[bytes, int] = {}
    names = schema.names

    def slow_batches(chunk: Chunk) -> Iterator[pa.RecordBatch]:
        for batch in chunk_batches(chunk):
            yield batch if batch.schema.names == names else batch.select(names)

    header = check_header(seg, data, keys, strict)
    if header is not None:  # a bad header: the problem row
        yield from slow_batches(header)
        return
    buf = np.frombuffer(data, dtype=np.uint8)
    view = memoryview(data)
    pos, index, end = HEADER_SIZE, seg.base, len(data)
    while pos < end:
        starts, framed_to = _frame(data, pos, end, chunk_entries)
        slow = Chunk(seg, keys)
        read, good = _parse_run(data, buf, view, starts, index, slow, known, strict)
        done = False
        for columns in read:
            if len(columns["position"]):
                yield _batch(seg, keys, columns, schema)
        index += good
        pos = framed_to
        if good < len(starts) or (framed_to < end and good < chunk_entries):
            # the entry where the framing rules stopped, on the per-record path: it
            # names why and ends the segment (or reads the entry if it is valid after all)
            stopped_at = starts[good] if good < len(starts) else framed_to
            pos, index, done = fill_chunk(data, stopped_at, end, index, slow, strict, 1)
            done = done or pos == stopped_at
        yield from slow_batches(slow)
        if done:
            return


def _frame(data: bytes, pos: int, end: int, limit: int) -> tuple[list[int], int]:
    """Start offsets of up to ``limit`` entries from ``pos`` whose length is in range and
    whose bytes are present, and where that stopped."""
    starts: list[int] = []
    append = starts.append
    u32 = _U32.unpack_from
    max_length = MAX_ENTRY_LENGTH
    while limit > 0 and end - pos >= 18:
        (length,) = u32(data, pos)
        stop = pos + 8 + length
        if length < 10 or length > max_length or stop > end:
            break
        append(pos)
        pos = stop
        limit -= 1
    return starts, pos


def _ints(buf: np.ndarray[Any, Any], at: _Int, dtype: str) -> _Int:
    """The big-endian integers of ``dtype`` (``>i2``, ``>i4``, ``>i8``, ``>u4``, ...) at
    the byte offsets ``at``, as int64."""
    width = np.dtype(dtype).itemsize
    gathered = buf[at[:, None] + _WIDTHS[width]]
    out: _Int = gathered.view(dtype)[:, 0].astype(np.int64)
    return out


def _parse_run(
    data: bytes,
    buf: np.ndarray[Any, Any],
    view: memoryview,
    starts_list: list[int],
    index: int,
    slow: Chunk,
    known: dict[bytes, int],
    strict: bool,
) -> tuple[list[dict[str, Any]], int]:
    """Parse the framed entries at ``starts_list`` (entry ``index`` first): (the offset
    commits read here and the commit tombstones, as numpy columns; how many entries pass
    the framing rules: a prefix). The other entries go to ``slow``, in log order."""
    n = len(starts_list)
    if n == 0:
        return [], 0
    s: _Int = np.array(starts_list, dtype=np.int64)
    stop = s + 8 + _ints(buf, s, ">u4")
    body = (s + 8).tolist()
    crcs = np.fromiter(
        map(crc32c, map(view.__getitem__, map(slice, body, stop.tolist()))),
        dtype=np.int64, count=n,
    )
    klen = _ints(buf, s + 10, ">i4")
    kend = s + 14 + klen
    ok: _Bool = (
        (crcs == _ints(buf, s + 4, ">u4"))
        & (_ints(buf, s + 8, ">u2") == 1)
        & (klen >= 0)
        & (kend + 4 <= stop)
    )
    kend = np.where(ok, kend, s + 8)  # a readable value length either way
    vlen = _ints(buf, kend, ">i4")
    span = stop - kend
    ok &= ((vlen == -1) & (span == 4)) | ((vlen >= 0) & (span == 4 + vlen))
    if not ok.all():
        m = int(np.argmin(ok))
        s, stop, kend, vlen, span = s[:m], stop[:m], kend[:m], vlen[:m], span[:m]
        n = m
    kid, is_commit_key = _key_ids(buf, data, slow.keys, known, s + 14, kend)
    fast = is_commit_key & (span >= 28)
    vs = np.where(fast, kend, 0)
    mlen = _ints(buf, vs + 18, ">i2")
    fast &= (_ints(buf, vs + 4, ">i2") == 3) & (mlen >= 0) & (span == 28 + mlen)
    metadata = _metadata(data, vs, mlen, fast)
    vs = np.where(fast, vs, 0)
    mlen = np.where(fast, mlen, 0)
    commit_ts = _ints(buf, vs + 20 + mlen, ">i8")
    tombstone = is_commit_key & (vlen == -1)
    _slow_runs(data, s, fast | tombstone, index, slow, strict)
    rows = np.flatnonzero(fast)
    commits = {
        "position": s[rows],
        "log_index": rows + index,
        "key": kid[rows],
        "offset": _ints(buf, vs[rows] + 6, ">i8"),
        "leader_epoch": _ints(buf, vs[rows] + 14, ">i4"),
        "commit_timestamp": commit_ts[rows],
        "metadata": None if metadata is None else [metadata.get(int(r), "") for r in rows],
    }
    rows = np.flatnonzero(tombstone)
    tombstones = {"position": s[rows], "log_index": rows + index, "key": kid[rows]}
    return [commits, tombstones], n


def _key_ids(
    buf: np.ndarray[Any, Any],
    data: bytes,
    keys: KeyTable,
    known: dict[bytes, int],
    kstart: _Int,
    kend: _Int,
) -> tuple[_Int, _Bool]:
    """Per entry: the key table id of its key and whether it is an OffsetCommit key that
    decodes (other keys are left to the per-record path, which reports or skips them).
    ``known`` maps the segment's key bytes seen so far to that id (-1: not a commit key).

    The keys are an Arrow ``binary_view`` array over the segment's bytes (16-byte views
    built with numpy: length, then the bytes inline up to 12, else a 4-byte prefix and the
    offset), dictionary-encoded by Arrow: no Python object per entry."""
    if len(buf) > _MAX_VIEW_OFFSET:  # views hold int32 offsets: the keys' bytes instead
        raw: pa.Array = pa.array(
            list(map(data.__getitem__, map(slice, kstart.tolist(), kend.tolist()))),
            type=pa.binary(),
        )
    else:
        raw = _key_views(buf, data, kstart, kend)
    encoded = raw.dictionary_encode()
    codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    ids: list[int] = []
    for kb in encoded.dictionary.to_pylist():
        found = known.get(kb)
        if found is None:
            found = known[kb] = _commit_key_id(keys, kb)
        ids.append(found)
    by_code = np.array(ids, dtype=np.int64)
    kid: _Int = by_code[codes] if len(codes) else np.zeros(0, dtype=np.int64)
    return kid, kid >= 0


def _key_views(buf: np.ndarray[Any, Any], data: bytes, kstart: _Int, kend: _Int) -> pa.Array:
    """The keys ``data[kstart:kend]`` as a ``binary_view`` array over ``data``."""
    n = len(kstart)
    klen = kend - kstart
    views = np.zeros((n, 16), dtype=np.uint8)
    views[:, 0:4] = klen.astype("<i4").view(np.uint8).reshape(n, 4)
    at = np.minimum(kstart[:, None] + _INLINE, len(buf) - 1)
    inline = buf[at]
    inline[_INLINE[None, :] >= klen[:, None]] = 0
    views[:, 4:16] = inline
    long = klen > 12
    views[long, 8:12] = 0  # buffer 0: the segment
    views[long, 12:16] = kstart[long].astype("<i4").view(np.uint8).reshape(-1, 4)
    return pa.Array.from_buffers(
        pa.binary_view(), n, [None, pa.py_buffer(views), pa.py_buffer(data)]
    )


def _commit_key_id(keys: KeyTable, raw: bytes) -> int:
    """The key table id of ``raw`` if it is an OffsetCommit key that decodes, else -1."""
    key: object = keys.cache.get(raw)
    if key is None:
        try:
            key = decode_key(raw)
        except Exception:  # reported by the per-record path
            return -1
    if not isinstance(key, OffsetCommitKey):
        return -1
    keys.cache[raw] = key
    return keys.id_of(key)


def _metadata(
    data: bytes, vs: _Int, mlen: _Int, fast: _Bool
) -> dict[int, str] | None:
    """The non-empty metadata strings of the fast commits by row; a row whose metadata is
    not UTF-8 is taken off ``fast`` (the per-record path reports it)."""
    rows = np.flatnonzero(fast & (mlen > 0))
    if not len(rows):
        return None
    out: dict[int, str] = {}
    for r, start, length in zip(rows.tolist(), (vs[rows] + 20).tolist(),
                                mlen[rows].tolist(), strict=True):
        try:
            out[r] = data[start : start + length].decode("utf-8")
        except UnicodeDecodeError:
            fast[r] = False
    return out


def _slow_runs(data: bytes, s: _Int, fast: _Bool, index: int, slow: Chunk, strict: bool) -> None:
    """Runs of consecutive entries that are not fast commits, through the per-record
    parser into ``slow`` (framed entries: each run is read whole)."""
    rows = np.flatnonzero(~fast)
    if not len(rows):
        return
    breaks = np.flatnonzero(np.diff(rows) != 1) + 1
    end = len(data)
    for run in np.split(rows, breaks):
        first = int(run[0])
        fill_chunk(data, int(s[first]), end, index + first, slow, strict, len(run))


def _batch(
    seg: SegmentFile, keys: KeyTable, commits: dict[str, Any], schema: pa.Schema
) -> pa.RecordBatch:
    """Offset commits, or commit tombstones (no ``offset`` column given), as a batch of
    ``schema`` (only its columns are built; a tombstone's value columns are null)."""
    n = len(commits["position"])
    tombstone = "offset" not in commits
    kid = commits["key"]
    string, int64 = pa.string(), pa.int64()

    def const(value: Any, kind: pa.DataType) -> pa.Array:
        if isinstance(value, str):  # a string array from buffers: one memcpy
            text = value.encode("utf-8")
            offsets = np.arange(0, (n + 1) * len(text), len(text) or 1, dtype=np.int32)
            if not text:
                offsets = np.zeros(n + 1, dtype=np.int32)
            return pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(text * n))
        return pa.repeat(pa.scalar(value, kind), n)

    build: dict[str, Any] = {
        "timestamp": lambda: pa.array(commits["commit_timestamp"], type=int64),
        "data_dir": lambda: const(seg.data_dir, string),
        "segment": lambda: const(seg.name, string),
        "position": lambda: pa.array(commits["position"], type=int64),
        "log_index": lambda: pa.array(commits["log_index"], type=int64),
        "record_type": lambda: const(OFFSET_COMMIT, string),
        "tombstone": lambda: const(tombstone, pa.bool_()),
        "group": lambda: pa.array(keys.group, type=string).take(kid),
        "topic": lambda: pa.array(keys.topic, type=string).take(kid),
        "partition": lambda: pa.array(keys.partition, type=pa.int32()).take(kid),
        "offset": lambda: pa.array(commits["offset"], type=int64),
        "leader_epoch": lambda: pa.array(commits["leader_epoch"].astype(np.int32)),
        "metadata": lambda: (
            const("", string) if commits["metadata"] is None
            else pa.array(commits["metadata"], type=string)
        ),
        "commit_timestamp": lambda: pa.array(commits["commit_timestamp"], type=int64),
        "expire_timestamp": lambda: const(-1, int64),
    }
    given = {"data_dir", "segment", "position", "log_index", "record_type", "tombstone",
             "group", "topic", "partition"} if tombstone else build
    arrays = [
        build[f.name]() if f.name in given else pa.nulls(n, f.type) for f in schema
    ]
    return pa.RecordBatch.from_arrays(arrays, schema=schema)
