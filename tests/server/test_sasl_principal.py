"""The principal a connection carries for later ACL checks (issue 29): ``User:`` + the SASL
authorization id once authenticated on a SASL listener, ``User:ANONYMOUS`` on PLAINTEXT."""

from __future__ import annotations

from typing import Any

import trio

from coordinator.server.app import RunningServer, serve
from coordinator.server.options import build_options
from wire import ApiKey


async def _principals(options: Any, connect: Any, authenticate: bool) -> list[str]:
    with trio.CancelScope() as run:
        async with trio.open_nursery() as inner:
            running: RunningServer = await inner.start(serve, options)
            client = await connect(running.port)
            if authenticate:
                handshake = await client.request(ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"})
                assert handshake.error_code == 0
                answer = await client.request(ApiKey.SASL_AUTHENTICATE, 2,
                                              {"auth_bytes": b"\0alice\0alice-secret"})
                assert answer.error_code == 0
            metadata = await client.request(ApiKey.METADATA, 12, {"topics": []})
            assert [b.port for b in metadata.brokers] == [running.port]
            principals = [conn.principal for conn in running.server.connections.values()]
            run.cancel()
    return principals


async def test_a_sasl_connection_carries_its_user(connect: Any) -> None:
    options = build_options({"listeners": "SASL_PLAINTEXT://127.0.0.1:0"}, data_dir=None,
                            sasl_users=(("alice", "alice-secret"),))
    assert await _principals(options, connect, authenticate=True) == ["User:alice"]


async def test_a_plaintext_connection_is_anonymous(connect: Any) -> None:
    options = build_options({}, host="127.0.0.1", port=0, data_dir=None)
    assert await _principals(options, connect, authenticate=False) == ["User:ANONYMOUS"]
