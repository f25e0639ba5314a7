"""The pipeline's outputs: Parquet datasets, plots, and a report (Markdown and HTML).

Layout of the output directory::

    offsets_latest/            Parquet, one file
    offset_commits/group=<g>/  Parquet, partitioned by group (the large dataset)
    commit_rates/              Parquet
    rebalances/                Parquet
    groups_summary/            Parquet
    problems/                  Parquet (torn tails, corrupt inputs)
    plots/*.png                rebalances by trigger, rebalance timeline, durations,
                               commit rate over time
    report.md, report.html

The plots and tables are drawn from small aggregates collected to the driver (at most
:data:`TOP_GROUPS` groups get a line or a row of their own).
"""

from __future__ import annotations

import datetime as dt
import html
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["TOP_GROUPS", "ReportData", "collect", "render", "write_datasets"]

TOP_GROUPS = 12
_DASH = "\N{EN DASH}"  # an empty cell
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

#: dataset -> Parquet partition columns
PARTITIONING: dict[str, tuple[str, ...]] = {  # in the order they are written
    "offsets_latest": (),
    "offset_commits": ("group",),
    "commit_rates": (),
    "rebalances": (),
    "groups_summary": (),
    "problems": (),
}


def write_datasets(
    recs: Any,
    raw: Any,
    output: str,
    since_ms: int | None = None,
    progress: Callable[[str], None] = lambda _msg: None,
) -> tuple[dict[str, Any], dict[str, str]]:
    """Compute every dataset from ``recs`` (records, :func:`jobs.apply_window` applied)
    and ``raw`` (the Data Source's rows, for the problems), write each as Parquet under
    ``output`` and read it back, so later jobs and the report start from the written
    files instead of recomputing. Returns (dataset -> DataFrame, dataset -> path)."""
    from . import jobs

    spark = recs.sparkSession
    frames: dict[str, Any] = {}
    paths: dict[str, str] = {}

    def save(name: str, df: Any) -> Any:
        path = os.path.join(output, name)
        progress(f"writing {name} -> {path}")
        partition_by = PARTITIONING[name]
        if partition_by:
            df.repartition(*partition_by).write.mode("overwrite").partitionBy(
                *partition_by
            ).parquet(path)
        else:
            df.coalesce(1).write.mode("overwrite").parquet(path)
        paths[name] = path
        frames[name] = spark.read.parquet(path)
        return frames[name]

    latest = save("offsets_latest", jobs.offsets_latest(recs))
    commits = save("offset_commits", jobs.offset_commits(recs, since_ms))
    save("commit_rates", jobs.commit_rates(commits))
    reb = save("rebalances", jobs.rebalances(recs, since_ms))
    save("groups_summary", jobs.groups_summary(recs, reb, latest))
    save("problems", jobs.problems(raw))
    return frames, paths


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


def collect(
    datasets: dict[str, Any],
    recs: Any,
    inputs: Sequence[str],
    segments: int,
    paths: dict[str, str],
    window: tuple[int | None, int | None] = (None, None),
) -> ReportData:
    """Collect the report's aggregates (small results only) from the datasets and the
    records (``recs``, for the counts)."""
    from pyspark.sql import functions as F

    counts: dict[str, int] = {}
    for row in recs.groupBy("record_type", "tombstone").count().collect():
        key = row["record_type"] + (" (tombstone)" if row["tombstone"] else "")
        counts[key] = int(row["count"])
    summary = datasets["groups_summary"]
    groups = [
        r.asDict()
        for r in summary.orderBy(F.desc("rebalances"), F.desc("commits"), "data_dir", "group")
        .limit(200)
        .collect()
    ]
    top = [(g["data_dir"], g["group"]) for g in groups[:TOP_GROUPS]]
    reb = datasets["rebalances"]
    top_df = reb.sparkSession.createDataFrame(top, "data_dir string, group string")
    rebalances = [
        r.asDict()
        for r in reb.join(top_df, ["data_dir", "group"])
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
        .collect()
    ]
    triggers = [
        r.asDict()
        for r in reb.where(F.col("has_events"))
        .groupBy(F.coalesce("trigger", F.lit("unknown")).alias("trigger"))
        .agg(
            F.count(F.lit(1)).alias("rebalances"),
            F.percentile("duration_ms", F.lit(0.5)).alias("p50_ms"),
            F.percentile("duration_ms", F.lit(0.95)).alias("p95_ms"),
            F.max("duration_ms").alias("max_ms"),
            F.sum(F.when(F.col("any_partition_moved"), 1).otherwise(0)).alias("moved"),
        )
        .collect()
    ]
    durations = [
        r.asDict()
        for r in reb.where(F.col("duration_ms").isNotNull())
        .select("duration_ms", F.coalesce("trigger", F.lit("unknown")).alias("trigger"))
        .limit(200000)
        .collect()
    ]
    commits = datasets["offset_commits"]
    top_commit = [
        (r["data_dir"], r["group"])
        for r in summary.where(F.col("commits") > 0)
        .orderBy(F.desc("commits"), "data_dir", "group")
        .limit(8)
        .collect()
    ]
    span = commits.agg(
        F.min("commit_timestamp").alias("lo"), F.max("commit_timestamp").alias("hi")
    ).first()
    bucket_ms = 60_000
    if span is not None and span["lo"] is not None:
        width = int(span["hi"]) - int(span["lo"])
        bucket_ms = next((b for b in RATE_BUCKETS_MS if width / b <= 240), RATE_BUCKETS_MS[-1])
    commit_rates = [
        r.asDict()
        for r in commits.join(
            commits.sparkSession.createDataFrame(top_commit, "data_dir string, group string"),
            ["data_dir", "group"],
        )
        .where(F.col("commit_timestamp") >= 0)
        .groupBy(
            "data_dir",
            "group",
            (F.floor(F.col("commit_timestamp") / bucket_ms) * bucket_ms).alias("bucket_ms"),
        )
        .agg(F.count(F.lit(1)).alias("commits"))
        .orderBy("data_dir", "group", "bucket_ms")
        .limit(50000)
        .collect()
    ]
    problems = [r.asDict() for r in datasets["problems"].limit(1000).collect()]
    latest = datasets["offsets_latest"]
    live = latest.count()
    sample = [
        r.asDict()
        for r in latest.orderBy("data_dir", "group", "topic", "partition").limit(50).collect()
    ]
    data = ReportData(
        inputs=list(inputs),
        segments=segments,
        record_counts=counts,
        groups=groups,
        rebalances=rebalances,
        triggers=sorted(triggers, key=lambda t: -int(t["rebalances"])),
        commit_rates=commit_rates,
        rate_bucket_ms=bucket_ms,
        problems=problems,
        live_offsets=live,
        offset_sample=sample,
        durations=durations,
        datasets=paths,
        window=window,
        generated_at=dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
    )
    return data


# --------------------------------------------------------------------------------------
# Plots


def _label(data_dir: str, group: str, many_dirs: bool) -> str:
    if not many_dirs:
        return group
    return f"{os.path.basename(data_dir.rstrip(os.sep)) or data_dir}/{group}"


def _ms(value: int) -> dt.datetime:
    return dt.datetime.fromtimestamp(value / 1000, dt.UTC).replace(tzinfo=None)


def _x(when: dt.datetime) -> float:
    """A datetime as a matplotlib date number."""
    import matplotlib.dates as mdates

    return float(mdates.date2num(when))  # type: ignore[no-untyped-call]


def _date_axis(ax: Any) -> None:
    """Date ticks that adapt to the span (seconds to months)."""
    import matplotlib.dates as mdates

    locator = mdates.AutoDateLocator(minticks=4, maxticks=9)  # type: ignore[no-untyped-call]
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(
        mdates.ConciseDateFormatter(locator)  # type: ignore[no-untyped-call]
    )


def _plots(data: ReportData, out_dir: str) -> dict[str, str]:
    """Draw the PNGs; returns title -> file name (relative to the report)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    os.makedirs(os.path.join(out_dir, "plots"), exist_ok=True)
    many_dirs = len({g["data_dir"] for g in data.groups}) > 1
    made: dict[str, str] = {}
    plt.rcParams.update({"font.size": 9, "axes.spines.top": False, "axes.spines.right": False})

    def save(fig: Any, name: str, title: str) -> None:
        path = os.path.join("plots", name)
        fig.savefig(os.path.join(out_dir, path), dpi=110, bbox_inches="tight")
        plt.close(fig)
        made[title] = path

    top = data.groups[:TOP_GROUPS]
    labels = [_label(g["data_dir"], g["group"], many_dirs) for g in top]
    keys = [(g["data_dir"], g["group"]) for g in top]

    # 1. Rebalances per group, stacked by trigger: who rebalances most, and why.
    counts: dict[tuple[str, str], dict[str, int]] = {k: {} for k in keys}
    for r in data.rebalances:
        k = (r["data_dir"], r["group"])
        if k in counts and r["end_ms"] is not None:
            trig = r["trigger"] or "unknown"
            counts[k][trig] = counts[k].get(trig, 0) + 1
    fig, ax = plt.subplots(figsize=(8, max(2.2, 0.38 * len(keys) + 1)))
    left = [0] * len(keys)
    for trig in TRIGGER_ORDER:
        values = [counts[k].get(trig, 0) for k in keys]
        if any(values):
            ax.barh(labels, values, left=left, color=TRIGGER_COLORS[trig], label=trig)
            left = [a + b for a, b in zip(left, values, strict=True)]
    ax.invert_yaxis()
    ax.set_xlabel("rebalances (completed generations)")
    ax.set_title("Rebalances per group, by trigger")
    if keys:
        ax.legend(loc="lower right", frameon=False)
    save(fig, "rebalances_by_trigger.png", "Rebalances per group, by trigger")

    # 2. Timeline: one row per group, a mark per rebalance (colored by trigger), a bar for
    # its duration, a line for the group's life.
    fig, ax = plt.subplots(figsize=(10, max(2.4, 0.42 * len(keys) + 1.2)))
    row = {k: i for i, k in enumerate(keys)}
    seen: set[str] = set()
    for g in top:
        if g["first_seen"] is not None and g["last_seen"] is not None:
            y = row[(g["data_dir"], g["group"])]
            ax.plot(
                [_x(g["first_seen"]), _x(g["last_seen"])],
                [y, y],
                color="#dee2e6",
                lw=6,
                solid_capstyle="butt",
                zorder=1,
            )
    for r in data.rebalances:
        k = (r["data_dir"], r["group"])
        if k not in row or r["end_ms"] is None:
            continue
        trig = r["trigger"] or "unknown"
        y = row[k]
        if r["start_ms"] is not None:
            ax.plot(
                [_x(_ms(r["start_ms"])), _x(_ms(r["end_ms"]))],
                [y, y],
                color=TRIGGER_COLORS[trig],
                lw=6,
                solid_capstyle="butt",
                zorder=2,
            )
        ax.scatter(
            [_x(_ms(r["end_ms"]))],
            [y],
            color=TRIGGER_COLORS[trig],
            s=22,
            zorder=3,
            label=None if trig in seen else trig,
            edgecolors="white",
            linewidths=0.5,
        )
        seen.add(trig)
    ax.set_yticks(range(len(labels)), labels)
    ax.set_ylim(len(labels) - 0.5, -0.5)
    _date_axis(ax)
    ax.set_title("Rebalance timeline (each mark: a new generation; bar: the rebalance)")
    if seen:
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    save(fig, "rebalance_timeline.png", "Rebalance timeline")

    # 3. Duration distribution by trigger.
    durations = data.durations
    fig, ax = plt.subplots(figsize=(8, 3.6))
    by_trig: dict[str, list[float]] = {}
    for item in durations:
        by_trig.setdefault(item["trigger"], []).append(max(float(item["duration_ms"]), 0.0) / 1000)
    if by_trig:
        order = [t for t in TRIGGER_ORDER if t in by_trig]
        ax.hist(
            [by_trig[t] for t in order],
            bins=30,
            stacked=True,
            color=[TRIGGER_COLORS[t] for t in order],
            label=order,
        )
        ax.legend(frameon=False, loc="best")
        every = sorted(v for vs in by_trig.values() for v in vs)
        p50 = every[len(every) // 2]
        p95 = every[min(len(every) - 1, int(len(every) * 0.95))]
        for value, name in ((p50, "p50"), (p95, "p95")):
            ax.axvline(value, color="#212529", ls="--", lw=1)
            ax.text(value, ax.get_ylim()[1] * 0.95, f" {name} {value:.2f}s", va="top")
    else:
        ax.text(0.5, 0.5, "no rebalance events", ha="center", va="center", transform=ax.transAxes)
    ax.set_xlabel("rebalance duration (s): rebalance_start to rebalance_end")
    ax.set_ylabel("rebalances")
    ax.set_title("Rebalance duration distribution")
    save(fig, "rebalance_durations.png", "Rebalance duration distribution")

    # 4. Commit rate over time, top groups by commits.
    fig, ax = plt.subplots(figsize=(10, 3.8))
    bucket = data.rate_bucket_ms
    series: dict[tuple[str, str], dict[int, int]] = {}
    for r in data.commit_rates:
        series.setdefault((r["data_dir"], r["group"]), {})[int(r["bucket_ms"])] = int(r["commits"])
    if series:
        lo = min(min(s_) for s_ in series.values())
        hi = max(max(s_) for s_ in series.values())
        ticks = range(lo, hi + bucket, bucket)
        for (data_dir, group), counts_at in series.items():
            ax.plot(
                [_x(_ms(t)) for t in ticks],
                [counts_at.get(t, 0) * 60_000 / bucket for t in ticks],
                marker="." if len(ticks) < 80 else None,
                lw=1.2,
                drawstyle="steps-post",
                label=_label(data_dir, group, many_dirs),
            )
        ax.set_xlim(_x(_ms(lo - bucket)), _x(_ms(hi + 2 * bucket)))
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
        _date_axis(ax)
    else:
        ax.text(0.5, 0.5, "no offset commits", ha="center", va="center", transform=ax.transAxes)
    ax.set_ylabel("commits per minute")
    ax.set_ylim(bottom=0)
    ax.set_title(f"Offset commit rate (busiest groups; {_bucket_name(bucket)} buckets)")
    save(fig, "commit_rate.png", "Offset commit rate")
    return made


def _bucket_name(ms: int) -> str:
    if ms < 60_000:
        return f"{ms // 1000} s"
    if ms < 3_600_000:
        return f"{ms // 60_000} min"
    return f"{ms // 3_600_000} h"


# --------------------------------------------------------------------------------------
# Text


def _fmt(value: Any) -> str:
    if value is None:
        return _DASH
    if isinstance(value, float):
        return f"{value:,.1f}" if abs(value) >= 10 else f"{value:.2f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    if isinstance(value, dt.datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S")
    return str(value)


def _duration(ms: Any) -> str:
    if ms is None:
        return _DASH
    seconds = float(ms) / 1000
    if seconds < 120:
        return f"{seconds:.2f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def _tables(data: ReportData) -> list[tuple[str, list[str], list[list[str]], str]]:
    """(title, header, rows, note) of every table in the report."""
    many_dirs = len(data.inputs) > 1
    tables = []
    totals = sum(data.record_counts.values())
    overview = [
        ["inputs", ", ".join(data.inputs)],
        ["segments read", _fmt(data.segments)],
        ["records", _fmt(totals)],
        *[[f"  {k}", _fmt(v)] for k, v in sorted(data.record_counts.items())],
        ["groups", _fmt(len(data.groups))],
        ["live committed offsets", _fmt(data.live_offsets)],
        ["rebalances (with events)", _fmt(sum(int(t["rebalances"]) for t in data.triggers))],
        ["input problems", _fmt(len(data.problems))],
    ]
    since, until = data.window
    if since is not None or until is not None:
        overview.append(
            [
                "time window",
                f"{_fmt(_ms(since)) if since else '…'} to "
                f"{_fmt(_ms(until)) if until else '…'} (UTC)",
            ]
        )
    tables.append(("Overview", ["", ""], overview, ""))
    if data.problems:
        tables.append(
            (
                "Input problems",
                ["kind", "file", "byte offset", "what"],
                [
                    [
                        p["record_type"],
                        os.path.join(p["data_dir"], p["segment"]),
                        _fmt(p["position"]),
                        p["problem"],
                    ]
                    for p in data.problems
                ],
                "Torn tails (a writer died mid-write) are expected after a crash; corrupt "
                "files were read up to the bad entry.",
            )
        )
    tables.append(
        (
            "Why groups rebalance",
            ["trigger", "rebalances", "p50", "p95", "max", "moved partitions"],
            [
                [
                    t["trigger"],
                    _fmt(t["rebalances"]),
                    _duration(t["p50_ms"]),
                    _duration(t["p95_ms"]),
                    _duration(t["max_ms"]),
                    f"{int(t['moved'])} of {int(t['rebalances'])}",
                ]
                for t in data.triggers
            ],
            "Trigger of each rebalance from kcoord's RebalanceEvent records; 'moved "
            "partitions' counts rebalances after which some partition had a new owner.",
        )
    )
    tables.append(
        (
            "Groups (most rebalances first)",
            [
                "group",
                "state",
                "generation",
                "members",
                "rebalances",
                "per hour",
                "p50",
                "p95",
                "members seen",
                "commits",
                "live offsets",
                "lifetime",
            ],
            [
                [
                    _label(g["data_dir"], g["group"], many_dirs),
                    g["state"],
                    _fmt(g["current_generation"]),
                    _fmt(g["current_members"]),
                    _fmt(g["rebalances"]),
                    _fmt(g["rebalances_per_hour"]),
                    _duration(g["p50_rebalance_ms"]),
                    _duration(g["p95_rebalance_ms"]),
                    _fmt(g["members_seen"]),
                    _fmt(g["commits"]),
                    _fmt(g["live_offsets"]),
                    _duration(g["lifetime_ms"]),
                ]
                for g in data.groups[:50]
            ],
            "" if len(data.groups) <= 50 else f"{len(data.groups) - 50} more in groups_summary.",
        )
    )
    recent = sorted(
        (r for r in data.rebalances if r["end_ms"] is not None),
        key=lambda r: -int(r["end_ms"]),
    )[:25]
    tables.append(
        (
            "Latest rebalances",
            ["ended (UTC)", "group", "gen", "trigger", "reason", "took", "members", "moved"],
            [
                [
                    _fmt(_ms(r["end_ms"])),
                    _label(r["data_dir"], r["group"], many_dirs)
                    + (f" (#{r['incarnation'] + 1})" if r["incarnation"] else ""),
                    _fmt(r["generation"]),
                    r["trigger"] or _DASH,
                    r["reason"] or _DASH,
                    _duration(r["duration_ms"]),
                    f"{r['members_before']} → {r['members_after']}",
                    _fmt(r["partitions_moved"]),
                ]
                for r in recent
            ],
            "(#n): the group's n-th life after a deletion."
            if any(r["incarnation"] for r in recent)
            else "",
        )
    )
    tables.append(
        (
            "Committed offsets (first 50)",
            ["group", "topic", "partition", "offset", "committed (UTC)"],
            [
                [
                    _label(o["data_dir"], o["group"], many_dirs),
                    o["topic"],
                    _fmt(o["partition"]),
                    _fmt(o["offset"]),
                    _fmt(o["commit_time"]),
                ]
                for o in data.offset_sample
            ],
            f"All {data.live_offsets:,} in offsets_latest.",
        )
    )
    tables.append(
        (
            "Datasets",
            ["dataset", "path"],
            [[name, path] for name, path in data.datasets.items()],
            "Parquet; offset_commits is partitioned by group.",
        )
    )
    return tables


def _markdown(data: ReportData, plots: dict[str, str]) -> str:
    lines = [
        "# kcoord pipeline report",
        "",
        f"Generated {data.generated_at}"
        + (f" in {data.elapsed_s:.1f} s" if data.elapsed_s else "")
        + ".",
        "",
    ]
    tables = _tables(data)
    figure_after = {"Why groups rebalance": list(plots.items())[:3]}
    for title, header, rows, note in tables:
        lines += [f"## {title}", ""]
        if title == "Overview":
            for key, value in rows:
                lines.append(
                    f"- **{key.strip()}**: {value}"
                    if not key.startswith("  ")
                    else f"  - {key.strip()}: {value}"
                )
        else:
            lines.append("| " + " | ".join(header) + " |")
            lines.append("|" + "|".join("---" for _ in header) + "|")
            for row in rows:
                lines.append("| " + " | ".join(c.replace("|", "\\|") for c in row) + " |")
        if note:
            lines += ["", note]
        lines.append("")
        for fig_title, path in figure_after.get(title, []):
            lines += [f"![{fig_title}]({path})", ""]
        if title == "Groups (most rebalances first)":
            for fig_title, path in list(plots.items())[3:]:
                lines += [f"![{fig_title}]({path})", ""]
    return "\n".join(lines)


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2em auto;
max-width:1150px;color:#212529;padding:0 1em}
h1{margin-bottom:.2em}h2{margin-top:1.6em;border-bottom:1px solid #dee2e6;padding-bottom:.2em}
table{border-collapse:collapse;font-size:.88em;margin:.5em 0}
th,td{padding:.25em .7em;border-bottom:1px solid #e9ecef;text-align:left}
th{background:#f8f9fa}td.n{text-align:right;font-variant-numeric:tabular-nums}
.note{color:#6c757d;font-size:.85em}.cards{display:flex;flex-wrap:wrap;gap:.8em}
.card{border:1px solid #dee2e6;border-radius:6px;padding:.6em 1em;min-width:9em}
.card b{display:block;font-size:1.5em}figure{margin:1em 0}img{max-width:100%}
.bad{color:#c92a2a}
"""


def _html(data: ReportData, plots: dict[str, str]) -> str:
    e = html.escape
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        "<title>kcoord pipeline report</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>kcoord pipeline report</h1>",
        f"<p class='note'>Generated {e(data.generated_at)}"
        + (f" in {data.elapsed_s:.1f} s" if data.elapsed_s else "")
        + f" from {e(', '.join(data.inputs))}.</p>",
    ]
    cards = [
        ("records", sum(data.record_counts.values())),
        ("groups", len(data.groups)),
        ("rebalances", sum(int(t["rebalances"]) for t in data.triggers)),
        ("live offsets", data.live_offsets),
        ("input problems", len(data.problems)),
    ]
    parts.append(
        "<div class='cards'>"
        + "".join(
            f"<div class='card{' bad' if name == 'input problems' and value else ''}'>"
            f"<b>{value:,}</b>{e(name)}</div>"
            for name, value in cards
        )
        + "</div>"
    )
    figures = list(plots.items())
    for title, header, rows, note in _tables(data):
        if title == "Overview":
            continue
        parts.append(
            f"<h2>{e(title)}</h2><table><tr>"
            + "".join(f"<th>{e(h)}</th>" for h in header)
            + "</tr>"
        )
        for row in rows:
            parts.append(
                "<tr>"
                + "".join(
                    f"<td class='n'>{e(c)}</td>"
                    if c[:1].isdigit() or c[:1] == _DASH
                    else f"<td>{e(c)}</td>"
                    for c in row
                )
                + "</tr>"
            )
        parts.append("</table>")
        if note:
            parts.append(f"<p class='note'>{e(note)}</p>")
        if title == "Why groups rebalance":
            shown, figures = figures[:3], figures[3:]
        elif title == "Groups (most rebalances first)":
            shown, figures = figures, []
        else:
            shown = []
        for fig_title, path in shown:
            parts.append(f"<figure><img src='{e(path)}' alt='{e(fig_title)}'></figure>")
    parts.append("</body></html>")
    return "\n".join(parts)


def render(data: ReportData, out_dir: str) -> dict[str, str]:
    """Draw the plots and write report.md and report.html into ``out_dir``; returns
    name -> path of every file written."""
    os.makedirs(out_dir, exist_ok=True)
    plots = _plots(data, out_dir)
    md = os.path.join(out_dir, "report.md")
    with open(md, "w", encoding="utf-8") as f:
        f.write(_markdown(data, plots))
    page = os.path.join(out_dir, "report.html")
    with open(page, "w", encoding="utf-8") as f:
        f.write(_html(data, plots))
    files = {"report.md": md, "report.html": page}
    files.update({os.path.basename(p): os.path.join(out_dir, p) for p in plots.values()})
    return files
