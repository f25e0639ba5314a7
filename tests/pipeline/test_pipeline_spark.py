"""The pipeline on Spark (``local[2]``, one session for all tests): the ``kcoord-log``
Data Source over several directories, torn tails and corruption; the jobs against the
replay oracle and against the generator's record of what happened; the CLI end to end."""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pipeline_support import (
    T0,
    assignment,
    commit,
    event,
    member,
    offsets_from_rows,
    replay_offsets,
    write,
)
from synthetic import SyntheticLog, write_commits, write_log

from storage.directory import find_segments
from storage.pipeline.parse import parse_directory, rows
from storage.records import GroupMetadataKey, GroupMetadataValue, Record
from storage.segment import HEADER_SIZE, scan_entries

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

# A SparkSession and about 40 s of jobs: CI runs the Spark tests in their own step after the
# default run (which stays under ten minutes on two cores; `pytest -m slow tests/pipeline`).
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Two synthetic instances (many small segments) and a bulk-commit one."""
    base = tmp_path_factory.mktemp("logs")
    a = write_log(str(base / "a"), seed=11, steps=120, segment_bytes=6000)
    b = write_log(str(base / "b"), seed=12, steps=80, groups=2)
    bulk = str(base / "bulk")
    write_commits(bulk, 5_000, groups=3, topics=2, partitions=5, tombstone_every=37, segments=3)
    return {"a": a, "b": b, "bulk": bulk}


@pytest.fixture(scope="module")
def ab(spark: Any, logs: dict[str, Any]) -> Iterator[Any]:
    """Instances a and b read once and cached (several tests query them)."""
    df = load(spark, [logs["a"].data_dir, logs["b"].data_dir]).cache()
    yield df
    df.unpersist()


def load(spark: Any, paths: Any, **options: str) -> Any:
    reader = spark.read.format("kcoord-log")
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load(paths)


def test_data_source_over_several_dirs(spark: Any, ab: Any, logs: dict[str, Any]) -> None:
    a, b = logs["a"].data_dir, logs["b"].data_dir
    segments = len(find_segments(a)) + len(find_segments(b))
    assert len(find_segments(a)) > 5
    # small segments are packed into one input partition (up to 4 MiB); one each when
    # maxPartitionBytes is below a segment's size
    assert ab.rdd.getNumPartitions() == 1
    assert load(spark, [a, b], maxPartitionBytes="1").rdd.getNumPartitions() == segments
    df = load(spark, [a, b], chunkEntries="50")
    expected = rows(list(parse_directory(a)) + list(parse_directory(b)))
    got = sorted(
        (r.asDict(recursive=True) for r in df.collect()),
        key=lambda r: (r["data_dir"], r["log_index"]),
    )
    assert got == sorted(expected, key=lambda r: (r["data_dir"], r["log_index"]))
    # The other spellings of the input: a comma-separated string, one directory.
    assert load(spark, f"{a},{b}").count() == len(expected)
    assert load(spark, a).count() == sum(1 for r in expected if r["data_dir"] == a)


def test_data_source_torn_tail(spark: Any, tmp_path: Path) -> None:
    d = str(tmp_path / "torn")
    write(d, [commit("g", "t", p, 100 + p, T0 + p) for p in range(40)], segment_bytes=800)
    last = find_segments(d)[-1]
    size = os.path.getsize(last.path)
    with open(last.path, "r+b") as f:  # the last entry loses its end
        f.truncate(size - 9)
    last_entry = scan_entries(Path(last.path).read_bytes(), HEADER_SIZE).valid_bytes
    for strict in ("false", "true"):
        df = load(spark, d, strict=strict)
        recs = df.where("log_index IS NOT NULL").orderBy("log_index").collect()
        assert [r["offset"] for r in recs] == [100 + p for p in range(39)]
        (problem,) = df.where("log_index IS NULL").collect()
        assert problem["record_type"] == "torn_tail"
        assert (problem["segment"], problem["position"]) == (last.name, HEADER_SIZE + last_entry)


def test_corrupt_input_reported_or_fatal_when_strict(
    spark: Any, tmp_path: Path, logs: dict[str, Any]
) -> None:
    d = str(tmp_path / "corrupt")
    write(d, [commit("g", "t", 0, p, T0 + p) for p in range(30)], segment_bytes=500)
    victim = find_segments(d)[0]
    data = bytearray(Path(victim.path).read_bytes())
    data[HEADER_SIZE + 10] ^= 0x55
    Path(victim.path).write_bytes(bytes(data))
    good = logs["b"].data_dir
    df = load(spark, [d, good])
    (problem,) = df.where("record_type = 'corrupt'").collect()
    assert (problem["data_dir"], problem["segment"], problem["position"]) == (
        os.path.abspath(d),
        victim.name,
        HEADER_SIZE,
    )
    assert df.where(f"data_dir = '{good}'").count() == len(rows(parse_directory(good)))
    with pytest.raises(Exception, match=victim.name) as info:
        load(spark, [d, good], strict="true").count()
    assert f"byte {HEADER_SIZE}" in str(info.value)


def test_offsets_latest_equals_the_replay(spark: Any, logs: dict[str, Any]) -> None:
    from storage.pipeline import jobs

    dirs = [logs["a"].data_dir, logs["b"].data_dir, logs["bulk"]]
    df = load(spark, dirs)
    got = jobs.offsets_latest(df).collect()
    oracle = replay_offsets(dirs)
    assert offsets_from_rows(got) == oracle
    assert len(got) == len(oracle) > 30
    # The same (group, topic, partition) in two instances stays two keys.
    keys = {(g, t, p) for _, g, t, p in oracle}
    assert len(keys) < len(oracle)
    # Tombstones mattered: more keys were ever committed than are live.
    ever = (
        df.where("record_type = 'offset_commit'")
        .select("data_dir", "group", "topic", "partition")
        .distinct()
        .count()
    )
    assert ever > len(oracle)


def test_offsets_latest_carries_the_latest_metadata(spark: Any, tmp_path: Path) -> None:
    from storage.pipeline import jobs

    d = str(tmp_path / "meta")
    tomb = Record(commit("g", "t", 3, 0, 0).key, None)
    write(
        d,
        [
            commit("g", "t", 0, 1, T0, metadata="x"),
            commit("g", "t", 0, 2, T0 + 1),
            commit("g", "t", 1, 1, T0 + 2),
            commit("g", "t", 1, 2, T0 + 3, metadata="y"),
            commit("g", "t", 2, 1, T0 + 4, metadata="z"),
            commit("g", "t", 2, 5, T0 + 5, metadata="z", expire=T0 + 9),
            commit("g", "t", 3, 1, T0 + 6, metadata="w"),
            tomb,
        ],
    )
    got = {
        r["partition"]: (r["offset"], r["metadata"], r["expire_timestamp"], r["log_index"])
        for r in jobs.offsets_latest(load(spark, d)).collect()
    }
    assert got == {0: (2, "", -1, 1), 1: (2, "y", -1, 3), 2: (5, "z", T0 + 9, 5)}


def test_offsets_latest_until_is_the_replay_of_the_prefix(spark: Any, tmp_path: Path) -> None:
    from storage.pipeline import jobs

    d = str(tmp_path / "window")
    records = [
        commit("g", "t", 0, 1, T0),
        commit("g", "t", 1, 2, T0 + 1000),
        Record(commit("g", "t", 0, 0, 0).key, None),  # tombstone: no time of its own
        commit("g", "t", 1, 3, T0 + 3000),
        commit("g", "t", 0, 4, T0 + 4000),
    ]
    write(d, records)
    df = load(spark, d)

    def latest(until: int | None) -> dict[tuple[str, int], int]:
        recs = jobs.apply_window(df, None, until)
        return {
            (r["topic"], r["partition"]): r["offset"] for r in jobs.offsets_latest(recs).collect()
        }

    assert latest(None) == {("t", 0): 4, ("t", 1): 3}
    assert latest(T0 + 999) == {("t", 0): 1}
    # The tombstone takes the time of the record before it (T0+1000).
    assert latest(T0 + 1000) == {("t", 1): 2}
    assert latest(T0 + 3999) == {("t", 1): 3}
    assert latest(T0 - 1) == {}


def _expected_generations(log: SyntheticLog) -> dict[tuple[str, str, int, int], str]:
    from storage.pipeline.group_jobs import TRIGGERS

    return {
        (log.data_dir, g.group, g.incarnation, g.generation): TRIGGERS[g.reason]
        for g in log.generations
    }


def test_rebalances_generations_and_triggers(ab: Any, logs: dict[str, Any]) -> None:
    from storage.pipeline import group_jobs

    got = group_jobs.rebalances(ab).collect()
    expected = {**_expected_generations(logs["a"]), **_expected_generations(logs["b"])}
    assert {
        (r["data_dir"], r["group"], r["incarnation"], r["generation"]): r["trigger"] for r in got
    } == expected
    assert {"join", "leave", "session_expiry", "metadata_change"} <= set(expected.values())
    assert any(k[2] > 0 for k in expected)  # a group was deleted and came back
    by_key = {(g.group, g.incarnation, g.generation): g for g in logs["a"].generations}
    for r in got:
        assert r["has_events"]
        assert r["duration_ms"] == r["end_ms"] - r["start_ms"] >= 0
        if r["data_dir"] == logs["a"].data_dir:
            truth = by_key[(r["group"], r["incarnation"], r["generation"])]
            assert sorted(r["member_ids_after"]) == sorted(truth.members)
            assert r["members_after"] == len(truth.members)


def test_rebalances_leader_protocol_and_moves(spark: Any, tmp_path: Path) -> None:
    from storage.pipeline import group_jobs, jobs

    def gm(generation: int, members: tuple[Any, ...], ts: int) -> Record:
        return Record(
            GroupMetadataKey("g"),
            GroupMetadataValue(
                "consumer",
                generation,
                "range" if members else None,
                members[0].member_id if members else None,
                ts,
                members,
            ),
        )

    everything = assignment(("t", [0, 1, 2, 3]))
    half0, half1 = assignment(("t", [0, 1])), assignment(("t", [2, 3]))
    d = str(tmp_path / "moves")
    write(
        d,
        [
            event("g", "member_join", T0, 0, member_id="m1"),
            event("g", "rebalance_start", T0, 0, reason="member join"),
            event("g", "rebalance_end", T0 + 100, 1, members=("m1",)),
            gm(1, (member("m1", everything, "i1"),), T0 + 100),
            event("g", "member_join", T0 + 1000, 1, member_id="m2"),
            event("g", "rebalance_start", T0 + 1000, 1, reason="member join"),
            event("g", "rebalance_end", T0 + 1500, 2, members=("m1", "m2")),
            gm(2, (member("m1", half0, "i1"), member("m2", half1)), T0 + 1500),
            # m1 restarts statically as m1b: same instance, same partitions, no rebalance.
            event("g", "static_replace", T0 + 2000, 2, member_id="m1b", reason="replaced m1"),
            gm(2, (member("m1b", half0, "i1"), member("m2", half1)), T0 + 2000),
            event("g", "rebalance_start", T0 + 3000, 2, reason="member metadata changed"),
            event("g", "rebalance_end", T0 + 3700, 3, members=("m1b", "m2")),
            gm(3, (member("m1b", half0, "i1"), member("m2", half1)), T0 + 3700),
            event("g", "member_leave", T0 + 5000, 3, member_id="m2"),
            event("g", "rebalance_start", T0 + 5000, 3, reason="member leave"),
            event("g", "rebalance_end", T0 + 5200, 4, members=("m1b",)),
            gm(4, (member("m1b", everything, "i1"),), T0 + 5200),
            event("g", "rebalance_start", T0 + 9000, 4, reason="leader rejoin"),
        ],
    )
    df = load(spark, d)
    got = {r["generation"]: r for r in group_jobs.rebalances(df).collect()}
    assert sorted(got) == [1, 2, 3, 4]
    assert [got[g]["trigger"] for g in (1, 2, 3, 4)] == ["join", "join", "metadata_change", "leave"]
    assert [got[g]["duration_ms"] for g in (1, 2, 3, 4)] == [100, 500, 700, 200]
    assert [got[g]["partitions_moved"] for g in (1, 2, 3, 4)] == [4, 2, 0, 2]
    assert [got[g]["any_partition_moved"] for g in (1, 2, 3, 4)] == [True, True, False, True]
    assert [(got[g]["members_before"], got[g]["members_after"]) for g in (1, 2, 3, 4)] == [
        (0, 1),
        (1, 2),
        (2, 2),
        (2, 1),
    ]
    assert got[2]["joined"] == ["m2"] and got[4]["left"] == ["m2"]
    assert got[3]["leader"] == "m1b" and got[3]["protocol"] == "range"
    # The summary: a rebalance still running at the end of the log.
    latest = jobs.offsets_latest(df)
    (summary,) = group_jobs.groups_summary(df, group_jobs.rebalances(df), latest).collect()
    assert summary["state"] == "PreparingRebalance"
    assert (summary["generations"], summary["rebalances"], summary["incarnations"]) == (4, 4, 1)
    assert summary["current_generation"] == 4 and summary["current_members"] == 1
    assert summary["members_seen"] == 3  # m1, m2, m1b
    # Of 100, 200, 500 and 700 ms, interpolated as Spark's percentile does.
    assert summary["p50_rebalance_ms"] == pytest.approx(350.0)
    assert summary["p95_rebalance_ms"] == pytest.approx(670.0)
    assert summary["lifetime_ms"] == 9000
    # 4 rebalances in 9 s are not 1,600 per hour: no rate from under an hour of life.
    assert summary["rebalances_per_hour"] is None


def test_groups_summary_states(ab: Any, logs: dict[str, Any]) -> None:
    from storage.pipeline import group_jobs, jobs

    df = ab
    reb = group_jobs.rebalances(df)
    summary = {
        (r["data_dir"], r["group"]): r
        for r in group_jobs.groups_summary(df, reb, jobs.offsets_latest(df)).collect()
    }
    expected_gens: dict[tuple[str, str], set[tuple[int, int]]] = {}
    for log in (logs["a"], logs["b"]):
        for g in log.generations:
            expected_gens.setdefault((log.data_dir, g.group), set()).add(
                (g.incarnation, g.generation)
            )
    assert set(summary) == set(expected_gens)
    for key, gens in expected_gens.items():
        s = summary[key]
        assert s["generations"] == s["rebalances"] == len(gens)
        assert s["state"] in ("Stable", "Empty")
        assert s["commits"] > 0 and s["members_seen"] >= 1
        assert s["p50_rebalance_ms"] <= s["p95_rebalance_ms"]


def test_cli_end_to_end_with_a_torn_tail(spark: Any, tmp_path: Path, logs: dict[str, Any]) -> None:
    from matplotlib.image import imread

    from storage.pipeline import cli

    torn = str(tmp_path / "torn")
    write_log(torn, seed=21, steps=40)
    last = find_segments(torn)[-1]
    with open(last.path, "ab") as f:
        f.write(b"\x00\x00\x01\x00garbage")
    out = tmp_path / "out"
    stdout, stderr = io.StringIO(), io.StringIO()
    status = cli.main(
        ["--input", logs["a"].data_dir, torn, "--output", str(out), "--master", "local[2]"],
        stdout=stdout,
        stderr=stderr,
    )
    assert status == 0, stderr.getvalue()
    assert "torn tail" in stderr.getvalue() and last.name in stderr.getvalue()
    assert "reading segments" in stderr.getvalue()  # progress
    for name in ("report.md", "report.html"):
        assert (out / name).stat().st_size > 1000
    pngs = sorted((out / "plots").glob("*.png"))
    assert {p.name for p in pngs} == {
        "rebalances_by_trigger.png",
        "rebalance_timeline.png",
        "rebalance_durations.png",
        "commit_rate.png",
        "consumer_lag.png",
    }
    for png in pngs:
        assert png.read_bytes()[:8] == PNG_MAGIC
        image = imread(str(png))
        assert image.shape[0] > 100 and image.shape[1] > 100
        assert f"plots/{png.name}" in (out / "report.md").read_text()
        assert f"plots/{png.name}" in (out / "report.html").read_text()
    assert "torn_tail" in (out / "report.md").read_text()
    # The Parquet datasets hold what the jobs compute.
    latest = spark.read.parquet(str(out / "offsets_latest")).collect()
    assert offsets_from_rows(latest) == replay_offsets([logs["a"].data_dir, torn])
    assert (out / "offset_commits" / "group=group-0").is_dir()
    reb = spark.read.parquet(str(out / "rebalances"))
    assert reb.where(f"data_dir = '{logs['a'].data_dir}'").count() == len(logs["a"].generations)
    listed = dict(line.split("\t") for line in stdout.getvalue().splitlines())
    assert listed["report.html"] == str(out / "report.html")
    assert spark.read.parquet(str(out / "problems")).count() == 1


def test_cli_corrupt_input(spark: Any, tmp_path: Path, logs: dict[str, Any]) -> None:
    from storage.pipeline import cli

    d = str(tmp_path / "corrupt")
    write(d, [commit("g", "t", 0, p, T0 + p) for p in range(30)], segment_bytes=500)
    victim = find_segments(d)[1]
    data = bytearray(Path(victim.path).read_bytes())
    data[HEADER_SIZE + 12] ^= 0x01
    Path(victim.path).write_bytes(bytes(data))
    err = io.StringIO()
    out = tmp_path / "strict-out"
    status = cli.main(
        ["--input", d, logs["b"].data_dir, "--output", str(out), "--strict", "--quiet"],
        stdout=io.StringIO(),
        stderr=err,
    )
    assert status == 1
    assert victim.name in err.getvalue() and f"byte {HEADER_SIZE}" in err.getvalue()
    assert "nothing written" in err.getvalue()
    assert not (out / "report.md").exists()


def test_offset_commits_marks_transactional_commits(spark: Any, tmp_path: Path) -> None:
    """Issue 12: a commit a transaction's COMMIT marker made (the staged offset's tombstone is
    the next entry) is ``transactional``; the staged offsets and the transaction state stay
    out of the datasets, and an aborted transaction leaves no commit behind."""
    from storage.pipeline import jobs
    from storage.records import (
        TransactionStateKey,
        TransactionStateValue,
        TxnOffsetCommitKey,
        TxnOffsetCommitValue,
    )

    d = str(tmp_path / "txn")
    state = Record(TransactionStateKey("tx"), TransactionStateValue(
        7, 0, 60_000, 1, (), T0, T0, -1, -1, 0))
    staged = Record(TxnOffsetCommitKey(7, "g", "t", 0), TxnOffsetCommitValue(5, -1, "", T0))
    staged_end = Record(TxnOffsetCommitKey(7, "g", "t", 0), None)
    aborted = Record(TxnOffsetCommitKey(7, "g", "t", 1), TxnOffsetCommitValue(9, -1, "", T0))
    aborted_end = Record(TxnOffsetCommitKey(7, "g", "t", 1), None)
    write(d, [
        commit("g", "t", 0, 1, T0),                 # 0: a plain commit
        state, staged, aborted,                     # 1-3: not in the datasets
        commit("g", "t", 0, 5, T0 + 1), staged_end,  # 4-5: the COMMIT marker's pair
        aborted_end,                                # 6: the ABORT marker's
        commit("g", "t", 1, 2, T0 + 2),             # 7: plain again
        commit("g", "t", 0, 8, T0 + 3),             # 8: after the staged end of 4
    ])
    df = load(spark, d)
    types = sorted((r["log_index"], r["record_type"]) for r in df.collect())
    assert types == [(0, "offset_commit"), (4, "offset_commit"), (5, "txn_offset_commit"),
                     (6, "txn_offset_commit"), (7, "offset_commit"), (8, "offset_commit")]
    got = sorted((r["partition"], r["offset"], r["transactional"], r["offset_advance"],
                  r["since_previous_ms"]) for r in jobs.offset_commits(df).collect())
    # The previous commit of a partition skips the staged ends between them.
    assert got == [(0, 1, False, None, None), (0, 5, True, 4, 1), (0, 8, False, 3, 2),
                   (1, 2, False, None, None)]


def test_a_report_without_rebalances_warns_nothing(spark: Any, tmp_path: Path) -> None:
    """Issue 16 item 5: a log with commits only (no rebalance) renders every plot without a
    matplotlib warning (the suite turns warnings into errors); a group alive two hours
    gets a per-hour rate, one alive seconds gets none."""
    import io

    from storage.pipeline import cli

    records = [commit("long", "t", 0, i, T0 + i * 1_200_000) for i in range(7)]
    records += [commit("short", "t", 0, i, T0 + i * 1000) for i in range(3)]
    write(str(tmp_path / "data"), records)
    err = io.StringIO()
    status = cli.main(["--input", str(tmp_path / "data"), "--output", str(tmp_path / "out"),
                       "-q"], stdout=io.StringIO(), stderr=err)
    assert status == 0, err.getvalue()
    summary = {r["group"]: r for r in spark.read.parquet(str(tmp_path / "out" /
                                                             "groups_summary")).collect()}
    assert summary["long"]["rebalances_per_hour"] == 0.0
    assert summary["short"]["rebalances_per_hour"] is None
    assert (tmp_path / "out" / "plots" / "rebalance_durations.png").exists()


def test_a_pruned_schema_yields_only_its_columns(spark: Any, logs: dict[str, Any]) -> None:
    from storage.pipeline.source import pruned_schema

    columns = ["data_dir", "log_index", "record_type", "group", "offset", "members"]
    df = spark.read.format("kcoord-log").schema(pruned_schema(columns)).load(logs["a"].data_dir)
    assert df.columns == columns
    full = load(spark, logs["a"].data_dir).select(*columns)
    assert df.count() == full.count() > 0
    assert df.exceptAll(full).count() == 0 and full.exceptAll(df).count() == 0
    with pytest.raises(ValueError, match="no such column"):
        pruned_schema(["offset", "nope"])


def test_non_nullable_columns_and_a_given_schemas_nullability(
    spark: Any, logs: dict[str, Any]
) -> None:
    """The Data Source declares :data:`NOT_NULL` non-nullable (Spark skips their null
    checks); a given schema may declare them nullable (they are shipped so), but not
    declare a column non-nullable where rows can hold null."""
    from pyspark.sql.types import StructField, StructType

    from storage.pipeline.columns import NOT_NULL
    from storage.pipeline.source import pruned_schema

    df = load(spark, logs["a"].data_dir)
    assert {f.name for f in df.schema.fields if not f.nullable} == NOT_NULL
    columns = ["data_dir", "log_index", "record_type", "tombstone", "group", "offset"]
    loose = StructType([StructField(f.name, f.dataType, True)
                        for f in pruned_schema(columns).fields])
    given = spark.read.format("kcoord-log").schema(loose).load(logs["a"].data_dir)
    assert all(f.nullable for f in given.schema.fields)
    full = df.select(*columns)
    assert given.count() == full.count() > 0
    assert given.exceptAll(full).count() == 0 and full.exceptAll(given).count() == 0
    strict = StructType([StructField(f.name, f.dataType, f.name != "log_index")
                         for f in pruned_schema(columns).fields])
    with pytest.raises(Exception, match="log_index can be null"):
        spark.read.format("kcoord-log").schema(strict).load(logs["a"].data_dir).count()
