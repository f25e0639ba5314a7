"""DescribeCluster (issue 30) through confluent-kafka's and kafka-python's admin clients
over TCP: the cluster id (the same after a restart on the same data directory), this
broker as controller, its address, and the cluster operations Kafka reports without an
authorizer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

confluent_kafka = pytest.importorskip("confluent_kafka")
admin_module = pytest.importorskip("confluent_kafka.admin")
kafka_admin = pytest.importorskip("kafka.admin")


def confluent_describe(bootstrap: str) -> Any:
    admin = admin_module.AdminClient({"bootstrap.servers": bootstrap})
    return admin.describe_cluster(include_authorized_operations=True,
                                  request_timeout=10).result(15)


def test_confluent_describe_cluster_is_this_broker(start_kcoord: Any, tmp_path: Path) -> None:
    data = tmp_path / "cluster"
    server = start_kcoord(data_dir=data)
    host, port = server.bootstrap.rsplit(":", 1)
    described = confluent_describe(server.bootstrap)
    assert len(described.cluster_id) == 22
    assert described.controller.id == 0
    assert [(n.id, n.host, n.port, n.rack) for n in described.nodes] == [
        (0, host, int(port), None)]
    assert {op.name for op in described.authorized_operations} == {
        "CREATE", "ALTER", "DESCRIBE", "CLUSTER_ACTION", "DESCRIBE_CONFIGS", "ALTER_CONFIGS",
        "IDEMPOTENT_WRITE"}
    server.stop()
    restarted = start_kcoord(data_dir=data)
    assert confluent_describe(restarted.bootstrap).cluster_id == described.cluster_id


def test_kafka_python_describe_cluster(start_kcoord: Any) -> None:
    server = start_kcoord()
    host, port = server.bootstrap.rsplit(":", 1)
    admin = kafka_admin.KafkaAdminClient(bootstrap_servers=server.bootstrap,
                                         request_timeout_ms=10000)
    try:
        described = admin.describe_cluster()
    finally:
        admin.close()
    assert described["controller_id"] == 0
    assert len(described["cluster_id"]) == 22
    assert [(b["broker_id"], b["host"], b["port"], b["rack"], b["is_fenced"])
            for b in described["brokers"]] == [(0, host, int(port), None, False)]
    assert "DESCRIBE" in {str(op).rsplit(".", 1)[-1]
                          for op in described["authorized_operations"]}
