"""Group APIs through the server: parked requests, timers on the Trio clock, topic checks."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
import trio
from raw_client import (
    DESCRIBE_GROUPS,
    HEARTBEAT,
    JOIN_GROUP,
    OFFSET_COMMIT,
    OFFSET_FETCH,
    heartbeat_body,
    join,
    join_body,
    sync,
)

from coordinator.server.app import RunningServer

pytestmark = pytest.mark.trio

REBALANCE_IN_PROGRESS = 27
UNKNOWN_TOPIC_OR_PARTITION = 3
UNKNOWN_TOPIC_ID = 100


async def _stable_member(client: Any, group: str, **kwargs: Any) -> Any:
    joined = await join(client, group, **kwargs)
    assert joined.error_code == 0
    synced = await sync(client, group, joined, b"assignment")
    assert synced.error_code == 0
    return joined


async def test_parked_join_does_not_block_other_connections(
    server: RunningServer, connect: Any
) -> None:
    a = await connect(server.port)
    b = await connect(server.port)
    joined_a = await _stable_member(a, "parked")
    # B joins: the group rebalances and B's JoinGroup is parked until A rejoins.
    first = await b.request(JOIN_GROUP, 7, join_body("parked"))
    assert first.error_code == 79
    corr_b = await b.send(JOIN_GROUP, 7, join_body("parked", first.member_id))
    with trio.fail_after(2):
        # A's heartbeats are answered at once, telling it to rejoin.
        hb = await a.request(HEARTBEAT, 4, heartbeat_body("parked", 1, joined_a.member_id))
        assert hb.error_code == REBALANCE_IN_PROGRESS
        # Other connections and groups are served meanwhile.
        c = await connect(server.port)
        assert (await join(c, "elsewhere")).error_code == 0
    with trio.fail_after(5):
        rejoined_a = await a.request(JOIN_GROUP, 7, join_body("parked", joined_a.member_id))
        got, joined_b = await b.recv(JOIN_GROUP, 7)
    assert got == corr_b
    assert joined_b.error_code == 0 and rejoined_a.error_code == 0
    assert rejoined_a.generation_id == joined_b.generation_id == 2
    assert len(rejoined_a.members) == 2 or len(joined_b.members) == 2


async def test_session_timeout_expires_member(
    server: RunningServer, connect: Any, autojump_clock: Any
) -> None:
    client = await connect(server.port)
    joined = await _stable_member(client, "expiring", session_timeout_ms=6000)
    runtime = server.runtime
    start = trio.current_time()
    view = runtime.coordinator.describe("expiring")
    assert view is not None and view.state == "Stable"
    # Heartbeats keep it alive past the session timeout.
    for _ in range(4):
        await trio.sleep(3)
        hb = await client.request(HEARTBEAT, 4, heartbeat_body("expiring", 1, joined.member_id))
        assert hb.error_code == 0
    assert runtime.coordinator.describe("expiring").state == "Stable"  # type: ignore[union-attr]
    # Silence: expired 6 s after the last heartbeat, not before.
    last = trio.current_time()
    await trio.sleep(5.9)
    assert runtime.coordinator.describe("expiring").state == "Stable"  # type: ignore[union-attr]
    await trio.sleep(0.2)
    view = runtime.coordinator.describe("expiring")
    assert view is not None and view.state == "Empty" and view.members == ()
    assert trio.current_time() - last >= 6.0
    assert trio.current_time() - start < 20
    hb = await client.request(HEARTBEAT, 4, heartbeat_body("expiring", 1, joined.member_id))
    assert hb.error_code == 25  # UNKNOWN_MEMBER_ID
    described = await client.request(DESCRIBE_GROUPS, 5, {"groups": ["expiring"]})
    assert described.groups[0].group_state == "Empty"


async def test_rebalance_timeout_removes_members_that_do_not_rejoin(
    server: RunningServer, connect: Any, autojump_clock: Any
) -> None:
    a = await connect(server.port)
    b = await connect(server.port)
    await _stable_member(a, "slow", session_timeout_ms=30_000, rebalance_timeout_ms=8_000)
    start = trio.current_time()
    joined_b = await join(
        b, "slow", session_timeout_ms=30_000, rebalance_timeout_ms=8_000
    )  # parked until A's rebalance timeout (A never rejoins)
    assert joined_b.error_code == 0
    assert 7.9 <= trio.current_time() - start <= 9
    assert [m.member_id for m in joined_b.members] == [joined_b.member_id]


async def test_offset_commit_unknown_topics_and_partitions(
    server: RunningServer, connect: Any
) -> None:
    client = await connect(server.port)
    body = {
        "group_id": "committer",
        "generation_id_or_member_epoch": -1,
        "member_id": "",
        "topics": [
            {
                "name": "t",
                "partitions": [
                    {"partition_index": 0, "committed_offset": 5},
                    {"partition_index": 12, "committed_offset": 5},
                ],
            },
            {"name": "missing", "partitions": [{"partition_index": 0, "committed_offset": 1}]},
        ],
    }
    resp = await client.request(OFFSET_COMMIT, 8, body)
    errors = {(t.name, p.partition_index): p.error_code for t in resp.topics for p in t.partitions}
    assert errors == {
        ("t", 0): 0,
        ("t", 12): UNKNOWN_TOPIC_OR_PARTITION,
        ("missing", 0): UNKNOWN_TOPIC_OR_PARTITION,
    }
    assert server.runtime.coordinator.committed_offsets("committer").keys() == {("t", 0)}
    # Only unknown partitions: answered without the coordinator (no group is created).
    only_bad = {**body, "group_id": "ghost", "topics": body["topics"][1:]}  # type: ignore[index]
    resp = await client.request(OFFSET_COMMIT, 8, only_bad)
    assert resp.topics[0].partitions[0].error_code == UNKNOWN_TOPIC_OR_PARTITION
    assert server.runtime.coordinator.describe("ghost") is None


async def test_offset_commit_and_fetch_v10_by_topic_id(server: RunningServer, connect: Any) -> None:
    client = await connect(server.port)
    topic_id = server.server.topics.get("t").topic_id
    bogus = uuid.uuid4()
    resp = await client.request(
        OFFSET_COMMIT,
        10,
        {
            "group_id": "ids",
            "generation_id_or_member_epoch": -1,
            "member_id": "",
            "topics": [
                {
                    "topic_id": topic_id,
                    "partitions": [{"partition_index": 2, "committed_offset": 9}],
                },
                {"topic_id": bogus, "partitions": [{"partition_index": 0, "committed_offset": 1}]},
            ],
        },
    )
    errors = {t.topic_id: [p.error_code for p in t.partitions] for t in resp.topics}
    assert errors == {topic_id: [0], bogus: [UNKNOWN_TOPIC_ID]}
    fetched = await client.request(
        OFFSET_FETCH,
        10,
        {
            "groups": [
                {
                    "group_id": "ids",
                    "member_id": None,
                    "member_epoch": -1,
                    "topics": [
                        {"topic_id": topic_id, "partition_indexes": [2, 3]},
                        {"topic_id": bogus, "partition_indexes": [0]},
                    ],
                }
            ]
        },
    )
    got = {
        (t.topic_id, p.partition_index): (p.committed_offset, p.error_code)
        for t in fetched.groups[0].topics
        for p in t.partitions
    }
    assert got == {
        (topic_id, 2): (9, 0),
        (topic_id, 3): (-1, 0),
        (bogus, 0): (-1, UNKNOWN_TOPIC_ID),
    }


async def test_offset_fetch_all_topics_and_old_versions(
    server: RunningServer, connect: Any
) -> None:
    client = await connect(server.port)
    for version in (2, 3, 5, 7):
        commit = {
            "group_id": "allt",
            "generation_id_or_member_epoch": -1,
            "member_id": "",
            "retention_time_ms": -1,
            "topics": [
                {"name": "t", "partitions": [{"partition_index": 1, "committed_offset": version}]}
            ],
        }
        resp = await client.request(OFFSET_COMMIT, version, commit)
        assert resp.topics[0].partitions[0].error_code == 0
        fetched = await client.request(OFFSET_FETCH, version, {"group_id": "allt", "topics": None})
        assert fetched.error_code == 0
        assert [
            (t.name, p.partition_index, p.committed_offset)
            for t in fetched.topics
            for p in t.partitions
        ] == [("t", 1, version)]


async def test_offset_fetch_single_group_error_placement() -> None:
    """v2-7 copy the single group's error to the top level (the core answers in v8's shape);
    v0-1 have no top-level error and put it on every requested partition."""
    from coordinator.server.apis.offset_fetch import _single_group

    group = {"group_id": "g", "error_code": 24, "topics": []}
    requested = [{"name": "t", "partition_indexes": [0, 2]}]
    assert _single_group(group, 7, requested) == {"error_code": 24, "topics": []}
    assert _single_group(group, 2, requested) == {"error_code": 24, "topics": []}
    v1 = _single_group(group, 1, requested)
    assert "error_code" not in v1
    assert [(p["partition_index"], p["committed_offset"], p["error_code"])
            for p in v1["topics"][0]["partitions"]] == [(0, -1, 24), (2, -1, 24)]


async def test_a_client_leaving_a_parked_join_frees_its_connection(
    server: RunningServer, connect: Any
) -> None:
    """Issue 15 item 14: a JoinGroup parked on the rebalance is watched; the client leaving
    closes the connection at once instead of keeping its descriptor until the answer."""
    first = await connect(server.port)
    joined = await _stable_member(first, "parked", session_timeout_ms=30_000,
                                  rebalance_timeout_ms=30_000)
    assert joined.error_code == 0
    leaver = await connect(server.port)
    # A second member's join parks: the group waits for the first member to rejoin.
    first = await leaver.request(JOIN_GROUP, 7, join_body(
        "parked", session_timeout_ms=30_000, rebalance_timeout_ms=30_000))
    assert first.error_code == 79  # MEMBER_ID_REQUIRED, then the real join
    await leaver.send(JOIN_GROUP, 7, join_body("parked", first.member_id,
                                               session_timeout_ms=30_000,
                                               rebalance_timeout_ms=30_000))
    with trio.fail_after(5):
        while len(server.server.connections) < 2 or not any(
                c.busy for c in server.server.connections.values()):
            await trio.sleep(0.01)
    before = len(server.server.connections)
    await leaver.stream.aclose()
    with trio.fail_after(5):
        while len(server.server.connections) >= before:
            await trio.sleep(0.01)
