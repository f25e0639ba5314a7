"""DescribeClientQuotas and AlterClientQuotas through real clients' codecs over TCP (issue 30
item 6). Neither confluent-kafka's AdminClient (librdkafka has no client quota API) nor
kafka-python's or aiokafka's admin clients expose them, so the requests are built with the
clients' own protocol classes and sent through their connections: kafka-python's
KafkaAdminClient (its JSON-schema codec, the version it negotiates from ApiVersions: v1,
flexible), then aiokafka's DescribeClientQuotasRequest_v0 (its hand-written v0 schema) on a
server restarted after SIGKILL, which still holds the quotas."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

# Real clients and a restart: slow, run by CI after the default run.
pytestmark = pytest.mark.slow

kafka_admin = pytest.importorskip("kafka.admin")
quota_protocol = pytest.importorskip("kafka.protocol.admin.client_quotas")
aiokafka = pytest.importorskip("aiokafka")
aiokafka_admin = pytest.importorskip("aiokafka.protocol.admin")

AlterRequest = quota_protocol.AlterClientQuotasRequest
DescribeRequest = quota_protocol.DescribeClientQuotasRequest
EXACT, DEFAULT, SPECIFIED = 0, 1, 2


def _alter(entity: dict[str, str | None], validate_only: bool = False,
           **ops: float | None) -> Any:
    entry = AlterRequest.EntryData(
        entity=[AlterRequest.EntryData.EntityData(entity_type=t, entity_name=n)
                for t, n in entity.items()],
        ops=[AlterRequest.EntryData.OpData(key=k, value=0.0 if v is None else v,
                                           remove=v is None) for k, v in ops.items()])
    return AlterRequest(entries=[entry], validate_only=validate_only)


def _describe(*components: tuple[str, int, str | None], strict: bool = False) -> Any:
    return DescribeRequest(components=[
        DescribeRequest.ComponentData(entity_type=t, match_type=m, match=n)
        for t, m, n in components], strict=strict)


def _send(admin: Any, request: Any) -> Any:
    return admin._manager.run(admin._manager.send, request)


def _entries(answer: Any) -> dict[tuple[tuple[str, str | None], ...], dict[str, float]]:
    assert answer.error_code == 0, answer.error_message
    return {tuple(sorted((e.entity_type, e.entity_name) for e in item.entity)):
            {v.key: v.value for v in item.values} for item in answer.entries}


def test_kafka_python_alters_and_describes_quotas_that_survive_a_restart(
        start_kcoord: Any) -> None:
    server = start_kcoord()
    admin = kafka_admin.KafkaAdminClient(bootstrap_servers=server.bootstrap,
                                         request_timeout_ms=20000)
    try:
        done = _send(admin, _alter({"user": "alice"}, producer_byte_rate=1048576.0,
                                   request_percentage=50.0))
        assert [(e.error_code, e.error_message) for e in done.entries] == [(0, None)]
        assert done.version == 1  # negotiated: the flexible version
        _send(admin, _alter({"user": "alice", "client-id": None}, consumer_byte_rate=2048.0))
        checked = _send(admin, _alter({"client-id": "app"}, validate_only=True,
                                      producer_byte_rate=1.0))
        assert checked.entries[0].error_code == 0
        bad = _send(admin, _alter({"user": "bob"}, consumer_byte_rate=2.5))
        assert [(e.error_code, e.error_message) for e in bad.entries] == [
            (42, "consumer_byte_rate cannot be a fractional value.")]
        alice = _entries(_send(admin, _describe(("user", EXACT, "alice"))))
        assert alice == {
            (("user", "alice"),): {"producer_byte_rate": 1048576.0, "request_percentage": 50.0},
            (("client-id", None), ("user", "alice")): {"consumer_byte_rate": 2048.0}}
        strict = _entries(_send(admin, _describe(("user", EXACT, "alice"),
                                                 ("client-id", DEFAULT, None), strict=True)))
        assert list(strict) == [(("client-id", None), ("user", "alice"))]
        unsupported = _send(admin, _describe(("group", SPECIFIED, None)))
        assert (unsupported.error_code, unsupported.error_message) == (
            35, "Unsupported entity type group")
        _send(admin, _alter({"user": "alice"}, request_percentage=None))
    finally:
        admin.close()

    server.kill()
    restarted = server.start(0)

    async def describe_with_aiokafka() -> Any:
        client = aiokafka.AIOKafkaClient(bootstrap_servers=restarted.bootstrap)
        await client.bootstrap()
        try:
            node = client.cluster.brokers().pop().nodeId
            request = aiokafka_admin.DescribeClientQuotasRequest([], False)
            return await client.send(node, request)
        finally:
            await client.close()

    answer = asyncio.run(describe_with_aiokafka())
    assert answer.error_code == 0
    got = {tuple(sorted(tuple(e) for e in entity)): dict(values)
           for entity, values in answer.entries}
    assert got == {(("user", "alice"),): {"producer_byte_rate": 1048576.0},
                   (("client-id", None), ("user", "alice")): {"consumer_byte_rate": 2048.0}}


def test_librdkafka_reports_the_throttle_of_a_producer_and_a_consumer_over_quota(
        start_kcoord: Any) -> None:
    """confluent-kafka's ``throttle_cb`` (librdkafka reads throttle_time_ms from Produce and
    Fetch answers) fires for a producer and a consumer whose client ids are over their
    byte-rate quotas, set through kafka-python's admin connection (the consumer's 5000 B/s
    lets one 50 KB window through, then throttles the rest)."""
    import confluent_kafka

    server = start_kcoord(topics=["quota-topic:1"])
    admin = kafka_admin.KafkaAdminClient(bootstrap_servers=server.bootstrap,
                                         request_timeout_ms=20000)
    try:
        for client_id, key, rate in (("slow-producer", "producer_byte_rate", 1000.0),
                                     ("slow-consumer", "consumer_byte_rate", 5000.0)):
            done = _send(admin, _alter({"client-id": client_id}, **{key: rate}))
            assert [e.error_code for e in done.entries] == [0]
    finally:
        admin.close()

    produced: list[Any] = []
    producer = confluent_kafka.Producer({
        "bootstrap.servers": server.bootstrap, "client.id": "slow-producer",
        "linger.ms": 0, "throttle_cb": produced.append})
    producer.produce("quota-topic", b"v" * 15_000)  # 1500 B/s over ten seconds: throttled
    assert producer.flush(10) == 0
    producer.poll(0)
    assert produced and produced[0].throttle_time > 0 and produced[0].broker_id == 0
    other = confluent_kafka.Producer({"bootstrap.servers": server.bootstrap, "linger.ms": 0})
    for _ in range(6):  # 60 KB more, from a client without a quota
        other.produce("quota-topic", b"w" * 10_000)
    assert other.flush(10) == 0

    fetched: list[Any] = []
    consumer = confluent_kafka.Consumer({
        "bootstrap.servers": server.bootstrap, "client.id": "slow-consumer",
        "group.id": "quota-group", "auto.offset.reset": "earliest",
        "throttle_cb": fetched.append})
    consumer.subscribe(["quota-topic"])
    got = 0
    try:
        for _ in range(60):
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                got += 1
            if fetched:
                break
    finally:
        consumer.close()
    assert got >= 1 and fetched and fetched[0].throttle_time > 0


def test_kafka_python_reads_the_throttle_of_a_client_over_its_request_percentage(
        start_kcoord: Any) -> None:
    """A request quota (``request_percentage``) set while a kafka-python client is connected:
    its next Metadata answer, decoded by kafka-python's own codec, carries throttle_time_ms;
    another client id's is not throttled. 0.0002 % of a thread is less than any Metadata's
    handling time (20 us would reach it)."""
    metadata_protocol = pytest.importorskip("kafka.protocol.metadata")

    server = start_kcoord()
    busy = kafka_admin.KafkaAdminClient(bootstrap_servers=server.bootstrap,
                                        client_id="busy-client", request_timeout_ms=20000)
    other = kafka_admin.KafkaAdminClient(bootstrap_servers=server.bootstrap,
                                         client_id="calm-client", request_timeout_ms=20000)
    try:
        # Before the quota: connected (a new connection's ApiVersions would carry the
        # throttle, and kafka-python would wait it out before its next request, KIP-219).
        assert _send(busy, metadata_protocol.MetadataRequest(topics=None)).throttle_time_ms == 0
        done = _send(other, _alter({"client-id": "busy-client"}, request_percentage=0.0002))
        assert [e.error_code for e in done.entries] == [0]
        answer = _send(busy, metadata_protocol.MetadataRequest(topics=None))
        assert answer.throttle_time_ms > 0
        assert _send(other, metadata_protocol.MetadataRequest(topics=None)).throttle_time_ms == 0
    finally:
        other.close()
        busy.close()
