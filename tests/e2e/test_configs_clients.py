"""AlterConfigs, IncrementalAlterConfigs and DescribeConfigs through real clients over TCP
(issue 30 item 1): confluent-kafka's AdminClient on a topic, a group and a broker,
kafka-python's admin, a topic's ``max.message.bytes`` failing a too-large produce with
MESSAGE_TOO_LARGE, ``message.timestamp.type=LogAppendTime`` stamping batches, and every
change surviving a SIGKILL restart."""

from __future__ import annotations

import time
from typing import Any

import pytest

# Real clients for tens of seconds: slow, run by CI after the default run (which stays
# under ten minutes on two cores).
pytestmark = pytest.mark.slow

admin_module = pytest.importorskip("confluent_kafka.admin")
confluent_kafka = pytest.importorskip("confluent_kafka")
kafka_admin = pytest.importorskip("kafka.admin")

from confluent_kafka.admin import (  # noqa: E402
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    ResourceType,
)
from e2e_support import raw_request  # noqa: E402

TIMEOUT = 20


def _admin(bootstrap: str) -> Any:
    return admin_module.AdminClient({"bootstrap.servers": bootstrap})


def _create(admin: Any, name: str, configs: dict[str, str] | None = None) -> None:
    (future,) = admin.create_topics([admin_module.NewTopic(
        name, 1, 1, config=configs or {})]).values()
    future.result(TIMEOUT)


def _incremental(admin: Any, resource_type: Any, name: str,
                 *ops: tuple[str, Any, str | None]) -> Any:
    entries = [ConfigEntry(key, value, incremental_operation=op) for key, op, value in ops]
    (future,) = admin.incremental_alter_configs(
        [ConfigResource(resource_type, name, incremental_configs=entries)]).values()
    return future


def _set_cluster_default(bootstrap: str, key: str, value: str) -> None:
    """IncrementalAlterConfigs of the cluster-wide default broker resource (the empty name,
    which librdkafka's ConfigResource refuses), over the wire."""
    answer = raw_request(bootstrap, 44, 1, {"validate_only": False, "resources": [{
        "resource_type": 4, "resource_name": "",
        "configs": [{"name": key, "config_operation": 0, "value": value}]}]})
    assert [r.error_code for r in answer.responses] == [0]


def _describe(admin: Any, resource_type: Any, name: str) -> dict[str, Any]:
    (future,) = admin.describe_configs([ConfigResource(resource_type, name)]).values()
    return dict(future.result(TIMEOUT))


def test_confluent_incremental_alter_on_a_topic(start_kcoord: Any) -> None:
    server = start_kcoord()
    admin = _admin(server.bootstrap)
    _create(admin, "conf-topic")
    _incremental(admin, ResourceType.TOPIC, "conf-topic",
                 ("retention.ms", AlterConfigOpType.SET, "3600000"),
                 ("cleanup.policy", AlterConfigOpType.APPEND, "compact")).result(TIMEOUT)
    configs = _describe(admin, ResourceType.TOPIC, "conf-topic")
    assert (configs["retention.ms"].value, configs["retention.ms"].source) == (
        "3600000", ConfigSource.DYNAMIC_TOPIC_CONFIG.value)
    assert configs["cleanup.policy"].value == "delete,compact"
    assert configs["segment.bytes"].source == ConfigSource.DEFAULT_CONFIG.value
    _incremental(admin, ResourceType.TOPIC, "conf-topic",
                 ("retention.ms", AlterConfigOpType.DELETE, None),
                 ("cleanup.policy", AlterConfigOpType.SUBTRACT, "delete")).result(TIMEOUT)
    configs = _describe(admin, ResourceType.TOPIC, "conf-topic")
    assert (configs["retention.ms"].value, configs["retention.ms"].source) == (
        "604800000", ConfigSource.DEFAULT_CONFIG.value)
    assert configs["cleanup.policy"].value == "compact"


def test_confluent_sees_kafkas_errors(start_kcoord: Any) -> None:
    server = start_kcoord()
    admin = _admin(server.bootstrap)
    _create(admin, "conf-errors")
    cases = [
        (ResourceType.TOPIC, "conf-errors", ("no.such.key", AlterConfigOpType.SET, "1"),
         "INVALID_CONFIG", "Unknown topic config name: no.such.key"),
        (ResourceType.TOPIC, "conf-errors", ("retention.ms", AlterConfigOpType.SET, "soon"),
         "INVALID_CONFIG",
         "Invalid value soon for configuration retention.ms: Not a number of type LONG"),
        (ResourceType.TOPIC, "conf-errors", ("retention.ms", AlterConfigOpType.APPEND, "1"),
         "INVALID_CONFIG", "Can't APPEND to key retention.ms because its type is not LIST."),
        (ResourceType.TOPIC, "missing", ("retention.ms", AlterConfigOpType.SET, "1"),
         "UNKNOWN_TOPIC_OR_PART", "The topic 'missing' does not exist."),
        (ResourceType.BROKER, "0", ("node.id", AlterConfigOpType.SET, "3"),
         "INVALID_REQUEST", "Cannot update these configs dynamically: Set(node.id)"),
    ]
    for resource_type, name, op, code, message in cases:
        with pytest.raises(confluent_kafka.KafkaException) as info:
            _incremental(admin, resource_type, name, op).result(TIMEOUT)
        error = info.value.args[0]
        assert (error.name(), message in error.str()) == (code, True), error.str()


def test_confluent_group_config(start_kcoord: Any) -> None:
    server = start_kcoord()
    admin = _admin(server.bootstrap)
    _incremental(admin, ResourceType.GROUP, "conf-group",
                 ("consumer.session.timeout.ms", AlterConfigOpType.SET, "50000")).result(TIMEOUT)
    configs = _describe(admin, ResourceType.GROUP, "conf-group")
    assert configs["consumer.session.timeout.ms"].value == "50000"
    assert configs["consumer.heartbeat.interval.ms"].value == "5000"
    with pytest.raises(confluent_kafka.KafkaException) as info:
        _incremental(admin, ResourceType.GROUP, "conf-group", (
            "consumer.session.timeout.ms", AlterConfigOpType.SET, "1000")).result(TIMEOUT)
    assert "must be greater than or equal to group.consumer.min.session.timeout.ms" in (
        info.value.args[0].str())


def test_confluent_broker_and_cluster_default(start_kcoord: Any) -> None:
    server = start_kcoord()
    admin = _admin(server.bootstrap)
    _create(admin, "conf-broker")
    _set_cluster_default(server.bootstrap, "log.retention.ms", "7200000")
    topic = _describe(admin, ResourceType.TOPIC, "conf-broker")
    assert (topic["retention.ms"].value, topic["retention.ms"].source) == (
        "7200000", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG.value)
    _incremental(admin, ResourceType.BROKER, "0",
                 ("log.retention.ms", AlterConfigOpType.SET, "60000")).result(TIMEOUT)
    broker = _describe(admin, ResourceType.BROKER, "0")
    entry = broker["log.retention.ms"]
    assert (entry.value, entry.source, entry.is_read_only) == (
        "60000", ConfigSource.DYNAMIC_BROKER_CONFIG.value, False)
    assert broker["node.id"].is_read_only
    defaults = raw_request(server.bootstrap, 32, 4, {"resources": [
        {"resource_type": 4, "resource_name": "", "configuration_keys": None}]})
    # The cluster-wide defaults: the one set here, and ELR's min.insync.replicas, which the
    # controller writes when it starts (Kafka 4.1+, maybeGenerateElrSafetyRecords).
    assert sorted((c.name, c.value, c.config_source) for c in defaults.results[0].configs) == [
        ("log.retention.ms", "7200000", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG.value),
        ("min.insync.replicas", "1", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG.value)]


def test_confluent_legacy_alter_configs_replaces_every_key(start_kcoord: Any) -> None:
    server = start_kcoord()
    admin = _admin(server.bootstrap)
    _create(admin, "conf-legacy", {"retention.ms": "1000"})
    resource = ConfigResource(ResourceType.TOPIC, "conf-legacy",
                              set_config={"segment.ms": "3600000"})
    (future,) = admin.alter_configs([resource]).values()
    future.result(TIMEOUT)
    configs = _describe(admin, ResourceType.TOPIC, "conf-legacy")
    assert configs["segment.ms"].source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value
    assert configs["retention.ms"].source == ConfigSource.DEFAULT_CONFIG.value


def test_kafka_python_alter_and_describe(start_kcoord: Any) -> None:
    server = start_kcoord(topics=["kp-conf:1"])
    admin = kafka_admin.KafkaAdminClient(bootstrap_servers=server.bootstrap)
    try:
        resource = kafka_admin.ConfigResource(
            kafka_admin.ConfigResourceType.TOPIC, "kp-conf", {"retention.bytes": "123456"})
        legacy = admin.alter_configs([resource], incremental=False)
        incremental = admin.alter_configs([kafka_admin.ConfigResource(
            kafka_admin.ConfigResourceType.TOPIC, "kp-conf", {"segment.ms": "3600000"})],
            incremental=True)
        assert legacy == incremental == {"topic": {"kp-conf": "OK"}}
        described = admin.describe_configs([kafka_admin.ConfigResource(
            kafka_admin.ConfigResourceType.TOPIC, "kp-conf")], config_filter="all")
    finally:
        admin.close()
    topic = described["topic"]["kp-conf"]
    assert (topic["retention.bytes"]["value"], topic["segment.ms"]["value"]) == (
        "123456", "3600000")


def test_max_message_bytes_fails_a_large_produce(start_kcoord: Any) -> None:
    server = start_kcoord()
    admin = _admin(server.bootstrap)
    _create(admin, "conf-size")
    _incremental(admin, ResourceType.TOPIC, "conf-size",
                 ("max.message.bytes", AlterConfigOpType.SET, "1000")).result(TIMEOUT)
    producer = confluent_kafka.Producer({"bootstrap.servers": server.bootstrap,
                                         "linger.ms": 0, "retries": 0})
    outcomes: list[Any] = []
    producer.produce("conf-size", b"x" * 100, on_delivery=lambda err, _m: outcomes.append(err))
    assert producer.flush(TIMEOUT) == 0
    producer.produce("conf-size", b"y" * 5000, on_delivery=lambda err, _m: outcomes.append(err))
    assert producer.flush(TIMEOUT) == 0
    assert outcomes[0] is None
    assert outcomes[1].code() == confluent_kafka.KafkaError.MSG_SIZE_TOO_LARGE


def test_log_append_time_stamps_the_batch(start_kcoord: Any) -> None:
    server = start_kcoord()
    admin = _admin(server.bootstrap)
    _create(admin, "conf-time", {"message.timestamp.type": "LogAppendTime"})
    producer = confluent_kafka.Producer({"bootstrap.servers": server.bootstrap})
    before = int(time.time() * 1000)
    producer.produce("conf-time", b"v", timestamp=1000)
    assert producer.flush(TIMEOUT) == 0
    consumer = confluent_kafka.Consumer({"bootstrap.servers": server.bootstrap,
                                         "group.id": "conf-time", "auto.offset.reset":
                                         "earliest"})
    try:
        consumer.subscribe(["conf-time"])
        deadline = time.monotonic() + TIMEOUT
        message = None
        while message is None and time.monotonic() < deadline:
            message = consumer.poll(1.0)
        assert message is not None and message.error() is None
        kind, stamp = message.timestamp()
        assert kind == confluent_kafka.TIMESTAMP_LOG_APPEND_TIME
        assert stamp >= before
    finally:
        consumer.close()


def test_changes_survive_a_sigkill_restart(start_kcoord: Any, tmp_path: Any) -> None:
    data = tmp_path / "conf-restart"
    server = start_kcoord(data_dir=data)
    admin = _admin(server.bootstrap)
    _create(admin, "conf-kept", {"retention.ms": "1000"})
    _incremental(admin, ResourceType.TOPIC, "conf-kept",
                 ("retention.ms", AlterConfigOpType.DELETE, None),
                 ("max.message.bytes", AlterConfigOpType.SET, "2000")).result(TIMEOUT)
    _incremental(admin, ResourceType.GROUP, "conf-kept-group",
                 ("consumer.heartbeat.interval.ms", AlterConfigOpType.SET, "6000")).result(TIMEOUT)
    _set_cluster_default(server.bootstrap, "log.retention.bytes", "99999")
    server.kill()
    again = start_kcoord(data_dir=data)
    admin = _admin(again.bootstrap)
    topic = _describe(admin, ResourceType.TOPIC, "conf-kept")
    assert topic["max.message.bytes"].value == "2000"
    assert topic["retention.ms"].source == ConfigSource.DEFAULT_CONFIG.value
    assert topic["retention.bytes"].value == "99999"
    group = _describe(admin, ResourceType.GROUP, "conf-kept-group")
    assert group["consumer.heartbeat.interval.ms"].value == "6000"


def test_kafka_python_reads_every_keys_type_and_documentation(start_kcoord: Any) -> None:
    """kafka-python's admin negotiates DescribeConfigs v4 (without documentation): every key
    of a topic, the broker (with the keys clients read) and a group has its Kafka type; its own
    codec, asking for documentation, reads every key's."""
    import socket

    from kafka.protocol.admin import DescribeConfigsRequest, DescribeConfigsResponse

    server = start_kcoord(topics=["kp-types:1"])
    kinds = kafka_admin.ConfigResourceType
    resources = [(kinds.TOPIC, "kp-types"), (kinds.BROKER, "0"), (kinds.GROUP, "kp-group")]
    admin = kafka_admin.KafkaAdminClient(bootstrap_servers=server.bootstrap)
    try:
        described = admin.describe_configs(
            [kafka_admin.ConfigResource(kind, name) for kind, name in resources],
            config_filter="all")
    finally:
        admin.close()
    topic, broker, group = (described[kind.name.lower()][name] for kind, name in resources)
    assert (topic["retention.ms"]["config_type"], topic["cleanup.policy"]["config_type"],
            group["consumer.session.timeout.ms"]["config_type"],
            broker["group.max.size"]["config_type"]) == ("LONG", "LIST", "INT", "INT")
    assert {key: broker[key]["config_type"] for key in (
        "listeners", "advertised.listeners", "node.id", "broker.id", "log.dirs",
        "process.roles")} == {"listeners": "STRING", "advertised.listeners": "STRING",
                              "node.id": "INT", "broker.id": "INT", "log.dirs": "STRING",
                              "process.roles": "LIST"}
    configs = [*topic.values(), *broker.values(), *group.values()]
    assert all(c["config_type"] != "UNKNOWN" and c["documentation"] is None for c in configs)
    request = DescribeConfigsRequest(
        resources=[(kind.value, name, None) for kind, name in resources],
        include_synonyms=True, include_documentation=True)
    request.with_header(correlation_id=7, client_id="kp")
    host, port = server.bootstrap.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=TIMEOUT) as sock:
        sock.sendall(request.encode(version=4, header=True, framed=True))
        answer = DescribeConfigsResponse.decode(_frame(sock), version=4, header=True)
    documented = [(c.name, c.documentation) for r in answer.results for c in r.configs]
    assert len(documented) == len(configs)
    assert all(doc for _, doc in documented), [name for name, doc in documented if not doc]


def _frame(sock: Any) -> bytes:
    """One size-prefixed frame's bytes."""
    def exactly(count: int) -> bytes:
        data = b""
        while len(data) < count:
            chunk = sock.recv(count - len(data))
            assert chunk, "the server closed the connection"
            data += chunk
        return data

    return exactly(int.from_bytes(exactly(4), "big"))


def test_confluent_reads_kafkas_synonyms_for_a_group_and_a_topic(start_kcoord: Any) -> None:
    """librdkafka asks DescribeConfigs for synonyms: a group key's source and synonyms are the
    broker key it follows (STATIC_BROKER_CONFIG when the server was started with it, then
    Kafka's default), a topic's retention.ms has none until log.retention.ms is set (Kafka's
    configSynonyms drops log.retention.hours, which precedes it)."""
    server = start_kcoord(topics=["syn-topic:1"], config={
        "group.consumer.session.timeout.ms": "50000", "log.retention.hours": "24"})
    admin = _admin(server.bootstrap)
    group = _describe(admin, ResourceType.GROUP, "syn-group")
    session = group["consumer.session.timeout.ms"]
    assert (session.value, session.source) == ("50000", ConfigSource.STATIC_BROKER_CONFIG.value)
    # confluent-kafka keys synonyms by name: the last of the broker key's layers (its default).
    assert {name: (s.value, s.source) for name, s in session.synonyms.items()} == {
        "group.consumer.session.timeout.ms": ("45000", ConfigSource.DEFAULT_CONFIG.value)}
    answer = raw_request(server.bootstrap, 32, 4, {"resources": [{
        "resource_type": 32, "resource_name": "syn-group",
        "configuration_keys": ["consumer.session.timeout.ms"]}],
        "include_synonyms": True, "include_documentation": True})
    (raw,) = answer.results[0].configs
    assert [(s.name, s.value, s.source) for s in raw.synonyms] == [
        ("group.consumer.session.timeout.ms", "50000", ConfigSource.STATIC_BROKER_CONFIG.value),
        ("group.consumer.session.timeout.ms", "45000", ConfigSource.DEFAULT_CONFIG.value)]
    assert raw.documentation == (
        "The timeout to detect client failures when using the consumer group protocol.")
    topic = _describe(admin, ResourceType.TOPIC, "syn-topic")
    retention = topic["retention.ms"]
    assert (retention.value, retention.source, dict(retention.synonyms)) == (
        "86400000", ConfigSource.DEFAULT_CONFIG.value, {})
    segment = topic["segment.bytes"]
    assert [(s.name, s.source) for s in segment.synonyms.values()] == [
        ("log.segment.bytes", ConfigSource.DEFAULT_CONFIG.value)]
