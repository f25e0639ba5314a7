"""The registry of served APIs: one module per API in this folder, each declaring a
``ROUTE`` (``coordinator/server/route.py``), and every server table read off them.

Adding an API is adding one module here, named after it (``ApiKey.HEARTBEAT`` ->
``heartbeat.py``): the registry finds it by its file name. ``load_routes`` imports every
module and refuses a route whose key does not match its module's name (so no key is
routed twice), one ``wire`` cannot decode, or a consumer-protocol flag that disagrees with
the name (below).

Two stages, for startup. Importing every route module (their handlers, the core, the topic
store, the runtime and storage's writer) takes about 120 ms on an idle machine, while the
budget from process start to the first answered ApiVersions is 150 ms. So the early
listener answers from what the file names say without importing them (``SERVED_API_KEYS``,
``served_api_keys``, from ``served_apis.py``, which imports only ``wire.constants`` and
``os``; this module adds ``importlib``), and a worker
thread runs ``load_routes`` meanwhile. The consumer-protocol APIs (advertised only when
``group.coordinator.rebalance.protocols`` includes ``consumer``) are the modules named
``consumer_group_*``, which is why their routes must say ``consumer_protocol=True``.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from coordinator.server.served_apis import (
    CONSUMER_PROTOCOL_API_KEYS,
    CONSUMER_PROTOCOL_PREFIX,
    ROUTE_MODULE_NAMES,
    SERVED_API_KEYS,
    api_key_of,
    route_module_names,
    served_api_keys,
)

if TYPE_CHECKING:
    from coordinator.server.context import ApiTraits, Handler
    from coordinator.server.route import Route, Routing

__all__ = [
    "CONSUMER_PROTOCOL_API_KEYS",
    "SERVED_API_KEYS",
    "RouteTable",
    "load_handlers",
    "load_routes",
    "route_module_names",
    "served_api_keys",
]

class RouteTable(Mapping[int, "Route"]):
    """The routes by API key, and the server's tables read off them. A key given twice,
    or one wire cannot decode, is a programming error."""

    def __init__(self, routes: Iterable[Route]) -> None:
        from wire.registry import implemented

        table: dict[int, Route] = {}
        for route in routes:
            key = route.api_key
            if key in table:
                raise ValueError(f"API key {key} ({key.name}) has two routes")
            if not implemented(key):
                raise ValueError(f"API key {key} ({key.name}) has no wire codec")
            table[key] = route
        self._routes = table

    def __getitem__(self, key: int) -> Route:
        return self._routes[key]

    def __iter__(self) -> Iterator[int]:
        return iter(self._routes)

    def __len__(self) -> int:
        return len(self._routes)

    def keys_where(self, trait: str) -> frozenset[int]:
        """The API keys whose routes set ``trait`` (a boolean field of ``Route``)."""
        return frozenset(key for key, route in self._routes.items() if getattr(route, trait))

    @property
    def handlers(self) -> dict[int, Handler]:
        """The handler of each API."""
        return {key: route.handler for key, route in self._routes.items()}

    @property
    def traits(self) -> ApiTraits:
        """What a connection reads off the routes."""
        from coordinator.server.context import ApiTraits

        return ApiTraits(may_wait=self.keys_where("may_wait"), parks=self.keys_where("parks"),
                         pipelined=self.keys_where("pipelined"))

    @property
    def coordinator_routing(self) -> dict[int, Routing]:
        """The coordinator APIs (the routes with a ``routing``), by key: what is answered
        COORDINATOR_LOAD_IN_PROGRESS while the coordinator loads (``server/loading.py``)."""
        return {key: route.routing for key, route in self._routes.items()
                if route.routing is not None}

    @property
    def read_only_core_handlers(self) -> frozenset[Any]:
        """The group core's handlers that only read: the runtime runs them again when an
        append they were answered behind fails."""
        return frozenset(route.core_handler for route in self._routes.values()
                         if route.read_only and route.core_handler is not None)


def _load(package: str, name: str) -> Route:
    module = importlib.import_module(f"{package}.{name}")
    route: Route = module.ROUTE
    key = api_key_of(name)
    if route.api_key != key:
        raise ValueError(f"{name}.py routes {route.api_key.name}, not {key.name}")
    if route.consumer_protocol != name.startswith(CONSUMER_PROTOCOL_PREFIX):
        raise ValueError(f"{name}.py: consumer_protocol={route.consumer_protocol}, but "
                         f"the consumer-protocol APIs are the {CONSUMER_PROTOCOL_PREFIX}* "
                         "modules (the early listener reads it off the name)")
    return route


def load_routes(package: str = __name__) -> RouteTable:
    """Import every route module of ``package`` (this one's by default; blocking: the
    server runs it in a worker thread)."""
    if package == __name__:
        names = ROUTE_MODULE_NAMES
    else:
        folder = importlib.import_module(package).__file__
        assert folder is not None
        names = route_module_names(os.path.dirname(folder))
    return RouteTable(_load(package, name) for name in names)


def load_handlers(table: Mapping[int, Route] | None = None) -> dict[int, Handler]:
    """Every served API's handler (importing the route modules)."""
    routes = load_routes() if table is None else table
    return {key: route.handler for key, route in routes.items()}
