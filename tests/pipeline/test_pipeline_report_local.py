"""The report computed on the driver from the collected datasets (a small input's,
``report_local.collect_local``) equals the report computed by Spark queries over the
cached datasets (``report_data.collect``, a large input's), field by field and row by
row in order: on two synthetic instances, one with durable topics (lag and lag over
time) and a torn tail, the other without topics (lag unknown: null lags, sorted last),
over the whole log and within a --since/--until window (slow: two whole runs of the
datasets and of the report's queries, a minute or more on 2 loaded cores). And, fast:
its sort order and percentile against Spark's on rows with nulls and ties."""

from __future__ import annotations

import dataclasses
import random
import uuid
from pathlib import Path
from typing import Any

import pytest
from pipeline_support import topic_batch
from synthetic import SyntheticLog, write_log

from coordinator.broker.topic_files import TopicFiles
from storage.directory import find_segments
from wire.records import with_base_offset

START_MS = 1_700_000_000_000


def _write_topics(data_dir: str, last_ms: int) -> None:
    """The synthetic log's topics (topic-0 with 4 partitions, topic-1 with 3: its
    partition 3 is "no such partition") with a batch of 5 records every 40 s until
    ``last_ms``."""
    files = TopicFiles(data_dir, "never", "fail")
    for name, partitions in (("topic-0", 4), ("topic-1", 3)):
        topic = uuid.uuid4()
        files.created(name, topic, partitions, {})
        for index in range(partitions):
            end = 0
            for ts in range(START_MS, last_ms + 40_000, 40_000):
                files.appended(topic, index, end, with_base_offset(topic_batch([ts] * 5), end))
                end += 5
    files.close()


@pytest.fixture(scope="module")
def instances(tmp_path_factory: pytest.TempPathFactory) -> tuple[SyntheticLog, SyntheticLog]:
    base = tmp_path_factory.mktemp("report-local")
    a = write_log(str(base / "a"), seed=21, steps=90, start_ms=START_MS)
    b = write_log(str(base / "b"), seed=22, steps=40, groups=2, start_ms=START_MS)
    _write_topics(a.data_dir, START_MS + 3_000_000)  # past the log's last record
    last = find_segments(a.data_dir)[-1].path
    with open(last, "ab") as f:  # a torn tail: a problem row
        f.write(b"\x00\x00\x01\x00torn")
    return a, b


def _both_reports(spark: Any, dirs: list[str], windowed: bool, out: Path) -> tuple[Any, Any]:
    from pyspark import StorageLevel

    from storage.pipeline import jobs, lag, report_data
    from storage.pipeline.driver_read import driver_frame
    from storage.pipeline.report_local import collect_local

    raw = driver_frame(spark, dirs, False).persist(StorageLevel.MEMORY_AND_DISK)
    window: tuple[int | None, int | None] = (None, None)
    if windowed:  # the middle half of the log's time
        stamps = sorted(r[0] for r in raw.where("timestamp >= 0").select("timestamp").collect())
        window = (stamps[len(stamps) // 4], stamps[3 * len(stamps) // 4])
    since, until = window
    recs = jobs.apply_window(raw, since, until)
    _, counts = report_data.count_records(raw, recs, windowed=since is not None)
    logs = lag.read_inputs(dirs)
    frames, paths, rows = report_data.write_datasets(
        recs, raw, str(out), since, topic_logs=logs, until_ms=until,
        collect=("problems", "groups_summary", "rebalances", "offset_commits",
                 "offsets_latest", "offsets_lag"),
    )
    try:
        by_spark = report_data.collect(frames, counts, rows["problems"], dirs, 2, paths,
                                       window, topic_logs=logs)
        local = collect_local(rows, counts, dirs, 2, paths, window, topic_logs=logs)
    finally:
        for frame in frames.values():
            frame.unpersist()
        raw.unpersist()
    return by_spark, local


@pytest.mark.slow
@pytest.mark.parametrize("windowed", [False, True], ids=["whole-log", "since-until"])
def test_local_report_equals_the_spark_queries(
    spark: Any, instances: tuple[SyntheticLog, SyntheticLog], tmp_path: Path, windowed: bool
) -> None:
    a, b = instances
    by_spark, local = _both_reports(spark, [a.data_dir, b.data_dir], windowed, tmp_path)
    for f in dataclasses.fields(by_spark):
        if f.name != "generated_at":
            assert getattr(local, f.name) == getattr(by_spark, f.name), f.name
    # Every part of the report has rows to compare.
    assert by_spark.problems and by_spark.triggers and by_spark.durations
    assert by_spark.rebalances and by_spark.commit_rates and by_spark.lag_history
    statuses = {r["status"] for r in by_spark.lag}
    assert statuses >= {"beyond log end", "no topic logs", "no such partition"}
    assert by_spark.lag[-1]["lag"] is None and by_spark.lag[0]["lag"] is not None
    assert any(t["p95_ms"] != int(t["p95_ms"]) for t in by_spark.triggers
               if t["p95_ms"] is not None)  # an interpolated percentile
    assert by_spark.no_topic_logs == [b.data_dir]
    assert by_spark.window == ((None, None) if not windowed else by_spark.window)
    assert (by_spark.window[0] is not None) == windowed


@pytest.mark.slow  # a SparkSession: CI's pipeline step
def test_spark_sorted_and_percentile_match_spark(spark: Any) -> None:
    import pyarrow as pa
    from pyspark.sql import functions as F

    from storage.pipeline.report_local import percentile, spark_sorted

    rows = [
        {"k": k, "name": name, "v": v}
        for k, name, v in [
            (1, "b", 7), (None, "a", 3), (1, "a", None), (2, None, 10), (None, "c", 1),
            (2, "b", 4), (1, "c", 7), (3, "a", None), (2, "a", 2),
        ]
    ]
    # From Arrow tables: from Python lists Spark would start a Python worker.
    df = spark.createDataFrame(pa.Table.from_pylist(rows, schema=pa.schema(
        [("k", pa.int32()), ("name", pa.string()), ("v", pa.int64())])))
    expected = [r.asDict() for r in df.orderBy(F.desc("v"), "k", "name").collect()]
    assert spark_sorted(rows, "-v", "k", "name") == expected
    expected = [r.asDict() for r in df.orderBy("k", F.desc("name"), "v").collect()]
    assert spark_sorted(rows, "k", "-name", "v") == expected
    fractions = (0.0, 0.3, 0.5, 0.95, 1.0)
    # Groups of 2 to 40 values: Spark's interpolation, to the last bit of the double.
    rng = random.Random(1)
    groups = [[rng.randint(100, 3000) for _ in range(rng.randint(2, 40))] for _ in range(30)]
    groups.append([r["v"] for r in rows])  # nulls ignored
    values = spark.createDataFrame(pa.table({
        "i": pa.array([i for i, group in enumerate(groups) for _ in group], pa.int32()),
        "v": pa.array([v for group in groups for v in group], pa.int64()),
    }))
    got = {
        r["i"]: [r[str(f)] for f in fractions]
        for r in values.groupBy("i").agg(
            *[F.percentile("v", F.lit(f)).alias(str(f)) for f in fractions]).collect()
    }
    assert {i: [percentile(group, f) for f in fractions] for i, group in enumerate(groups)} == got
    assert percentile([None, None], 0.5) is None
