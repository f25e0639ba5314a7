"""kcoord as a test double: the pytest plugin, the in-process server handle, virtual time,
fault injection and the HTTP control API."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from coordinator.testing.double import KcoordServer

__all__ = ["KcoordServer"]


def __getattr__(name: str) -> Any:
    # Lazy: the connection loop imports coordinator.testing.faults, which must not pull
    # in the server (and trio threads) just to check whether faults are armed.
    if name == "KcoordServer":
        from coordinator.testing.double import KcoordServer

        return KcoordServer
    raise AttributeError(name)
