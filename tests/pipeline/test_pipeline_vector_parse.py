"""The vectorised segment parser (``storage.pipeline.vector_parse``) against the per-record
one (``parse_segment_chunks`` + ``chunk_batches``): the same rows, problem reports and
strict-mode errors on generated segments of every record type, damaged or not."""

from __future__ import annotations

import os
import struct
import tempfile
import uuid
import zlib
from typing import Any

import pytest
from pipeline_support import NEEDS_EXTRA

pytest.importorskip("pyarrow", reason=NEEDS_EXTRA)

import numpy as np
import pyarrow as pa
from crc32c import crc32c
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pipeline_support import T0, mixed_records
from synthetic import write_commits

from storage.config_records import ConfigRecordKey, ConfigRecordValue
from storage.directory import find_segments
from storage.pipeline import vector_parse
from storage.pipeline.arrow_rows import arrow_schema, chunk_batches
from storage.pipeline.columns import NOT_NULL
from storage.pipeline.parse import PipelineInputError, parse_segment_chunks
from storage.pipeline.source import reader_schema
from storage.pipeline.vector_parse import segment_batches
from storage.record_codec import encode_key, encode_record, encode_value
from storage.records import (
    GroupMetadataKey,
    OffsetCommitKey,
    OffsetCommitValue,
    Record,
    TxnOffsetCommitKey,
    TxnOffsetCommitValue,
)
from storage.segment import HEADER_SIZE, MAX_ENTRY_LENGTH, encode_entry, encode_header
from storage.segment_summary import SegmentSummary, summary_matches, summary_path
from storage.share_records import ShareSnapshotKey, ShareSnapshotValue, ShareStateBatch

_SORT = [("segment", "ascending"), ("position", "ascending"), ("record_type", "ascending")]

names = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)


@st.composite
def commit_entries(draw: st.DrawFn) -> bytes:
    """An offset commit key (version 0 or 1) with a value of any version, or none."""
    key = OffsetCommitKey(draw(names), draw(names), draw(st.integers(0, 2**31 - 1)))
    raw_key = encode_key(key, draw(st.sampled_from([0, 1])))
    version = draw(st.sampled_from([3, 3, 3, 0, 1, 2, 4, None]))
    if version is None:
        return encode_entry(raw_key, None)
    value = OffsetCommitValue(
        offset=draw(st.integers(-1, 2**63 - 1)),
        leader_epoch=draw(st.integers(-1, 2**31 - 1)) if version >= 3 else -1,
        metadata=draw(st.sampled_from(["", "", "meta", "ünï ✓"])),
        commit_timestamp=T0 + draw(st.integers(0, 10**6)),
        expire_timestamp=T0 + 10**7 if version == 1 else -1,
    )
    return encode_entry(raw_key, encode_value(value, version))


def odd_commit(raw_key: bytes, kind: int) -> bytes:
    """A commit v3 value laid out by hand: metadata that is not UTF-8, a trailing byte,
    a negative metadata length, or a value too short for its fields."""
    head = struct.pack(">hqih", 3, 7, 1, 2)
    if kind == 0:
        value = head + b"\xff\xfe" + struct.pack(">q", T0)
    elif kind == 1:
        value = struct.pack(">hqih", 3, 7, 1, 0) + struct.pack(">q", T0) + b"\x00"
    elif kind == 2:
        value = struct.pack(">hqih", 3, 7, 1, -1) + struct.pack(">q", T0)
    else:
        value = struct.pack(">hq", 3, 7)
    return encode_entry(raw_key, value)


@st.composite
def other_entries(draw: st.DrawFn) -> bytes:
    """Every other kind of entry: the other record types, tombstones, staged offsets,
    unknown record types, keys that do not decode, odd commit values, share state, configs."""
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return encode_entry(*encode_record(draw(st.sampled_from(mixed_records()))))
    if kind == 1:
        return encode_entry(encode_key(GroupMetadataKey(draw(names))), None)
    if kind == 2:
        key = TxnOffsetCommitKey(5, draw(names), "t", 0)
        value = TxnOffsetCommitValue(offset=3, leader_epoch=-1, metadata="",
                                     commit_timestamp=T0)
        return encode_entry(encode_key(key), draw(st.sampled_from([encode_value(value), None])))
    if kind == 3:  # an unknown record type: skipped
        return encode_entry(struct.pack(">h", 50) + b"whatever", b"\x00\x00")
    if kind == 4:  # a commit key that does not decode
        return encode_entry(struct.pack(">hh", 1, 40) + b"short", b"\x00\x03")
    if kind == 5:  # a group name that is not UTF-8
        return encode_entry(struct.pack(">hh", 1, 2) + b"\xc3\x28" + struct.pack(">hi", 0, 1),
                            None)
    if kind == 6:
        key = encode_key(OffsetCommitKey(draw(names), "t", 1))
        return odd_commit(key, draw(st.integers(0, 3)))
    if kind == 8:  # share partition state: not in the datasets
        snapshot = Record(
            ShareSnapshotKey(draw(names), uuid.UUID(int=7), 0),
            ShareSnapshotValue(0, 0, 0, 5, T0, T0, (ShareStateBatch(5, 6, 2, 1),)),
        )
        return encode_entry(*encode_record(snapshot))
    if kind == 9:  # a config record (a fresh server writes ELR's): not in the datasets
        config = Record(ConfigRecordKey(4, "", "min.insync.replicas"),
                        ConfigRecordValue(draw(st.sampled_from(["1", None]))))
        return encode_entry(*encode_record(config))
    # an unknown record type whose key holds a whole entry: a false framing candidate
    inner = draw(commit_entries())
    return encode_entry(struct.pack(">h", 50) + inner, draw(st.sampled_from([None, inner])))


entries = st.one_of(commit_entries(), commit_entries(), other_entries())


@st.composite
def damaged(draw: st.DrawFn, data: bytes) -> bytes:
    """``data`` (a segment) as written, or with a flipped byte, cut short, garbage
    appended or an entry of a future entry format."""
    how = draw(st.sampled_from(["none", "none", "flip", "cut", "garbage", "format"]))
    body = len(data) - HEADER_SIZE
    if how == "none" or body <= 0:
        return data
    at = HEADER_SIZE + draw(st.integers(0, body - 1))
    if how == "flip":
        return data[:at] + bytes([data[at] ^ 0x40]) + data[at + 1 :]
    if how == "cut":
        return data[:at]
    if how == "garbage":
        return data + draw(st.binary(min_size=1, max_size=40))
    commit_v3 = OffsetCommitValue(offset=1, leader_epoch=-1, metadata="", commit_timestamp=T0,
                                  expire_timestamp=-1)
    future = bytearray(encode_entry(encode_key(OffsetCommitKey("g", "t", 0)),
                                    encode_value(commit_v3, 3)))
    future[8:10] = b"\x00\x02"
    future[4:8] = struct.pack(">I", crc32c(bytes(future[8:])))
    return data + bytes(future)


def write_segments(
    directory: str, segments: list[bytes], summarised: list[bytes | None] | None = None
) -> None:
    """Segment files with bases 0, 1000, ...; ``summarised``: per segment, the bytes a
    summary sidecar describes (size and CRC-32), or None for no summary."""
    os.makedirs(directory)
    base = 0
    for i, data in enumerate(segments):
        path = os.path.join(directory, f"{base:020d}.log")
        with open(path, "wb") as f:
            f.write(data)
        described = summarised[i] if summarised else None
        if described is not None:
            summary = SegmentSummary(base, len(described), checksum=zlib.crc32(described))
            with open(summary_path(path), "wb") as f:
                f.write(summary.encode())
        base += 1000


def per_record(directory: str, strict: bool, chunk: int) -> pa.Table:
    return pa.Table.from_batches(
        [
            batch
            for seg in find_segments(directory)
            for c in parse_segment_chunks(seg, strict=strict, chunk_entries=chunk)
            for batch in chunk_batches(c)
        ],
        schema=arrow_schema(),
    ).sort_by(_SORT)


def vectorised(
    directory: str, strict: bool, chunk: int, schema: pa.Schema, by: Any = _SORT
) -> pa.Table:
    return pa.Table.from_batches(
        [
            batch
            for seg in find_segments(directory)
            for batch in segment_batches(seg, schema, strict=strict, chunk_entries=chunk)
        ],
        schema=schema,
    ).sort_by(by)


def outcome(read: Any) -> pa.Table | str:
    try:
        result: pa.Table = read()
    except PipelineInputError as exc:
        return f"PipelineInputError: {exc}"
    return result


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    segments=st.lists(st.lists(entries, max_size=25), min_size=1, max_size=3),
    chunk=st.sampled_from([1, 4, 65536]),
    summaries=st.booleans(),
    key_lengths=st.sampled_from([0, 1, 16]),
    data=st.data(),
)
def test_vectorised_parser_gives_the_per_record_parsers_rows(
    segments: list[list[bytes]], chunk: int, summaries: bool, key_lengths: int,
    data: st.DataObject
) -> None:
    """With ``summaries``, every segment has a summary of its bytes as written (before
    any damage): an undamaged one is read without per-entry CRC-32C, a damaged one is
    checked entry by entry; the rows and errors are the per-record parser's either way.
    ``key_lengths``: keys of up to that many lengths are encoded as fixed-size binary
    (0: always as views)."""
    written = [encode_header(i * 1000) + b"".join(entries) for i, entries in enumerate(segments)]
    files = [data.draw(damaged(raw)) for raw in written]
    default = vector_parse.MAX_KEY_LENGTHS
    vector_parse.MAX_KEY_LENGTHS = key_lengths
    try:
        with tempfile.TemporaryDirectory() as tmp:
            directory = os.path.join(tmp, "d")
            write_segments(directory, files, list(written) if summaries else None)
            for strict in (False, True):
                want = outcome(lambda: per_record(directory, strict, chunk))  # noqa: B023
                got = outcome(
                    lambda: vectorised(directory, strict, chunk, arrow_schema())  # noqa: B023
                )
                if isinstance(want, str) or isinstance(got, str):
                    assert got == want
                else:
                    assert got.equals(want), (got.to_pylist(), want.to_pylist())
                    assert_not_null_columns_hold_values(got)
    finally:
        vector_parse.MAX_KEY_LENGTHS = default


def assert_not_null_columns_hold_values(table: pa.Table) -> None:
    """The columns the schema declares non-nullable have a value in every row."""
    for name in NOT_NULL:
        assert not table.schema.field(name).nullable
        assert table.column(name).null_count == 0, name


def test_bulk_commits_and_pruned_columns(tmp_path: Any, monkeypatch: Any) -> None:
    directory = str(tmp_path / "bulk")
    write_commits(directory, 20_000, segments=2, seed=4)
    want = per_record(directory, False, 65536)
    assert want.num_rows == 20_000
    assert vectorised(directory, False, 4096, arrow_schema()).equals(want)
    with monkeypatch.context() as patched:  # keys as views, as copies (a segment too
        patched.setattr(vector_parse, "MAX_KEY_LENGTHS", 0)  # large for int32 views)
        assert vectorised(directory, False, 4096, arrow_schema()).equals(want)
        patched.setattr(vector_parse, "_MAX_VIEW_OFFSET", 0)
        assert vectorised(directory, False, 4096, arrow_schema()).equals(want)
    columns = ["topic", "offset", "log_index", "group", "tombstone", "metadata"]
    pruned = vectorised(directory, False, 65536, reader_schema(columns), "log_index")
    assert pruned.schema.names == columns
    assert pruned.equals(want.select(columns).sort_by("log_index"))


def test_bad_header_and_unreadable_segment(tmp_path: Any) -> None:
    directory = str(tmp_path / "d")
    write_segments(directory, [b"KCOORDLG" + b"\x00" * 30])
    (seg,) = find_segments(directory)
    rows = [b for b in segment_batches(seg, arrow_schema())]
    assert [r["record_type"] for b in rows for r in b.to_pylist()] == ["corrupt"]
    assert per_record(directory, False, 10).equals(vectorised(directory, False, 10,
                                                              arrow_schema()))
    with pytest.raises(PipelineInputError, match="bad segment header"):
        list(segment_batches(seg, arrow_schema(), strict=True))
    os.chmod(seg.path, 0)
    if os.access(seg.path, os.R_OK):  # root reads anything: remove the file instead
        os.remove(seg.path)
    with pytest.raises(OSError, match="cannot read"):
        list(segment_batches(seg, arrow_schema()))


def test_pack_segments_groups_small_segments(tmp_path: Any) -> None:
    from storage.pipeline.source import PACK_BYTES, pack_segments

    directory = str(tmp_path / "d")
    sizes = [100, 200, PACK_BYTES, 50, 60, 70]
    write_segments(directory, [b"x" * n for n in sizes])
    segments = find_segments(directory)
    packed = pack_segments(segments)
    assert [[s.name for s in group] for group in packed] == [
        [s.name for s in segments[:2]], [segments[2].name], [s.name for s in segments[3:]]
    ]
    assert [len(g) for g in pack_segments(segments, max_bytes=150)] == [1, 1, 1, 2, 1]
    assert [len(g) for g in pack_segments(segments, max_bytes=1)] == [1] * 6
    os.remove(segments[0].path)  # unreadable: counts 0, reading it reports it
    assert [len(g) for g in pack_segments(segments, max_bytes=200)] == [2, 1, 3]


def frame_by_python_loop(data: bytes, pos: int) -> tuple[list[int], int]:
    """FORMAT.md section 3's walk over the length fields alone: the reference."""
    starts = []
    while len(data) - pos >= 18:
        (length,) = struct.unpack_from(">I", data, pos)
        if length < 10 or length > MAX_ENTRY_LENGTH or pos + 8 + length > len(data):
            break
        starts.append(pos)
        pos += 8 + length
    return starts, pos


@settings(max_examples=60, deadline=None)
@given(entries=st.lists(entries, max_size=30), data=st.data())
def test_framer_finds_the_python_loops_boundaries(entries: list[bytes], data: st.DataObject
                                                  ) -> None:
    """Entry boundaries from the numpy candidates equal the Python loop's, whole and in
    chunks, on segments with entries inside entries (false candidates), damage, garbage."""
    segment = data.draw(damaged(encode_header(0) + b"".join(entries)))
    want, final = frame_by_python_loop(segment, HEADER_SIZE)
    framer = vector_parse._Framer(vector_parse._Bytes(segment))
    whole, framed_to = framer.frame(HEADER_SIZE, len(want) + 1)
    assert (whole.tolist(), framed_to) == (want, final)
    limit = data.draw(st.integers(1, 5))
    pos, got = HEADER_SIZE, []
    while True:
        starts, pos = framer.frame(pos, limit)
        got += starts.tolist()
        if len(starts) < limit:
            break
    assert (got, pos) == (want, final)
    if want:  # from an offset off the chain: walked again from there
        inside = want[-1] + 1
        starts, framed_to = framer.frame(inside, 10**6)
        assert (starts.tolist(), framed_to) == frame_by_python_loop(segment, inside)


def test_matching_summary_skips_entry_crcs_and_damage_falls_back(
    tmp_path: Any, monkeypatch: Any
) -> None:
    """A closed segment whose summary describes its bytes is read without computing one
    CRC-32C per entry; the same segment with one byte changed no longer matches its
    summary and is checked entry by entry: the same corrupt row as without summaries."""
    source = str(tmp_path / "source")
    write_commits(source, 2_000, segments=2, seed=5)
    raw = []
    for seg in find_segments(source):
        with open(seg.path, "rb") as f:
            raw.append(f.read())
    directory = str(tmp_path / "d")
    write_segments(directory, raw, raw)
    segments = find_segments(directory)
    assert all(summary_matches(seg.path, seg.base, data)
               for seg, data in zip(segments, raw, strict=True))
    want = per_record(directory, False, 65536)
    entry_crcs: list[int] = []

    def counted(data: Any) -> int:
        entry_crcs.append(1)
        return crc32c(data)

    monkeypatch.setattr(vector_parse, "crc32c", counted)
    assert vectorised(directory, False, 512, arrow_schema()).equals(want)
    assert entry_crcs == []
    # a stale summary (another size, another checksum, another base) is not used
    for other in (raw[0] + b"x", raw[0][:-1] + bytes([raw[0][-1] ^ 1])):
        assert not summary_matches(segments[0].path, segments[0].base, other)
    assert not summary_matches(segments[0].path, segments[0].base + 1, raw[0])
    assert not summary_matches(segments[0].path + ".none", segments[0].base, raw[0])
    with open(summary_path(segments[1].path), "r+b") as f:  # a damaged summary
        f.seek(20)
        f.write(b"\xff")
    assert not summary_matches(segments[1].path, segments[1].base, raw[1])

    at = len(raw[0]) // 2  # a byte inside an entry of the first (closed) segment
    with open(segments[0].path, "r+b") as f:
        f.seek(at)
        f.write(bytes([raw[0][at] ^ 0x10]))
    entry_crcs.clear()
    want = per_record(directory, False, 65536)
    assert "corrupt" in want.column("record_type").to_pylist()
    assert vectorised(directory, False, 512, arrow_schema()).equals(want)
    assert entry_crcs  # checked entry by entry
    with pytest.raises(PipelineInputError) as wanted:
        per_record(directory, True, 65536)
    with pytest.raises(PipelineInputError) as got:
        vectorised(directory, True, 512, arrow_schema())
    assert str(got.value) == str(wanted.value)


def test_not_null_only_where_every_row_has_a_value(tmp_path: Any) -> None:
    """Non-strict reads of every record type, a corrupt entry, a torn tail and a bad
    header: the non-nullable columns have a value in every row, on both parsers, and
    every other column is null in some row (so it must stay nullable)."""
    body = b"".join(encode_entry(*encode_record(r)) for r in mixed_records())
    good = encode_header(0) + body
    corrupt = bytearray(encode_header(1000) + body)
    corrupt[HEADER_SIZE + 30] ^= 0x40  # inside the first entry: a corrupt row
    bad_header = b"KCOORDLG" + b"\x00" * 30
    torn = encode_header(3000) + body[:-5]  # the last segment: a torn tail
    directory = str(tmp_path / "d")
    write_segments(directory, [good, bytes(corrupt), bad_header, torn])
    for table in (per_record(directory, False, 4), vectorised(directory, False, 4,
                                                              arrow_schema())):
        assert {"corrupt", "torn_tail", "offset_commit", "group_metadata",
                "rebalance_event"} <= set(table.column("record_type").to_pylist())
        assert_not_null_columns_hold_values(table)
        for field in table.schema:
            if field.name not in NOT_NULL:
                assert field.nullable and table.column(field.name).null_count > 0, field.name


@pytest.mark.parametrize("key_lengths", [0, 1, 2, 16])
def test_key_codes_number_each_distinct_key_once(key_lengths: int, monkeypatch: Any) -> None:
    """Keys of several lengths (fixed-size arrays per length, or views when there are
    more lengths than ``MAX_KEY_LENGTHS``): equal keys share a code, different ones do
    not, and the distinct list holds each key's bytes."""
    monkeypatch.setattr(vector_parse, "MAX_KEY_LENGTHS", key_lengths)
    keys = [b"abc", b"abcde", b"abc", b"x" * 30, b"abd", b"abcde", b"x" * 30, b"\x00bc"]
    data = b"".join(keys)
    ends = [sum(map(len, keys[: i + 1])) for i in range(len(keys))]
    starts = [end - len(k) for end, k in zip(ends, keys, strict=True)]
    codes, distinct = vector_parse._key_codes(
        vector_parse._Bytes(data), np.array(starts, dtype=np.int64),
        np.array(ends, dtype=np.int64),
    )
    assert [distinct[c] for c in codes.tolist()] == keys
    assert sorted(distinct) == sorted(set(keys))
