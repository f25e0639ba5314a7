"""Re-authentication (KIP-368) on a SASL listener, over real TCP against a server in process,
on a MockClock that moves only when the test jumps it: ``connections.max.reauth.ms`` puts
the session lifetime in the SaslAuthenticate answer (v1+); a connection past it that sends
anything but a re-authentication is closed (at the expiry itself it is still served, as
Kafka's ``nowNanos - expiry > 0``); a SaslHandshake re-authenticates and renews the session,
at most once a second; the principal and the mechanism may not change."""

from __future__ import annotations

import base64
import json
import time
from typing import Any

import pytest
import trio
import trio.testing
from raw_client import RawClient

from coordinator.config import ConfigError
from coordinator.server.app import RunningServer, serve
from coordinator.server.options import build_options
from coordinator.server.sasl_gate import SaslSession
from wire import ApiKey, ErrorCode

pytestmark = pytest.mark.trio

USERS = (("alice", "alice-secret"), ("bob", "bob-secret"))
REAUTH = {"listeners": "SASL_PLAINTEXT://127.0.0.1:0", "connections.max.reauth.ms": "2000"}


async def _start(nursery: trio.Nursery, props: dict[str, str]) -> RunningServer:
    options = build_options(props, data_dir=None, sasl_users=USERS)
    running: RunningServer = await nursery.start(serve, options)
    return running


def _plain(user: str) -> bytes:
    return f"\0{user}\0{user}-secret".encode()


async def _login(client: RawClient, user: str = "alice", mechanism: str = "PLAIN",
                 version: int = 2) -> Any:
    handshake = await client.request(ApiKey.SASL_HANDSHAKE, 1, {"mechanism": mechanism})
    assert handshake.error_code == ErrorCode.NONE
    return await client.request(ApiKey.SASL_AUTHENTICATE, version, {"auth_bytes": _plain(user)})


async def _served(client: RawClient) -> bool:
    """Whether a Metadata request is answered (False: the server closed the connection)."""
    await client.send(ApiKey.METADATA, 12, {"topics": []})
    return await client.recv_frame() is not None


async def _logged_in(nursery: trio.Nursery, connect: Any, props: dict[str, str] = REAUTH,
                     version: int = 2) -> tuple[RunningServer, RawClient, Any]:
    """A server with ``props``, a client of it logged in as alice, and the login's answer."""
    running = await _start(nursery, props)
    client = await connect(running.port)
    return running, client, await _login(client, version=version)


def _session(running: RunningServer) -> SaslSession:
    (conn,) = running.server.connections.values()
    assert isinstance(conn.session, SaslSession)
    return conn.session


async def test_the_answer_carries_the_session_lifetime(nursery: trio.Nursery, connect: Any,
                                                        mock_clock: Any) -> None:
    running = await _start(nursery, REAUTH)
    for version in (1, 2):
        answer = await _login(await connect(running.port), version=version)
        assert (answer.error_code, answer.session_lifetime_ms) == (ErrorCode.NONE, 2000)


async def test_without_the_key_sessions_never_expire(nursery: trio.Nursery, connect: Any,
                                                     mock_clock: Any) -> None:
    _, client, answer = await _logged_in(nursery, connect,
                                         {"listeners": "SASL_PLAINTEXT://127.0.0.1:0"})
    assert answer.session_lifetime_ms == 0
    mock_clock.jump(500)  # (less than connections.max.idle.ms)
    assert await _served(client)
    # Nothing to re-authenticate: a handshake is answered as Kafka's KafkaApis does.
    handshake = await client.request(ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"})
    assert handshake.error_code == ErrorCode.ILLEGAL_SASL_STATE
    assert await _served(client)


async def test_past_its_expiry_a_request_closes_the_connection(nursery: trio.Nursery, connect: Any,
                                                                mock_clock: Any) -> None:
    _, client, _ = await _logged_in(nursery, connect)
    mock_clock.jump(2.0)
    assert await _served(client)  # at the expiry: still served
    mock_clock.jump(0.001)
    assert not await _served(client)


async def test_a_client_that_does_not_re_authenticate_is_closed_even_on_v0(
    nursery: trio.Nursery, connect: Any, mock_clock: Any
) -> None:
    """SaslAuthenticate v0 has no lifetime field: the session expires all the same."""
    _, client, answer = await _logged_in(nursery, connect, version=0)
    assert answer.error_code == ErrorCode.NONE
    mock_clock.jump(2.5)
    assert not await _served(client)


async def test_re_authentication_renews_the_session(nursery: trio.Nursery, connect: Any,
                                                    mock_clock: Any) -> None:
    running, client, _ = await _logged_in(nursery, connect)
    mock_clock.jump(1.5)
    answer = await _login(client)
    assert (answer.error_code, answer.session_lifetime_ms) == (ErrorCode.NONE, 2000)
    mock_clock.jump(1.5)  # past the first session's end, within the second's
    assert await _served(client)
    assert _session(running).reauthentications == 1
    (conn,) = running.server.connections.values()
    assert conn.principal == "User:alice"


async def test_an_expired_session_may_still_re_authenticate(nursery: trio.Nursery, connect: Any,
                                                            mock_clock: Any) -> None:
    """Kafka looks for a re-authentication before it checks the expiry."""
    _, client, _ = await _logged_in(nursery, connect)
    mock_clock.jump(10)
    assert (await _login(client)).error_code == ErrorCode.NONE
    assert await _served(client)


async def test_re_authentication_starts_at_most_once_a_second(nursery: trio.Nursery, connect: Any,
                                                              mock_clock: Any) -> None:
    running, client, _ = await _logged_in(nursery, connect)
    assert (await _login(client)).error_code == ErrorCode.NONE  # the first: at once
    mock_clock.jump(0.999)
    handshake = await client.request(ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"})
    assert handshake.error_code == ErrorCode.ILLEGAL_SASL_STATE
    assert await _served(client)  # answered as on any authenticated connection
    mock_clock.jump(0.001)
    assert (await _login(client)).error_code == ErrorCode.NONE
    assert _session(running).reauthentications == 2


async def _refused(client: RawClient, mock_clock: Any) -> bool:
    """The connection closes after a failed login (Kafka's delayed close)."""
    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_jump_until_cancelled, mock_clock)
            closed = await client.closed_by_server()
            nursery.cancel_scope.cancel()
    return closed


async def _jump_until_cancelled(mock_clock: Any) -> None:
    while True:
        await trio.testing.wait_all_tasks_blocked()
        mock_clock.jump(0.05)
        await trio.sleep(0)


@pytest.mark.parametrize(("mechanism", "auth_bytes", "message"), [
    pytest.param("PLAIN", _plain("bob"), "Cannot change principals during re-authentication "
                 "from User.alice: User.bob", id="another principal"),
    # Kafka answers the handshake, then fails the SaslAuthenticate that follows.
    pytest.param("SCRAM-SHA-256", b"n,,n=alice,r=abcdefgh", "SASL mechanism 'SCRAM-SHA-256' "
                 "requested by client is not supported for re-authentication of mechanism "
                 "'PLAIN'", id="another mechanism"),
    pytest.param("PLAIN", b"\0alice\0wrong",
                 "Authentication failed: Invalid username or password", id="wrong password"),
])
async def test_a_refused_re_authentication_answers_58_then_closes(
    nursery: trio.Nursery, connect: Any, mock_clock: Any, mechanism: str, auth_bytes: bytes,
    message: str,
) -> None:
    _, client, _ = await _logged_in(nursery, connect)
    handshake = await client.request(ApiKey.SASL_HANDSHAKE, 1, {"mechanism": mechanism})
    assert handshake.error_code == ErrorCode.NONE
    answer = await client.request(ApiKey.SASL_AUTHENTICATE, 2, {"auth_bytes": auth_bytes})
    assert (answer.error_code, answer.error_message) == (
        ErrorCode.SASL_AUTHENTICATION_FAILED, message)
    assert await _refused(client, mock_clock)


def _unsecured_token(subject: str, lifetime_s: int) -> bytes:
    """An OAUTHBEARER client first message with an ``alg: none`` token."""
    def part(obj: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()
    now = int(time.time())  # (whole seconds: the lifetime is then at most lifetime_s)
    claims = {"sub": subject, "iat": now - 10, "exp": now + lifetime_s}
    token = f"{part({'alg': 'none'})}.{part(claims)}."
    return f"n,,\x01auth=Bearer {token}\x01\x01".encode()


async def test_an_oauthbearer_session_ends_with_its_token(nursery: trio.Nursery, connect: Any,
                                                          mock_clock: Any) -> None:
    """The lifetime is the shorter of the key and the token's remaining life."""
    running = await _start(nursery, {**REAUTH, "connections.max.reauth.ms": "600000"})
    client = await connect(running.port)
    await client.request(ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "OAUTHBEARER"})
    answer = await client.request(ApiKey.SASL_AUTHENTICATE, 2,
                                  {"auth_bytes": _unsecured_token("carol", 30)})
    assert answer.error_code == ErrorCode.NONE, answer.error_message
    assert 25_000 < answer.session_lifetime_ms <= 30_000
    mock_clock.jump(answer.session_lifetime_ms / 1000 + 0.001)
    assert not await _served(client)


async def test_the_listener_prefixed_key_wins(nursery: trio.Nursery, connect: Any,
                                              mock_clock: Any) -> None:
    running = await _start(nursery, {
        **REAUTH, "listener.name.sasl_plaintext.connections.max.reauth.ms": "5000"})
    answer = await _login(await connect(running.port))
    assert answer.session_lifetime_ms == 5000


async def test_a_bad_value_is_a_configuration_error(nursery: trio.Nursery) -> None:
    with pytest.raises(ConfigError, match=r"connections\.max\.reauth\.ms='soon'"):
        await _start(nursery, {**REAUTH, "connections.max.reauth.ms": "soon"})


async def test_a_clock_jump_of_the_test_double_moves_the_session_too(
    nursery: trio.Nursery, connect: Any, mock_clock: Any
) -> None:
    """``advance()`` jumps the Trio clock without real time passing: ``Connection.shift``
    moves the session's expiry and re-authentication stamp with it."""
    running, client, _ = await _logged_in(nursery, connect)
    await _login(client)
    session = _session(running)
    expires_at, started_at = session.expires_at, session.reauth_started_at
    assert started_at is not None
    (conn,) = running.server.connections.values()
    conn.shift(30.0)
    assert (session.expires_at, session.reauth_started_at) == (expires_at + 30, started_at + 30)
