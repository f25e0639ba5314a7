"""KIP-368 details over real TCP (issue 29): a mechanism's own session lifetime
(``listener.name.<name>.<mechanism>.connections.max.reauth.ms``, Kafka's
SaslChannelBuilder), and what a client may send while (re-)authenticating, as Kafka's
SaslServerAuthenticator: before the handshake one ApiVersions and the SaslHandshake
(anything else closes the connection unanswered), after it only SaslAuthenticate (anything
else is answered ILLEGAL_SASL_STATE, then the connection closes)."""

from __future__ import annotations

from typing import Any

import pytest
import trio
from raw_client import RawClient

from coordinator.config import ConfigError
from coordinator.server.app import RunningServer, serve
from coordinator.server.options import build_options
from wire import ApiKey, ErrorCode

pytestmark = pytest.mark.trio

LISTENER = {"listeners": "SASL_PLAINTEXT://127.0.0.1:0"}
REAUTH = {**LISTENER, "connections.max.reauth.ms": "2000"}
VERSIONS = {"client_software_name": "t", "client_software_version": "1"}


async def _start(nursery: trio.Nursery, props: dict[str, str]) -> RunningServer:
    options = build_options(props, data_dir=None, sasl_users=(("alice", "alice-secret"),))
    running: RunningServer = await nursery.start(serve, options)
    return running


async def _handshake(client: RawClient) -> None:
    answer = await client.request(ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"})
    assert answer.error_code == ErrorCode.NONE


async def _login(client: RawClient) -> Any:
    await _handshake(client)
    return await client.request(ApiKey.SASL_AUTHENTICATE, 2,
                                {"auth_bytes": b"\0alice\0alice-secret"})


async def _closed(client: RawClient) -> bool:
    with trio.fail_after(5):
        return await client.closed_by_server()


@pytest.mark.parametrize(("props", "lifetime"), [
    pytest.param({**REAUTH, "listener.name.sasl_plaintext.plain.connections.max.reauth.ms":
                  "700"}, 700, id="the mechanism's own"),
    pytest.param({**LISTENER, "listener.name.sasl_plaintext.plain.connections.max.reauth.ms":
                  "700"}, 700, id="without the listener's"),
    pytest.param({**REAUTH, "listener.name.sasl_plaintext.scram-sha-256."
                  "connections.max.reauth.ms": "700"}, 2000, id="another mechanism's"),
])
async def test_a_mechanism_has_its_own_session_lifetime(
    nursery: trio.Nursery, connect: Any, props: dict[str, str], lifetime: int
) -> None:
    running = await _start(nursery, props)
    answer = await _login(await connect(running.port))
    assert (answer.error_code, answer.session_lifetime_ms) == (ErrorCode.NONE, lifetime)


async def test_the_mechanism_key_is_checked(nursery: trio.Nursery) -> None:
    with pytest.raises(ConfigError, match=r"plain\.connections\.max\.reauth\.ms='later'"):
        await _start(nursery, {
            **LISTENER, "listener.name.sasl_plaintext.plain.connections.max.reauth.ms": "later"})
    with pytest.raises(ConfigError, match="no listener named OTHER"):
        await _start(nursery, {
            **LISTENER, "listener.name.other.plain.connections.max.reauth.ms": "700"})


@pytest.mark.parametrize(("api_key", "version", "body"), [
    pytest.param(ApiKey.SASL_AUTHENTICATE, 2, {"auth_bytes": b"\0alice\0alice-secret"},
                 id="SaslAuthenticate"),
    pytest.param(ApiKey.METADATA, 12, {"topics": []}, id="Metadata"),
])
async def test_before_the_handshake_other_requests_close_unanswered(
    nursery: trio.Nursery, connect: Any, api_key: ApiKey, version: int, body: Any
) -> None:
    running = await _start(nursery, LISTENER)
    client = await connect(running.port)
    await client.send(api_key, version, body)
    assert await _closed(client)


async def test_one_api_versions_before_the_handshake(nursery: trio.Nursery,
                                                     connect: Any) -> None:
    running = await _start(nursery, LISTENER)
    client = await connect(running.port)
    assert (await client.request(ApiKey.API_VERSIONS, 3, VERSIONS)).error_code == 0
    await client.send(ApiKey.API_VERSIONS, 3, VERSIONS)  # Kafka: a second one is refused
    assert await _closed(client)


async def test_after_the_handshake_only_sasl_authenticate(nursery: trio.Nursery,
                                                          connect: Any) -> None:
    running = await _start(nursery, LISTENER)
    client = await connect(running.port)
    await _handshake(client)
    versions = await client.request(ApiKey.API_VERSIONS, 3, VERSIONS)
    assert versions.error_code == ErrorCode.ILLEGAL_SASL_STATE
    assert await _closed(client)


async def test_while_re_authenticating_only_sasl_authenticate(
    nursery: trio.Nursery, connect: Any, mock_clock: Any
) -> None:
    """A request in the middle of a re-authentication is answered ILLEGAL_SASL_STATE and
    the connection closes, though the session had not expired."""
    running = await _start(nursery, REAUTH)
    client = await connect(running.port)
    assert (await _login(client)).error_code == ErrorCode.NONE
    mock_clock.jump(1.0)
    await _handshake(client)  # starts the re-authentication
    versions = await client.request(ApiKey.API_VERSIONS, 3, VERSIONS)
    assert versions.error_code == ErrorCode.ILLEGAL_SASL_STATE
    assert await _closed(client)
