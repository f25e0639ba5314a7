"""The share-group offsets admin APIs (DescribeShareGroupOffsets, AlterShareGroupOffsets,
DeleteShareGroupOffsets) between confluent-kafka ``ShareConsumer`` runs against a real
kcoord process. confluent-kafka 2.16.1's AdminClient has no share-group offsets methods
(librdkafka 2.16 exports none), so the admin calls are raw frames; the consumers, the
producer and ``share.auto.offset.reset=earliest`` (IncrementalAlterConfigs on the GROUP
resource) are confluent-kafka's."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from e2e_support import wait_until

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "share"))

from share_offsets_wire import (
    ALTER_OFFSETS,
    DELETE_OFFSETS,
    DESCRIBE_OFFSETS,
    alter_body,
    delete_body,
    describe_body,
    offsets_of,
)
from share_wire import BlockingClient

from wire.constants import ErrorCode

pytestmark = pytest.mark.slow

confluent_kafka = pytest.importorskip("confluent_kafka")
ck_admin = pytest.importorskip("confluent_kafka.admin")

FAST = {
    "group.share.heartbeat.interval.ms": "500",
    "group.share.min.heartbeat.interval.ms": "500",
    "group.share.session.timeout.ms": "6000",
    "group.share.min.session.timeout.ms": "3000",
}
GROUP = "offsets-clients"
TOPIC = "so"


def _drain(bootstrap: str, count: int) -> list[tuple[int, int]]:
    """A ShareConsumer (implicit acknowledgement) takes ``count`` records, commits their
    acknowledgements (ACCEPT) and closes, leaving the group: their (offset, delivery
    count)."""
    consumer = confluent_kafka.ShareConsumer({"bootstrap.servers": bootstrap,
                                              "group.id": GROUP, "log_level": 0})
    consumer.subscribe([TOPIC])
    got: list[tuple[int, int]] = []
    try:
        def enough() -> bool:
            got.extend((m.offset(), m.delivery_count())
                       for m in consumer.poll(0.5) or [] if m.error() is None)
            return len(got) >= count

        wait_until(enough, timeout=60, what=f"{count} records delivered")
        consumer.commit_sync()
    finally:
        consumer.close()
    return sorted(got)


def _once_empty(client: BlockingClient, api: int, body: Any) -> Any:
    """The answer once the closed consumer's leave has emptied the group."""
    answers: list[Any] = []

    def answered() -> bool:
        answers.append(client.request(api, 0, body))
        return bool(answers[-1].error_code != ErrorCode.NON_EMPTY_GROUP)

    wait_until(answered, timeout=30, what="the share group empty")
    return answers[-1]


def test_alter_and_delete_share_offsets_between_share_consumers(start_kcoord: Any) -> None:
    server = start_kcoord(topics=[f"{TOPIC}:1"], config=FAST)
    admin = ck_admin.AdminClient({"bootstrap.servers": server.bootstrap})
    resource = ck_admin.ConfigResource(
        ck_admin.ResourceType.GROUP, GROUP, incremental_configs=[
            ck_admin.ConfigEntry(
                "share.auto.offset.reset", "earliest",
                incremental_operation=ck_admin.AlterConfigOpType.SET)])
    for future in admin.incremental_alter_configs([resource]).values():
        future.result(timeout=30)
    producer = confluent_kafka.Producer({"bootstrap.servers": server.bootstrap})
    for i in range(10):
        producer.produce(TOPIC, b"r%d" % i)
    producer.flush(10)
    client = BlockingClient(server.port)
    try:
        assert _drain(server.bootstrap, 10) == [(o, 1) for o in range(10)]
        assert offsets_of(client.request(DESCRIBE_OFFSETS, 1, describe_body(
            GROUP, None))) == {(TOPIC, 0): (10, 0)}  # every record accepted

        altered = _once_empty(client, ALTER_OFFSETS, alter_body(GROUP, {TOPIC: {0: 6}}))
        assert [(p.partition_index, p.error_code) for t in altered.responses
                for p in t.partitions] == [(0, 0)]
        assert offsets_of(client.request(DESCRIBE_OFFSETS, 1, describe_body(
            GROUP, {TOPIC: [0]}))) == {(TOPIC, 0): (6, 4)}
        assert _drain(server.bootstrap, 4) == [(o, 1) for o in range(6, 10)]

        deleted = _once_empty(client, DELETE_OFFSETS, delete_body(GROUP, [TOPIC]))
        assert [(t.topic_name, t.error_code) for t in deleted.responses] == [(TOPIC, 0)]
        assert offsets_of(client.request(DESCRIBE_OFFSETS, 1, describe_body(
            GROUP, {TOPIC: [0]}))) == {(TOPIC, 0): (-1, -1)}
        # Started again by share.auto.offset.reset=earliest: all ten come once more.
        assert _drain(server.bootstrap, 10) == [(o, 1) for o in range(10)]
    finally:
        client.close()
