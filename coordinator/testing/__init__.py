"""kcoord as a test double: the pytest plugin, the in-process server handle, virtual time,
fault injection and the HTTP control API."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from coordinator.testing.double import KcoordServer

__all__ = ["KcoordServer"]


def __getattr__(name: str) -> Any:
    # Lazy: the pytest plugin module (coordinator.testing.plugin) is imported by every
    # pytest run; the server behind KcoordServer only when a test asks for it.
    if name == "KcoordServer":
        from coordinator.testing.double import KcoordServer

        return KcoordServer
    raise AttributeError(name)
