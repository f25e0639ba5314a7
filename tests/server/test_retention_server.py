"""Retention runs by itself (issue 12): every ``log.retention.check.interval.ms`` of
(mock) time the server deletes expired segments and ListOffsets "earliest" follows."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import trio

from coordinator.server.app import RunningServer, serve
from coordinator.server.options import build_options

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from kafka.record.default_records import DefaultRecordBatchBuilder


def old_batch(value: bytes) -> bytes:
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False,
                                        producer_id=-1, producer_epoch=-1, base_sequence=-1,
                                        batch_size=1 << 16)
    builder.append(0, timestamp=1_000, key=None, value=value, headers=[])  # 1970
    return bytes(builder.build())


async def earliest(client: Any) -> int:
    answer = await client.request(2, 5, {"replica_id": -1, "isolation_level": 0, "topics": [
        {"name": "t", "partitions": [
            {"partition_index": 0, "current_leader_epoch": -1, "timestamp": -2}]}]})
    offset: int = answer.topics[0].partitions[0].offset
    return offset


async def test_retention_runs_every_check_interval(
    nursery: trio.Nursery, tmp_path: Path, connect: Any, autojump_clock: Any
) -> None:
    options = build_options(
        {"group.initial.rebalance.delay.ms": "0", "log.retention.check.interval.ms": "60000",
         "log.retention.ms": "30000", "log.segment.bytes": "230"},
        host="127.0.0.1", port=0, data_dir=str(tmp_path), topics=(("t", 1),))
    running: RunningServer = await nursery.start(serve, options)
    client = await connect(running.port)
    for i in range(5):
        answer = await client.request(0, 9, {
            "transactional_id": None, "acks": -1, "timeout_ms": 5000,
            "topic_data": [{"name": "t", "partition_data": [
                {"index": 0, "records": old_batch(b"%d" % i)}]}]})
        assert answer.responses[0].partition_responses[0].error_code == 0
    # The first Produce opened the partition's log in a worker thread, while the autojump
    # clock ran on through checks that found nothing: the checks' phase is unknown here,
    # but none has run since the batches arrived, and one runs within the interval.
    assert await earliest(client) == 0
    await trio.sleep(60)
    # Segments [0,1] and [2,3] are closed and expired; [4] is the active one.
    assert await earliest(client) == 4
