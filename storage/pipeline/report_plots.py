"""The report's plots (matplotlib, drawn to PNG files next to the report)."""

from __future__ import annotations

import datetime as dt
import os
from typing import Any

from .report_data import (
    TOP_GROUPS,
    TRIGGER_COLORS,
    TRIGGER_ORDER,
    ReportData,
    group_label,
    ms_to_datetime,
)

__all__ = ["draw_plots", "preload"]


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


def preload() -> None:
    """Import matplotlib (Agg) and pyarrow ahead of use: the CLI calls it from a thread
    while Spark's JVM starts, which leaves this process idle."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.dates
    import matplotlib.pyplot
    import pyarrow  # noqa: F401  (the driver read's)


def draw_plots(data: ReportData, out_dir: str) -> dict[str, str]:
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
    labels = [group_label(g["data_dir"], g["group"], many_dirs) for g in top]
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
    drawn = False
    for trig in TRIGGER_ORDER:
        values = [counts[k].get(trig, 0) for k in keys]
        if any(values):
            ax.barh(labels, values, left=left, color=TRIGGER_COLORS[trig], label=trig)
            left = [a + b for a, b in zip(left, values, strict=True)]
            drawn = True
    ax.invert_yaxis()
    ax.set_xlabel("rebalances (completed generations)")
    ax.set_title("Rebalances per group, by trigger")
    if drawn:  # a legend without labelled bars is matplotlib's "No artists" warning
        ax.legend(loc="lower right", frameon=False)
    save(fig, "rebalances_by_trigger.png", "Rebalances per group, by trigger")

    # 2. Timeline: one row per group, a mark per rebalance (colored by trigger), a bar for
    # its duration, a line for the group's life.
    fig, ax = plt.subplots(figsize=(10, max(2.4, 0.42 * len(keys) + 1.2)))
    row = {k: i for i, k in enumerate(keys)}
    seen: set[str] = set()
    lives = 0
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
                label=None if lives else "group's life (first to last record)",
            )
            lives += 1
    for r in data.rebalances:
        k = (r["data_dir"], r["group"])
        if k not in row or r["end_ms"] is None:
            continue
        trig = r["trigger"] or "unknown"
        y = row[k]
        if r["start_ms"] is not None:
            ax.plot(
                [_x(ms_to_datetime(r["start_ms"])), _x(ms_to_datetime(r["end_ms"]))],
                [y, y],
                color=TRIGGER_COLORS[trig],
                lw=6,
                solid_capstyle="butt",
                zorder=2,
            )
        ax.scatter(
            [_x(ms_to_datetime(r["end_ms"]))],
            [y],
            color=TRIGGER_COLORS[trig],
            s=22,
            zorder=3,
            label=None if trig in seen else trig,
            edgecolors="white",
            linewidths=0.5,
        )
        seen.add(trig)
    restarted = _mark_restarts(ax, data, keys, row)
    ax.set_yticks(range(len(labels)), labels)
    ax.set_ylim(len(labels) - 0.5, -0.5)
    _date_axis(ax)
    ax.set_title("Rebalance timeline (each mark: a new generation; bar: the rebalance)")
    if seen or lives or restarted:
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
        # The two labels at different heights (x in data, y in axes coordinates), so they
        # never overlap however close p50 and p95 are.
        for value, name, height in ((p50, "p50", 0.97), (p95, "p95", 0.86)):
            ax.axvline(value, color="#212529", ls="--", lw=1)
            ax.text(value, height, f" {name} {value:.2f}s", va="top",
                    transform=ax.get_xaxis_transform())
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
                [_x(ms_to_datetime(t)) for t in ticks],
                [counts_at.get(t, 0) * 60_000 / bucket for t in ticks],
                marker="." if len(ticks) < 80 else None,
                lw=1.2,
                drawstyle="steps-post",
                label=group_label(data_dir, group, many_dirs),
            )
        ax.set_xlim(_x(ms_to_datetime(lo - bucket)), _x(ms_to_datetime(hi + 2 * bucket)))
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
        _date_axis(ax)
    else:
        ax.text(0.5, 0.5, "no offset commits", ha="center", va="center", transform=ax.transAxes)
    ax.set_ylabel("commits per minute")
    ax.set_ylim(bottom=0)
    ax.set_title(f"Offset commit rate (busiest groups; {_bucket_name(bucket)} buckets)")
    save(fig, "commit_rate.png", "Offset commit rate")

    # 5. Consumer lag over time, one panel per group.
    fig = _lag_figure(data, plt, many_dirs)
    save(fig, "consumer_lag.png", "Consumer lag over time")
    return made


def _mark_restarts(
    ax: Any, data: ReportData, keys: list[tuple[str, str]], row: dict[tuple[str, str], int]
) -> bool:
    """A dashed vertical mark across each group's row at every restart of its server;
    True if any was drawn."""
    drawn = False
    for data_dir, restarts in data.restarts.items():
        rows = [row[k] for k in keys if k[0] == data_dir]
        for when in restarts or ():
            x = _x(ms_to_datetime(when))
            for y in rows:
                ax.vlines(x, y - 0.45, y + 0.45, colors="#495057", linestyles="dashed",
                          lw=1.2, zorder=4, label=None if drawn else "server restart")
                drawn = True
    return drawn


def _lag_figure(data: ReportData, plt: Any, many_dirs: bool) -> Any:
    """The group's total lag (sum over its partitions of the lag of each partition's
    latest commit, against the log end as of that commit) over time, a panel per group."""
    series: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for r in data.lag_history:
        series.setdefault((r["data_dir"], r["group"]), []).append(
            (int(r["bucket_ms"]), int(r["lag"]))
        )
    if not series:
        fig, ax = plt.subplots(figsize=(10, 2.0))
        ax.axis("off")
        why = (
            "lag unknown: no topic logs in " + ", ".join(data.no_topic_logs)
            + " (--topic-storage memory)"
            if data.no_topic_logs
            else "no offset commits on topics with logs in the data directory"
        )
        ax.text(0.5, 0.5, why, ha="center", va="center", transform=ax.transAxes)
        ax.set_title("Consumer lag over time")
        return fig
    fig, axes = plt.subplots(
        len(series), 1, figsize=(10, 1.9 * len(series) + 0.8), sharex=True, squeeze=False
    )
    bucket = data.rate_bucket_ms
    for ax, ((data_dir, group), points) in zip(axes[:, 0], series.items(), strict=True):
        xs = [_x(ms_to_datetime(t)) for t, _ in points]
        ys = [lag for _, lag in points]
        last = points[-1][0] + bucket
        ax.plot([*xs, _x(ms_to_datetime(last))], [*ys, ys[-1]], drawstyle="steps-post",
                lw=1.4, color="#1971c2", marker="." if len(xs) < 80 else None)
        ax.set_ylabel("lag (records)")
        ax.set_ylim(bottom=0, top=max(max(ys) * 1.15, 1))
        ax.set_title(group_label(data_dir, group, many_dirs), loc="left", fontsize=9)
        _date_axis(ax)
    axes[0, 0].figure.suptitle(
        f"Consumer lag over time (at each commit, {_bucket_name(bucket)} buckets)")
    return fig


def _bucket_name(ms: int) -> str:
    if ms < 60_000:
        return f"{ms // 1000} s"
    if ms < 3_600_000:
        return f"{ms // 60_000} min"
    return f"{ms // 3_600_000} h"
