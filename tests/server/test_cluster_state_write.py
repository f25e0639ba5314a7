"""The cluster state (``DATA_DIR/cluster.json``) is written off the event loop.

One CI run of the confluent-kafka failover test saw both consumers' Heartbeats to the old
coordinator time out in flight right after a coordinator move, then their sessions expire
and the group rebalance: every broker of the process was silent for seconds. The move
wrote ``cluster.json`` with an ``fsync`` on the event loop, which holds every broker for
as long as the disk takes (up to 0.65 s measured on this machine while another process
wrote 1.5 GB; a busy CI disk takes longer). Here that fsync is held until the test lets it
go: another broker must answer meanwhile, and the control answers once it is written."""

from __future__ import annotations

import os
from typing import Any

import pytest
from held_fsync import HeldFsync, answered_while_held
from raw_client import RawClient

from coordinator.server.brokers import STATE_FILE
from coordinator.txn.placement import partition_for

pytestmark = pytest.mark.trio


def _group_on(node: int) -> str:
    return next(g for g in (f"g{i}" for i in range(1000)) if partition_for(g, 50) % 3 == node)


@pytest.mark.parametrize("control", ["move", "elect", "stop"])
async def test_a_slow_cluster_state_write_holds_no_broker(
    start_server: Any, connect: Any, tmp_path: Any, monkeypatch: Any, control: str
) -> None:
    running = await start_server({}, brokers=3, data_dir=str(tmp_path))
    brokers = running.brokers
    client: RawClient = await connect(brokers.ports[1])
    held = HeldFsync(lambda path: path.endswith(STATE_FILE + ".tmp"))
    monkeypatch.setattr(os, "fsync", held)

    async def run_control() -> Any:
        if control == "move":
            return await brokers.move_coordinator(_group_on(2), 0)
        if control == "elect":
            return await brokers.elect_preferred_leaders()
        return await brokers.stop(2)

    meta, answer = await answered_while_held(held, client, run_control)
    assert len(meta.brokers) == 3 - (control == "stop")
    assert answer
    with open(os.path.join(str(tmp_path), STATE_FILE), encoding="utf-8") as f:
        assert f.read() != ""
