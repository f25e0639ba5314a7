"""The report's rendering alone (no Spark): plots and pages from hand-made
:class:`ReportData`, with every warning recorded (matplotlib's included: none may
appear), restart markers on the timeline, and the lag plot's empty cases."""

from __future__ import annotations

import datetime as dt
import warnings
from pathlib import Path
from typing import Any

import pytest
from pipeline_support import NEEDS_EXTRA

pytest.importorskip("matplotlib", reason=NEEDS_EXTRA)

from storage.pipeline.report import render
from storage.pipeline.report_data import ReportData

T0 = 1_700_000_000_000


def _when(ms: int) -> dt.datetime:
    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).replace(tzinfo=None)


def _data(dirs: list[str], **fields: Any) -> ReportData:
    groups = [
        {"data_dir": d, "group": "g", "state": "Stable", "current_generation": 2,
         "current_members": 1, "rebalances": 1, "rebalances_per_hour": None,
         "p50_rebalance_ms": 100.0, "p95_rebalance_ms": 100.0, "members_seen": 1,
         "commits": 3, "live_offsets": 1, "lifetime_ms": 60_000,
         "first_seen": _when(T0), "last_seen": _when(T0 + 60_000)}
        for d in dirs
    ]
    rebalances = [
        {"data_dir": d, "group": "g", "incarnation": 0, "generation": 1, "start_ms": T0,
         "end_ms": T0 + 100, "duration_ms": 100, "reason": "member join", "trigger": "join",
         "members_before": 0, "members_after": 1, "partitions_moved": 1}
        for d in dirs
    ]
    base: dict[str, Any] = {
        "inputs": dirs, "segments": 1, "record_counts": {"offset_commit": 3},
        "groups": groups, "rebalances": rebalances,
        "triggers": [{"trigger": "join", "rebalances": 1, "p50_ms": 100.0, "p95_ms": 100.0,
                      "max_ms": 100, "moved": 1}],
        "commit_rates": [], "problems": [], "live_offsets": 1, "offset_sample": [],
        "durations": [{"duration_ms": 100, "trigger": "join"}],
    }
    base.update(fields)
    return ReportData(**base)


def _render(data: ReportData, out: Path) -> dict[str, str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        files = render(data, str(out))
    assert [str(w.message) for w in caught] == []
    return files


def test_restarts_are_marked_on_the_timeline(tmp_path: Path) -> None:
    from storage.pipeline import report_plots

    marked: list[tuple[float, float, float]] = []
    original = report_plots._mark_restarts

    def spy(ax: Any, data: ReportData, keys: Any, row: Any) -> bool:
        drawn = original(ax, data, keys, row)
        for collection in ax.collections:
            if collection.get_label() == "server restart":
                for segment in collection.get_segments():
                    marked.append((segment[0][0], segment[0][1], segment[1][1]))
        return drawn

    data = _data(["/d/a", "/d/b"], restarts={"/d/a": [T0 + 30_000], "/d/b": None})
    report_plots._mark_restarts = spy  # type: ignore[assignment]
    try:
        _render(data, tmp_path)
    finally:
        report_plots._mark_restarts = original
    # One mark, on group a/g's row (row 0) only, at the restart's time.
    assert len(marked) == 1
    x, y0, y1 = marked[0]
    assert report_plots._x(_when(T0 + 30_000)) == pytest.approx(x)
    assert (y0, y1) == pytest.approx((-0.45, 0.45))
    md = (tmp_path / "report.md").read_text()
    assert "/d/a: 1 (2023-11-14 22:13:50 UTC)" in md
    assert "/d/b: not recorded" in md


@pytest.mark.parametrize("history", [False, True])
def test_lag_plot_renders_without_warnings(tmp_path: Path, history: bool) -> None:
    lag_history = (
        [{"data_dir": "/d/a", "group": "g", "bucket_ms": T0 + i * 1000, "lag": lag,
          "partitions": 1} for i, lag in enumerate([0, 0])]  # flat zero: a degenerate y range
        if history else []
    )
    data = _data(["/d/a"], lag_history=lag_history,
                 no_topic_logs=[] if history else ["/d/a"], restarts={"/d/a": []})
    files = _render(data, tmp_path)
    assert (tmp_path / "plots" / "consumer_lag.png").read_bytes()[:4] == b"\x89PNG"
    assert "consumer_lag.png" in files
    md = (tmp_path / "report.md").read_text()
    assert ("no topic logs in the data directory" in md) is not history
