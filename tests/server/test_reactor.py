"""The ready reactor (``coordinator/server/reactor.py``): idle connections answered inline,
handed back to their task in request order, with their buffered bytes."""

from __future__ import annotations

import itertools
import resource
import socket
from collections.abc import Callable
from typing import Any

import pytest
import trio
import trio.testing
from raw_client import HEARTBEAT, JOIN_GROUP, OFFSET_COMMIT, OFFSET_FETCH, join_body

from coordinator.server.app import RunningServer
from coordinator.server.reactor import Handback, Reactor, _unread_bytes, current_reactor
from wire import decode_response, encode_request

pytestmark = pytest.mark.trio


def _commit(group: str, offset: int) -> dict[str, Any]:
    return {
        "group_id": group,
        "generation_id_or_member_epoch": -1,
        "member_id": "",
        "topics": [{"name": "t", "partitions": [{"partition_index": 0,
                                                  "committed_offset": offset}]}],
    }


def _fetch(group: str) -> dict[str, Any]:
    return {"groups": [{"group_id": group, "topics": [{"name": "t", "partition_indexes": [0]}]}]}


def _plan(group: str) -> list[tuple[int, int, int, Any]]:
    """Commits answered inline, interleaved with requests the task answers (OffsetFetch,
    a JoinGroup that needs a member id); each OffsetFetch sees the commits before it."""
    return [
        (1, OFFSET_COMMIT, 8, _commit(group, 100)),
        (2, OFFSET_COMMIT, 8, _commit(group, 101)),
        (3, OFFSET_FETCH, 8, _fetch(group)),
        (4, OFFSET_COMMIT, 8, _commit(group, 102)),
        (5, HEARTBEAT, 4, {"group_id": group, "generation_id": 1, "member_id": "m"}),
        (6, JOIN_GROUP, 7, join_body(group + "-join")),
        (7, OFFSET_COMMIT, 8, _commit(group, 103)),
        (8, OFFSET_FETCH, 8, _fetch(group)),
    ]


async def _check_answers(client: Any, plan: list[tuple[int, int, int, Any]]) -> None:
    offset = None
    for corr, key, version, body in plan:
        with trio.fail_after(5):
            payload = await client.recv_frame()
        assert payload is not None
        got, answer = decode_response(key, version, payload)
        assert got == corr
        if key == OFFSET_COMMIT:
            assert answer.topics[0].partitions[0].error_code == 0
            offset = body["topics"][0]["partitions"][0]["committed_offset"]
        elif key == OFFSET_FETCH:
            assert answer.groups[0].topics[0].partitions[0].committed_offset == offset
        elif key == HEARTBEAT:
            assert answer.error_code == 25  # UNKNOWN_MEMBER_ID
        elif key == JOIN_GROUP:
            assert answer.error_code == 79  # MEMBER_ID_REQUIRED


async def test_many_connections_served_in_one_turn_keep_their_order(
    server: RunningServer, connect: Any
) -> None:
    clients = [await connect(server.port) for _ in range(8)]
    reactor = current_reactor()
    assert reactor is not None
    served_before = reactor.served
    plans = [_plan(f"turn-{i}") for i in range(len(clients))]
    # Every connection's requests go out before any is read: the reactor finds them
    # ready together.
    for client, plan in zip(clients, plans, strict=True):
        await client.stream.send_all(
            b"".join(encode_request(k, v, c, "reactor", b) for c, k, v, b in plan))
    for client, plan in zip(clients, plans, strict=True):
        await _check_answers(client, plan)
    assert reactor.served > served_before  # the connections were served by the reactor
    # And again, now that each connection went back and forth between reactor and task.
    for round_ in range(3):
        for i, client in enumerate(clients):
            await client.stream.send_all(encode_request(
                OFFSET_COMMIT, 8, 100 + round_, "reactor", _commit(f"turn-{i}", 200 + round_)))
        for client in clients:
            with trio.fail_after(5):
                payload = await client.recv_frame()
            assert payload is not None
            got, answer = decode_response(OFFSET_COMMIT, 8, payload)
            assert got == 100 + round_ and answer.topics[0].partitions[0].error_code == 0


async def test_frames_split_across_reads_keep_their_bytes(
    server: RunningServer, connect: Any
) -> None:
    client = await connect(server.port)
    plan = _plan("split")
    blob = b"".join(encode_request(k, v, c, "reactor", b) for c, k, v, b in plan)
    # Cut inside every frame and inside size prefixes: the reactor reads what is whole,
    # hands the unfinished rest to the task, which takes the connection back to the
    # reactor once idle again.
    cuts = [0, 3, 50, 51, 130, 200, len(blob) - 7, len(blob)]
    for start, end in itertools.pairwise(cuts):
        await client.stream.send_all(blob[start:end])
        await trio.sleep(0.01)
    await _check_answers(client, plan)


async def test_a_client_leaving_while_parked_in_the_reactor_is_closed(
    server: RunningServer, connect: Any
) -> None:
    client = await connect(server.port)
    await client.stream.send_all(encode_request(OFFSET_COMMIT, 8, 1, "r", _commit("gone", 1)))
    with trio.fail_after(5):
        assert await client.recv_frame() is not None
    assert len(server.server.connections) == 1
    await client.aclose()
    with trio.fail_after(5):
        while server.server.connections:
            await trio.sleep(0.01)


async def test_unread_bytes_counts_what_the_peer_sent_and_not_more() -> None:
    left, right = socket.socketpair()
    with left, right:
        left.setblocking(False)
        assert _unread_bytes(left) == 0
        right.sendall(b"12345")
        assert _unread_bytes(left) == 5
        assert left.recv(2) == b"12"
        assert _unread_bytes(left) == 3
        assert left.recv(3) == b"345"
        right.close()
        assert _unread_bytes(left) == 0  # the end of the stream: epoll reports it
        assert left.recv(1) == b""
    # A closed socket: the read that follows reports the error.
    assert _unread_bytes(left) == 1


async def test_a_burst_beyond_one_poll_is_served_in_arrival_order() -> None:
    """More connections ready at once than one epoll poll reports (CPython asks for 1023),
    each with a request the reactor hands to its task: they are served in the order their
    bytes arrived. (Polling again after each handed request served the first, then the
    first of the next 1023, and so on: a level-triggered epoll lists what it reported
    behind the rest, so a burst of 10,000 JoinGroups was read in a stride through it and
    a group's members reached the coordinator seconds apart, after its join had ended.)"""
    count = 1100
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 3 * count:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(3 * count, hard), hard))
    reactor = Reactor()
    pairs = [socket.socketpair() for _ in range(count)]
    served: list[int] = []
    handed: list[int] = []

    def serving(index: int) -> Callable[[float], Handback | None]:
        def serve(now: float) -> Handback | None:
            served.append(index)
            back = Handback()
            back.payload = b"request"  # a request its task finishes
            return back
        return serve

    async def parked(index: int) -> None:
        back = await reactor.park(pairs[index][0].fileno(), serving(index))
        assert back.payload == b"request"
        handed.append(index)

    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(reactor.run)
            for index in range(count):
                nursery.start_soon(parked, index)
            await trio.testing.wait_all_tasks_blocked()
            for _, peer in pairs:  # all arrive before the reactor runs again
                peer.send(b"x")
            with trio.fail_after(30):
                while len(handed) < count:
                    await trio.sleep(0.01)
            nursery.cancel_scope.cancel()
    finally:
        for ours, peer in pairs:
            ours.close()
            peer.close()
    assert served == list(range(count))
