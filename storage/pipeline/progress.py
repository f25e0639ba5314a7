"""``kcoord pipeline``'s progress on stderr: one line per step of the run.

Every line is written whole in one call under a lock (the datasets are written from
several threads at once, and ``print`` writes the text and its newline separately, so
lines ran into each other). While one step runs long, a line with Spark's active stages
and their task counts follows every :data:`QUIET_S` seconds without other progress, so a
long step still shows it moves; a step that ends sooner says nothing more.
"""

from __future__ import annotations

import threading
import time
from typing import Any, TextIO

__all__ = ["QUIET_S", "Progress"]

#: Seconds without a progress line before Spark's stage counts are shown.
QUIET_S = 10.0


class Progress:
    """Step lines (``[  12.3s] message``) and, during a long step, Spark's stages."""

    def __init__(self, out: TextIO, quiet: bool) -> None:
        self.out = out
        self.quiet = quiet
        self.t0 = time.monotonic()
        self._lock = threading.Lock()
        self._last = self.t0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def say(self, message: str) -> None:
        if self.quiet:
            return
        with self._lock:
            now = time.monotonic()
            self._last = now
            self.out.write(f"[{now - self.t0:6.1f}s] {message}\n")
            self.out.flush()

    def watch(self, spark: Any) -> None:
        if self.quiet:
            return
        tracker = spark.sparkContext.statusTracker()

        def run() -> None:
            while not self._stop.wait(1.0):
                if time.monotonic() - self._last < QUIET_S:
                    continue
                try:
                    stages = []
                    for sid in sorted(tracker.getActiveStageIds()):
                        info = tracker.getStageInfo(sid)
                        if info is not None:
                            stages.append(f"{sid} ({info.numCompletedTasks}/{info.numTasks})")
                except Exception:  # the session is going away
                    return
                if stages:
                    self.say("  Spark stages (tasks done/all): " + ", ".join(stages))

        self._thread = threading.Thread(target=run, name="pipeline-progress", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
