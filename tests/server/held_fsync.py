"""A held ``os.fsync``: what a slow disk does to a call that fsyncs, made deterministic.

``HeldFsync`` holds the first fsync of a file its ``matches`` picks until the test releases
it (``HELD_S`` at most, then it notes that it timed out: nothing released it, so the event
loop that should have was held by the fsync itself). ``answered_while_held`` runs an action
that fsyncs and checks that another connection is answered while the fsync is held, and
that the action is not (it answers once its data is on disk)."""

from __future__ import annotations

import os
import threading
from collections.abc import Awaitable, Callable
from typing import Any

import trio
from raw_client import RawClient

__all__ = ["HELD_S", "HeldFsync", "answered_while_held"]

HELD_S = 5.0
METADATA = 3


class HeldFsync:
    """``os.fsync`` holding the first fsync of a path ``matches`` accepts."""

    def __init__(self, matches: Callable[[str], bool]) -> None:
        self.matches = matches
        self.reached = threading.Event()
        self.released = threading.Event()
        self.timed_out = False
        self._fsync = os.fsync

    def __call__(self, fd: int) -> None:
        if not self.reached.is_set() and self.matches(os.readlink(f"/proc/self/fd/{fd}")):
            self.reached.set()
            if not self.released.wait(HELD_S):
                self.timed_out = True
        self._fsync(fd)


async def answered_while_held(held: HeldFsync, other: RawClient,
                              action: Callable[[], Awaitable[Any]]) -> tuple[Any, Any]:
    """Run ``action`` while ``held`` (installed as ``os.fsync``) holds its fsync: ``other``
    gets its Metadata answered meanwhile, and ``action`` does not return before the
    release. Returns that Metadata answer and what ``action`` returned."""
    answered: list[Any] = []

    async def act() -> None:
        answered.append(await action())

    async with trio.open_nursery() as nursery:
        nursery.start_soon(act)
        with trio.fail_after(HELD_S * 2):
            await trio.to_thread.run_sync(held.reached.wait, HELD_S)
        assert held.reached.is_set(), "nothing reached the fsync to hold"
        with trio.fail_after(2):
            meta = await other.request(METADATA, 12, {
                "topics": None, "allow_auto_topic_creation": False,
                "include_topic_authorized_operations": False})
        assert not held.timed_out, "the held fsync held the event loop"
        assert not answered, "answered before its fsync was done"
        held.released.set()
    return meta, answered[0]
