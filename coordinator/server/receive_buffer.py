"""The receive buffer every connection of an event loop reads into, and the fair slice a
connection may keep the loop for (the reactor's and the connection tasks' shared limits).
Nothing here knows the handlers, so the connection classes reach no server state."""

from __future__ import annotations

import threading

__all__ = ["FAIR_SLICE_S", "RECEIVE_BYTES", "receive_view"]

RECEIVE_BYTES = 256 * 1024
#: How long one connection may keep the event loop before it yields to the others.
FAIR_SLICE_S = 0.0005
_THREAD = threading.local()


def receive_view() -> memoryview:
    """This thread's receive buffer (one per event loop, shared by its connections: each
    copies what it received out before it next waits). ``sock.recv(RECEIVE_BYTES)`` would
    allocate RECEIVE_BYTES for every read, however few bytes came: a 256 KiB allocation and
    release cost 40-60 us a request, more than decoding a whole OffsetCommit."""
    view: memoryview | None = getattr(_THREAD, "receive_view", None)
    if view is None:
        view = _THREAD.receive_view = memoryview(bytearray(RECEIVE_BYTES))
    return view
