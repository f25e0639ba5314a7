"""Fault injection (``ServeOptions.faults``: ``dispatch.handler_for`` wraps the handler of a
matching request), used by the test double in ``coordinator/testing``."""

from __future__ import annotations

from typing import Any

import pytest
import trio
from raw_client import HEARTBEAT, LIST_GROUPS, OFFSET_COMMIT

from coordinator.server.faults import FaultInjector
from coordinator.server.reactor import current_reactor

pytestmark = pytest.mark.trio

COMMIT = {
    "group_id": "faulty",
    "generation_id_or_member_epoch": -1,
    "member_id": "",
    "topics": [{"name": "t", "partitions": [{"partition_index": 0, "committed_offset": 1}]}],
}


async def test_error_delay_and_drop_faults(start_server: Any, connect: Any) -> None:
    faults = FaultInjector()
    running = await start_server(faults=faults)
    client = await connect(running.port)
    faults.add(OFFSET_COMMIT, error_code=27)
    resp = await client.request(OFFSET_COMMIT, 8, COMMIT)
    assert resp.topics[0].partitions[0].error_code == 27
    assert running.runtime.coordinator.describe("faulty") is None  # never reached the core
    resp = await client.request(OFFSET_COMMIT, 8, COMMIT)  # count=1: back to normal
    assert resp.topics[0].partitions[0].error_code == 0

    faults.add(LIST_GROUPS, delay_ms=300)
    began = trio.current_time()
    assert (await client.request(LIST_GROUPS, 0, {})).error_code == 0
    assert trio.current_time() - began >= 0.3

    faults.add(HEARTBEAT, drop="after")
    corr = await client.send(HEARTBEAT, 4, {"group_id": "x", "generation_id": 1, "member_id": "m"})
    got, _ = await client.recv(HEARTBEAT, 4)
    assert got == corr
    with trio.fail_after(5):
        assert await client.closed_by_server()

    other = await connect(running.port)
    faults.add(HEARTBEAT, drop="before")
    await other.send(HEARTBEAT, 4, {"group_id": "x", "generation_id": 1, "member_id": "m"})
    with trio.fail_after(5):
        assert await other.closed_by_server()
    assert not faults.active()


async def test_a_fault_wraps_its_api_only_and_applies_on_the_fast_lane(
    start_server: Any, connect: Any
) -> None:
    """A fault armed for one API leaves the others on the fast lane (an idle connection
    parks in the ready reactor, which answers its commits), and a fault of the commit's
    API applies to a commit that arrives by that lane (the reactor looks up the handler
    once, wrapped in the fault, and hands the request to the connection's task)."""
    faults = FaultInjector()
    running = await start_server(faults=faults)
    client = await connect(running.port)
    reactor = current_reactor()
    assert reactor is not None
    faults.add(LIST_GROUPS, error_code=15, count=None)  # armed throughout
    assert (await client.request(OFFSET_COMMIT, 8, COMMIT)).topics[0].partitions[0].error_code == 0
    served = reactor.served
    for _ in range(5):
        resp = await client.request(OFFSET_COMMIT, 8, COMMIT)
        assert resp.topics[0].partitions[0].error_code == 0
    assert reactor.served - served >= 5  # each answered from the reactor

    faults.add(OFFSET_COMMIT, error_code=27)
    served = reactor.served
    resp = await client.request(OFFSET_COMMIT, 8, COMMIT)
    assert resp.topics[0].partitions[0].error_code == 27
    assert reactor.served > served  # it came by the reactor, with its fault
    resp = await client.request(OFFSET_COMMIT, 8, COMMIT)  # count=1: back to normal
    assert resp.topics[0].partitions[0].error_code == 0
    assert (await client.request(LIST_GROUPS, 0, {})).error_code == 15
    assert [f.api_key for f in faults.active()] == [LIST_GROUPS]
