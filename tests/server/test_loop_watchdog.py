"""The loop watchdog names what held the event loop (``loop_watchdog.py``), and only that:
an idle loop is no stall, and a MockClock still jumps while it watches."""

from __future__ import annotations

import logging
import time
from typing import Any

import pytest
import trio
import trio.testing

from coordinator.server.loop_watchdog import LoopStall, LoopWatchdog

THRESHOLD_S, TICK_S = 0.05, 0.01


def hold_the_loop_in_a_synchronous_call(seconds: float) -> None:
    time.sleep(seconds)  # what an fsync on the event loop does to every connection


async def _watched(body: Any, watchdog: LoopWatchdog) -> None:
    watchdog.start()
    try:
        await body()
    finally:
        watchdog.stop()


def test_a_held_loop_is_logged_with_where_it_was(caplog: Any) -> None:
    watchdog = LoopWatchdog(THRESHOLD_S, TICK_S)

    async def body() -> None:
        await trio.sleep(0.05)
        hold_the_loop_in_a_synchronous_call(0.4)
        await trio.sleep(0.2)  # (the watchdog sees the loop run again)

    with caplog.at_level(logging.WARNING, logger="coordinator.server.loop_watchdog"):
        trio.run(_watched, body, watchdog)
    (stall,) = watchdog.stalls
    assert 0.3 <= stall.seconds < 5
    assert not stall.idle
    assert "hold_the_loop_in_a_synchronous_call" in stall.stacks[0]
    assert "time.sleep(seconds)" in stall.stacks[0]
    (record,) = caplog.records
    assert record.getMessage().startswith(f"event loop held {stall.seconds:.3f} s")
    assert "hold_the_loop_in_a_synchronous_call" in record.getMessage()


def test_an_idle_or_busy_but_yielding_loop_is_no_stall() -> None:
    watchdog = LoopWatchdog(THRESHOLD_S, TICK_S)

    async def body() -> None:
        await trio.sleep(0.3)  # idle
        deadline = time.monotonic() + 0.3
        while time.monotonic() < deadline:  # busy, yielding every 10 ms
            hold_the_loop_in_a_synchronous_call(0.01)
            await trio.lowlevel.checkpoint()

    trio.run(_watched, body, watchdog)
    assert list(watchdog.stalls) == []


def test_a_mock_clock_still_jumps_while_watched() -> None:
    """The watchdog wakes the loop without a timer: an autojumping clock is not held back,
    and the loop's virtual hour passes in real milliseconds."""
    watchdog = LoopWatchdog(THRESHOLD_S, TICK_S)
    clock = trio.testing.MockClock(autojump_threshold=0)

    async def body() -> None:
        await trio.sleep(3600)

    began = time.monotonic()
    trio.run(_watched, body, watchdog, clock=clock)
    assert time.monotonic() - began < 5
    assert clock.current_time() >= 3600


def test_a_stall_seen_only_in_the_io_wait_is_told_apart() -> None:
    """A loop found in Trio's I/O wait every time was not held by a call: its thread got
    neither the CPU nor the GIL."""
    waiting = ('  File "trio/_core/_run.py", line 2535, in run\n    timeout = ...\n'
               '  File "trio/_core/_io_epoll.py", line 243, in get_events\n'
               '    return self._epoll.poll(timeout, max_events)\n')
    stall = LoopStall(0.0, 0.5, (waiting,))
    assert stall.idle
    assert stall.describe().startswith("event loop not run 0.500 s from 00:00:00.000 UTC "
                                       "(idle in its I/O wait")
    assert not LoopStall(0.0, 0.5, (waiting, "  File \"x.py\", line 1, in fsync\n")).idle


def test_the_watchdog_refuses_a_bad_threshold() -> None:
    with pytest.raises(ValueError, match="positive"):
        LoopWatchdog(0, TICK_S)
