"""An in-process server with share partitions starting at the earliest offset, for the
share server tests that need no more than that (raw frames over real TCP)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import trio

from coordinator.server.app import RunningServer, serve
from coordinator.server.options import build_options

__all__ = ["start_share_server"]


async def start_share_server(
    nursery: trio.Nursery, topics: Sequence[tuple[str, int]] = (("t", 1),)
) -> tuple[RunningServer, uuid.UUID]:
    """A started server (``share.auto.offset.reset`` earliest for every group) and the id
    of its first topic."""
    options = build_options({"group.initial.rebalance.delay.ms": "0"}, host="127.0.0.1",
                            port=0, data_dir=None, topics=tuple(topics))
    running: RunningServer = await nursery.start(serve, options)
    running.server.shares.auto_offset_reset = lambda _group: "earliest"
    topic = running.server.topics.get(topics[0][0])
    assert topic is not None
    return running, topic.topic_id
