"""A partition's log is opened off the event loop by the first Produce to it.

Opening a new partition log locks its directory and creates its first segment: three
fsyncs, which on the event loop held every connection of the server (the loop watchdog saw
0.54 s for the six partitions of the failover tests' topic on an idle disk; a busy CI disk
takes far longer, and every broker of ``--brokers N`` shares that loop). Here the first of
those fsyncs is held until the test lets it go: another connection must be answered
meanwhile, and the Produce once its partition is open."""

from __future__ import annotations

import os
import threading
from typing import Any

import pytest
import trio
from raw_client import RawClient, batch

pytestmark = pytest.mark.trio

PRODUCE, METADATA = 0, 3
HELD_S = 5.0


class HeldPartitionFsync:
    """``os.fsync`` that holds the first fsync under ``directory`` until ``release`` (at
    most ``HELD_S``) and remembers whether it timed out."""

    def __init__(self, directory: str) -> None:
        self.directory = directory
        self.reached = threading.Event()
        self.released = threading.Event()
        self.timed_out = False
        self._fsync = os.fsync

    def __call__(self, fd: int) -> None:
        path = os.readlink(f"/proc/self/fd/{fd}")
        if not self.reached.is_set() and (path == self.directory
                                          or path.startswith(self.directory + os.sep)):
            self.reached.set()
            if not self.released.wait(HELD_S):
                self.timed_out = True
        self._fsync(fd)


async def test_the_first_produce_to_a_partition_opens_its_log_off_the_event_loop(
    start_server: Any, connect: Any, tmp_path: Any, monkeypatch: Any
) -> None:
    running = await start_server({}, data_dir=str(tmp_path))
    topic = running.server.topics.get("t")
    producer: RawClient = await connect(running.port)
    other: RawClient = await connect(running.port)
    held = HeldPartitionFsync(os.path.join(str(tmp_path), "topics", str(topic.topic_id), "3"))
    monkeypatch.setattr(os, "fsync", held)
    answered: list[Any] = []

    async def produce() -> None:
        answer = await producer.request(PRODUCE, 9, {
            "transactional_id": None, "acks": -1, "timeout_ms": 5000,
            "topic_data": [{"name": "t", "partition_data": [
                {"index": 3, "records": batch([b"v"], -1, -1, -1, False)}]}]})
        answered.append(answer.responses[0].partition_responses[0])

    async with trio.open_nursery() as nursery:
        nursery.start_soon(produce)
        with trio.fail_after(HELD_S * 2):
            await trio.to_thread.run_sync(held.reached.wait, HELD_S)
        assert held.reached.is_set(), "the Produce opened no partition log"
        with trio.fail_after(2):
            meta = await other.request(METADATA, 12, {
                "topics": None, "allow_auto_topic_creation": False,
                "include_topic_authorized_operations": False})
        assert not held.timed_out, "the partition log's fsync held the event loop"
        assert "t" in [t.name for t in meta.topics]
        assert not answered, "the Produce was answered before its partition was open"
        held.released.set()
    (partition,) = answered
    assert (partition.error_code, partition.base_offset) == (0, 0)
    log = running.server.topics.files.partition_log(topic.topic_id, 3)
    assert log is not None
