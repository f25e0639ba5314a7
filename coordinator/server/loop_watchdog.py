"""What held the event loop: a watchdog thread that names a stall and where the loop was.

Every ``tick_s`` a daemon thread asks the loop to run a no-op callback
(``TrioToken.run_sync_soon``: it wakes the loop through its wake-up descriptor, so no
timer is armed and a ``MockClock`` is never jumped). When the callback has not run within
``threshold_s``, the loop is held -- by a synchronous call (an ``fsync``, a long scan, a
lock) or by another thread holding the GIL -- and the thread samples the loop thread's
stack (``sys._current_frames``) at once and every further ``threshold_s``; when the
callback runs, the stall is logged as one warning with its length and the distinct stacks
seen, and kept in ``stalls`` (the last ``KEPT``) for a test's failure report.

Two brokers of one process silent at once while the clients' requests time out in flight
is what a loop stall looks like from outside; this says which call it was. A stack that
ends in Trio's I/O wait (``get_events``) is a loop that was idle and still did not run the
callback: its thread got neither the CPU nor the GIL (a loaded machine, another thread
of the process), which ``LoopStall.idle`` tells apart from a call that held the loop.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
import traceback
from collections import deque
from typing import NamedTuple

import trio

__all__ = ["KEPT", "LoopStall", "LoopWatchdog"]

log = logging.getLogger(__name__)

#: Stalls kept for reports (the oldest go).
KEPT = 32
#: Stacks sampled per stall at most (a stall is sampled every ``threshold_s``).
_SAMPLES = 4
_FRAMES = 30
#: The innermost frame of a loop waiting for I/O (Trio's epoll, kqueue or Windows backend).
_IO_WAIT = "in get_events"


class LoopStall(NamedTuple):
    """One stall: when it began (``time.time()``), how long the loop was held (s), and the
    distinct stacks of the loop thread sampled meanwhile (innermost call last)."""

    began: float
    seconds: float
    stacks: tuple[str, ...]

    @property
    def idle(self) -> bool:
        """Whether every sample found the loop in its I/O wait (not held by a call: its
        thread was not scheduled, or waited for the GIL)."""
        return bool(self.stacks) and all(
            _IO_WAIT in "".join(stack.rstrip().splitlines()[-2:]) for stack in self.stacks)

    def describe(self) -> str:
        """The stall as the warning logs it."""
        at = (time.strftime("%H:%M:%S", time.gmtime(self.began))
              + f".{int(self.began % 1 * 1000):03d} UTC")
        where = "\n".join(f"-- sample {i}:\n{stack}" for i, stack in enumerate(self.stacks, 1))
        if self.idle:
            return (f"event loop not run {self.seconds:.3f} s from {at} (idle in its I/O wait: "
                    f"its thread got neither the CPU nor the GIL); where it was:\n{where}")
        return f"event loop held {self.seconds:.3f} s from {at}; where it was:\n{where}"


class LoopWatchdog:
    """Watches the Trio loop it is started in (``start``) from a daemon thread."""

    def __init__(self, threshold_s: float = 0.25, tick_s: float = 0.1) -> None:
        if not (tick_s > 0 and threshold_s > 0):
            raise ValueError("the watchdog's tick and threshold must be positive")
        self.threshold_s = threshold_s
        self.tick_s = tick_s
        self.stalls: deque[LoopStall] = deque(maxlen=KEPT)
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Watch the current Trio loop (call from inside it) until ``stop`` or its end."""
        token = trio.lowlevel.current_trio_token()
        loop_thread = threading.get_ident()
        self._stopping = stopping = threading.Event()  # (each run its own: restarts)
        self._thread = threading.Thread(target=self._watch, args=(token, loop_thread, stopping),
                                        name="kcoord-loop-watchdog", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop watching (returns at once; the thread ends at its next tick)."""
        self._stopping.set()

    def _watch(self, token: trio.lowlevel.TrioToken, loop_thread: int,
               stopping: threading.Event) -> None:
        ran = threading.Event()
        while not stopping.wait(self.tick_s):
            ran.clear()
            asked = time.perf_counter()
            began = time.time()
            try:
                token.run_sync_soon(ran.set)
            except trio.RunFinishedError:
                return
            if ran.wait(self.threshold_s):
                continue
            stacks: list[str] = []
            while True:
                stack = _stack_of(loop_thread)
                if stack not in stacks and len(stacks) < _SAMPLES:
                    stacks.append(stack)
                if ran.wait(self.threshold_s) or stopping.is_set():
                    break
            stall = LoopStall(began, time.perf_counter() - asked, tuple(stacks))
            self.stalls.append(stall)
            log.warning("%s", stall.describe())


def _stack_of(thread_id: int) -> str:
    frame = sys._current_frames().get(thread_id)
    if frame is None:
        return "(the loop thread has ended)"
    return "".join(traceback.format_stack(frame, limit=_FRAMES))
