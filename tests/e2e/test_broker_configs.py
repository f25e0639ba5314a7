"""DescribeConfigs of the BROKER resource through confluent-kafka and kafka-python (issue
30 item 1, the keys clients read): ``listeners``, ``advertised.listeners``, ``node.id``,
``broker.id``, ``log.dirs`` and ``process.roles`` as this kcoord process has them (its
bound address, its data directory, a combined broker-and-controller node)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

admin_module = pytest.importorskip("confluent_kafka.admin")
kafka_admin = pytest.importorskip("kafka.admin")

STATIC, DEFAULT = 4, 5


def test_confluent_reads_the_process_keys(start_kcoord: Any, tmp_path: Path) -> None:
    data = tmp_path / "brokerdata"
    server = start_kcoord(data_dir=data)
    host, port = server.bootstrap.rsplit(":", 1)
    admin = admin_module.AdminClient({"bootstrap.servers": server.bootstrap})
    resource = admin_module.ConfigResource(admin_module.ResourceType.BROKER, "0")
    (future,) = admin.describe_configs([resource]).values()
    configs = future.result(10)
    got = {key: (configs[key].value, configs[key].source) for key in (
        "listeners", "advertised.listeners", "node.id", "broker.id", "log.dirs",
        "process.roles")}
    assert got == {
        "listeners": (f"PLAINTEXT://{host}:{port}", STATIC),
        "advertised.listeners": (f"PLAINTEXT://{host}:{port}", DEFAULT),
        "node.id": ("0", STATIC),
        "broker.id": ("0", STATIC),
        "log.dirs": (os.path.abspath(data), STATIC),
        "process.roles": ("broker,controller", STATIC),
    }


def test_kafka_python_reads_the_advertised_address(start_kcoord: Any) -> None:
    server = start_kcoord(extra_args=["--advertised-host", "127.0.0.1"])
    _, port = server.bootstrap.rsplit(":", 1)
    admin = kafka_admin.KafkaAdminClient(bootstrap_servers=server.bootstrap)
    try:
        described = admin.describe_configs([kafka_admin.ConfigResource(
            kafka_admin.ConfigResourceType.BROKER, "0")], config_filter="all")
    finally:
        admin.close()
    broker = described["broker"]["0"]
    assert broker["advertised.listeners"]["value"] == f"PLAINTEXT://127.0.0.1:{port}"
    assert broker["process.roles"]["value"] == "broker,controller"
    assert broker["node.id"]["value"] == "0"
