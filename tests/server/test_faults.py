"""The connection layer's fault-injection hook (``ServeOptions.faults``), used by the test
double in ``coordinator/testing``."""

from __future__ import annotations

from typing import Any

import pytest
import trio
from raw_client import HEARTBEAT, LIST_GROUPS, OFFSET_COMMIT

from coordinator.server.faults import FaultInjector

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
