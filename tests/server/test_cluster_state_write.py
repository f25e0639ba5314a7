"""The cluster state (``DATA_DIR/cluster.json``) is written off the event loop.

One CI run of the confluent-kafka failover test saw both consumers' Heartbeats to the old
coordinator time out in flight right after a coordinator move, then their sessions expire
and the group rebalance: every broker of the process was silent for seconds. The move
wrote ``cluster.json`` with an ``fsync`` on the event loop, which holds every broker for
as long as the disk takes (up to 0.65 s measured on this machine while another process
wrote 1.5 GB; a busy CI disk takes longer). Here that fsync is held until the test lets it
go: the other brokers must answer meanwhile, and the control answers once it is written."""

from __future__ import annotations

import os
import threading
from typing import Any

import pytest
import trio
from raw_client import RawClient

from coordinator.server.brokers import STATE_FILE
from coordinator.txn.placement import partition_for

pytestmark = pytest.mark.trio

METADATA = 3
HELD_S = 5.0


def _group_on(node: int) -> str:
    return next(g for g in (f"g{i}" for i in range(1000)) if partition_for(g, 50) % 3 == node)


class HeldStateFsync:
    """``os.fsync`` that holds the cluster state's temporary file until ``release`` (at
    most ``HELD_S``) and remembers whether it was released or timed out."""

    def __init__(self) -> None:
        self.reached = threading.Event()
        self.released = threading.Event()
        self.timed_out = False
        self._fsync = os.fsync

    def __call__(self, fd: int) -> None:
        if os.readlink(f"/proc/self/fd/{fd}").endswith(STATE_FILE + ".tmp"):
            self.reached.set()
            if not self.released.wait(HELD_S):
                self.timed_out = True
        self._fsync(fd)


@pytest.mark.parametrize("control", ["move", "elect", "stop"])
async def test_a_slow_cluster_state_write_holds_no_broker(
    start_server: Any, connect: Any, tmp_path: Any, monkeypatch: Any, control: str
) -> None:
    running = await start_server({}, brokers=3, data_dir=str(tmp_path))
    brokers = running.brokers
    client: RawClient = await connect(brokers.ports[1])
    held = HeldStateFsync()
    monkeypatch.setattr(os, "fsync", held)
    answered: list[Any] = []

    async def run_control() -> None:
        if control == "move":
            answered.append(await brokers.move_coordinator(_group_on(2), 0))
        elif control == "elect":
            answered.append(await brokers.elect_preferred_leaders())
        else:
            answered.append(await brokers.stop(2))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(run_control)
        with trio.fail_after(HELD_S * 2):
            await trio.to_thread.run_sync(held.reached.wait, HELD_S)
        assert held.reached.is_set(), "the control wrote no cluster state"
        # The write is held: another broker still answers, and the control has not.
        with trio.fail_after(2):
            meta = await client.request(METADATA, 12, {
                "topics": None, "allow_auto_topic_creation": False,
                "include_topic_authorized_operations": False})
        assert not held.timed_out, "the cluster state's fsync held the event loop"
        assert len(meta.brokers) == 3 - (control == "stop")
        assert not answered, "the control answered before its state was written"
        held.released.set()
    assert answered
    with open(os.path.join(str(tmp_path), STATE_FILE), encoding="utf-8") as f:
        assert f.read() != ""
