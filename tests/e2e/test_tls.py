"""TLS end to end (issue 29): real clients over TCP against ``kcoord serve`` with SSL and
SASL_SSL listeners -- the generated CA (``DATA_DIR/tls/ca.pem``) or a keystore the test
brings, SASL over TLS with PLAIN and SCRAM-SHA-512, mutual TLS with the principal seen by
the server, a wrong password failing fast, and a PLAINTEXT + SASL_SSL server where each
client is told only its own listener's ports."""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from e2e_support import (
    KcoordProcess,
    aio_round_trip,
    assert_usage_errors,
    ck_round_trip,
    kp_round_trip,
    wait_until,
)

# Real clients for tens of seconds: slow, run by CI after the default run (which stays
# under ten minutes on two cores).
pytestmark = pytest.mark.slow

ALICE = ["--sasl-user", "alice:alice-secret"]
SSL_ONLY = {"listeners": "SSL://127.0.0.1:0"}
SASL_SSL = {"listeners": "SASL_SSL://127.0.0.1:0"}
TWO = {"listeners": "PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0"}


def _ca(server: KcoordProcess) -> str:
    return str(server.data_dir / "tls" / "ca.pem")


def _ck_ssl(server: KcoordProcess, port: int | None = None) -> dict[str, Any]:
    return {"bootstrap.servers": f"127.0.0.1:{port or server.port}",
            "security.protocol": "SSL", "ssl.ca.location": _ca(server)}


def _ck_sasl_ssl(server: KcoordProcess, mechanism: str, password: str = "alice-secret",
                 port: int | None = None) -> dict[str, Any]:
    return {**_ck_ssl(server, port), "security.protocol": "SASL_SSL",
            "sasl.mechanism": mechanism, "sasl.username": "alice", "sasl.password": password}


def _kp_sasl_ssl(server: KcoordProcess, mechanism: str,
                 port: int | None = None) -> dict[str, Any]:
    """kafka-python's (and aiokafka's) names."""
    return {"bootstrap_servers": f"127.0.0.1:{port or server.port}",
            "security_protocol": "SASL_SSL", "ssl_cafile": _ca(server),
            "sasl_mechanism": mechanism, "sasl_plain_username": "alice",
            "sasl_plain_password": "alice-secret"}


def _ck_round_trip(config: dict[str, Any], topic: str, count: int = 3) -> list[bytes]:
    return sorted(ck_round_trip(config, topic, count))


def _kp_round_trip(config: dict[str, Any], topic: str, count: int = 3) -> list[bytes]:
    return sorted(kp_round_trip(config, topic, count))


def _values(count: int = 3) -> list[bytes]:
    return [b"v%d" % i for i in range(count)]


def test_ssl_with_the_generated_ca_survives_a_restart(start_kcoord: Any) -> None:
    server: KcoordProcess = start_kcoord(config=SSL_ONLY)
    assert server.listening_line == f"kcoord listening on 127.0.0.1:{server.port} (SSL)"
    wait_until(lambda: _ca(server) in server.stderr(), 15, what="ca.pem in the start-up log")
    assert _ck_round_trip(_ck_ssl(server), "ssl-ck") == _values()
    import kafka  # kafka-python over SSL too

    kp = {"bootstrap_servers": server.bootstrap, "security_protocol": "SSL",
          "ssl_cafile": _ca(server)}
    assert _kp_round_trip(kp, "ssl-kp") == _values()
    # A restart reuses the certificates: what clients trust stays the same.
    tls_dir = server.data_dir / "tls"
    before = {p.name: p.read_bytes() for p in tls_dir.iterdir()}
    server.stop()
    again: KcoordProcess = start_kcoord(data_dir=server.data_dir, config=SSL_ONLY)
    assert {p.name: p.read_bytes() for p in tls_dir.iterdir()} == before
    consumer = kafka.KafkaConsumer("ssl-kp", group_id="after-restart",
                                   auto_offset_reset="earliest", consumer_timeout_ms=20000,
                                   **{**kp, "bootstrap_servers": again.bootstrap})
    assert sorted(m.value for m in consumer) == _values()
    consumer.close()


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-512"])
def test_sasl_ssl_with_confluent_kafka_and_kafka_python(start_kcoord: Any,
                                                        mechanism: str) -> None:
    server: KcoordProcess = start_kcoord(config=SASL_SSL, extra_args=ALICE)
    name = mechanism.lower()
    assert _ck_round_trip(_ck_sasl_ssl(server, mechanism), f"ck-{name}") == _values()
    assert _kp_round_trip(_kp_sasl_ssl(server, mechanism), f"kp-{name}") == _values()


def test_sasl_ssl_with_aiokafka(start_kcoord: Any) -> None:
    from aiokafka.helpers import create_ssl_context

    server: KcoordProcess = start_kcoord(config=SASL_SSL, extra_args=ALICE)
    config = {**_kp_sasl_ssl(server, "SCRAM-SHA-512"),
              "ssl_context": create_ssl_context(cafile=_ca(server))}
    del config["ssl_cafile"]
    assert sorted(aio_round_trip(config, "aio-tls")) == _values()


def test_a_wrong_password_over_sasl_ssl_fails_fast(start_kcoord: Any) -> None:
    import confluent_kafka

    server: KcoordProcess = start_kcoord(config=SASL_SSL, extra_args=ALICE)
    errors: list[Any] = []
    producer = confluent_kafka.Producer({**_ck_sasl_ssl(server, "SCRAM-SHA-512", "wrong"),
                                         "error_cb": errors.append})
    started = time.monotonic()
    while not errors and time.monotonic() - started < 10:
        producer.poll(0.2)
    assert errors, "no error within 10 s"
    assert errors[0].code() == confluent_kafka.KafkaError._AUTHENTICATION
    assert "invalid credentials with SASL mechanism SCRAM-SHA-512" in errors[0].str()
    # ... and the server keeps serving the right password.
    assert _ck_round_trip(_ck_sasl_ssl(server, "SCRAM-SHA-512"), "after-wrong", 1) == [b"v0"]


def test_mutual_tls_required_takes_the_certificate_principal(start_kcoord: Any,
                                                             tmp_path: Path) -> None:
    import confluent_kafka

    from coordinator.testing.tls_client import issue_client_certificate

    server: KcoordProcess = start_kcoord(
        config={**SSL_ONLY, "ssl.client.auth": "required"},
        extra_args=["--log-level", "debug"])
    client = issue_client_certificate(str(server.data_dir / "tls"), str(tmp_path / "client"),
                                      "alice", "Testing", "Example")
    config = {**_ck_ssl(server), "ssl.certificate.location": client.certificate,
              "ssl.key.location": client.key}
    assert _ck_round_trip(config, "mtls") == _values()
    # The server saw the certificate's distinguished name (Kafka's default mapping).
    assert "client User:CN=alice,OU=Testing,O=Example" in server.stderr_path.read_text()
    # kafka-python with the same certificate.
    import kafka

    admin = kafka.KafkaAdminClient(
        bootstrap_servers=server.bootstrap, security_protocol="SSL", ssl_cafile=_ca(server),
        ssl_certfile=client.certificate, ssl_keyfile=client.key)
    assert "mtls" in admin.list_topics()
    admin.close()
    # Without a certificate the handshake fails, and the server goes on serving.
    errors: list[Any] = []
    producer = confluent_kafka.Producer({**_ck_ssl(server), "error_cb": errors.append})
    started = time.monotonic()
    while not errors and time.monotonic() - started < 10:
        producer.poll(0.2)
    assert errors, "a client without a certificate got no error within 10 s"
    assert _ck_round_trip(config, "mtls-after", 1) == [b"v0"]


def test_each_listener_shows_only_its_own_ports(start_kcoord: Any) -> None:
    """PLAINTEXT and SASL_SSL on one server with two brokers: each client's Metadata lists
    both brokers at its own listener's ports."""
    import confluent_kafka.admin
    import kafka

    server: KcoordProcess = start_kcoord(config=TWO, extra_args=[*ALICE, "--brokers", "2"],
                                         listening_lines=4)
    ports: dict[str, set[int]] = {"PLAINTEXT": set(), "SASL_SSL": set()}
    for line in server.lines:
        ports[line.split()[-1].strip("()")].add(int(line.split()[-2].rsplit(":", 1)[1]))
    plaintext = next(iter(ports["PLAINTEXT"] & {server.ports["PLAINTEXT"]}))
    secured = server.ports["SASL_SSL"]
    assert len(ports["PLAINTEXT"] | ports["SASL_SSL"]) == 4

    def ck_ports(config: dict[str, Any]) -> set[int]:
        metadata = confluent_kafka.admin.AdminClient(config).list_topics(timeout=15)
        return {broker.port for broker in metadata.brokers.values()}

    assert ck_ports({"bootstrap.servers": f"127.0.0.1:{plaintext}"}) == ports["PLAINTEXT"]
    assert ck_ports(_ck_sasl_ssl(server, "PLAIN", port=secured)) == ports["SASL_SSL"]

    def kp_ports(config: dict[str, Any]) -> set[int]:
        admin = kafka.KafkaAdminClient(**config)
        try:
            return {broker["port"] for broker in admin.describe_cluster()["brokers"]}
        finally:
            admin.close()

    assert kp_ports({"bootstrap_servers": f"127.0.0.1:{plaintext}"}) == ports["PLAINTEXT"]
    assert kp_ports(_kp_sasl_ssl(server, "SCRAM-SHA-512", secured)) == ports["SASL_SSL"]
    # Records written on one listener are read on the other.
    topic = f"both-{uuid.uuid4().hex[:6]}"
    producer = kafka.KafkaProducer(bootstrap_servers=f"127.0.0.1:{plaintext}")
    producer.send(topic, b"x").get(20)
    producer.close()
    consumer = kafka.KafkaConsumer(topic, auto_offset_reset="earliest",
                                   consumer_timeout_ms=20000,
                                   **_kp_sasl_ssl(server, "PLAIN", secured))
    assert [m.value for m in consumer] == [b"x"]
    consumer.close()


def test_tls_configuration_mistakes_are_one_line_usage_errors(tmp_path: Path) -> None:
    ssl_listener = ("-c", "listeners=SSL://127.0.0.1:0")
    missing = tmp_path / "missing.pem"
    cases = {
        (*ssl_listener, "-c", f"ssl.keystore.location={missing}"):
            f"ssl.keystore.location {missing} (listener SSL): no such file",
        (*ssl_listener, "-c", "ssl.keystore.type=JKS"): "kcoord reads PEM stores only",
        (*ssl_listener, "-c", "ssl.client.auth=sometimes"):
            "Invalid value sometimes for configuration ssl.client.auth",
        ("-c", "listeners=SECURE://127.0.0.1:0"):
            "no security protocol defined for listener SECURE",
        (*ssl_listener, "-c", f"ssl.truststore.location={missing}"):
            f"ssl.truststore.location {missing}",
    }
    assert_usage_errors(tmp_path / "d", cases)


@pytest.mark.parametrize("mechanism", ["none", "scram-sha-512"])
def test_kafkajs_over_ssl_and_sasl_ssl(start_kcoord: Any, mechanism: str) -> None:
    import json
    import subprocess

    from e2e_support import KAFKAJS_DIR, kafkajs_node

    node = kafkajs_node()
    server: KcoordProcess = start_kcoord(
        config=SSL_ONLY if mechanism == "none" else SASL_SSL, extra_args=ALICE if (
            mechanism != "none") else [])
    run = subprocess.run(
        [node, str(KAFKAJS_DIR / "tls_round_trip.js"), server.bootstrap, _ca(server),
         mechanism, "alice", "alice-secret", f"js-{mechanism}", f"g-js-{mechanism}", "3"],
        capture_output=True, text=True, timeout=120, check=False)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout.strip().splitlines()[-1]) == {"values": ["v0", "v1", "v2"]}
