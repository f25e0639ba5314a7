"""Warnings for connections closed over bad input, rate-limited (one place for every
connection and listener of the process)."""

from __future__ import annotations

import logging

import trio

__all__ = ["BAD_INPUT", "BadInputLog"]

log = logging.getLogger("coordinator.server.connection")

_NEVER = float("inf")


class BadInputLog:
    """Warnings for connections closed over bad input, rate-limited: at most ``burst`` per
    ``window_s`` seconds; the rest are counted and reported once the window ends (a fuzzing
    client would otherwise fill stderr: 60,000 bad frames, 6.8 MB)."""

    __slots__ = ("burst", "logged", "suppressed", "total", "window_s", "window_start")

    def __init__(self, burst: int = 10, window_s: float = 10.0) -> None:
        self.burst = burst
        self.window_s = window_s
        self.window_start = -_NEVER
        self.logged = 0
        self.suppressed = 0
        #: Connections closed over bad input since start (diagnostics, tests).
        self.total = 0

    def warn(self, msg: str, *args: object) -> None:
        self.total += 1
        now = trio.current_time()
        if now - self.window_start >= self.window_s:
            if self.suppressed:
                log.warning("%d more connections were closed over bad input in the last "
                            "%g s (not logged one by one)", self.suppressed, self.window_s)
            self.window_start, self.logged, self.suppressed = now, 0, 0
        if self.logged < self.burst:
            self.logged += 1
            log.warning(msg, *args)
        else:
            self.suppressed += 1


BAD_INPUT = BadInputLog()
