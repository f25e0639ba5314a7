"""A partition's log is opened off the event loop when the partition is created.

Opening a new partition log locks its directory and creates its first segment: three
fsyncs, which on the event loop held every connection of the server (the loop watchdog saw
0.54 s for the six partitions of the failover tests' topic on an idle disk; a busy CI disk
takes far longer, and every broker of ``--brokers N`` shares that loop). CreateTopics,
auto-creation (Metadata) and CreatePartitions open the new partitions' logs in a worker
thread, the startup opens the rest; Produce finds them open. Here the first of those fsyncs
is held until the test lets it go: another connection must be answered meanwhile (it is
not if the open runs on the loop), and the creating request once the logs are open."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from held_fsync import HeldFsync, answered_while_held
from raw_client import RawClient, batch

from storage.log import Log

pytestmark = pytest.mark.trio

PRODUCE, METADATA, CREATE_TOPICS, CREATE_PARTITIONS = 0, 3, 19, 37


def _partition_dir(root: Any, topic_id: uuid.UUID, index: int) -> str:
    return os.path.join(str(root), "topics", str(topic_id), str(index))


def _any_partition_dir(root: Any) -> Callable[[str], bool]:
    """An fsync of a partition log's directory or files (not the topic's metadata)."""
    topics = os.path.join(str(root), "topics") + os.sep

    def matches(path: str) -> bool:
        parts = path[len(topics):].split(os.sep) if path.startswith(topics) else []
        return len(parts) >= 2 and parts[1].isdigit()

    return matches


async def _produce(client: RawClient, topic: str, index: int) -> Any:
    answer = await client.request(PRODUCE, 9, {
        "transactional_id": None, "acks": -1, "timeout_ms": 5000,
        "topic_data": [{"name": topic, "partition_data": [
            {"index": index, "records": batch([b"v"], -1, -1, -1, False)}]}]})
    return answer.responses[0].partition_responses[0]


async def _produce_opens_nothing(running: Any, client: RawClient, topic: str, index: int,
                                 monkeypatch: Any) -> None:
    opened: list[str] = []
    real_open = Log.open.__func__  # type: ignore[attr-defined]

    def counting_open(cls: Any, directory: str, **kwargs: Any) -> Log:
        opened.append(directory)
        return real_open(cls, directory, **kwargs)  # type: ignore[no-any-return]

    monkeypatch.setattr(Log, "open", classmethod(counting_open))
    partition = await _produce(client, topic, index)
    assert (partition.error_code, partition.base_offset) == (0, 0)
    assert opened == []


async def _create_while_held(running: Any, connect: Any, monkeypatch: Any,
                             matches: Callable[[str], bool], api_key: int, version: int,
                             body: dict[str, Any]) -> tuple[RawClient, Any]:
    """Send a creating request while the first fsync ``matches`` picks is held (another
    connection must be answered meanwhile); the client and the answer."""
    client: RawClient = await connect(running.port)
    other: RawClient = await connect(running.port)
    held = HeldFsync(matches)
    monkeypatch.setattr(os, "fsync", held)

    async def create() -> Any:
        return await client.request(api_key, version, body)

    _meta, answer = await answered_while_held(held, other, create)
    return client, answer


async def test_create_topics_opens_the_new_partitions_logs_off_the_event_loop(
    start_server: Any, connect: Any, tmp_path: Any, monkeypatch: Any
) -> None:
    running = await start_server({}, data_dir=str(tmp_path), topics=())
    client, answer = await _create_while_held(
        running, connect, monkeypatch, _any_partition_dir(tmp_path), CREATE_TOPICS, 7,
        {"topics": [{"name": "fresh", "num_partitions": 3, "replication_factor": 1,
                     "assignments": [], "configs": []}],
         "timeout_ms": 5000, "validate_only": False})
    assert answer.topics[0].error_code == 0
    topic = running.server.topics.get("fresh")
    files = running.server.topics.files
    assert all(files.partition_log(topic.topic_id, i) is not None for i in range(3))
    assert os.path.isdir(_partition_dir(tmp_path, topic.topic_id, 2))
    await _produce_opens_nothing(running, client, "fresh", 2, monkeypatch)


async def test_auto_creation_opens_the_new_partitions_logs_off_the_event_loop(
    start_server: Any, connect: Any, tmp_path: Any, monkeypatch: Any
) -> None:
    running = await start_server({"num.partitions": "2"}, data_dir=str(tmp_path), topics=())
    client, answer = await _create_while_held(
        running, connect, monkeypatch, _any_partition_dir(tmp_path), METADATA, 12,
        {"topics": [{"name": "auto", "topic_id": uuid.UUID(int=0)}],
         "allow_auto_topic_creation": True, "include_topic_authorized_operations": False})
    described = answer.topics[0]
    assert (described.error_code, len(described.partitions)) == (0, 2)
    topic = running.server.topics.get("auto")
    assert running.server.topics.files.partition_log(topic.topic_id, 1) is not None
    await _produce_opens_nothing(running, client, "auto", 1, monkeypatch)


async def test_create_partitions_opens_the_new_partitions_logs_off_the_event_loop(
    start_server: Any, connect: Any, tmp_path: Any, monkeypatch: Any
) -> None:
    running = await start_server({}, data_dir=str(tmp_path), topics=(("grown", 1),))
    topic = running.server.topics.get("grown")
    directory = _partition_dir(tmp_path, topic.topic_id, 3)
    client, answer = await _create_while_held(
        running, connect, monkeypatch,
        lambda path: path == directory or path.startswith(directory + os.sep),
        CREATE_PARTITIONS, 3,
        {"topics": [{"name": "grown", "count": 4, "assignments": None}],
         "timeout_ms": 5000, "validate_only": False})
    assert answer.results[0].error_code == 0
    assert running.server.topics.files.partition_log(topic.topic_id, 3) is not None
    await _produce_opens_nothing(running, client, "grown", 3, monkeypatch)


async def test_the_startup_opens_every_partition_log_before_serving(
    start_server: Any, connect: Any, tmp_path: Any, monkeypatch: Any
) -> None:
    running = await start_server({}, data_dir=str(tmp_path))  # topic t, 12 partitions
    topic = running.server.topics.get("t")
    files = running.server.topics.files
    assert all(files.partition_log(topic.topic_id, i) is not None for i in range(12))
    client: RawClient = await connect(running.port)
    await _produce_opens_nothing(running, client, "t", 3, monkeypatch)
