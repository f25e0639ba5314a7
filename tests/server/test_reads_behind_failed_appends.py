"""A read answered while an append is in flight, when that append fails.

The runtime holds a record-less answer until the appends before it are done, so nothing
shows state the log could still lose. When such an append fails, the core reverts the
state it had changed; a read (ConsumerGroupDescribe, DescribeGroups, ListGroups,
OffsetFetch) answered behind it is run again, so it shows the reverted state, not what the
log lost. (Found mirroring Kafka's testConsumerGroupDescribeBeforeAndAfterCommittingOffset:
Kafka reads at the last committed offset.)
"""

from __future__ import annotations

import errno
from collections.abc import Sequence
from typing import Any

import pytest
import trio

from coordinator.server.sink import MemorySink
from storage.config_records import ConfigRecordKey
from storage.records import Record

pytestmark = pytest.mark.trio

CONSUMER_GROUP_HEARTBEAT = 68
CONSUMER_GROUP_DESCRIBE = 69
LIST_GROUPS = 16
GROUP_ID_NOT_FOUND = 69


class GatedSink(MemorySink):
    """Appends wait for ``gate``; ``started`` is set once one is in flight (the config
    shard's activation append, the cluster-level min.insync.replicas, goes through)."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = trio.Event()
        self.started = trio.Event()

    def append_nowait(self, records: Sequence[Record]) -> bool:
        return False

    async def append(self, records: Sequence[Record]) -> None:
        if all(isinstance(r.key, ConfigRecordKey) for r in records):
            await super().append(records)
            return
        self.started.set()
        await self.gate.wait()
        await super().append(records)


async def test_a_describe_behind_a_failed_append_shows_the_reverted_group(
    start_server: Any, connect: Any
) -> None:
    sink = GatedSink()
    running = await start_server(sink=sink)
    member = await connect(running.port)
    reader = await connect(running.port)
    with trio.fail_after(20):
        _, join = member.frame(CONSUMER_GROUP_HEARTBEAT, 1, {
            "group_id": "g", "member_id": "m1-" + "x" * 20, "member_epoch": 0,
            "rebalance_timeout_ms": 30_000, "subscribed_topic_names": ["t"],
            "topic_partitions": []})
        await member.stream.send_all(join)
        await sink.started.wait()  # the group's records are being written
        await reader.send(CONSUMER_GROUP_DESCRIBE, 1, {"group_ids": ["g"]})
        while not running.runtime._queue:  # the describe answered, held behind the append
            await trio.sleep(0.001)
        sink.fail_with = lambda records: OSError(errno.EIO, "disk gone")
        sink.gate.set()
        _, joined = await member.recv(CONSUMER_GROUP_HEARTBEAT, 1)
        _, described = await reader.recv(CONSUMER_GROUP_DESCRIBE, 1)
        listed = await reader.request(LIST_GROUPS, 5, {"states_filter": [], "types_filter": []})
    assert joined.error_code != 0  # the join was not persisted, so not acknowledged
    (group,) = described.groups
    assert group.error_code == GROUP_ID_NOT_FOUND, group  # not the member the log lost
    assert [g.group_id for g in listed.groups] == []
    assert running.runtime.append_failures == 1
