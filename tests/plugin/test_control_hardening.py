"""Issue 32 items 7, 8 and 11 over real HTTP: numbers and nesting are validated before use
(a 401-digit integer, a 20,000-deep array, NaN), every state-changing route needs the JSON
content type and a loopback Origin, error names work as codes, and ``POST /reset`` removes
empty KIP-848 groups too."""

from __future__ import annotations

import contextlib
import json
import math
import socket
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
import trio
import trio.testing
from test_control_http import RawClient, call, start

from coordinator.server.app import RunningServer
from coordinator.server.faults import FaultInjector
from coordinator.testing.double import MAX_ADVANCE_SECONDS, advance_seconds

CONSUMER_GROUP_HEARTBEAT = 68


def raw_http(port: int, method: str, path: str, headers: dict[str, str],
             body: bytes = b"") -> tuple[int, Any]:
    """One request with exactly these headers (no client adds any); status and JSON."""
    head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
    head += "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    if body:
        head += f"Content-Length: {len(body)}\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head.encode() + b"\r\n" + body)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    status_line, _, rest = data.partition(b"\r\n")
    return int(status_line.split()[1]), json.loads(rest.partition(b"\r\n\r\n")[2])


async def send(port: int, method: str, path: str, headers: dict[str, str],
               body: bytes = b"") -> tuple[int, Any]:
    return await trio.to_thread.run_sync(raw_http, port, method, path, headers, body)


JSON = {"Content-Type": "application/json"}


@contextlib.asynccontextmanager
async def control_server(
    mock_clock: trio.testing.MockClock,
) -> AsyncIterator[tuple[RunningServer, int, FaultInjector]]:
    """A server and its control API on port 0, clock following real time: (the running
    server, the control port, its faults), all stopped on exit (within 60 s)."""
    mock_clock.rate = 1.0
    faults = FaultInjector()
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            running, port = await start(nursery, faults)
            yield running, port, faults
            nursery.cancel_scope.cancel()


async def test_huge_numbers_and_deep_nesting_are_400_and_the_server_lives(
    mock_clock: trio.testing.MockClock,
) -> None:
    async with control_server(mock_clock) as (_, port, _faults):
        bodies = [
            ("/time/advance", b'{"seconds": ' + b"9" * 401 + b"}"),  # killed the server
            ("/time/advance", b'{"seconds": ' + b"9" * 5000 + b"}"),  # past int's 4300
            ("/time/advance", b'{"seconds": NaN}'),
            ("/time/advance", b'{"seconds": -Infinity}'),
            ("/time/advance", b'{"seconds": 1e400}'),
            ("/faults", b"[" * 20_000 + b"]" * 20_000),  # killed the server
            ("/faults", b'{"api_key": 8, "error_code": 27, "count": ' + b"9" * 30 + b"}"),
        ]
        for path, body in bodies:
            status, answer = await send(port, "POST", path, JSON, body)
            assert status == 400, (path, body[:40], answer)
            assert "error" in answer
        status, _ = await call(port, "POST", "/time/advance", {"seconds": 1})
        assert status == 200  # still serving


async def test_state_changing_routes_need_json_and_a_loopback_origin(
    mock_clock: trio.testing.MockClock,
) -> None:
    """A body-less cross-site POST reached /reset and /brokers/1/stop: now 415, and a
    foreign Origin is 403; GET needs neither."""
    async with control_server(mock_clock) as (_, port, faults):
        status, _ = await call(port, "POST", "/faults", {"api_key": 8, "error_code": 27})
        assert status == 201
        for method, path in [("POST", "/reset"), ("POST", "/brokers/1/stop"),
                             ("DELETE", "/faults"), ("DELETE", "/faults/1"),
                             ("POST", "/brokers/preferred-leaders")]:
            for headers in ({}, {"Content-Type": "text/plain"}):
                status, answer = await send(port, method, path, headers)
                assert status == 415, (method, path, headers, answer)
            status, _ = await send(port, method, path,
                                   {**JSON, "Origin": "http://evil.example"})
            assert status == 403, (method, path)
        for origin in ("null", "http://127.0.0.1.evil.example", "file://"):
            status, _ = await send(port, "POST", "/reset", {**JSON, "Origin": origin})
            assert status == 403, origin
        assert len(faults.active()) == 1  # nothing above reached a route
        status, _ = await send(port, "GET", "/faults", {})
        assert status == 200
        status, _ = await send(port, "GET", "/faults", {"Origin": "http://evil.example"})
        assert status == 403
        status, answer = await send(port, "POST", "/reset",
                                    {**JSON, "Origin": f"http://localhost:{port}"})
        assert status == 200 and answer["faults"] == "cleared"


async def test_faults_take_error_names_and_answers_write_null(
    mock_clock: trio.testing.MockClock,
) -> None:
    async with control_server(mock_clock) as (_, port, _faults):
        status, fault = await call(port, "POST", "/faults",
                                   {"api_key": "OffsetCommit",
                                    "error_code": "NOT_COORDINATOR"})
        assert status == 201 and fault["error_code"] == 16
        assert fault["drop"] is None and fault["group_id"] is None  # JSON null
        status, answer = await call(port, "POST", "/faults",
                                    {"api_key": 8, "error_code": "NO_SUCH_ERROR"})
        assert status == 400 and "NO_SUCH_ERROR" in answer["error"]
        status, answer = await call(port, "POST", "/faults",
                                    {"api_key": 8, "error_code": 27, "drop": "sometimes"})
        assert status == 400 and "None" not in answer["error"].replace("(None)", "")


async def test_reset_removes_empty_kip848_groups(mock_clock: trio.testing.MockClock) -> None:
    async with control_server(mock_clock) as (running, port, _faults):
        running.server.topics.ensure_topic("t", 1)
        client = RawClient(await trio.open_tcp_stream("127.0.0.1", running.port))
        member = str(uuid.uuid4())
        base = {"group_id": "kip848", "member_id": member, "instance_id": None,
                "rack_id": None, "server_assignor": None, "subscribed_topic_regex": None}
        joined = await client.request(CONSUMER_GROUP_HEARTBEAT, 1, {
            **base, "member_epoch": 0, "rebalance_timeout_ms": 5000,
            "subscribed_topic_names": ["t"], "topic_partitions": []})
        assert joined.error_code == 0
        left = await client.request(CONSUMER_GROUP_HEARTBEAT, 1, {
            **base, "member_epoch": -1, "rebalance_timeout_ms": -1,
            "subscribed_topic_names": None, "topic_partitions": None})
        assert left.error_code == 0
        status, groups = await call(port, "GET", "/groups")
        assert [(g["group_id"], g["members"]) for g in groups] == [("kip848", 0)]
        status, answer = await call(port, "POST", "/reset")
        assert status == 200 and answer["deleted_groups"] == ["kip848"]
        status, groups = await call(port, "GET", "/groups")
        assert groups == []
        await client.stream.aclose()


@pytest.mark.parametrize("seconds", [1e308, math.nan, math.inf, -math.inf, 10**400, True,
                                     "5", -1, MAX_ADVANCE_SECONDS + 1])
def test_advance_refuses_what_would_kill_or_hang_the_clock(seconds: object) -> None:
    """``kcoord.advance(1e308)`` killed the in-process server, ``advance(nan)`` hung."""
    with pytest.raises(ValueError):
        advance_seconds(seconds)
    assert advance_seconds(MAX_ADVANCE_SECONDS) == MAX_ADVANCE_SECONDS
    assert advance_seconds(0) == 0.0


async def test_odd_digits_in_paths_and_headers_never_stop_the_server(
    mock_clock: trio.testing.MockClock,
) -> None:
    """``str.isdigit`` takes "²" (latin-1 0xB2), which ``int`` refuses: ``DELETE /faults/²``
    stopped the server. Nor may 5,000 digits (past int's 4,300-digit limit)."""
    async with control_server(mock_clock) as (_, port, _faults):
        requests = [
            b"DELETE /faults/\xb2 HTTP/1.1\r\nContent-Type: application/json\r\n\r\n",
            b"DELETE /faults/" + b"9" * 5000
            + b" HTTP/1.1\r\nContent-Type: application/json\r\n\r\n",
            b"POST /brokers/\xb2/stop HTTP/1.1\r\nContent-Type: application/json\r\n\r\n",
            b"POST /reset HTTP/1.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: \xb2\r\n\r\n",
            b"POST /reset HTTP/1.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: " + b"9" * 5000 + b"\r\n\r\n",
        ]
        for raw in requests:
            def exchange(raw: bytes = raw) -> bytes:
                with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
                    sock.sendall(raw)
                    data = b""
                    while chunk := sock.recv(65536):
                        data += chunk
                    return data

            answer = await trio.to_thread.run_sync(exchange)
            assert answer.split(b" ")[1] in (b"400", b"404", b"409"), (raw[:40], answer)
        status, _ = await call(port, "GET", "/faults")
        assert status == 200  # still serving
