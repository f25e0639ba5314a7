"""The pipeline's segment parser, without Spark: records written with the storage API
come back as rows; torn tails and corruption are reported with file and byte offset."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from pipeline_support import (
    T0,
    commit,
    mixed_records,
    offsets_from_rows,
    replay_offsets,
    write,
)
from synthetic import write_commits, write_log

from storage.directory import find_segments
from storage.dump import iter_directory
from storage.pipeline import cli
from storage.pipeline.columns import COLUMN_NAMES, CORRUPT, TORN_TAIL, decode_assigned
from storage.pipeline.parse import (
    PipelineInputError,
    parse_directory,
    parse_segment_chunks,
    rows,
)
from storage.record_codec import decode_record, encode_value
from storage.records import OffsetCommitKey, OffsetCommitValue
from storage.segment import HEADER_SIZE, scan_entries


def records_of(rs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in rs if r["log_index"] is not None]


def test_every_record_type_round_trips(tmp_path: Path) -> None:
    d = str(tmp_path / "d")
    written = mixed_records()
    write(d, written)
    got = rows(parse_directory(d))
    assert [r["log_index"] for r in got] == list(range(len(written)))
    assert all(set(r) == set(COLUMN_NAMES) for r in got)
    assert {r["data_dir"] for r in got} == {os.path.abspath(d)}
    # The positions are where storage's own reader finds the entries.
    problems: list[str] = []
    dumped = list(iter_directory(d, problems))
    assert problems == []
    assert [(r["segment"], r["position"]) for r in got] == [(e.segment, e.pos) for e in dumped]
    for row, entry in zip(got, dumped, strict=True):
        record = decode_record(entry.key_bytes, entry.value_bytes)
        assert record is not None
        assert row["group"] == record.key.group
        assert row["tombstone"] is (record.value is None)

    join, start, end, gm, c0, c1, c0b, tomb, connect, cu, gone = got
    assert (join["record_type"], join["event"], join["event_member_id"]) == (
        "rebalance_event",
        "member_join",
        "m1",
    )
    assert (start["reason"], start["generation"], start["timestamp"]) == ("member join", 0, T0 + 1)
    assert end["event_members"] == ["m1", "m2"] and end["generation"] == 1
    assert gm["record_type"] == "group_metadata" and gm["generation"] == 1
    assert (gm["protocol_type"], gm["protocol"], gm["leader"]) == ("consumer", "range", "m1")
    assert gm["state_timestamp"] == gm["timestamp"] == T0 + 10
    assert gm["members"] == [
        {
            "member_id": "m1",
            "group_instance_id": None,
            "client_id": "client-m1",
            "client_host": "/127.0.0.1",
            "session_timeout": 10000,
            "rebalance_timeout": 30000,
            "assigned": [{"topic": "t", "partition": 0}, {"topic": "t", "partition": 1}],
        },
        {
            "member_id": "m2",
            "group_instance_id": "inst-2",
            "client_id": "client-m2",
            "client_host": "/127.0.0.1",
            "session_timeout": 10000,
            "rebalance_timeout": 30000,
            "assigned": [{"topic": "t", "partition": 2}],
        },
    ]
    assert (c0["topic"], c0["partition"], c0["offset"], c0["leader_epoch"]) == ("t", 0, 10, 7)
    assert c0["commit_timestamp"] == c0["timestamp"] == T0 + 100
    assert c0["expire_timestamp"] == -1
    assert c1["expire_timestamp"] == T0 + 86_400_000 and c1["offset"] == 20
    assert c0b["metadata"] == "meta ✓"
    assert tomb["tombstone"] and tomb["record_type"] == "offset_commit"
    assert tomb["offset"] is None and tomb["timestamp"] is None and tomb["partition"] == 1
    # A non-consumer protocol keeps its members but has no decoded assignment.
    assert connect["members"][0]["assigned"] is None
    assert cu["topic"] == "u"
    assert gone["record_type"] == "group_metadata" and gone["tombstone"]


def test_chunking_does_not_change_the_rows(tmp_path: Path) -> None:
    d = str(tmp_path / "d")
    write_log(d, seed=3, steps=30, segment_bytes=4000)
    assert len(find_segments(d)) > 3
    whole = rows(parse_directory(d))
    assert rows(parse_directory(d, chunk_entries=7)) == whole
    assert rows(parse_directory(d, chunk_entries=1)) == whole
    # Indices are continuous across segments (no compaction happened).
    assert [r["log_index"] for r in whole] == list(range(len(whole)))


def test_replay_oracle_agrees_with_parsed_rows(tmp_path: Path) -> None:
    """The last-write-wins dict over the parser's rows equals the coordinator's replay."""
    d = str(tmp_path / "d")
    write_log(d, seed=5, steps=80)
    latest: dict[tuple[str, str, str, int], tuple[int, Any]] = {}
    for r in rows(parse_directory(d)):
        if r["record_type"] == "offset_commit":
            latest[(r["data_dir"], r["group"], r["topic"], r["partition"])] = (r["log_index"], r)
    live = [r for _, r in latest.values() if not r["tombstone"]]
    assert offsets_from_rows(live) == replay_offsets([d])
    assert any(r["tombstone"] for _, r in latest.values())  # tombstones did matter


def test_torn_tail_is_read_up_to_the_last_valid_entry(tmp_path: Path) -> None:
    d = str(tmp_path / "d")
    records = [commit("g", "t", p, p + 1, T0 + p) for p in range(5)]
    write(d, records)
    seg = find_segments(d)[-1]
    size = os.path.getsize(seg.path)
    with open(seg.path, "ab") as f:  # half of another entry: a writer died mid-write
        f.write(b"\x00\x00\x00\x30\x12\x34")
    for strict in (False, True):  # a torn tail is never an error
        got = rows(parse_directory(d, strict=strict))
        assert [r["offset"] for r in records_of(got)] == [1, 2, 3, 4, 5]
        (problem,) = [r for r in got if r["log_index"] is None]
        assert problem["record_type"] == TORN_TAIL
        assert (problem["segment"], problem["position"]) == (seg.name, size)
        assert "6 bytes" in problem["problem"]


def test_corruption_is_reported_with_file_and_offset_or_raised_when_strict(
    tmp_path: Path,
) -> None:
    d = str(tmp_path / "d")
    write(d, [commit("g", "t", p % 3, p, T0 + p) for p in range(60)], segment_bytes=600)
    segs = find_segments(d)
    assert len(segs) >= 3
    victim = segs[1]
    data = bytearray(Path(victim.path).read_bytes())
    second = scan_entries(bytes(data), HEADER_SIZE).positions[1]  # its second entry
    data[second + 20] ^= 0xFF  # flip a byte inside it: its CRC no longer matches
    Path(victim.path).write_bytes(bytes(data))

    got = rows(parse_directory(d))
    (problem,) = [r for r in got if r["log_index"] is None]
    assert problem["record_type"] == CORRUPT
    assert (problem["segment"], problem["position"]) == (victim.name, second)
    assert "CRC" in problem["problem"]
    # The segment is read up to the bad entry; the other segments in full.
    read = {r["log_index"] for r in records_of(got)}
    assert victim.base in read and victim.base + 1 not in read
    assert segs[2].base in read and (segs[1].base - 1) in read

    with pytest.raises(PipelineInputError) as info:
        list(parse_directory(d, strict=True))
    assert info.value.path == victim.path and info.value.offset == second
    assert victim.name in str(info.value) and str(second) in str(info.value)


def test_bad_segment_header_and_undecodable_entry(tmp_path: Path) -> None:
    d = str(tmp_path / "d")
    write(d, [commit("g", "t", p, p, T0) for p in range(20)], segment_bytes=300)
    segs = find_segments(d)
    with open(segs[0].path, "r+b") as f:
        f.write(b"NOTKCOOR")
    got = rows(parse_directory(d))
    problems = [r for r in got if r["log_index"] is None]
    assert [(p["segment"], p["position"], p["record_type"]) for p in problems] == [
        (segs[0].name, 0, CORRUPT)
    ]
    assert "bad segment header" in problems[0]["problem"]
    assert min(r["log_index"] for r in records_of(got)) == segs[1].base
    with pytest.raises(PipelineInputError, match="bad segment header"):
        list(parse_directory(d, strict=True))


def test_an_entry_that_frames_but_does_not_decode_is_skipped_alone(tmp_path: Path) -> None:
    from storage.record_codec import encode_key
    from storage.segment import encode_entry, encode_header

    d = tmp_path / "d"
    d.mkdir()
    key = encode_key(OffsetCommitKey("g", "t", 0))
    good = encode_value(OffsetCommitValue(5, -1, "", T0))
    bad_value = b"\x00\x03\x00"  # value version 3, truncated
    entries = [encode_entry(key, good), encode_entry(key, bad_value), encode_entry(key, good)]
    (d / "00000000000000000000.log").write_bytes(encode_header(0) + b"".join(entries))
    got = rows(parse_directory(str(d)))
    assert [r["log_index"] for r in records_of(got)] == [0, 2]
    (problem,) = [r for r in got if r["log_index"] is None]
    assert problem["position"] == HEADER_SIZE + len(entries[0])
    assert "entry 1 value does not decode" in problem["problem"]
    with pytest.raises(PipelineInputError, match="entry 1 value does not decode"):
        list(parse_directory(str(d), strict=True))


def test_interrupted_compaction_swap_file_replaces_its_segments(tmp_path: Path) -> None:
    d = str(tmp_path / "d")
    write(d, [commit("g", "t", 0, p, T0 + p) for p in range(30)], segment_bytes=400)
    segs = find_segments(d)
    assert len(segs) >= 4
    # A committed compaction of the first two segments: the newest entry only, at base 0.
    from storage.record_codec import encode_key
    from storage.segment import encode_entry, encode_header

    last_of_two = segs[2].base - 1
    value = encode_value(OffsetCommitValue(last_of_two, 7, "", T0 + last_of_two))
    swap = f"{segs[0].base:020d}-{segs[2].base:020d}.swap"
    Path(d, swap).write_bytes(
        encode_header(0) + encode_entry(encode_key(OffsetCommitKey("g", "t", 0)), value)
    )
    found = find_segments(d)
    assert [s.name for s in found] == [swap] + [s.name for s in segs[2:]]
    got = records_of(rows(parse_directory(d)))
    assert got[0]["offset"] == last_of_two and got[0]["segment"] == swap
    assert got[1]["log_index"] == segs[2].base
    assert not [r for r in rows(parse_directory(d)) if r["log_index"] is None]


def test_decode_assigned() -> None:
    from pipeline_support import assignment

    assert decode_assigned(assignment(("b", [1]), ("a", [2, 0]))) == [
        {"topic": "a", "partition": 0},
        {"topic": "a", "partition": 2},
        {"topic": "b", "partition": 1},
    ]
    assert decode_assigned(b"") == []
    assert decode_assigned(b"\xff") is None


def test_write_commits_packs_offset_commit_value_v3(tmp_path: Path) -> None:
    d = str(tmp_path / "bulk")
    write_commits(d, 1000, groups=2, topics=2, partitions=3, tombstone_every=10, segments=3)
    problems: list[str] = []
    entries = list(iter_directory(d, problems))
    assert problems == [] and len(entries) == 1000
    assert len(find_segments(d)) == 3
    for e in entries[:50]:
        record = decode_record(e.key_bytes, e.value_bytes)
        assert record is not None
        if record.value is not None:
            assert e.value_bytes == encode_value(record.value)
    got = rows(parse_directory(d))
    assert sum(r["tombstone"] for r in got) == 100
    assert offsets_from_rows(_live(got)) == replay_offsets([d])


def _live(rs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    latest: dict[tuple[str, str, int], dict[str, Any]] = {}
    commits = [r for r in records_of(rs) if r["record_type"] == "offset_commit"]
    for r in sorted(commits, key=lambda r: r["log_index"]):
        latest[(r["group"], r["topic"], r["partition"])] = r
    return [r for r in latest.values() if not r["tombstone"]]


def test_arrow_batches_equal_the_column_lists(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    pytest.importorskip("pyspark")
    from storage.pipeline.source import arrow_schema, chunk_batches, to_record_batch

    d = str(tmp_path / "d")
    write(d, mixed_records())
    write_log(str(tmp_path / "e"), seed=2, steps=20)
    for directory in (d, str(tmp_path / "e")):
        for seg in find_segments(directory):
            for chunk in parse_segment_chunks(seg, chunk_entries=10):
                batches = list(chunk_batches(chunk))
                groups = list(chunk.groups())
                assert len(batches) == len(groups)
                for batch, cols in zip(batches, groups, strict=True):
                    assert batch.schema == arrow_schema()
                    assert batch.equals(to_record_batch(cols))
                    assert batch.to_pylist() == rows([cols])


# --------------------------------------------------------------------------------------
# The CLI's argument checks (no Spark started)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "required"),
        (["--input", "/nonexistent/kcoord-data", "--output", "OUT"], "does not exist"),
        (["--input", "FILE", "--output", "OUT"], "not a directory"),
        (["--input", "EMPTY", "--output", "OUT"], "no input holds a kcoord log"),
        (["--input", "DATA", "--output", "OUT", "--since", "yesterday"], "not a time"),
        (
            [
                "--input",
                "DATA",
                "--output",
                "OUT",
                "--since",
                "2024-02-01",
                "--until",
                "2024-01-01",
            ],
            "--since is after --until",
        ),
        (["--input", "DATA", "--output", "DATA/out"], "must not be inside an input"),
        (["--input", "DATA", "--output", "OUT", "--bogus"], "unrecognized arguments"),
        (["--input", "DATA", "--output", "OUT", "--conf", "novalue"], "expected spark.KEY"),
        (["--input", "DATA", "--output", "OUT", "--conf", "x.y=1"], "expected spark.KEY"),
    ],
)
def test_cli_bad_arguments_exit_2(tmp_path: Path, argv: list[str], message: str) -> None:
    import io

    (tmp_path / "FILE").write_text("x")
    (tmp_path / "EMPTY").mkdir()
    write(str(tmp_path / "DATA"), [commit("g", "t", 0, 1, T0)])
    subst = {
        "FILE": str(tmp_path / "FILE"),
        "EMPTY": str(tmp_path / "EMPTY"),
        "DATA": str(tmp_path / "DATA"),
        "OUT": str(tmp_path / "out"),
        "DATA/out": str(tmp_path / "DATA" / "out"),
    }
    err = io.StringIO()
    assert cli.main([subst.get(a, a) for a in argv], stdout=io.StringIO(), stderr=err) == 2
    assert message in err.getvalue()


def test_cli_parse_time() -> None:
    assert cli.parse_time("1700000000000") == 1_700_000_000_000
    assert cli.parse_time("2023-11-14T22:13:20Z") == 1_700_000_000_000
    assert cli.parse_time("2023-11-14T23:13:20+01:00") == 1_700_000_000_000
    assert cli.parse_time("2023-11-14") == 1_699_920_000_000
    with pytest.raises(ValueError, match="not a time"):
        cli.parse_time("soon")


def test_fixture_log_with_old_versions_parses(tmp_path: Path) -> None:
    """storage's v1 compatibility fixture (old value versions, an unknown record type)."""
    fixture = Path(__file__).resolve().parents[1] / "storage" / "fixtures" / "v1-log"
    if not fixture.is_dir():
        pytest.skip("storage fixture v1-log not present")
    d = tmp_path / "v1"
    shutil.copytree(fixture, d)
    got = rows(parse_directory(str(d)))
    assert not [r for r in got if r["log_index"] is None]
    assert offsets_from_rows(_live(got)) == replay_offsets([str(d)])
    assert any(r["record_type"] == "group_metadata" for r in got)


def test_code_zip_ships_kcoords_packages_named_by_content() -> None:
    """Issue 16 item 2: what a cluster's executors get (storage and wire, sources only)."""
    import zipfile

    from storage.pipeline.session import code_zip

    path = code_zip()
    assert path == code_zip()  # the same content, the same file
    names = set(zipfile.ZipFile(path).namelist())
    assert {"storage/pipeline/source.py", "storage/segment.py", "wire/codec.py",
            "wire/__init__.py"} <= names
    assert not any(n.startswith(("tests/", "coordinator/")) or "__pycache__" in n
                   for n in names)
