"""``kcoord pipeline --follow`` in a process of its own over a data directory the storage
writer keeps appending to: new entries (and a new segment) reach the datasets, SIGTERM
stops it with exit status 0 and one line, and its output then equals a batch run's over
the same directory, row for row, dataset by dataset."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pipeline_support import NEEDS_EXTRA, T0, commit, event, write

pytestmark = pytest.mark.slow

pytest.importorskip("pyspark", reason=NEEDS_EXTRA)

import pyarrow.parquet as pq

from storage.directory import find_segments
from storage.log import Log
from storage.pipeline.cli import main

ROOT = str(Path(__file__).resolve().parents[2])
WAIT_S = 300.0


def _wait(what: str, ready: Callable[[], bool], proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + WAIT_S
    while not ready():
        assert proc.poll() is None, f"the follower ended ({proc.returncode}) before {what}"
        assert time.monotonic() < deadline, f"no {what} after {WAIT_S} s"
        time.sleep(0.2)


def _offsets(out: Path) -> set[tuple[str, int]]:
    try:
        table = pq.read_table(out / "offsets_latest", columns=["group", "offset"])
    except Exception:  # not written yet, or being rewritten
        return set()
    return set(zip(table.column("group").to_pylist(), table.column("offset").to_pylist(),
                   strict=True))


def _datasets(out: Path) -> dict[str, list[tuple[Any, ...]]]:
    found: dict[str, list[tuple[Any, ...]]] = {}
    for entry in sorted(out.iterdir()):
        if entry.is_dir() and any(p.suffix == ".parquet" for p in entry.iterdir()):
            rows = pq.read_table(entry).to_pylist()
            found[entry.name] = sorted((tuple(sorted(r.items())) for r in rows), key=repr)
    return found


class _Watcher(threading.Thread):
    """Lists every dataset directory of a followed output every few milliseconds and keeps
    the listings that show one missing or not fully written (no ``_SUCCESS``, or Spark's
    ``_temporary`` still there): what a reader of the output would have found."""

    def __init__(self, out: Path) -> None:
        super().__init__(name="output-watcher", daemon=True)
        self.out = out
        self.names = sorted(p.name for p in out.iterdir()
                            if p.is_dir() and (p / "_SUCCESS").exists())
        self.complete = 0
        self.bad: list[tuple[str, list[str] | None]] = []
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            for name in self.names:
                try:
                    entries = sorted(os.listdir(self.out / name))
                except FileNotFoundError:
                    self.bad.append((name, None))
                    continue
                if "_SUCCESS" in entries and "_temporary" not in entries:
                    self.complete += 1
                else:
                    self.bad.append((name, entries[:4]))
            time.sleep(0.002)


def _runs_done(err_path: Path) -> int:
    return err_path.read_text().count("following: up to date")


def test_follow_sees_appends_stops_on_sigterm_and_equals_a_batch_run(
    spark: Any, tmp_path: Path
) -> None:
    data, followed, batch = tmp_path / "data", tmp_path / "followed", tmp_path / "batch"
    segment_bytes = 4096
    write(str(data), [commit("g", "t", p, 10 + p, T0 + p) for p in range(4)], segment_bytes)
    err_path = tmp_path / "follow.err"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (ROOT, os.environ.get("PYTHONPATH", "")) if p)}
    with open(err_path, "w") as err_file:
        proc = subprocess.Popen(
            [sys.executable, "-m", "coordinator", "pipeline", "--follow", "--poll", "0.5",
             "--master", "local[2]", "-i", str(data), "-o", str(followed)],
            stdout=subprocess.DEVNULL, stderr=err_file, env=env, cwd=ROOT,
        )
    try:
        _wait("first run", lambda: _runs_done(err_path) >= 1, proc)
        assert ("g", 13) in _offsets(followed)
        # From here on a reader must find every dataset complete, while runs rewrite them.
        watcher = _Watcher(followed)
        assert {"offsets_latest", "offset_commits", "rebalances"} <= set(watcher.names)
        watcher.start()
        runs = _runs_done(err_path)
        segments = len(find_segments(str(data)))
        # The writer appends while the follower runs: enough to roll a new segment.
        with Log.open(str(data), fsync="never", segment_bytes=segment_bytes) as log:
            log.append([event("h", "PreparingRebalance", T0 + 100, 1, reason="join"),
                        event("h", "Stable", T0 + 200, 1, members=("m1",))])
            for i in range(60):
                log.append([commit("h", "u", i % 3, 1000 + i, T0 + 300 + i,
                                   metadata="x" * 100)])
        assert len(find_segments(str(data))) > segments
        _wait("the appended commits", lambda: ("h", 1059) in _offsets(followed), proc)
        _wait("the run's end", lambda: _runs_done(err_path) > runs, proc)
        watcher.stop.set()
        watcher.join(timeout=30)
        assert not watcher.bad, watcher.bad[:5]
        assert watcher.complete > 0
        time.sleep(1.5)  # a check or more with no change: no re-run starts
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=WAIT_S) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=60)
    lines = err_path.read_text().splitlines()
    assert lines[-1].startswith("kcoord pipeline: stopped following"), lines[-5:]
    assert sum("stopped following" in ln for ln in lines) == 1

    status = main(["-q", "-i", str(data), "-o", str(batch), "--master", "local[2]"],
                  stdout=io.StringIO(), stderr=io.StringIO())
    assert status == 0
    want, got = _datasets(batch), _datasets(followed)
    assert {"offsets_latest", "offsets_lag", "rebalances"} <= set(want)
    assert set(got) == set(want)
    for name in want:
        assert got[name] == want[name], name
