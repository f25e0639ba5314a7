"""In-process kcoord servers on 127.0.0.1:0 for the server tests (pytest-trio)."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

import pytest
import trio

from coordinator.server.app import RunningServer, serve
from coordinator.server.options import build_options

StartServer = Callable[..., Coroutine[Any, Any, RunningServer]]


@pytest.fixture
def start_server(nursery: trio.Nursery) -> StartServer:
    """Start a server in the test's nursery: ``await start_server(props, **options)``."""

    async def start(props: dict[str, str] | None = None, **kwargs: Any) -> RunningServer:
        properties = {"group.initial.rebalance.delay.ms": "0", **(props or {})}
        kwargs.setdefault("topics", (("t", 12),))
        kwargs.setdefault("data_dir", None)  # (in memory unless a test gives one)
        options = build_options(properties, host="127.0.0.1", port=0, **kwargs)
        running: RunningServer = await nursery.start(serve, options)
        return running

    return start


@pytest.fixture
async def server(start_server: StartServer) -> RunningServer:
    """A server with default settings and a 12-partition topic ``t``."""
    return await start_server()


@pytest.fixture
async def connect() -> Any:
    """``await connect(port)``: a RawClient closed at teardown."""
    from raw_client import RawClient

    clients: list[RawClient] = []

    async def open_client(port: int) -> RawClient:
        client = await RawClient.connect(port)
        clients.append(client)
        return client

    yield open_client
    for client in clients:
        await trio.aclose_forcefully(client.stream)
