"""The pipeline's outputs: Parquet datasets, plots, and a report (Markdown and HTML).

Layout of the output directory::

    offsets_latest/            Parquet, one file
    offset_commits/group=<g>/  Parquet, partitioned by group (the large dataset)
    commit_rates/              Parquet
    rebalances/                Parquet
    groups_summary/            Parquet
    offsets_lag/               Parquet (committed offset, log end and lag per partition)
    problems/                  Parquet (torn tails, corrupt inputs)
    plots/*.png                rebalances by trigger, rebalance timeline, durations,
                               commit rate over time, lag over time
    report.md, report.html

The plots and tables are drawn from small aggregates collected to the driver (at most
:data:`TOP_GROUPS` groups get a line or a row of their own).
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from storage.starts import read_starts

from .topic_ends import TopicLogs

__all__ = [
    "DASH",
    "RATE_BUCKETS_MS",
    "TOP_GROUPS",
    "TRIGGER_COLORS",
    "TRIGGER_ORDER",
    "ReportData",
    "collect",
    "count_records",
    "duration_text",
    "group_label",
    "ms_to_datetime",
    "order_triggers",
    "restarts_of",
    "write_datasets",
]

TOP_GROUPS = 12
DASH = "\N{EN DASH}"  # an empty cell
#: time buckets of the commit-rate plot: the first giving at most 240 points
RATE_BUCKETS_MS = (
    1_000,
    5_000,
    10_000,
    30_000,
    60_000,
    300_000,
    600_000,
    1_800_000,
    3_600_000,
    21_600_000,
    86_400_000,
)
TRIGGER_ORDER = (
    "join",
    "leave",
    "session_expiry",
    "static_replacement",
    "metadata_change",
    "other",
    "unknown",
)
TRIGGER_COLORS = {
    "join": "#2b8a3e",
    "leave": "#1971c2",
    "session_expiry": "#e03131",
    "static_replacement": "#ae3ec9",
    "metadata_change": "#f08c00",
    "other": "#868e96",
    "unknown": "#ced4da",
}

#: dataset -> Parquet partition columns (in the order they are listed)
PARTITIONING: dict[str, tuple[str, ...]] = {
    "offsets_latest": (),
    "offset_commits": ("group",),
    "commit_rates": (),
    "rebalances": (),
    "groups_summary": (),
    "offsets_lag": (),
    "problems": (),
}


#: Driver threads running the dataset writes (and the report's queries) at once.
WRITE_THREADS = 4


def run_concurrently(tasks: Sequence[Callable[[], Any]]) -> list[Any]:
    """Run ``tasks`` (Spark actions) from :data:`WRITE_THREADS` threads; their results in
    order. The first failure is raised once every task has ended."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=WRITE_THREADS,
                            thread_name_prefix="pipeline-job") as pool:
        futures = [pool.submit(task) for task in tasks]
        return [future.result() for future in futures]


def write_datasets(
    recs: Any,
    raw: Any,
    output: str,
    since_ms: int | None = None,
    progress: Callable[[str], None] = lambda _msg: None,
    topic_logs: dict[str, TopicLogs | None] | None = None,
    until_ms: int | None = None,
    collect: Sequence[str] = (),
    write_to: str | None = None,
) -> tuple[dict[str, Any], dict[str, str], dict[str, list[dict[str, Any]]]]:
    """Compute every dataset from ``recs`` (records, :func:`jobs.apply_window` applied),
    ``raw`` (the Data Source's rows, for the problems) and ``topic_logs`` (the inputs'
    log ends, for ``offsets_lag``: none known without them), write each as Parquet under
    ``output``. Each is cached as it is written (the write fills the cache), so later
    jobs and the report start from memory, neither recomputing nor reading the files
    back; the caller unpersists them. The writes are independent Spark jobs, started
    together from :data:`WRITE_THREADS` driver threads: on a small input each is mostly
    the driver's planning and the JVM's class loading, which overlap across jobs. The
    datasets named in ``collect`` are also collected to the driver from their caches,
    each right after its write, in its thread (for :func:`.report_local.collect_local`).
    ``write_to``: the directory the files go to, if not ``output`` (a staging directory
    :func:`.publish.publish` moves into ``output``; the paths returned are under
    ``output``). Returns (dataset -> DataFrame, dataset -> path, dataset -> rows as
    dicts)."""
    from pyspark import StorageLevel

    from . import group_jobs, jobs, lag

    paths = {name: os.path.join(output, name) for name in PARTITIONING}
    targets = {name: os.path.join(write_to or output, name) for name in PARTITIONING}
    collected: dict[str, list[dict[str, Any]]] = {}

    def save(name: str, build: Callable[[], Any]) -> Any:
        """Build the dataset (its analysis, and its planning by ``persist``, happen in
        this thread too), cache it and write it."""
        progress(f"writing {name} -> {paths[name]}")
        df = build().persist(StorageLevel.MEMORY_AND_DISK)
        partition_by = PARTITIONING[name]
        if partition_by:  # offset_commits, which comes clustered and sorted by group
            df.write.mode("overwrite").partitionBy(*partition_by).parquet(targets[name])
        else:
            df.coalesce(1).write.mode("overwrite").parquet(targets[name])
        if name in collect:
            collected[name] = [r.asDict() for r in df.collect()]
        return df

    def wave(builds: dict[str, Callable[[], Any]]) -> dict[str, Any]:
        frames = run_concurrently([partial(save, name, build) for name, build in builds.items()])
        return dict(zip(builds, frames, strict=True))

    # Two waves, so that no job recomputes a dataset another one is still caching: the
    # datasets computed from the records, then those computed from the first ones.
    first = wave({
        "offsets_latest": lambda: jobs.offsets_latest(recs),
        "offset_commits": lambda: jobs.offset_commits(recs, since_ms),
        "rebalances": lambda: group_jobs.rebalances(recs, since_ms),
        "problems": lambda: jobs.problems(raw),
    })
    latest, commits, reb = first["offsets_latest"], first["offset_commits"], first["rebalances"]
    second = wave({
        "commit_rates": lambda: jobs.commit_rates(commits),
        "groups_summary": lambda: group_jobs.groups_summary(recs, reb, latest),
        "offsets_lag": lambda: lag.offsets_lag(recs, latest, topic_logs or {}, until_ms),
    })
    frames = {name: {**first, **second}[name] for name in PARTITIONING}
    return frames, paths, collected


@dataclass
class ReportData:
    """What the report shows, collected from the datasets (plain Python values)."""

    inputs: list[str]
    segments: int
    record_counts: dict[str, int]
    groups: list[dict[str, Any]]
    rebalances: list[dict[str, Any]]
    triggers: list[dict[str, Any]]
    #: commits per (data_dir, group, bucket_ms) for the busiest groups
    commit_rates: list[dict[str, Any]]
    problems: list[dict[str, Any]]
    live_offsets: int
    offset_sample: list[dict[str, Any]]
    durations: list[dict[str, Any]] = field(default_factory=list)
    rate_bucket_ms: int = 60_000
    datasets: dict[str, str] = field(default_factory=dict)
    window: tuple[int | None, int | None] = (None, None)
    elapsed_s: float = 0.0
    generated_at: str = ""
    #: offsets_lag rows (largest lag first), and how many there are
    lag: list[dict[str, Any]] = field(default_factory=list)
    lag_rows: int = 0
    #: offsets_lag rows with status "no committed offset"
    uncommitted: list[dict[str, Any]] = field(default_factory=list)
    #: inputs without topic logs (lag unknown there)
    no_topic_logs: list[str] = field(default_factory=list)
    #: total lag per (data_dir, group, bucket_ms) for the busiest groups
    lag_history: list[dict[str, Any]] = field(default_factory=list)
    #: input -> its server restarts (every start after the first, in the time window;
    #: epoch ms), None when the input keeps no starts journal (``storage.starts``)
    restarts: dict[str, list[int] | None] = field(default_factory=dict)


def count_records(raw: Any, recs: Any, windowed: bool) -> tuple[int, dict[str, int]]:
    """(records read: ``raw``'s rows with a log position, i.e. not a problem report; the
    report's records per type, of ``recs``) in one Spark job over ``raw`` when there is
    no time window (``recs`` is then those rows; as a run's first job it fills ``raw``'s
    cache), else in two. A type's tombstones count under ``"<type> (tombstone)"``."""
    from pyspark.sql import functions as F

    def by_type(df: Any, *extra: Any) -> list[Any]:
        return list(df.groupBy("record_type", "tombstone", *extra).count().collect())

    placed = [r for r in by_type(raw, F.col("log_index").isNotNull().alias("placed"))
              if r["placed"]]
    read = sum(int(r["count"]) for r in placed)
    counts: dict[str, int] = {}
    for row in by_type(recs) if windowed else placed:
        key = row["record_type"] + (" (tombstone)" if row["tombstone"] else "")
        counts[key] = counts.get(key, 0) + int(row["count"])
    return read, counts


def collect(
    datasets: dict[str, Any],
    record_counts: dict[str, int],
    problems: list[dict[str, Any]],
    inputs: Sequence[str],
    segments: int,
    paths: dict[str, str],
    window: tuple[int | None, int | None] = (None, None),
    topic_logs: dict[str, TopicLogs | None] | None = None,
) -> ReportData:
    """Collect the report's aggregates (small results only) from the datasets, with
    ``record_counts`` (:func:`count_records`) and ``problems`` (the problems dataset's
    rows) given."""
    from pyspark.sql import functions as F

    from .driver_read import GROUP_SCHEMA, driver_table
    from .lag import lag_history

    summary = datasets["groups_summary"]
    reb = datasets["rebalances"]
    commits = datasets["offset_commits"]
    latest = datasets["offsets_latest"]
    lag_df = datasets["offsets_lag"]

    def rows(df: Any) -> list[dict[str, Any]]:
        return [r.asDict() for r in df.collect()]

    # The report's queries, each a small Spark job over the cached datasets, run from
    # several driver threads at once: first those that depend on nothing else, then
    # those that take the busiest groups and the time bucket from the first ones.
    (groups, triggers, durations, top_commit_rows, span, live, sample,
     lag_rows) = run_concurrently([
        lambda: rows(summary.orderBy(F.desc("rebalances"), F.desc("commits"), "data_dir",
                                     "group").limit(200)),
        lambda: rows(
            reb.where(F.col("has_events"))
            .groupBy(F.coalesce("trigger", F.lit("unknown")).alias("trigger"))
            .agg(
                F.count(F.lit(1)).alias("rebalances"),
                F.percentile("duration_ms", F.lit(0.5)).alias("p50_ms"),
                F.percentile("duration_ms", F.lit(0.95)).alias("p95_ms"),
                F.max("duration_ms").alias("max_ms"),
                F.sum(F.when(F.col("any_partition_moved"), 1).otherwise(0)).alias("moved"),
            )
        ),
        lambda: rows(
            reb.where(F.col("duration_ms").isNotNull())
            .select("duration_ms", F.coalesce("trigger", F.lit("unknown")).alias("trigger"))
            .limit(200000)
        ),
        lambda: summary.where(F.col("commits") > 0)
        .orderBy(F.desc("commits"), "data_dir", "group")
        .limit(8)
        .collect(),
        lambda: commits.agg(
            F.min("commit_timestamp").alias("lo"), F.max("commit_timestamp").alias("hi")
        ).first(),
        latest.count,
        lambda: rows(latest.orderBy("data_dir", "group", "topic", "partition").limit(50)),
        lambda: rows(lag_df.orderBy(F.desc_nulls_last("lag"), "data_dir", "group", "topic",
                                    "partition").limit(5000)),
    ])
    top = [(g["data_dir"], g["group"]) for g in groups[:TOP_GROUPS]]
    top_commit = [(r["data_dir"], r["group"]) for r in top_commit_rows]
    bucket_ms = 60_000
    if span is not None and span["lo"] is not None:
        width = int(span["hi"]) - int(span["lo"])
        bucket_ms = next((b for b in RATE_BUCKETS_MS if width / b <= 240), RATE_BUCKETS_MS[-1])
    logs = topic_logs or {}
    spark = reb.sparkSession
    rebalances, commit_rates, history = run_concurrently([
        lambda: rows(
            reb.join(driver_table(spark, top, GROUP_SCHEMA), ["data_dir", "group"])
            .select(
                "data_dir",
                "group",
                "incarnation",
                "generation",
                "start_ms",
                "end_ms",
                "duration_ms",
                "reason",
                "trigger",
                "members_before",
                "members_after",
                "partitions_moved",
            )
            .orderBy("data_dir", "group", "incarnation", "generation")
            .limit(20000)
        ),
        lambda: rows(
            commits.join(driver_table(spark, top_commit, GROUP_SCHEMA), ["data_dir", "group"])
            .where(F.col("commit_timestamp") >= 0)
            .groupBy(
                "data_dir",
                "group",
                (F.floor(F.col("commit_timestamp") / bucket_ms) * bucket_ms).alias("bucket_ms"),
            )
            .agg(F.count(F.lit(1)).alias("commits"))
            .orderBy("data_dir", "group", "bucket_ms")
            .limit(50000)
        ),
        lambda: lag_history(commits, top_commit, logs, bucket_ms),
    ])
    data = ReportData(
        inputs=list(inputs),
        segments=segments,
        record_counts=record_counts,
        groups=groups,
        rebalances=rebalances,
        triggers=order_triggers(triggers),
        commit_rates=commit_rates,
        rate_bucket_ms=bucket_ms,
        problems=problems[:1000],
        live_offsets=live,
        offset_sample=sample,
        durations=durations,
        datasets=paths,
        window=window,
        generated_at=dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
        lag=lag_rows,
        lag_rows=len(lag_rows) if len(lag_rows) < 5000 else int(lag_df.count()),
        uncommitted=sorted(
            (r for r in lag_rows if r["status"] == "no committed offset"),
            key=lambda r: (r["data_dir"], r["group"], r["topic"], r["partition"]),
        ),
        no_topic_logs=sorted(d for d in inputs if logs.get(os.path.abspath(d)) is None),
        lag_history=history,
        restarts={os.path.abspath(d): restarts_of(d, window) for d in inputs},
    )
    return data


def order_triggers(triggers: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The report's trigger rows: most rebalances first, ties in :data:`TRIGGER_ORDER`."""
    rank = {name: i for i, name in enumerate(TRIGGER_ORDER)}
    return sorted(triggers, key=lambda t: (-int(t["rebalances"]),
                                           rank.get(t["trigger"], len(rank)), t["trigger"]))


def restarts_of(data_dir: str, window: tuple[int | None, int | None]) -> list[int] | None:
    """The server's starts after its first one, within the window."""
    starts = read_starts(data_dir)
    if starts is None:
        return None
    since, until = window
    return [
        t for t in starts[1:]
        if (since is None or t >= since) and (until is None or t <= until)
    ]


def group_label(data_dir: str, group: str, many_dirs: bool) -> str:
    """A group's name in plots and tables (with its directory when there are several)."""
    if not many_dirs:
        return group
    return f"{os.path.basename(data_dir.rstrip(os.sep)) or data_dir}/{group}"


def duration_text(ms: Any) -> str:
    """A duration in milliseconds, readable."""
    if ms is None:
        return DASH
    seconds = float(ms) / 1000
    if seconds < 120:
        return f"{seconds:.2f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def ms_to_datetime(value: int) -> dt.datetime:
    """Epoch milliseconds as a naive UTC datetime."""
    return dt.datetime.fromtimestamp(value / 1000, dt.UTC).replace(tzinfo=None)
