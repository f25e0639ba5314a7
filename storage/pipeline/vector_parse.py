"""Segment bytes -> Arrow batches, vectorised: the ``kcoord-log`` reader's parser.

It gives the same rows as :func:`storage.pipeline.parse.parse_segment_chunks` followed by
:func:`storage.pipeline.source.chunk_batches` (tests compare the two on generated logs),
without a Python object per offset commit:

1. the entry boundaries (``storage/FORMAT.md`` section 3: length in range, the entry
   present) are found with numpy, not by walking ``segment.frames`` entry by entry (one
   Python step per entry is the cost this module exists to avoid; the tests hold its rows
   equal to the per-record parser's, which reads through ``scan_entries``): every byte
   offset where an entry that frames exactly (format 1, key and value filling it) could
   start is a candidate, and runs of
   candidates each of which ends where the next starts are taken whole; only where the
   chain leaves the candidates does a Python step read one length field (:class:`_Framer`);
2. the CRC-32C of every entry body (``crc32c`` mapped over memoryview slices, no Python
   loop) is compared with the stored ones, unless the segment's summary
   (``storage/FORMAT.md`` section 10) describes exactly the bytes read: its size and its
   CRC-32 of the whole file (``zlib.crc32``, one call) match, so the bytes are those
   kcoord checked or wrote; the framing rules (entry format 1, key and value lengths) are
   checked with numpy over all entries at once either way; the first entry failing any of
   them ends the fast part;
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
from storage.segment_summary import summary_matches
from wire.checksum import crc32c

from .arrow_rows import chunk_batches
from .chunk import Chunk, KeyTable
from .columns import OFFSET_COMMIT
from .parse import DEFAULT_CHUNK_ENTRIES, check_header, fill_chunk, read_segment

__all__ = ["segment_batches"]

_U32 = struct.Struct(">I")
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
    verified = False
    if data is None:
        data = read_segment(seg)
        verified = summary_matches(seg.path, seg.base, data)
    keys = KeyTable()
    known: dict[bytes, int] = {}
    names = schema.names

    def slow_batches(chunk: Chunk) -> Iterator[pa.RecordBatch]:
        for batch in chunk_batches(chunk):
            if batch.schema.equals(schema):
                yield batch
            else:  # the schema's columns, with its nullability
                yield pa.RecordBatch.from_arrays(batch.select(names).columns, schema=schema)

    header = check_header(seg, data, keys, strict)
    if header is not None:  # a bad header: the problem row
        yield from slow_batches(header)
        return
    buf = _Bytes(data)
    framer = _Framer(buf)
    pos, index, end = HEADER_SIZE, seg.base, len(data)
    while pos < end:
        starts, framed_to = framer.frame(pos, chunk_entries)
        slow = Chunk(seg, keys)
        read, good = _parse_run(buf, starts, index, slow, known, strict, verified)
        done = False
        for columns in read:
            if len(columns["position"]):
                yield _batch(seg, keys, columns, schema)
        index += good
        pos = framed_to
        if good < len(starts) or (framed_to < end and good < chunk_entries):
            # the entry where the framing rules stopped, on the per-record path: it
            # names why and ends the segment (or reads the entry if it is valid after all)
            stopped_at = int(starts[good]) if good < len(starts) else framed_to
            pos, index, done = fill_chunk(data, stopped_at, end, index, slow, strict, 1)
            done = done or pos == stopped_at
        yield from slow_batches(slow)
        if done:
            return


class _Bytes:
    """A segment's bytes, and big-endian integers gathered from them at any byte offsets
    (numpy views of the bytes with a one-byte stride: one gather per column)."""

    __slots__ = ("_views", "data", "u8", "view")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.u8: np.ndarray[Any, np.dtype[np.uint8]] = np.frombuffer(data, dtype=np.uint8)
        self.view = memoryview(data)
        self._views: dict[str, np.ndarray[Any, Any]] = {}

    def ints(self, at: _Int, dtype: str) -> _Int:
        """The integers of ``dtype`` (``>i2``, ``>u4``, ``>i8``, ...) at the byte offsets
        ``at`` (each with all its bytes inside the data), as int64."""
        strided = self._views.get(dtype)
        if strided is None:
            kind = np.dtype(dtype)
            count = max(len(self.data) - kind.itemsize + 1, 0)
            strided = self._views[dtype] = np.ndarray(
                (count,), dtype=kind, buffer=self.data, strides=(1,)
            )
        out: _Int = strided[at].astype(np.int64)
        return out


class _Framer:
    """The entry boundaries of one segment from an offset on, found at once for the rest
    of the segment (:meth:`frame` slices them), equal to a Python loop over the length
    fields (stop at the first entry with fewer than 18 bytes left, a length out of range
    or not all present).

    Candidates are the byte offsets where an entry could start and frame exactly: at least
    18 bytes left, length in range and present, format 1, key length >= 0, the value
    length -1 or >= 0 with key and value filling the entry. Runs of candidates each ending
    where the next starts are taken whole; where the chain reaches an offset that is not
    a candidate (an entry breaking a rule beyond the length, or the end of a candidate
    that is not the next candidate because a false one lies inside an entry), one Python
    step applies the length rules themselves. Every offset taken passes those rules and
    none is skipped, so the boundaries are the loop's."""

    def __init__(self, buf: _Bytes) -> None:
        self.buf = buf
        self.chain: _Int = np.zeros(0, dtype=np.int64)
        self.final = -1
        self._candidates: tuple[_Int, _Int, _Int] | None = None

    def frame(self, pos: int, limit: int) -> tuple[_Int, int]:
        """Start offsets of up to ``limit`` entries from ``pos`` whose length is in range
        and whose bytes are present, and where that stopped."""
        chain = self.chain
        i = int(np.searchsorted(chain, pos))
        if i >= len(chain) or chain[i] != pos:
            chain, self.final = self._walk(pos)
            self.chain = chain
            i = 0
        stop = i + limit
        return chain[i:stop], int(chain[stop]) if stop < len(chain) else self.final

    def candidates(self) -> tuple[_Int, _Int, _Int]:
        """(candidate offsets; each one's end; the indices where a run of candidates ends,
        the next candidate not starting where this one ends, the last index always)."""
        if self._candidates is None:
            buf = self.buf
            end = len(buf.data)
            top = end - 18  # the last offset with 18 bytes left
            c: _Int = np.zeros(0, dtype=np.int64)
            stop: _Int = c
            if top >= HEADER_SIZE:
                u8 = buf.u8
                c = np.flatnonzero(u8[HEADER_SIZE + 9 : top + 10] == 1) + HEADER_SIZE
                c = c[u8[c + 8] == 0]
                stop = c + 8 + buf.ints(c, ">u4")
                keep = (stop >= c + 18) & (stop <= c + 8 + MAX_ENTRY_LENGTH) & (stop <= end)
                c, stop = c[keep], stop[keep]
                klen = buf.ints(c + 10, ">i4")
                kend = c + 14 + klen
                keep = (klen >= 0) & (kend + 4 <= stop)
                c, stop, kend = c[keep], stop[keep], kend[keep]
                keep = _value_fills_entry(buf.ints(kend, ">i4"), stop - kend)
                c, stop = c[keep], stop[keep]
            run_ends = np.append(np.flatnonzero(stop[:-1] != c[1:]), len(c) - 1)
            self._candidates = c, stop, run_ends
        return self._candidates

    def _walk(self, pos: int) -> tuple[_Int, int]:
        """Every entry start from ``pos`` on, and where they end."""
        c, stop, run_ends = self.candidates()
        data = self.buf.data
        end = len(data)
        parts: list[_Int] = []
        singles: list[int] = []
        u32 = _U32.unpack_from
        while end - pos >= 18:
            i = int(np.searchsorted(c, pos))
            if i < len(c) and c[i] == pos:
                last = int(run_ends[np.searchsorted(run_ends, i)])
                if singles:
                    parts.append(np.array(singles, dtype=np.int64))
                    singles = []
                parts.append(c[i : last + 1])
                pos = int(stop[last])
                continue
            (length,) = u32(data, pos)
            after = pos + 8 + length
            if length < 10 or length > MAX_ENTRY_LENGTH or after > end:
                break
            singles.append(pos)
            pos = after
        if singles:
            parts.append(np.array(singles, dtype=np.int64))
        chain = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
        return chain, pos


def _parse_run(
    buf: _Bytes,
    s: _Int,
    index: int,
    slow: Chunk,
    known: dict[bytes, int],
    strict: bool,
    verified: bool,
) -> tuple[list[dict[str, Any]], int]:
    """Parse the framed entries at ``s`` (entry ``index`` first): (the offset commits
    read here and the commit tombstones, as numpy columns; how many entries pass the
    framing rules: a prefix). The other entries go to ``slow``, in log order.
    ``verified``: the bytes are those kcoord checked or wrote (a matching summary), so
    the entries' CRC-32C is not computed again."""
    n = len(s)
    if n == 0:
        return [], 0
    data = buf.data
    stop = s + 8 + buf.ints(s, ">u4")
    klen = buf.ints(s + 10, ">i4")
    kend = s + 14 + klen
    ok: _Bool = (buf.ints(s + 8, ">u2") == 1) & (klen >= 0) & (kend + 4 <= stop)
    if not verified:
        view = buf.view
        crcs = np.fromiter(
            map(crc32c, map(view.__getitem__, map(slice, (s + 8).tolist(), stop.tolist()))),
            dtype=np.int64, count=n,
        )
        ok &= crcs == buf.ints(s + 4, ">u4")
    kend = np.where(ok, kend, s + 8)  # a readable value length either way
    vlen = buf.ints(kend, ">i4")
    span = stop - kend
    ok &= _value_fills_entry(vlen, span)
    if not ok.all():
        m = int(np.argmin(ok))
        s, stop, kend, vlen, span = s[:m], stop[:m], kend[:m], vlen[:m], span[:m]
        n = m
    kid, is_commit_key = _key_ids(buf, slow.keys, known, s + 14, kend)
    fast = is_commit_key & (span >= 28)
    vs = np.where(fast, kend, 0)
    mlen = buf.ints(vs + 18, ">i2")
    fast &= (buf.ints(vs + 4, ">i2") == 3) & (mlen >= 0) & (span == 28 + mlen)
    metadata = _metadata(data, vs, mlen, fast)
    vs = np.where(fast, vs, 0)
    mlen = np.where(fast, mlen, 0)
    commit_ts = buf.ints(vs + 20 + mlen, ">i8")
    tombstone = is_commit_key & (vlen == -1)
    _slow_runs(data, s, fast | tombstone, index, slow, strict)
    rows = np.flatnonzero(fast)
    commits = {
        "position": s[rows],
        "log_index": rows + index,
        "key": kid[rows],
        "offset": buf.ints(vs[rows] + 6, ">i8"),
        "leader_epoch": buf.ints(vs[rows] + 14, ">i4"),
        "commit_timestamp": commit_ts[rows],
        "metadata": None if metadata is None else [metadata.get(int(r), "") for r in rows],
    }
    rows = np.flatnonzero(tombstone)
    tombstones = {"position": s[rows], "log_index": rows + index, "key": kid[rows]}
    return [commits, tombstones], n


def _value_fills_entry(vlen: _Int, span: _Int) -> _Bool:
    """Where the value length ``vlen`` (-1: no value) and what follows the key, ``span``
    bytes (the value length field included), fill the entry exactly."""
    fills: _Bool = ((vlen == -1) & (span == 4)) | ((vlen >= 0) & (span == 4 + vlen))
    return fills


def _key_ids(
    buf: _Bytes,
    keys: KeyTable,
    known: dict[bytes, int],
    kstart: _Int,
    kend: _Int,
) -> tuple[_Int, _Bool]:
    """Per entry: the key table id of its key and whether it is an OffsetCommit key that
    decodes (other keys are left to the per-record path, which reports or skips them).
    ``known`` maps the segment's key bytes seen so far to that id (-1: not a commit key).

    Each distinct key's bytes are found by Arrow's dictionary encoding (:func:`_key_codes`):
    no Python object per entry."""
    codes, distinct = _key_codes(buf, kstart, kend)
    ids: list[int] = []
    for kb in distinct:
        found = known.get(kb)
        if found is None:
            found = known[kb] = _commit_key_id(keys, kb)
        ids.append(found)
    by_code = np.array(ids, dtype=np.int64)
    kid: _Int = by_code[codes] if len(codes) else np.zeros(0, dtype=np.int64)
    return kid, kid >= 0


#: Keys of at most this many different lengths are encoded as fixed-size binary, one
#: array per length; more, as one array of variable-length views.
MAX_KEY_LENGTHS = 16


def _key_codes(buf: _Bytes, kstart: _Int, kend: _Int) -> tuple[_Int, list[bytes]]:
    """(per entry, the index of its key in the list of distinct keys; that list): the
    keys ``data[kstart:kend]`` dictionary-encoded by Arrow. Keys of a few lengths (all
    the same length, typically) are gathered as fixed-size binary arrays, one per length
    (a strided copy, hashed as fixed-width values); otherwise they are a ``binary_view``
    array over the segment (:func:`_key_views`)."""
    klen = kend - kstart
    n = len(klen)
    if not n:
        return np.zeros(0, dtype=np.int64), []
    low, high = int(klen.min()), int(klen.max())
    present = [low] if low == high else (
        (np.flatnonzero(np.bincount(klen - low)) + low).tolist()
        if high - low < 4096 else []
    )
    if not present or low == 0 or len(present) > MAX_KEY_LENGTHS:
        return _dictionary_codes(_key_views(buf, kstart, kend)
                                 if len(buf.data) <= _MAX_VIEW_OFFSET
                                 else _key_bytes(buf.data, kstart, kend))
    data = buf.data
    codes: _Int = np.empty(n, dtype=np.int64)
    distinct: list[bytes] = []
    for length in present:
        rows = None if len(present) == 1 else np.flatnonzero(klen == length)
        at = kstart if rows is None else kstart[rows]
        windows = np.ndarray((len(data) - length + 1,), dtype=f"V{length}", buffer=data,
                             strides=(1,))
        gathered = windows[at]
        fixed = pa.FixedSizeBinaryArray.from_buffers(
            pa.binary(length), len(at), [None, pa.py_buffer(gathered)]
        )
        part, found = _dictionary_codes(fixed)
        part += len(distinct)
        if rows is None:
            codes = part
        else:
            codes[rows] = part
        distinct += found
    return codes, distinct


def _dictionary_codes(keys: pa.Array) -> tuple[_Int, list[bytes]]:
    """``keys`` dictionary-encoded: (each one's index in the distinct keys; those)."""
    encoded = keys.dictionary_encode()
    codes: _Int = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    return codes, encoded.dictionary.to_pylist()


def _key_bytes(data: bytes, kstart: _Int, kend: _Int) -> pa.Array:
    """The keys as a ``binary`` array of copies (a segment too large for views' int32
    offsets)."""
    return pa.array(list(map(data.__getitem__, map(slice, kstart.tolist(), kend.tolist()))),
                    type=pa.binary())


def _key_views(buf: _Bytes, kstart: _Int, kend: _Int) -> pa.Array:
    """The keys ``data[kstart:kend]`` as a ``binary_view`` array over ``data``."""
    n = len(kstart)
    data = buf.data
    klen = kend - kstart
    views = np.zeros((n, 16), dtype=np.uint8)
    views[:, 0:4] = klen.astype("<i4").view(np.uint8).reshape(n, 4)
    source = data if not n or int(kstart[-1]) + 12 <= len(data) else data + bytes(12)
    windows = np.ndarray((len(source) - 11,), dtype="V12", buffer=source, strides=(1,))
    inline = windows[kstart].view(np.uint8).reshape(n, 12)
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
