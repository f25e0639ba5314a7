"""ACLs and SCRAM users end to end (issue 29): real clients over TCP against ``kcoord
serve`` with a SASL_PLAINTEXT listener and ``authorizer.class.name`` set.

- An ACL denial reaches the client as its authorization exception (confluent-kafka's
  TOPIC_AUTHORIZATION_FAILED delivery error, kafka-python's TopicAuthorizationFailedError),
  and the same request is allowed once the admin's ``create_acls`` has added the ACL.
- CreateAcls / DescribeAcls / DeleteAcls round trip through both admin clients.
- A SCRAM user created through AdminClient ``alter_user_scram_credentials`` logs in with
  SCRAM-SHA-256 and SCRAM-SHA-512, and still after a SIGKILL and restart.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest
from e2e_support import KcoordProcess

# Real clients for tens of seconds: slow, run by CI after the default run (which stays
# under ten minutes on two cores).
pytestmark = pytest.mark.slow

ADMIN = ("admin", "admin-secret")
SECURED = {
    "listeners": "SASL_PLAINTEXT://127.0.0.1:0",
    "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
    "super.users": "User:admin",
}
USERS = ["--sasl-user", "admin:admin-secret", "--sasl-user", "alice:alice-secret"]


def _ck(server: KcoordProcess, user: str, password: str,
        mechanism: str = "SCRAM-SHA-256") -> dict[str, Any]:
    return {"bootstrap.servers": server.bootstrap, "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": mechanism, "sasl.username": user, "sasl.password": password}


def _ck_admin(server: KcoordProcess) -> Any:
    from confluent_kafka.admin import AdminClient

    return AdminClient(_ck(server, *ADMIN))


def _ck_produce(config: dict[str, Any], topic: str) -> Any:
    """Produce one record; the delivery error (None when delivered)."""
    import confluent_kafka

    reports: list[Any] = []
    producer = confluent_kafka.Producer({**config, "message.timeout.ms": 10000})
    producer.produce(topic, b"x", on_delivery=lambda err, _msg: reports.append(err))
    producer.flush(15)
    assert reports, "no delivery report within 15 s"
    return reports[0]


def _topic_acl(topic: str, principal: str, operation: Any) -> Any:
    from confluent_kafka.admin import AclBinding, AclPermissionType
    from confluent_kafka.admin import ResourcePatternType as Pattern
    from confluent_kafka.admin import ResourceType as Resource

    return AclBinding(Resource.TOPIC, topic, Pattern.LITERAL, principal, "*", operation,
                      AclPermissionType.ALLOW)


@pytest.fixture
def secured(start_kcoord: Any) -> KcoordProcess:
    process: KcoordProcess = start_kcoord(config=SECURED, extra_args=USERS,
                                          topics=["orders:1"])
    return process


def test_confluent_kafka_denied_then_allowed_after_create_acls(secured: KcoordProcess) -> None:
    import confluent_kafka
    from confluent_kafka.admin import AclOperation

    alice = _ck(secured, "alice", "alice-secret")
    error = _ck_produce(alice, "orders")
    assert error is not None
    assert error.code() == confluent_kafka.KafkaError.TOPIC_AUTHORIZATION_FAILED
    admin = _ck_admin(secured)
    acl = _topic_acl("orders", "User:alice", AclOperation.WRITE)
    for future in admin.create_acls([acl], request_timeout=15).values():
        assert future.result(15) is None
    assert _ck_produce(alice, "orders") is None


def test_confluent_kafka_describe_and_delete_acls_round_trip(secured: KcoordProcess) -> None:
    from confluent_kafka.admin import (
        AclBindingFilter,
        AclOperation,
        AclPermissionType,
        ResourcePatternType,
        ResourceType,
    )

    admin = _ck_admin(secured)
    acls = [_topic_acl("orders", "User:alice", AclOperation.READ),
            _topic_acl("payments", "User:bob", AclOperation.WRITE)]
    for future in admin.create_acls(acls, request_timeout=15).values():
        future.result(15)
    only_alice = AclBindingFilter(ResourceType.ANY, None, ResourcePatternType.ANY, "User:alice",
                                  None, AclOperation.ANY, AclPermissionType.ANY)
    assert admin.describe_acls(only_alice, request_timeout=15).result(15) == [acls[0]]
    deleted = admin.delete_acls([only_alice], request_timeout=15)
    assert [b for f in deleted.values() for b in f.result(15)] == [acls[0]]
    everything = AclBindingFilter(ResourceType.ANY, None, ResourcePatternType.ANY, None, None,
                                  AclOperation.ANY, AclPermissionType.ANY)
    assert admin.describe_acls(everything, request_timeout=15).result(15) == [acls[1]]


def _create_scram_user(server: KcoordProcess, user: str, password: str) -> None:
    from confluent_kafka.admin import (
        ScramCredentialInfo,
        ScramMechanism,
        UserScramCredentialUpsertion,
    )

    admin = _ck_admin(server)
    # One request per mechanism: Kafka's ScramControlManager answers two changes of one user
    # in one request DUPLICATE_RESOURCE, whatever their mechanisms.
    for mechanism in (ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512):
        upsertion = UserScramCredentialUpsertion(user, ScramCredentialInfo(mechanism, 8192),
                                                 password.encode())
        for future in admin.alter_user_scram_credentials([upsertion],
                                                         request_timeout=15).values():
            assert future.result(15) is None
    described = admin.describe_user_scram_credentials([user], request_timeout=15)
    infos = described[user].result(15).scram_credential_infos
    assert sorted((i.mechanism, i.iterations) for i in infos) == [
        (ScramMechanism.SCRAM_SHA_256, 8192), (ScramMechanism.SCRAM_SHA_512, 8192)]


def test_a_scram_user_created_by_the_admin_logs_in_and_survives_a_sigkill(
    start_kcoord: Any,
) -> None:
    server: KcoordProcess = start_kcoord(
        config={**SECURED, "allow.everyone.if.no.acl.found": "true"}, extra_args=USERS)
    _create_scram_user(server, "carol", "carol-secret")
    topic = f"carol-{uuid.uuid4().hex[:6]}"
    for mechanism in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
        assert _ck_produce(_ck(server, "carol", "carol-secret", mechanism), topic) is None
    server.kill()  # SIGKILL: nothing flushed on the way out
    server.start()
    for mechanism in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
        assert _ck_produce(_ck(server, "carol", "carol-secret", mechanism), topic) is None
    assert "carol-secret" not in server.stderr()


def _kp(server: KcoordProcess, user: str, password: str) -> dict[str, Any]:
    return {"bootstrap_servers": server.bootstrap, "security_protocol": "SASL_PLAINTEXT",
            "sasl_mechanism": "SCRAM-SHA-512", "sasl_plain_username": user,
            "sasl_plain_password": password}


def test_kafka_python_denied_then_allowed_and_acls_round_trip(secured: KcoordProcess) -> None:
    import kafka
    import kafka.errors
    from kafka.admin import (
        ACL,
        ACLFilter,
        ACLOperation,
        ACLPermissionType,
        ACLResourcePatternType,
        KafkaAdminClient,
        ResourcePattern,
        ResourcePatternFilter,
        ResourceType,
    )

    producer = kafka.KafkaProducer(**_kp(secured, "alice", "alice-secret"), max_block_ms=5000)
    try:
        with pytest.raises(kafka.errors.TopicAuthorizationFailedError):
            producer.send("orders", b"x").get(10)
    finally:
        producer.close(timeout=5)
    admin = KafkaAdminClient(**_kp(secured, *ADMIN))
    try:
        acl = ACL("User:alice", "*", ACLOperation.WRITE, ACLPermissionType.ALLOW,
                  ResourcePattern(ResourceType.TOPIC, "orders", ACLResourcePatternType.LITERAL))
        created = admin.create_acls([acl])
        assert created["failed"] == [] and len(created["succeeded"]) == 1
        deadline = time.monotonic() + 10
        producer = kafka.KafkaProducer(**_kp(secured, "alice", "alice-secret"))
        try:
            producer.send("orders", b"x").get(10)
        finally:
            producer.close(timeout=5)
        assert time.monotonic() < deadline
        acl_filter = ACLFilter("User:alice", None, ACLOperation.ANY, ACLPermissionType.ANY,
                               ResourcePatternFilter(ResourceType.ANY, None,
                                                     ACLResourcePatternType.ANY))
        described, error = admin.describe_acls(acl_filter)
        assert error is kafka.errors.NoError
        assert [(a.principal, a.operation, a.resource_pattern.resource_name)
                for a in described] == [("User:alice", ACLOperation.WRITE, "orders")]
        [(_filter, matched, error)] = admin.delete_acls([acl_filter])
        assert error is kafka.errors.NoError
        assert [m.resource_pattern.resource_name for m in matched] == ["orders"]
        assert admin.describe_acls(acl_filter)[0] == []
    finally:
        admin.close()


def test_aiokafka_consumer_group_denied_then_allowed(secured: KcoordProcess) -> None:
    """A consumer group: GroupAuthorizationFailedError for aiokafka without READ on the
    group, then the records once the admin has allowed the group and the topic."""
    import asyncio

    import aiokafka
    import aiokafka.errors
    from confluent_kafka.admin import AclBinding, AclOperation, AclPermissionType
    from confluent_kafka.admin import ResourcePatternType as Pattern
    from confluent_kafka.admin import ResourceType as Resource

    assert _ck_produce(_ck(secured, *ADMIN), "orders") is None  # (a super user)
    config = {**_kp(secured, "alice", "alice-secret"), "group_id": "alices",
              "auto_offset_reset": "earliest"}

    async def consume() -> bytes:
        consumer = aiokafka.AIOKafkaConsumer("orders", **config)
        try:
            async with asyncio.timeout(20):
                await consumer.start()
                message = await consumer.getone()
            return bytes(message.value)
        finally:
            await consumer.stop()

    with pytest.raises((aiokafka.errors.GroupAuthorizationFailedError,
                        aiokafka.errors.TopicAuthorizationFailedError)):
        asyncio.run(consume())
    admin = _ck_admin(secured)
    acls = [_topic_acl("orders", "User:alice", AclOperation.READ),
            AclBinding(Resource.GROUP, "alices", Pattern.LITERAL, "User:alice", "*",
                       AclOperation.READ, AclPermissionType.ALLOW)]
    for future in admin.create_acls(acls, request_timeout=15).values():
        future.result(15)
    assert asyncio.run(consume()) == b"x"
