"""The group APIs' handlers: one module per API, each exporting ``API_KEY`` and ``handle``
(the contract in ``coordinator/server/context.py``)."""

from __future__ import annotations

from types import ModuleType

from coordinator.server.context import Handler
from coordinator.server.handlers import (
    delete_groups,
    describe_groups,
    heartbeat,
    join_group,
    leave_group,
    list_groups,
    offset_commit,
    offset_delete,
    offset_fetch,
    sync_group,
)

__all__ = ["GROUP_HANDLERS"]

_MODULES: tuple[ModuleType, ...] = (
    join_group,
    sync_group,
    heartbeat,
    leave_group,
    offset_commit,
    offset_fetch,
    describe_groups,
    list_groups,
    delete_groups,
    offset_delete,
)


def _registry(modules: tuple[ModuleType, ...]) -> dict[int, Handler]:
    handlers: dict[int, Handler] = {}
    for module in modules:
        key = module.API_KEY
        if key in handlers:
            raise ValueError(f"two group handlers for API key {key}")
        handlers[key] = module.handle
    return handlers


GROUP_HANDLERS: dict[int, Handler] = _registry(_MODULES)
"""Group-coordinator handlers by API key."""
