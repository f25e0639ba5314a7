"""Diagnosis: name what holds a benchmarked kcoord server's event loop.

    STALL_LOG=stalls.log PYTHONPATH=tests/benchmarks/loop_stalls \\
        python tests/benchmarks/bench_scale.py --seconds 40

With ``STALL_LOG`` set, a Python process started with ``serve`` among its arguments (every
kcoord server a benchmark starts) runs a ``LoopWatchdog``
(``coordinator/server/loop_watchdog.py``) for its whole event loop: each time the loop is
held longer than ``STALL_S`` seconds (default 0.04), the stall, its length and the loop
thread's stacks go to ``STALL_LOG``. Other processes are untouched. The watchdog wakes the
loop every 10 ms, a few microseconds each: the figures of such a run are the diagnosis's,
not the benchmark's."""

from __future__ import annotations

import os
import sys
from typing import Any

if os.environ.get("STALL_LOG") and "serve" in sys.argv:
    import logging

    import trio

    _trio_run = trio.run

    def _run_watched(async_fn: Any, *args: Any, **kwargs: Any) -> Any:
        async def watched(*fn_args: Any) -> Any:
            from coordinator.server.loop_watchdog import LoopWatchdog

            handler = logging.FileHandler(os.environ["STALL_LOG"])
            handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
            stalls = logging.getLogger("coordinator.server.loop_watchdog")
            stalls.addHandler(handler)
            stalls.propagate = False
            stalls.setLevel(logging.INFO)
            watchdog = LoopWatchdog(threshold_s=float(os.environ.get("STALL_S", "0.04")),
                                    tick_s=0.01)
            watchdog.start()
            try:
                return await async_fn(*fn_args)
            finally:
                watchdog.stop()

        return _trio_run(watched, *args, **kwargs)

    trio.run = _run_watched
