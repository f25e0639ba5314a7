"""Log-end offsets read from durable topics as kcoord's own ``TopicFiles`` writes them
(no Spark, no server): the end as of a time, partitions without data, a log start moved
by DeleteRecords, a deleted topic, a torn tail, a data directory without topics."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

from pipeline_support import topic_batch

from coordinator.broker.topic_files import TopicFiles
from storage.pipeline.topic_ends import read_topic_logs
from wire.records import with_base_offset


def _append(files: TopicFiles, topic: uuid.UUID, index: int, base: int, ts: list[int]) -> None:
    files.appended(topic, index, base, with_base_offset(topic_batch(ts), base))


def test_log_ends_of_durable_topics(tmp_path: Path) -> None:
    data_dir = str(tmp_path / "data")
    os.makedirs(data_dir)
    assert read_topic_logs(data_dir) is None  # no topics/: --topic-storage memory
    files = TopicFiles(data_dir, "never", "fail")
    a, gone = uuid.uuid4(), uuid.uuid4()
    files.created("a", a, 3, {})
    files.created("gone", gone, 1, {})
    _append(files, a, 0, 0, [1000, 1001, 1002])
    _append(files, a, 0, 3, [2000, 2001])
    _append(files, a, 2, 0, [3000])
    files.log_start_moved(a, 2, 1)  # DeleteRecords: an entry without a batch
    _append(files, a, 2, 1, [900, 4000])  # max timestamp 4000
    _append(files, gone, 0, 0, [1000])
    files.deleted(gone)
    files.close()
    # A torn tail on partition 0: a writer died mid-append.
    part0 = os.path.join(data_dir, "topics", str(a), "0")
    last = sorted(n for n in os.listdir(part0) if n.endswith(".log"))[-1]
    with open(os.path.join(part0, last), "ab") as f:
        f.write(b"\x00\x00\x01\x00garbage")

    logs = read_topic_logs(data_dir)
    assert logs is not None
    assert logs.partition_counts == {"a": 3}  # the deleted topic is gone
    p0, p1, p2 = (logs.ends[("a", i)] for i in range(3))
    assert [p0.end_as_of(t) for t in (None, 999, 1002, 1999, 2001)] == [5, 0, 3, 3, 5]
    assert (p1.end_as_of(None), p1.end_as_of(10**13)) == (0, 0)  # no data: log end 0
    assert [p2.end_as_of(t) for t in (None, 2999, 3000, 3999, 4000)] == [3, 0, 1, 1, 3]
