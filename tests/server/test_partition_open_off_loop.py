"""A partition's log is opened off the event loop by the first Produce to it.

Opening a new partition log locks its directory and creates its first segment: three
fsyncs, which on the event loop held every connection of the server (the loop watchdog saw
0.54 s for the six partitions of the failover tests' topic on an idle disk; a busy CI disk
takes far longer, and every broker of ``--brokers N`` shares that loop). Here the first of
those fsyncs is held until the test lets it go: another connection must be answered
meanwhile, and the Produce once its partition is open."""

from __future__ import annotations

import os
from typing import Any

import pytest
from held_fsync import HeldFsync, answered_while_held
from raw_client import RawClient, batch

pytestmark = pytest.mark.trio

PRODUCE = 0


async def test_the_first_produce_to_a_partition_opens_its_log_off_the_event_loop(
    start_server: Any, connect: Any, tmp_path: Any, monkeypatch: Any
) -> None:
    running = await start_server({}, data_dir=str(tmp_path))
    topic = running.server.topics.get("t")
    producer: RawClient = await connect(running.port)
    other: RawClient = await connect(running.port)
    directory = os.path.join(str(tmp_path), "topics", str(topic.topic_id), "3")
    held = HeldFsync(lambda path: path == directory or path.startswith(directory + os.sep))
    monkeypatch.setattr(os, "fsync", held)

    async def produce() -> Any:
        answer = await producer.request(PRODUCE, 9, {
            "transactional_id": None, "acks": -1, "timeout_ms": 5000,
            "topic_data": [{"name": "t", "partition_data": [
                {"index": 3, "records": batch([b"v"], -1, -1, -1, False)}]}]})
        return answer.responses[0].partition_responses[0]

    meta, partition = await answered_while_held(held, other, produce)
    assert "t" in [t.name for t in meta.topics]
    assert (partition.error_code, partition.base_offset) == (0, 0)
    assert running.server.topics.files.partition_log(topic.topic_id, 3) is not None
