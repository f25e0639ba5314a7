"""Produce looks each of its topics up once per request (by name, or by id from v13): the
one lookup answers the unknown-topic check, the transaction check and the appends."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from raw_client import RawClient, batch

from coordinator.broker.topics import TopicStore

pytestmark = pytest.mark.trio

PRODUCE = 0
TOPICS, PARTITIONS = ("a", "b"), 3


def count_lookups(monkeypatch: Any) -> Counter[str]:
    """Calls of the topic store's lookups (``get``, ``by_id``, ``partition``)."""
    calls: Counter[str] = Counter()
    for name in ("get", "by_id", "partition"):
        real = getattr(TopicStore, name)

        def counted(self: TopicStore, *args: Any, _real: Any = real, _name: str = name) -> Any:
            calls[_name] += 1
            return _real(self, *args)

        monkeypatch.setattr(TopicStore, name, counted)
    return calls


@pytest.mark.parametrize("version", [9, 13])
async def test_produce_looks_each_topic_up_once(
    start_server: Any, connect: Any, tmp_path: Any, monkeypatch: Any, version: int
) -> None:
    running = await start_server({}, data_dir=str(tmp_path),
                                 topics=tuple((name, PARTITIONS) for name in TOPICS))
    store = running.server.topics
    client: RawClient = await connect(running.port)
    topic_data = [
        {"name": name if version < 13 else "", "topic_id": store.get(name).topic_id,
         "partition_data": [{"index": index, "records": batch([b"v"], -1, -1, -1, False)}
                            for index in range(PARTITIONS)]}
        for name in TOPICS]
    calls = count_lookups(monkeypatch)
    answer = await client.request(PRODUCE, version, {
        "transactional_id": None, "acks": -1, "timeout_ms": 5000, "topic_data": topic_data})
    codes = [p.error_code for t in answer.responses for p in t.partition_responses]
    assert codes == [0] * (len(TOPICS) * PARTITIONS)
    assert sum(calls.values()) == len(TOPICS), calls
