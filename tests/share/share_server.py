"""The servers the share tests run against: an in-process server (raw frames over real
TCP), and a ``kcoord serve`` process for the SIGKILL tests."""

from __future__ import annotations

import sys
import uuid
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import trio

from coordinator.server.app import RunningServer, serve
from coordinator.server.options import build_options

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "durability"))

from durability_support import ServerProcess

__all__ = ["ServerProcess", "server_process", "start_share_server"]


async def start_share_server(
    nursery: trio.Nursery, topics: Sequence[tuple[str, int]] = (("t", 1),),
    props: Mapping[str, str] | None = None, reset: str | None = "earliest",
) -> tuple[RunningServer, uuid.UUID]:
    """A started server and the id of its first topic. ``share.auto.offset.reset`` is
    ``reset`` for every group (None: the group's configs say)."""
    options = build_options({"group.initial.rebalance.delay.ms": "0", **(props or {})},
                            host="127.0.0.1", port=0, data_dir=None, topics=tuple(topics))
    running: RunningServer = await nursery.start(serve, options)
    if reset is not None:
        running.server.shares.auto_offset_reset = lambda _group: reset
    topic = running.server.topics.get(topics[0][0])
    assert topic is not None
    return running, topic.topic_id


def server_process(data_dir: Path) -> Iterator[ServerProcess]:
    """A started ``kcoord serve`` (fsync always) with topic ``t`` (1 partition) on
    ``data_dir``, killed when the generator closes (a fixture's body)."""
    process = ServerProcess(data_dir, topics=["t:1"])
    process.start()
    try:
        yield process
    finally:
        process.kill()
