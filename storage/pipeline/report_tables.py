"""The report's tables, and the report itself as Markdown and as one HTML page."""

from __future__ import annotations

import datetime as dt
import html
import os
from typing import Any

from .report_data import DASH, ReportData, duration_text, group_label, ms_to_datetime

__all__ = ["LAG_TITLE", "html_page", "markdown"]

LAG_TITLE = "Consumer lag (largest first)"
#: table title -> the plots (by title) shown after it
_FIGURES_AFTER = {
    "Why groups rebalance": ("Rebalances per group, by trigger", "Rebalance timeline",
                             "Rebalance duration distribution"),
    "Groups (most rebalances first)": ("Offset commit rate",),
    LAG_TITLE: ("Consumer lag over time",),
}


def _figures_after(title: str, plots: dict[str, str]) -> list[tuple[str, str]]:
    return [(t, plots[t]) for t in _FIGURES_AFTER.get(title, ()) if t in plots]


def _fmt(value: Any) -> str:
    if value is None:
        return DASH
    if isinstance(value, float):
        return f"{value:,.1f}" if abs(value) >= 10 else f"{value:.2f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    if isinstance(value, dt.datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S")
    return str(value)


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
        ["total consumer lag", _total_lag(data)],
        ["partitions with no committed offset", _fmt(len(data.uncommitted))],
        ["server restarts", _restarts_text(data)],
    ]
    since, until = data.window
    if since is not None or until is not None:
        overview.append(
            [
                "time window",
                f"{_fmt(ms_to_datetime(since)) if since else '…'} to "
                f"{_fmt(ms_to_datetime(until)) if until else '…'} (UTC)",
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
                    duration_text(t["p50_ms"]),
                    duration_text(t["p95_ms"]),
                    duration_text(t["max_ms"]),
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
                    group_label(g["data_dir"], g["group"], many_dirs),
                    g["state"],
                    _fmt(g["current_generation"]),
                    _fmt(g["current_members"]),
                    _fmt(g["rebalances"]),
                    _fmt(g["rebalances_per_hour"]),
                    duration_text(g["p50_rebalance_ms"]),
                    duration_text(g["p95_rebalance_ms"]),
                    _fmt(g["members_seen"]),
                    _fmt(g["commits"]),
                    _fmt(g["live_offsets"]),
                    duration_text(g["lifetime_ms"]),
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
                    _fmt(ms_to_datetime(r["end_ms"])),
                    group_label(r["data_dir"], r["group"], many_dirs)
                    + (f" (#{r['incarnation'] + 1})" if r["incarnation"] else ""),
                    _fmt(r["generation"]),
                    r["trigger"] or DASH,
                    r["reason"] or DASH,
                    duration_text(r["duration_ms"]),
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
                    group_label(o["data_dir"], o["group"], many_dirs),
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
    tables += _lag_tables(data, many_dirs)
    tables.append(
        (
            "Datasets",
            ["dataset", "path"],
            [[name, path] for name, path in data.datasets.items()],
            "Parquet; offset_commits is partitioned by group.",
        )
    )
    return tables


def _total_lag(data: ReportData) -> str:
    """The sum of the known lags, and whether some are unknown."""
    known = [int(r["lag"]) for r in data.lag if r["lag"] is not None]
    text = _fmt(sum(known)) if known else DASH
    if data.no_topic_logs:
        text += " (unknown for inputs without topic logs)"
    return text


def _restarts_text(data: ReportData) -> str:
    """The inputs' server restarts (in the window), or why they are not known."""
    parts = []
    for data_dir, restarts in sorted(data.restarts.items()):
        name = f"{data_dir}: " if len(data.restarts) > 1 else ""
        if restarts is None:
            parts.append(f"{name}not recorded (no starts.jsonl: written before kcoord kept one)")
        else:
            times = ", ".join(_fmt(ms_to_datetime(t)) for t in restarts[:20])
            more = f" and {len(restarts) - 20} more" if len(restarts) > 20 else ""
            parts.append(f"{name}{len(restarts)}" + (f" ({times}{more} UTC)" if times else ""))
    return "; ".join(parts) or DASH


def _lag_tables(
    data: ReportData, many_dirs: bool
) -> list[tuple[str, list[str], list[list[str]], str]]:
    """The consumer lag table and the partitions no group committed."""
    unknown = ""
    if data.no_topic_logs:
        unknown = (
            " Lag unknown (null) for " + ", ".join(data.no_topic_logs) + ": no topic logs "
            "in the data directory (a server run with --topic-storage memory keeps topics "
            "only in memory)."
        )
    shown = [r for r in data.lag if r["status"] != "no committed offset"][:50]
    lag_table = (
        LAG_TITLE,
        ["group", "topic", "partition", "committed", "log end", "lag", "status"],
        [
            [
                group_label(r["data_dir"], r["group"], many_dirs),
                r["topic"],
                _fmt(r["partition"]),
                _fmt(r["committed_offset"]),
                _fmt(r["log_end_offset"]),
                _fmt(r["lag"]),
                r["status"],
            ]
            for r in shown
        ],
        "Log end: the partition's high watermark in the data directory's topic logs, "
        "counting batches up to --until. Lag = log end - committed offset, 0 for a commit "
        "beyond the log end (kafka-consumer-groups.sh prints the negative difference). "
        f"All {data.lag_rows:,} rows in offsets_lag." + unknown,
    )
    never = (
        "Partitions with no committed offset",
        ["group", "topic", "partition", "log end"],
        [
            [
                group_label(r["data_dir"], r["group"], many_dirs),
                r["topic"],
                _fmt(r["partition"]),
                _fmt(r["log_end_offset"]),
            ]
            for r in data.uncommitted[:200]
        ],
        "Partitions of a topic the group consumes (committed for, or assigned to its "
        "members) that the group never committed"
        + ("." if data.uncommitted else ": none."),
    )
    return [lag_table, never]


def markdown(data: ReportData, plots: dict[str, str]) -> str:
    lines = [
        "# kcoord pipeline report",
        "",
        f"Generated {data.generated_at}"
        + (f" in {data.elapsed_s:.1f} s" if data.elapsed_s else "")
        + ".",
        "",
    ]
    tables = _tables(data)
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
        for fig_title, path in _figures_after(title, plots):
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


def html_page(data: ReportData, plots: dict[str, str]) -> str:
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
                    if c[:1].isdigit() or c[:1] == DASH
                    else f"<td>{e(c)}</td>"
                    for c in row
                )
                + "</tr>"
            )
        parts.append("</table>")
        if note:
            parts.append(f"<p class='note'>{e(note)}</p>")
        for fig_title, path in _figures_after(title, plots):
            parts.append(f"<figure><img src='{e(path)}' alt='{e(fig_title)}'></figure>")
    parts.append("</body></html>")
    return "\n".join(parts)
