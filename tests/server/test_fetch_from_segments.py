"""Fetch answers a persisted batch by reading it back from its segment file (issue 33: the
bytes of every appended batch were also held in memory). Through the real server: the
bytes fetched are the bytes produced (base offset assigned, leader epoch stamped; the CRC
covers the rest unchanged) across segment rolls, after a restart and while retention
deletes segments under a waiting fetch; no persisted batch keeps its bytes in memory. A
segment file replaced or deleted under the index ends a read rather than answering other
bytes."""

from __future__ import annotations

import os
import threading
import warnings
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from coordinator.broker.partition_log import PartitionLog
from coordinator.server.app import RunningServer, serve
from coordinator.server.options import build_options
from wire.records import parse_batches

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from kafka.record.default_records import DefaultRecordBatchBuilder

SEGMENT_BYTES = 1_000


def _batch(n: int, timestamp: int) -> bytes:
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False,
                                        producer_id=-1, producer_epoch=-1, base_sequence=-1,
                                        batch_size=1 << 16)
    for i in range(3):
        builder.append(i, timestamp=timestamp, key=b"k%d" % n, value=b"%d-%d " % (n, i) * 20,
                       headers=[])
    return bytes(builder.build())



@pytest.fixture
def thread_patient_clock() -> trio.testing.MockClock:
    """Virtual time that jumps only after 50 ms of real idleness: Fetch reads segment files
    in a worker thread, and a clock jumping whenever every task waits would race through
    every periodic timer (idle sweeps, retention checks) for as long as a read takes."""
    return trio.testing.MockClock(autojump_threshold=0.05)


def _fetch(offset: int, max_wait_ms: int = 0) -> dict[str, Any]:
    return {"replica_id": -1, "max_wait_ms": max_wait_ms, "min_bytes": 1,
            "max_bytes": 1 << 20, "isolation_level": 0, "session_id": 0, "session_epoch": -1,
            "topics": [{"topic": "t", "partitions": [{
                "partition": 0, "current_leader_epoch": -1, "fetch_offset": offset,
                "last_fetched_epoch": -1, "log_start_offset": -1,
                "partition_max_bytes": 1 << 20}]}],
            "forgotten_topics_data": [], "rack_id": ""}


def _options(tmp_path: Path, **configs: str) -> Any:
    # Retention off unless a test sets it: the batches carry 1970 timestamps, and the mock
    # clock jumps to the next deadline (a retention check among them) while a Fetch reads
    # in a worker thread.
    return build_options({"group.initial.rebalance.delay.ms": "0", "log.retention.ms": "-1",
                          "log.segment.bytes": str(SEGMENT_BYTES), **configs},
                         host="127.0.0.1", port=0, data_dir=str(tmp_path), topics=(("t", 1),))


async def _produce(client: Any, batch: bytes) -> int:
    answer = await client.request(0, 9, {
        "transactional_id": None, "acks": -1, "timeout_ms": 5000,
        "topic_data": [{"name": "t", "partition_data": [{"index": 0, "records": batch}]}]})
    partition = answer.responses[0].partition_responses[0]
    assert partition.error_code == 0
    return int(partition.base_offset)


async def _fetched(client: Any, offset: int, max_wait_ms: int = 0) -> tuple[int, bytes]:
    answer = await client.request(1, 12, _fetch(offset, max_wait_ms))
    partition = answer.responses[0].partitions[0]
    return int(partition.error_code), bytes(partition.records or b"")


async def _serve_twelve(nursery: trio.Nursery, tmp_path: Path, connect: Any,
                        produced: dict[int, bytes], **configs: str
                        ) -> tuple[RunningServer, Any]:
    """A server and a client that produced twelve batches of three records (about four
    segments' worth, timestamps in 1970), noted by offset in ``produced``."""
    running: RunningServer = await nursery.start(serve, _options(tmp_path, **configs))
    client = await connect(running.port)
    for n in range(12):
        batch = _batch(n, 1_000 + n)
        produced[await _produce(client, batch)] = batch
    return running, client


def _same_batches(fetched: bytes, produced: dict[int, bytes]) -> list[int]:
    """Base offsets of the batches in ``fetched``, each checked byte for byte against the
    batch produced there (all but base offset and partitionLeaderEpoch, which the broker
    sets; the CRC field and everything after it as produced)."""
    bases = []
    position = 0
    for header in parse_batches(fetched, verify_crc=True):
        data = fetched[position: position + header.size]
        sent = produced[header.base_offset]
        assert data[8:12] == sent[8:12] and data[16:] == sent[16:]
        bases.append(header.base_offset)
        position += header.size
    assert position == len(fetched)
    return bases


def _partition(running: RunningServer) -> PartitionLog:
    partition = running.server.topics.partition("t", 0)
    assert partition is not None
    return partition


def _segments(tmp_path: Path) -> list[Path]:
    return sorted(tmp_path.glob("topics/*/0/*.log"))


async def test_fetched_bytes_are_produced_bytes_across_rolls_and_a_restart(
    tmp_path: Path, connect: Any, thread_patient_clock: Any
) -> None:
    produced: dict[int, bytes] = {}
    async with trio.open_nursery() as nursery:
        running, client = await _serve_twelve(nursery, tmp_path, connect, produced)
        assert len(_segments(tmp_path)) >= 3  # rolled at least twice
        # No persisted batch keeps its bytes in memory: each is a place in a segment.
        assert all(b.path is not None and b._data is None for b in _partition(running).batches)
        error, records = await _fetched(client, 0)
        assert error == 0 and _same_batches(records, produced) == sorted(produced)
        # From the middle of a batch: the whole batch that holds the offset, and on.
        error, records = await _fetched(client, 7)
        assert error == 0 and _same_batches(records, produced)[0] == 6
        nursery.cancel_scope.cancel()

    async with trio.open_nursery() as nursery:
        running = await nursery.start(serve, _options(tmp_path))
        client = await connect(running.port)
        assert all(b.path is not None and b._data is None for b in _partition(running).batches)
        error, records = await _fetched(client, 0)
        assert error == 0 and _same_batches(records, produced) == sorted(produced)
        batch = _batch(99, 5_000)
        produced[await _produce(client, batch)] = batch  # appended after the restart
        error, records = await _fetched(client, 0)
        assert error == 0 and _same_batches(records, produced) == sorted(produced)
        nursery.cancel_scope.cancel()


async def test_fetch_never_opens_a_segment_file_on_the_event_loop(
    tmp_path: Path, connect: Any, thread_patient_clock: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A segment's open once held the loop 5.7 s (every member's session lapsed): a Fetch
    # opens segment files in a worker thread, once, and reads the page cache on the spot.
    produced: dict[int, bytes] = {}
    opens: list[tuple[str, bool]] = []
    real_open = os.open

    def recording_open(path: Any, *rest: Any) -> int:
        if str(path).endswith(".log"):
            opens.append((str(path), threading.current_thread() is threading.main_thread()))
        return real_open(path, *rest)

    async with trio.open_nursery() as nursery:
        _, client = await _serve_twelve(nursery, tmp_path, connect, produced)
        monkeypatch.setattr(os, "open", recording_open)
        error, records = await _fetched(client, 0)
        assert error == 0 and _same_batches(records, produced) == sorted(produced)
        segments = {str(p) for p in _segments(tmp_path)}
        assert {path for path, _ in opens} <= segments and opens
        assert not [path for path, on_loop in opens if on_loop]
        opens.clear()
        error, records = await _fetched(client, 0)  # kept descriptors, cached pages
        assert error == 0 and _same_batches(records, produced) == sorted(produced)
        assert opens == []
        nursery.cancel_scope.cancel()


async def test_retention_deletes_segments_under_a_waiting_fetch(
    tmp_path: Path, connect: Any, thread_patient_clock: Any
) -> None:
    produced: dict[int, bytes] = {}
    async with trio.open_nursery() as nursery:
        running, client = await _serve_twelve(
            nursery, tmp_path, connect, produced,
            **{"log.retention.check.interval.ms": "1000", "log.retention.ms": "30000"})
        end = _partition(running).log_end_offset
        waiting = await connect(running.port)
        answers: list[tuple[int, bytes]] = []

        async def wait_at_the_end() -> None:
            answers.append(await _fetched(waiting, end, max_wait_ms=30_000))

        nursery.start_soon(wait_at_the_end)
        await trio.sleep(5)  # retention ran while the fetch waits
        assert not answers
        start = _partition(running).log_start_offset
        assert start > 0 and len(_segments(tmp_path)) < 4
        batch = _batch(100, 10**13)
        produced[await _produce(client, batch)] = batch
        with trio.fail_after(10):
            while not answers:
                await trio.sleep(0.01)
        error, records = answers[0]
        assert error == 0 and _same_batches(records, produced) == [end]
        # Fetches read segment files in a worker thread, and the mock clock jumps while one
        # runs: let retention take every segment it will, so the log start holds still.
        await trio.sleep(60)
        start = _partition(running).log_start_offset
        error, _ = await _fetched(client, 0)
        assert error == 1  # OFFSET_OUT_OF_RANGE: below the new log start
        error, records = await _fetched(client, start)
        assert error == 0
        assert _same_batches(records, produced) == sorted(o for o in produced if o >= start)
        nursery.cancel_scope.cancel()


async def test_a_replaced_or_deleted_segment_ends_the_read(
    tmp_path: Path, connect: Any, thread_patient_clock: Any
) -> None:
    produced: dict[int, bytes] = {}
    async with trio.open_nursery() as nursery:
        running, client = await _serve_twelve(nursery, tmp_path, connect, produced)
        partition = _partition(running)
        first, second = _segments(tmp_path)[:2]
        # As the log cleaner's swap does: other content under the first segment's name
        # (the second segment's batches, at positions the index does not expect).
        # Through the topic files' file system, as the cleaner and retention go: the
        # segment's kept read descriptor is closed with the name.
        fs = running.server.topics.files.fs
        aside = first.with_suffix(".aside")
        fs.rename(str(first), str(aside))
        first.write_bytes(second.read_bytes())
        assert await partition.read(0, 1 << 20, True, partition.log_end_offset) == []
        assert await partition.offset_for_timestamp(0) == (1_000, 0)  # from the index, unread
        fs.rename(str(aside), str(first))
        error, records = await _fetched(client, 0)
        assert error == 0 and _same_batches(records, produced) == sorted(produced)
        # Deleted: the read stops where the missing file begins.
        fs.unlink(str(second))
        later = [b for b in partition.batches if b.path == str(second)]
        read = await partition.read(0, 1 << 20, True, partition.log_end_offset)
        assert len(read) == partition.batches.index(later[0])
        nursery.cancel_scope.cancel()

