"""Closing a partition's segment file to make room in the pool of open files
(``storage/open_files.py``, issue 32 item 6) does not hold the event loop: it used to fsync
the file it closed, on the loop, and a Produce reaching more partitions than the pool holds
froze every connection for one fsync per partition (about 0.7 s for 50 new partitions past
256 files on this machine). A closed file's unsynced writes are now fsynced when its log
next syncs (reopened by path), as its fsync policy says; acknowledged data never depended
on that fsync (``--fsync always`` fsyncs each append before it is acknowledged).

A real kafka-python producer writes twice to 40 partitions through a pool of 8; on the
second round every write closes another partition's file. fsync is made slow (0.3 s) for
that round, and a Trio instrument in the server's loop measures its longest task step."""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Iterator
from typing import Any

import pytest
import trio

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from kafka import KafkaProducer

from coordinator.testing import KcoordServer

POOL = 8
PARTITIONS = 40
SLOW_FSYNC_S = 0.3


class LongestStep(trio.abc.Instrument):
    """The longest time one task step held the event loop (seconds)."""

    def __init__(self) -> None:
        self.longest = 0.0
        self._started: float | None = None  # None: a step begun before it was added

    def before_task_step(self, task: trio.lowlevel.Task) -> None:
        self._started = time.perf_counter()

    def after_task_step(self, task: trio.lowlevel.Task) -> None:
        if self._started is not None:
            self.longest = max(self.longest, time.perf_counter() - self._started)
        self._started = None


@pytest.fixture
def producer(kcoord: KcoordServer) -> Iterator[KafkaProducer]:
    made = KafkaProducer(bootstrap_servers=kcoord.bootstrap, acks=1, linger_ms=50,
                         request_timeout_ms=20_000, max_block_ms=20_000)
    yield made
    made.close(timeout=10)


def _round(producer: KafkaProducer, value: bytes) -> list[int]:
    futures = [producer.send("wide", value, partition=i) for i in range(PARTITIONS)]
    return [f.get(timeout=30).offset for f in futures]


@pytest.mark.kcoord_config({"kcoord.max.open.segment.files": str(POOL)})
def test_closing_a_file_for_room_does_not_fsync_on_the_event_loop(
    kcoord: KcoordServer, producer: KafkaProducer, monkeypatch: pytest.MonkeyPatch
) -> None:
    kcoord.create_topic("wide", PARTITIONS)
    assert _round(producer, b"first") == [0] * PARTITIONS  # every partition's log exists
    files: Any = kcoord._require().server.topics.files.fs
    assert files.open_count <= POOL
    evicted_before = files.evictions

    real_fsync = os.fsync
    slow: list[int] = []

    def slow_fsync(fd: int) -> None:
        slow.append(fd)
        time.sleep(SLOW_FSYNC_S)
        real_fsync(fd)

    steps = LongestStep()
    kcoord._call(lambda: trio.lowlevel.add_instrument(steps))
    monkeypatch.setattr(os, "fsync", slow_fsync)
    try:
        assert _round(producer, b"second") == [1] * PARTITIONS
    finally:
        monkeypatch.undo()
        kcoord._call(lambda: trio.lowlevel.remove_instrument(steps))
    assert files.evictions - evicted_before >= PARTITIONS - POOL  # files were closed
    assert steps.longest < SLOW_FSYNC_S, f"the loop was held {steps.longest:.3f} s"
    assert slow == []  # under --fsync never nothing is fsynced for them
