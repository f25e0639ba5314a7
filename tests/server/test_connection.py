"""The connection layer with raw frames: ordering, ApiVersions, bad input, idle timeout."""

from __future__ import annotations

import struct
from typing import Any

import pytest
import trio
from raw_client import (
    API_VERSIONS,
    DESCRIBE_GROUPS,
    HEARTBEAT,
    JOIN_GROUP,
    LIST_GROUPS,
    OFFSET_COMMIT,
    OFFSET_FETCH,
    join_body,
)

from coordinator.server.app import RunningServer
from wire import decode_response, encode_request
from wire.framing import frame

pytestmark = pytest.mark.trio


def _api_versions_body(version: int) -> dict[str, Any]:
    return {"client_software_name": "raw", "client_software_version": "1"} if version >= 3 else {}


def _commit_body(offset: int) -> dict[str, Any]:
    return {
        "group_id": "pipelined",
        "generation_id_or_member_epoch": -1,
        "member_id": "",
        "topics": [
            {"name": "t", "partitions": [{"partition_index": 3, "committed_offset": offset}]}
        ],
    }


def _fetch_body(version: int) -> dict[str, Any]:
    topics = [{"name": "t", "partition_indexes": [3]}]
    if version >= 8:
        return {"groups": [{"group_id": "pipelined", "topics": topics}]}
    return {"group_id": "pipelined", "topics": topics}


def _fetched_offset(version: int, body: Any) -> int:
    topics = body.groups[0].topics if version >= 8 else body.topics
    return int(topics[0].partitions[0].committed_offset)


async def test_pipelined_requests_are_answered_in_order(
    server: RunningServer, connect: Any
) -> None:
    # 20 requests of 7 APIs, sent in one write; correlation ids deliberately out of order,
    # 0 included. Each OffsetFetch must see exactly the commits pipelined before it.
    plan: list[tuple[int, int, int, Any]] = [
        (0, API_VERSIONS, 3, _api_versions_body(3)),
        (917, HEARTBEAT, 4, {"group_id": "nope", "generation_id": 1, "member_id": "m"}),
        (5, OFFSET_COMMIT, 8, _commit_body(10)),
        (4, OFFSET_FETCH, 8, _fetch_body(8)),
        (3, LIST_GROUPS, 5, {}),
        (2**31 - 1, DESCRIBE_GROUPS, 5, {"groups": ["pipelined"]}),
        (77, OFFSET_COMMIT, 2, _commit_body(11)),
        (76, OFFSET_FETCH, 1, _fetch_body(1)),
        (1, API_VERSIONS, 0, {}),
        (12, JOIN_GROUP, 7, join_body("joiner")),
        (-5, HEARTBEAT, 0, {"group_id": "nope", "generation_id": 1, "member_id": "m"}),
        (13, OFFSET_COMMIT, 5, _commit_body(12)),
        (14, OFFSET_FETCH, 5, _fetch_body(5)),
        (15, LIST_GROUPS, 0, {}),
        (16, API_VERSIONS, 4, _api_versions_body(4)),
        (17, OFFSET_COMMIT, 9, _commit_body(13)),
        (18, OFFSET_FETCH, 9, _fetch_body(9)),
        (19, DESCRIBE_GROUPS, 0, {"groups": ["pipelined", "joiner"]}),
        (20, OFFSET_FETCH, 3, _fetch_body(3)),
        (21, HEARTBEAT, 2, {"group_id": "nope", "generation_id": 1, "member_id": "m"}),
    ]
    assert len(plan) == 20
    client = await connect(server.port)
    blob = b"".join(encode_request(k, v, c, "pipeliner", b) for c, k, v, b in plan)
    await client.stream.send_all(blob)
    expected_offset = None
    for corr, key, version, _ in plan:
        payload = await client.recv_frame()
        assert payload is not None
        got, body = decode_response(key, version, payload)
        assert got == corr
        if key == OFFSET_COMMIT:
            expected_offset = 10 + [5, 77, 13, 17].index(corr)
            assert body.topics[0].partitions[0].error_code == 0
        elif key == OFFSET_FETCH:
            assert _fetched_offset(version, body) == expected_offset
        elif key == HEARTBEAT:
            assert body.error_code == 25  # UNKNOWN_MEMBER_ID: the group does not exist
        elif key == JOIN_GROUP:
            assert body.error_code == 79  # MEMBER_ID_REQUIRED
        elif key == API_VERSIONS:
            assert body.error_code == 0
    await client.aclose()


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4])
async def test_api_versions_every_version(
    server: RunningServer, version: int, connect: Any
) -> None:
    client = await connect(server.port)
    body = await client.request(API_VERSIONS, version, _api_versions_body(version))
    assert body.error_code == 0
    keys = {k.api_key: (k.min_version, k.max_version) for k in body.api_keys}
    assert keys[API_VERSIONS] == (0, 4)
    for key in (8, 9, 11, 12, 13, 14, 15, 16, 42):
        assert key in keys


async def test_api_versions_unsupported_version_gets_v0_error_body(
    server: RunningServer, connect: Any
) -> None:
    client = await connect(server.port)
    request = encode_request(API_VERSIONS, 4, 42, "future", _api_versions_body(4))
    # Rewrite the version to 99: the server cannot know the body layout of v99.
    request = request[:6] + struct.pack(">h", 99) + request[8:]
    await client.stream.send_all(request)
    payload = await client.recv_frame()
    assert payload is not None
    corr, body = decode_response(API_VERSIONS, 0, payload)  # a v0 body, header v0
    assert corr == 42
    assert body.error_code == 35
    assert [(k.api_key, k.min_version, k.max_version) for k in body.api_keys] == [(18, 0, 4)]
    # The client retries at a version it can use, on the same connection.
    body = await client.request(API_VERSIONS, 3, _api_versions_body(3))
    assert body.error_code == 0


async def test_first_request_need_not_be_api_versions(server: RunningServer, connect: Any) -> None:
    client = await connect(server.port)
    corr = await client.send(LIST_GROUPS, 4, {"states_filter": []}, corr=0)
    got, body = await client.recv(LIST_GROUPS, 4)
    assert (got, body.error_code) == (corr, 0)


def _garbage() -> bytes:
    return frame(b"\x00\x0c\x00\x04\x00\x00\x00\x07\xff\xff\xff\xff\xff")  # truncated body


def _oversized() -> bytes:
    return struct.pack(">i", 2**31 - 1) + b"\x00" * 16


def _negative_size() -> bytes:
    return struct.pack(">i", -1)


def _unknown_key() -> bytes:
    return frame(struct.pack(">hhih", 999, 0, 3, -1))


def _unsupported_version() -> bytes:
    data = encode_request(
        HEARTBEAT, 4, 9, "x", {"group_id": "g", "generation_id": 1, "member_id": "m"}
    )
    return data[:6] + struct.pack(">h", 77) + data[8:]


def _too_short() -> bytes:
    return frame(b"\x00\x12")


@pytest.mark.parametrize(
    "bad",
    [_garbage, _oversized, _negative_size, _unknown_key, _unsupported_version, _too_short],
    ids=["garbage", "oversized", "negative-size", "unknown-key", "unsupported-version", "short"],
)
async def test_bad_frames_close_only_their_connection(
    server: RunningServer, bad: Any, connect: Any
) -> None:
    bystander = await connect(server.port)
    assert (await bystander.request(LIST_GROUPS, 0, {})).error_code == 0
    offender = await connect(server.port)
    # A good request first: answered; then the bad frame closes the connection.
    corr = await offender.send(LIST_GROUPS, 0, {})
    await offender.stream.send_all(bad())
    got, _ = await offender.recv(LIST_GROUPS, 0)
    assert got == corr
    with trio.fail_after(5):
        assert await offender.closed_by_server()
    # The server still serves the other connection and new ones.
    assert (await bystander.request(LIST_GROUPS, 0, {})).error_code == 0
    fresh = await connect(server.port)
    assert (await fresh.request(API_VERSIONS, 0, {})).error_code == 0


async def test_socket_request_max_bytes_is_configurable(start_server: Any, connect: Any) -> None:
    running = await start_server({"socket.request.max.bytes": "100"})
    client = await connect(running.port)
    assert (await client.request(LIST_GROUPS, 0, {})).error_code == 0
    await client.stream.send_all(struct.pack(">i", 101))
    with trio.fail_after(5):
        assert await client.closed_by_server()


async def test_client_disconnect_mid_response_does_not_hurt_the_server(
    server: RunningServer, connect: Any
) -> None:
    for _ in range(20):
        client = await connect(server.port)
        await client.send(API_VERSIONS, 3, _api_versions_body(3))
        await client.aclose()
    client = await connect(server.port)
    assert (await client.request(API_VERSIONS, 3, _api_versions_body(3))).error_code == 0


async def test_idle_connections_are_closed(
    start_server: Any, autojump_clock: Any, connect: Any
) -> None:
    running = await start_server({"connections.max.idle.ms": "5000"})
    client = await connect(running.port)
    assert (await client.request(LIST_GROUPS, 0, {})).error_code == 0
    start = trio.current_time()
    with trio.fail_after(60):
        assert await client.closed_by_server()
    assert 5.0 <= trio.current_time() - start < 6.0
    # Activity resets the idle timer.
    client = await connect(running.port)
    for _ in range(5):
        await trio.sleep(4)
        assert (await client.request(LIST_GROUPS, 0, {})).error_code == 0


async def test_bad_input_warnings_are_rate_limited(
    server: Any, connect: Any, caplog: Any, monkeypatch: Any
) -> None:
    """Issue 15 item 14: a burst of bad frames logs at most ``burst`` warnings a window and
    counts the rest (a fuzzing client would otherwise fill stderr)."""
    import logging

    from coordinator.server import connection
    from coordinator.server.bad_input import BadInputLog

    limiter = BadInputLog(burst=3, window_s=3600)
    monkeypatch.setattr(connection, "BAD_INPUT", limiter)
    caplog.set_level(logging.WARNING, logger="coordinator.server.connection")
    for _ in range(12):
        client = await connect(server.port)
        await client.stream.send_all(b"\x00\x00\x00\x04\xff\xff\xff\xff")  # a corrupt header
        assert await client.closed_by_server()
    closing = [r for r in caplog.records if "closing connection" in r.getMessage()]
    assert len(closing) == 3
    assert (limiter.total, limiter.suppressed) == (12, 9)
    healthy = await connect(server.port)
    answer = await healthy.request(18, 3, {"client_software_name": "t",
                                          "client_software_version": "1"})
    assert answer.error_code == 0


async def test_max_connections_closes_the_ones_beyond(start_server: Any, connect: Any) -> None:
    """Issue 15 item 13: ``max.connections`` (Kafka's name) bounds open connections; one
    beyond it is closed at once and the others keep working."""
    server = await start_server({"max.connections": "2"})
    first, second = await connect(server.port), await connect(server.port)
    for client in (first, second):
        answer = await client.request(18, 3, {"client_software_name": "t",
                                             "client_software_version": "1"})
        assert answer.error_code == 0
    third = await connect(server.port)
    assert await third.closed_by_server()
    assert server.server.refused_connections == 1
    answer = await first.request(18, 3, {"client_software_name": "t",
                                        "client_software_version": "1"})
    assert answer.error_code == 0


async def test_failed_accepts_are_reported_once_a_window() -> None:
    """Issue 15 item 13: out of file descriptors, trio logs every failed accept with a
    traceback every 0.1 s; one line a window, with the count, goes through instead."""
    import logging

    from coordinator.server.app import _AcceptErrorFilter

    accept_filter = _AcceptErrorFilter(window_s=3600)
    records = []
    for _ in range(50):
        record = logging.LogRecord("trio.serve_listeners", logging.ERROR, __file__, 1,
                                   "accept returned %s (%s); retrying in %s seconds",
                                   ("EMFILE", "Too many open files", 0.1),
                                   (OSError, OSError(24, "Too many open files"), None))
        if accept_filter.filter(record):
            records.append(record)
    assert len(records) == 1
    assert records[0].exc_info is None
    assert records[0].getMessage().startswith("accept returned EMFILE (Too many open files)")
    assert accept_filter.since == 49
