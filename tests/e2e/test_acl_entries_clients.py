"""Per-entry authorization through a real client (issue 29): confluent-kafka's AdminClient,
logged in over SASL as ``alice``, asks about several resources in one call and gets each
resource's own answer -- the ones alice's ACLs allow are served, the others fail with
their own authorization error -- as against Kafka."""

from __future__ import annotations

from typing import Any

import pytest
from e2e_support import KcoordProcess

pytestmark = pytest.mark.slow

SECURED = {
    "listeners": "SASL_PLAINTEXT://127.0.0.1:0",
    "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
    "super.users": "User:admin",
}
USERS = ["--sasl-user", "admin:admin-secret", "--sasl-user", "alice:alice-secret"]


def _admin(server: KcoordProcess, user: str, password: str) -> Any:
    from confluent_kafka.admin import AdminClient

    return AdminClient({"bootstrap.servers": server.bootstrap,
                        "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
                        "sasl.username": user, "sasl.password": password})


def _outcomes(futures: dict[Any, Any]) -> dict[str, Any]:
    """Each resource's name -> its result, or the error code it failed with."""
    from confluent_kafka import KafkaException

    out: dict[str, Any] = {}
    for resource, future in futures.items():
        try:
            out[resource.name] = future.result(timeout=15)
        except KafkaException as failure:
            out[resource.name] = failure.args[0].code()
    return out


def test_confluent_admin_gets_each_resources_own_answer(start_kcoord: Any) -> None:
    from confluent_kafka import KafkaError
    from confluent_kafka.admin import (
        AclBinding,
        AclOperation,
        AclPermissionType,
        AlterConfigOpType,
        ConfigEntry,
        ConfigResource,
        ResourcePatternType,
        ResourceType,
    )

    server: KcoordProcess = start_kcoord(config=SECURED, extra_args=USERS,
                                         topics=["orders:1", "payments:1"])
    admin = _admin(server, "admin", "admin-secret")
    binding = AclBinding(ResourceType.TOPIC, "orders", ResourcePatternType.LITERAL,
                         "User:alice", "*", AclOperation.ALTER_CONFIGS,
                         AclPermissionType.ALLOW)  # (implies DESCRIBE_CONFIGS)
    for future in admin.create_acls([binding]).values():
        future.result(timeout=15)
    alice = _admin(server, "alice", "alice-secret")

    described = _outcomes(alice.describe_configs([
        ConfigResource(ConfigResource.Type.TOPIC, "orders"),
        ConfigResource(ConfigResource.Type.TOPIC, "payments")]))
    assert "retention.ms" in described["orders"]
    assert described["payments"] == KafkaError.TOPIC_AUTHORIZATION_FAILED

    def retention(value: str, *names: str) -> list[Any]:
        return [ConfigResource(ConfigResource.Type.TOPIC, name, incremental_configs=[
            ConfigEntry("retention.ms", value,
                        incremental_operation=AlterConfigOpType.SET)]) for name in names]

    altered = _outcomes(alice.incremental_alter_configs(retention("60000", "orders",
                                                                  "payments")))
    assert altered == {"orders": None, "payments": KafkaError.TOPIC_AUTHORIZATION_FAILED}
    seen = _outcomes(admin.describe_configs([
        ConfigResource(ConfigResource.Type.TOPIC, name) for name in ("orders", "payments")]))
    assert seen["orders"]["retention.ms"].value == "60000"
    assert seen["payments"]["retention.ms"].value != "60000"
