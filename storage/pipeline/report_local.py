"""The report's aggregates computed on the driver, from datasets already collected there.

For a small input (read on the driver, :mod:`.driver_read`) every dataset the report
reads is a few thousand rows at most: each is collected once, from its cache, right
after Spark writes it (:func:`.report_data.write_datasets`), and the report's tables and
plots are computed here in Python instead of as a dozen more Spark jobs (each a few
hundred milliseconds of planning on a cold JVM). The results are those of
:func:`.report_data.collect`'s Spark queries, value for value and in the same order
(checked by ``tests/pipeline/test_pipeline_report_local.py``): Spark's sort orders
(ascending: nulls first; descending: nulls last), its exact ``percentile`` (linear
interpolation between the closest ranks) and its ``limit``.
"""

from __future__ import annotations

import datetime as dt
import math
import os
from collections.abc import Sequence
from typing import Any

from .lag import history_totals
from .report_data import (
    RATE_BUCKETS_MS,
    TOP_GROUPS,
    ReportData,
    order_triggers,
    restarts_of,
)
from .topic_ends import TopicLogs

__all__ = ["collect_local", "percentile", "spark_sorted"]

Rows = list[dict[str, Any]]


def spark_sorted(rows: Sequence[dict[str, Any]], *keys: str) -> Rows:
    """``rows`` ordered as Spark's ``orderBy(*keys)`` orders them; a key ``-name`` is
    descending. Ascending puts nulls first, descending puts them last (Spark's
    defaults)."""
    out = list(rows)
    for key in reversed(keys):
        name = key.lstrip("-")
        out.sort(key=lambda r, n=name: (r[n] is not None, r[n]),  # type: ignore[misc]
                 reverse=key.startswith("-"))
    return out


def percentile(values: Sequence[Any], fraction: float) -> float | None:
    """Spark's exact ``percentile``: nulls ignored, null without values, else linear
    interpolation between the values at the closest ranks of ``fraction * (n - 1)``."""
    ordered = sorted(float(v) for v in values if v is not None)
    if not ordered:
        return None
    position = fraction * (len(ordered) - 1)
    lower, higher = math.floor(position), math.ceil(position)
    if lower == higher:
        return ordered[lower]
    # Spark's arithmetic, to the last bit: lower value plus the fraction of the step.
    return ordered[lower] + (position - lower) * (ordered[higher] - ordered[lower])


def _triggers(reb: Rows) -> Rows:
    by_trigger: dict[str, Rows] = {}
    for r in reb:
        if r["has_events"]:
            by_trigger.setdefault(r["trigger"] or "unknown", []).append(r)
    out = []
    for trigger, rows in by_trigger.items():
        durations = [r["duration_ms"] for r in rows]
        known = [d for d in durations if d is not None]
        out.append({
            "trigger": trigger,
            "rebalances": len(rows),
            "p50_ms": percentile(durations, 0.5),
            "p95_ms": percentile(durations, 0.95),
            "max_ms": max(known) if known else None,
            "moved": sum(1 for r in rows if r["any_partition_moved"]),
        })
    return out


def _of_groups(rows: Rows, groups: Sequence[tuple[str, str]]) -> Rows:
    chosen = set(groups)
    return [r for r in rows if (r["data_dir"], r["group"]) in chosen]


def _commit_rates(commits: Rows, groups: Sequence[tuple[str, str]], bucket_ms: int) -> Rows:
    counts: dict[tuple[str, str, int], int] = {}
    for r in _of_groups(commits, groups):
        ts = r["commit_timestamp"]
        if ts is not None and ts >= 0:
            key = (r["data_dir"], r["group"], ts // bucket_ms * bucket_ms)
            counts[key] = counts.get(key, 0) + 1
    return [
        {"data_dir": d, "group": g, "bucket_ms": b, "commits": n}
        for (d, g, b), n in sorted(counts.items())
    ][:50000]


def _lag_history(
    commits: Rows,
    groups: Sequence[tuple[str, str]],
    topic_logs: dict[str, TopicLogs | None],
    bucket_ms: int,
) -> list[dict[str, Any]]:
    """:func:`.lag.lag_history` over collected commits: each partition's latest commit
    (by log position) per time bucket, then the totals."""
    known = [(d, g) for d, g in groups if topic_logs.get(d) is not None]
    latest: dict[tuple[str, str, str, int, int], dict[str, Any]] = {}
    for r in _of_groups(commits, known):
        ts = r["commit_timestamp"]
        if ts is None or ts < 0:
            continue
        key = (r["data_dir"], r["group"], r["topic"], r["partition"], ts // bucket_ms * bucket_ms)
        if key not in latest or r["log_index"] > latest[key]["log_index"]:
            latest[key] = r
    rows = [
        {"data_dir": d, "group": g, "topic": t, "partition": p, "bucket_ms": b,
         "offset": r["offset"], "ts": r["commit_timestamp"]}
        for (d, g, t, p, b), r in latest.items()
    ]
    return history_totals(spark_sorted(rows, "data_dir", "group", "bucket_ms")[:200_000],
                          topic_logs)


def collect_local(
    rows: dict[str, Rows],
    record_counts: dict[str, int],
    inputs: Sequence[str],
    segments: int,
    paths: dict[str, str],
    window: tuple[int | None, int | None] = (None, None),
    topic_logs: dict[str, TopicLogs | None] | None = None,
) -> ReportData:
    """The report's data from the collected datasets: ``rows`` holds every row (as
    dicts, as Spark's ``collect`` gives them) of ``groups_summary``, ``rebalances``,
    ``offset_commits``, ``offsets_latest``, ``offsets_lag`` and ``problems``;
    ``record_counts``: records per type (``" (tombstone)"`` appended for tombstones)."""
    summary, reb, commits = rows["groups_summary"], rows["rebalances"], rows["offset_commits"]
    latest, lag_all = rows["offsets_latest"], rows["offsets_lag"]
    groups = spark_sorted(summary, "-rebalances", "-commits", "data_dir", "group")[:200]
    committing = [r for r in summary if r["commits"] is not None and r["commits"] > 0]
    top_commit_rows = spark_sorted(committing, "-commits", "data_dir", "group")[:8]
    top = [(g["data_dir"], g["group"]) for g in groups[:TOP_GROUPS]]
    top_commit = [(r["data_dir"], r["group"]) for r in top_commit_rows]
    stamps = [r["commit_timestamp"] for r in commits if r["commit_timestamp"] is not None]
    bucket_ms = 60_000
    if stamps:
        width = max(stamps) - min(stamps)
        bucket_ms = next((b for b in RATE_BUCKETS_MS if width / b <= 240), RATE_BUCKETS_MS[-1])
    columns = ("data_dir", "group", "incarnation", "generation", "start_ms", "end_ms",
               "duration_ms", "reason", "trigger", "members_before", "members_after",
               "partitions_moved")
    rebalances = spark_sorted(
        [{c: r[c] for c in columns} for r in _of_groups(reb, top)],
        "data_dir", "group", "incarnation", "generation",
    )[:20000]
    lag_rows = spark_sorted(lag_all, "-lag", "data_dir", "group", "topic", "partition")[:5000]
    logs = topic_logs or {}
    return ReportData(
        inputs=list(inputs),
        segments=segments,
        record_counts=record_counts,
        groups=groups,
        rebalances=rebalances,
        triggers=order_triggers(_triggers(reb)),
        commit_rates=_commit_rates(commits, top_commit, bucket_ms),
        rate_bucket_ms=bucket_ms,
        problems=rows["problems"][:1000],
        live_offsets=len(latest),
        offset_sample=spark_sorted(latest, "data_dir", "group", "topic", "partition")[:50],
        durations=[
            {"duration_ms": r["duration_ms"], "trigger": r["trigger"] or "unknown"}
            for r in reb if r["duration_ms"] is not None
        ][:200000],
        datasets=paths,
        window=window,
        generated_at=dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
        lag=lag_rows,
        lag_rows=len(lag_all),
        uncommitted=sorted(
            (r for r in lag_rows if r["status"] == "no committed offset"),
            key=lambda r: (r["data_dir"], r["group"], r["topic"], r["partition"]),
        ),
        no_topic_logs=sorted(d for d in inputs if logs.get(os.path.abspath(d)) is None),
        lag_history=_lag_history(commits, top_commit, logs, bucket_ms),
        restarts={os.path.abspath(d): restarts_of(d, window) for d in inputs},
    )
