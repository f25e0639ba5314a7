"""Which APIs the server serves, read off the route modules' file names without importing
them (``coordinator/server/apis/``: ``heartbeat.py`` serves ``ApiKey.HEARTBEAT``), so the
early listener can answer ApiVersions before any route is loaded. This module imports only
``wire.constants`` and ``os``; the route registry (``coordinator.server.apis``) re-exports it.
"""

from __future__ import annotations

import os

from wire.constants import ApiKey

__all__ = [
    "CONSUMER_PROTOCOL_API_KEYS",
    "CONSUMER_PROTOCOL_PREFIX",
    "ROUTE_MODULE_NAMES",
    "SERVED_API_KEYS",
    "api_key_of",
    "route_module_names",
    "served_api_keys",
]

_APIS_FOLDER = os.path.join(os.path.dirname(__file__), "apis")
CONSUMER_PROTOCOL_PREFIX = "consumer_group_"


def route_module_names(folder: str = _APIS_FOLDER) -> list[str]:
    """The route modules of ``folder`` (``coordinator/server/apis/`` by default), by file
    name, without importing them."""
    return sorted(
        name[:-3] for name in os.listdir(folder)
        if name.endswith(".py") and not name.startswith("_")
    )


def api_key_of(module_name: str) -> ApiKey:
    """The API route module ``module_name`` serves (ValueError: it names none)."""
    try:
        return ApiKey[module_name.upper()]
    except KeyError:
        raise ValueError(f"route module {module_name}.py names no Kafka API") from None


#: The route modules of ``coordinator/server/apis/``.
ROUTE_MODULE_NAMES = route_module_names()

SERVED_API_KEYS: frozenset[int] = frozenset(api_key_of(name) for name in ROUTE_MODULE_NAMES)
"""What ApiVersions advertises (intersected with what wire decodes)."""

CONSUMER_PROTOCOL_API_KEYS: frozenset[int] = frozenset(
    api_key_of(name) for name in ROUTE_MODULE_NAMES if name.startswith(CONSUMER_PROTOCOL_PREFIX)
)
"""Not advertised when ``group.coordinator.rebalance.protocols`` leaves out ``consumer``."""


def served_api_keys(consumer_protocol_enabled: bool) -> frozenset[int]:
    """What ApiVersions advertises, given whether the consumer protocol is enabled."""
    if consumer_protocol_enabled:
        return SERVED_API_KEYS
    return SERVED_API_KEYS - CONSUMER_PROTOCOL_API_KEYS
