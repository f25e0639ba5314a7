"""Topic administration with real clients (issue 12): CreatePartitions through
confluent-kafka's AdminClient, noticed by a classic consumer group and by a KIP-848 group,
and kept across a restart."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from e2e_support import wait_until

confluent_kafka = pytest.importorskip("confluent_kafka")
admin_module = pytest.importorskip("confluent_kafka.admin")

FAST = {
    "group.consumer.heartbeat.interval.ms": "500",
    "group.consumer.min.heartbeat.interval.ms": "500",
    "group.consumer.session.timeout.ms": "6000",
    "group.consumer.min.session.timeout.ms": "3000",
}


def subscribed(bootstrap: str, group: str, protocol: str, owned: set[int]) -> Any:
    consumer = confluent_kafka.Consumer({
        "bootstrap.servers": bootstrap, "group.id": group, "group.protocol": protocol,
        "topic.metadata.refresh.interval.ms": 500, "enable.auto.commit": False})

    def on_assign(_: Any, parts: list[Any]) -> None:
        owned.update(p.partition for p in parts)

    def on_revoke(_: Any, parts: list[Any]) -> None:
        owned.difference_update(p.partition for p in parts)

    consumer.subscribe(["grow"], on_assign=on_assign, on_revoke=on_revoke)
    return consumer


@pytest.mark.parametrize("protocol", ["classic", "consumer"])
def test_consumer_groups_take_new_partitions(
    start_kcoord: Any, tmp_path: Path, protocol: str
) -> None:
    data = tmp_path / f"grow-{protocol}"
    server = start_kcoord(data_dir=data, topics=["grow:2"], config=FAST)
    owned: set[int] = set()
    consumer = subscribed(server.bootstrap, f"grow-{protocol}", protocol, owned)
    try:
        wait_until(lambda: consumer.poll(0.1) is None and owned == {0, 1}, timeout=30,
                   interval=0, what="the first two partitions")
        admin = admin_module.AdminClient({"bootstrap.servers": server.bootstrap})
        (future,) = admin.create_partitions([admin_module.NewPartitions("grow", 5)]).values()
        future.result(10)
        wait_until(lambda: consumer.poll(0.1) is None and owned == {0, 1, 2, 3, 4},
                   timeout=30, interval=0, what="the grown topic's partitions")
        (shrink,) = admin.create_partitions([admin_module.NewPartitions("grow", 3)]).values()
        with pytest.raises(confluent_kafka.KafkaException) as refused:
            shrink.result(10)
        assert refused.value.args[0].code() == confluent_kafka.KafkaError.INVALID_PARTITIONS
    finally:
        consumer.close()
    server.kill()
    again = start_kcoord(data_dir=data, topics=["grow:2"], config=FAST)
    metadata = admin_module.AdminClient({"bootstrap.servers": again.bootstrap}).list_topics(
        "grow", timeout=10)
    assert len(metadata.topics["grow"].partitions) == 5


def test_delete_records_moves_where_consumers_start(start_kcoord: Any, tmp_path: Path) -> None:
    data = tmp_path / "trim"
    server = start_kcoord(data_dir=data, topics=["trim:1"])
    producer = confluent_kafka.Producer({"bootstrap.servers": server.bootstrap})
    for i in range(10):
        producer.produce("trim", value=b"%d" % i, partition=0)
    assert producer.flush(10) == 0
    admin = admin_module.AdminClient({"bootstrap.servers": server.bootstrap})
    (future,) = admin.delete_records([confluent_kafka.TopicPartition("trim", 0, 4)]).values()
    assert future.result(10).low_watermark == 4
    server.kill()

    again = start_kcoord(data_dir=data, topics=["trim:1"])
    consumer = confluent_kafka.Consumer({"bootstrap.servers": again.bootstrap,
                                         "group.id": "trim", "auto.offset.reset": "earliest"})
    consumer.subscribe(["trim"])
    got: list[bytes] = []
    try:
        def polled() -> bool:
            message = consumer.poll(0.1)
            if message is not None and not message.error():
                got.append(message.value())
            return len(got) >= 6

        wait_until(polled, timeout=30, interval=0, what="the records from offset 4")
    finally:
        consumer.close()
    assert got == [b"%d" % i for i in range(4, 10)]


def test_admin_clients_read_back_topic_configs(start_kcoord: Any) -> None:
    server = start_kcoord(config={"message.max.bytes": "2000000"})
    admin = admin_module.AdminClient({"bootstrap.servers": server.bootstrap})
    (created,) = admin.create_topics([admin_module.NewTopic(
        "configured", 1, 1, config={"retention.ms": "3600000"})]).values()
    created.result(10)
    resource = admin_module.ConfigResource(admin_module.ResourceType.TOPIC, "configured")
    (future,) = admin.describe_configs([resource]).values()
    configs = future.result(10)
    assert configs["retention.ms"].value == "3600000"
    assert configs["retention.ms"].source == admin_module.ConfigSource.DYNAMIC_TOPIC_CONFIG.value
    assert configs["max.message.bytes"].value == "2000000"
    assert configs["cleanup.policy"].is_default

    import kafka.admin

    kp = kafka.admin.KafkaAdminClient(bootstrap_servers=server.bootstrap)
    try:
        described = kp.describe_configs([kafka.admin.ConfigResource(
            kafka.admin.ConfigResourceType.BROKER, "0")], config_filter="all")
    finally:
        kp.close()
    broker = described["broker"]["0"]
    assert broker["message.max.bytes"]["value"] == "2000000"
