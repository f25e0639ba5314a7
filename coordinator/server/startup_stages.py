"""What ``app.serve`` loads at each startup stage, off the event loop where it blocks:
the broker surface's routes and the topic store (``load_broker_surface``), every other
route and the deferred modules (``import_deferred``), and the record sink the coordinator
writes to (``open_sink``: the log, or memory without a data directory).
"""

from __future__ import annotations

import importlib
import logging
import os
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from coordinator.server.apis import RouteTable, load_routes
from coordinator.server.options import ServeOptions
from coordinator.server.security_setup import authorizer_enabled

if TYPE_CHECKING:
    from coordinator.server.sink import RecordSink

__all__ = ["BROKER_SURFACE", "import_deferred", "load_broker_surface", "open_sink"]

log = logging.getLogger(__name__)

#: Imported in a worker thread once the broker surface is up (with the handlers).
_DEFERRED_MODULES = ("coordinator.server.sink", "storage.async_log")
#: The route modules answered as soon as the topic store is loaded, before the coordinator:
#: what a client needs first (Kafka answers them while its coordinators load).
BROKER_SURFACE = ("metadata", "find_coordinator", "describe_configs")


def load_broker_surface(options: ServeOptions, max_open_files: int) -> tuple[RouteTable, Any]:
    """The routes answered before the coordinator loads, and the topic store (blocking:
    imports and topic files; run in a worker thread)."""
    routes = RouteTable(importlib.import_module(f"coordinator.server.apis.{name}").ROUTE
                        for name in BROKER_SURFACE)
    return _authorized(routes, options), _topic_store(options, max_open_files)


def import_deferred(options: ServeOptions | None = None) -> RouteTable:
    routes = load_routes()
    for name in _DEFERRED_MODULES:
        importlib.import_module(name)
    return routes if options is None else _authorized(routes, options)


def _authorized(routes: RouteTable, options: ServeOptions) -> RouteTable:
    """With ``authorizer.class.name`` set, every handler behind its route's ACL checks
    (``authorization.py``); otherwise the routes as they are, at no cost per request."""
    if not authorizer_enabled(options.properties):
        return routes
    from coordinator.server.authorization import authorized_routes

    return authorized_routes(routes)


def _topic_store(options: ServeOptions, max_open_files: int) -> Any:
    from coordinator.broker.config import num_partitions, segment_bytes
    from coordinator.broker.topics import TopicStore

    store = TopicStore()
    if options.sink is None and options.data_dir is not None and options.topic_storage == "disk":
        from coordinator.broker.topic_files import TopicFiles

        files = TopicFiles(options.data_dir, options.fsync, options.recover,
                           segment_bytes(options.broker_config), max_open_files)
        restored = store.restore(files)
        log.info("topics loaded: %d topics, %d batches", len(store), restored)
    default_partitions = num_partitions(options.broker_config)
    for name, partitions in options.topics:
        store.ensure_topic(name, partitions or default_partitions)
    return store


@asynccontextmanager
async def open_sink(options: ServeOptions) -> AsyncIterator[RecordSink]:
    from coordinator.server.sink import MemorySink, open_log_sink

    if options.sink is not None:
        yield options.sink
        return
    if options.data_dir is None:
        yield MemorySink()
        return
    async with open_log_sink(options.data_dir, options.fsync, options.recover) as sink:
        _record_start(options.data_dir)
        yield sink


def _record_start(data_dir: str) -> None:
    """One line in ``DATA_DIR/starts.jsonl`` (``storage.starts``): the pipeline marks
    restarts from it."""
    from storage.starts import STARTS_FILE, record_start

    try:
        record_start(data_dir, int(time.time() * 1000), os.getpid())
    except OSError as exc:
        log.warning("cannot append to %s: %s", os.path.join(data_dir, STARTS_FILE),
                    exc.strerror or exc)
