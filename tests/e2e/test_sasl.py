"""SASL_PLAINTEXT end to end (issue 29, first step): real clients over TCP against a
``kcoord serve`` whose ``listeners`` is one SASL_PLAINTEXT listener, with users from
``--sasl-user`` (PLAIN and both SCRAMs) and from Kafka's PlainLoginModule JAAS key."""

from __future__ import annotations

import logging
import socket
import time
import uuid
from typing import Any

import pytest
from e2e_support import (
    KcoordProcess,
    aio_round_trip,
    assert_usage_errors,
    ck_round_trip,
    exchange,
    kp_round_trip,
    peer_closed,
)

import wire

MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
SASL_CONFIG = {
    "listeners": "SASL_PLAINTEXT://127.0.0.1:0",
    "listener.name.sasl_plaintext.plain.sasl.jaas.config":
        "org.apache.kafka.common.security.plain.PlainLoginModule required "
        'user_bob="bob-secret";',
}
ALICE = ["--sasl-user", "alice:alice-secret"]
#: Kafka's texts for a wrong password: PlainSaslServer's own, SaslServerAuthenticator's
#: generic one for SCRAM (which never says whether the user exists).
PLAIN_WRONG_PASSWORD = "Authentication failed: Invalid username or password"
SCRAM_WRONG_PASSWORD = ("Authentication failed during authentication due to invalid "
                        "credentials with SASL mechanism {}")


def wrong_password(mechanism: str) -> str:
    return PLAIN_WRONG_PASSWORD if mechanism == "PLAIN" else SCRAM_WRONG_PASSWORD.format(
        mechanism)


@pytest.fixture
def sasl_kcoord(start_kcoord: Any) -> KcoordProcess:
    process: KcoordProcess = start_kcoord(config=SASL_CONFIG, extra_args=ALICE)
    return process


def _ck_config(server: KcoordProcess, mechanism: str, user: str = "alice",
               password: str = "alice-secret") -> dict[str, Any]:
    return {"bootstrap.servers": server.bootstrap, "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": mechanism, "sasl.username": user, "sasl.password": password}


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_confluent_kafka_produces_and_consumes_in_a_group(
    sasl_kcoord: KcoordProcess, mechanism: str
) -> None:
    topic = f"ck-{mechanism.lower()}-{uuid.uuid4().hex[:6]}"
    values = ck_round_trip(_ck_config(sasl_kcoord, mechanism), topic)
    assert sorted(values) == [b"v%d" % i for i in range(5)]


def test_a_jaas_plain_user_authenticates(sasl_kcoord: KcoordProcess) -> None:
    """Kafka's listener.name.sasl_plaintext.plain.sasl.jaas.config user_bob works (PLAIN)."""
    config = _ck_config(sasl_kcoord, "PLAIN", "bob", "bob-secret")
    assert ck_round_trip(config, "jaas-bob", 2) == [b"v0", b"v1"]


def test_confluent_kafka_oauthbearer_with_librdkafkas_unsecured_token(
    sasl_kcoord: KcoordProcess,
) -> None:
    """librdkafka's built-in unsecured JWT (``alg: none``, ``enable.sasl.oauthbearer.unsecure.jwt``)
    is what Kafka's default unsecured validator accepts: the token's ``sub`` is the principal."""
    config = {"bootstrap.servers": sasl_kcoord.bootstrap, "security.protocol": "SASL_PLAINTEXT",
              "sasl.mechanism": "OAUTHBEARER", "enable.sasl.oauthbearer.unsecure.jwt": True,
              "sasl.oauthbearer.config": "principal=carol lifeSeconds=600"}
    assert ck_round_trip(config, f"oauth-{uuid.uuid4().hex[:6]}", 3) == [b"v0", b"v1", b"v2"]


def _python_client_config(server: KcoordProcess, mechanism: str) -> dict[str, Any]:
    """kafka-python's and aiokafka's settings (they share the names)."""
    return {"bootstrap_servers": server.bootstrap, "security_protocol": "SASL_PLAINTEXT",
            "sasl_mechanism": mechanism, "sasl_plain_username": "alice",
            "sasl_plain_password": "alice-secret"}


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_kafka_python_produces_and_consumes_in_a_group(
    sasl_kcoord: KcoordProcess, mechanism: str
) -> None:
    values = kp_round_trip(_python_client_config(sasl_kcoord, mechanism),
                           f"kp-{mechanism.lower()}")
    assert sorted(values) == [b"v%d" % i for i in range(5)]


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_confluent_kafka_wrong_password_fails_fast_with_kafkas_message(
    sasl_kcoord: KcoordProcess, mechanism: str
) -> None:
    import confluent_kafka

    errors: list[Any] = []
    producer = confluent_kafka.Producer(
        {**_ck_config(sasl_kcoord, mechanism, password="wrong"), "error_cb": errors.append})
    deadline = time.monotonic() + 10
    while not errors and time.monotonic() < deadline:
        producer.poll(0.2)
    assert errors, "no error within 10 s"
    assert errors[0].code() == confluent_kafka.KafkaError._AUTHENTICATION
    assert wrong_password(mechanism) in errors[0].str()
    # ... and the server keeps serving everyone else.
    assert ck_round_trip(_ck_config(sasl_kcoord, mechanism), f"after-{mechanism}", 1) == [b"v0"]


def test_kafka_python_wrong_password_reports_the_authentication_error(
    sasl_kcoord: KcoordProcess, caplog: pytest.LogCaptureFixture
) -> None:
    import kafka
    import kafka.errors

    caplog.set_level(logging.ERROR, logger="kafka")
    producer = kafka.KafkaProducer(
        bootstrap_servers=sasl_kcoord.bootstrap, security_protocol="SASL_PLAINTEXT",
        sasl_mechanism="SCRAM-SHA-256", sasl_plain_username="alice",
        sasl_plain_password="wrong", api_version=(3, 0), max_block_ms=6000)
    started = time.monotonic()
    try:
        with pytest.raises(kafka.errors.KafkaError):
            producer.send("never", b"x").get(8)
    finally:
        producer.close(timeout=5)
    assert time.monotonic() - started < 15
    failures = [r.getMessage() for r in caplog.records
                if "SaslAuthenticationFailedError" in r.getMessage()]
    assert failures, caplog.text
    assert "[Error 58]" in failures[0]
    assert wrong_password("SCRAM-SHA-256") in failures[0]


# ----------------------------------------------------------------- raw frames


def _connect(server: KcoordProcess) -> socket.socket:
    return socket.create_connection(("127.0.0.1", server.port), timeout=10)


def test_a_request_before_authentication_closes_the_connection(
    sasl_kcoord: KcoordProcess
) -> None:
    with _connect(sasl_kcoord) as sock:
        versions = exchange(sock, 18, 3, {"client_software_name": "raw",
                                           "client_software_version": "1"})
        assert versions.error_code == 0
        sock.sendall(wire.encode_request(3, 12, 2, "raw", {"topics": None}))  # Metadata
        assert peer_closed(sock)
    # A handshake, then Metadata before SaslAuthenticate: Kafka's SaslServerAuthenticator
    # answers it with its error answer (ILLEGAL_SASL_STATE; Metadata v12 has no top-level
    # error code: no topics), then closes.
    with _connect(sasl_kcoord) as sock:
        assert exchange(sock, 17, 1, {"mechanism": "PLAIN"}).error_code == 0
        assert list(exchange(sock, 3, 12, {"topics": None}).topics) == []
        assert peer_closed(sock)


def test_an_unknown_mechanism_answers_the_enabled_list_then_closes(
    sasl_kcoord: KcoordProcess
) -> None:
    with _connect(sasl_kcoord) as sock:
        answer = exchange(sock, 17, 1, {"mechanism": "GSSAPI"})
        assert answer.error_code == 33  # UNSUPPORTED_SASL_MECHANISM
        assert list(answer.mechanisms) == [*MECHANISMS, "OAUTHBEARER"]
        assert peer_closed(sock)


def test_a_wrong_password_answers_58_with_kafkas_message_then_closes(
    sasl_kcoord: KcoordProcess
) -> None:
    with _connect(sasl_kcoord) as sock:
        assert exchange(sock, 17, 1, {"mechanism": "PLAIN"}).error_code == 0
        answer = exchange(sock, 36, 2, {"auth_bytes": b"\0alice\0wrong"}, 2)
        assert answer.error_code == 58  # SASL_AUTHENTICATION_FAILED
        assert answer.error_message == PLAIN_WRONG_PASSWORD
        assert peer_closed(sock)


def test_after_plain_authentication_every_api_is_served(sasl_kcoord: KcoordProcess) -> None:
    assert sasl_kcoord.listening_line == (
        f"kcoord listening on 127.0.0.1:{sasl_kcoord.port} (SASL_PLAINTEXT)")
    with _connect(sasl_kcoord) as sock:
        assert exchange(sock, 17, 1, {"mechanism": "PLAIN"}).error_code == 0
        answer = exchange(sock, 36, 1, {"auth_bytes": b"\0alice\0alice-secret"}, 2)
        assert (answer.error_code, answer.session_lifetime_ms) == (0, 0)
        metadata = exchange(sock, 3, 12, {"topics": []}, 3)
        assert [b.port for b in metadata.brokers] == [sasl_kcoord.port]
        # The JAAS config's passwords are not shown by DescribeConfigs.
        described = exchange(sock, 32, 1, {"resources": [
            {"resource_type": 4, "resource_name": "0", "configuration_keys": None}],
            "include_synonyms": False}, 5)
        values = {c.name: c.value for c in described.results[0].configs}
        assert "listeners" not in values or "secret" not in values["listeners"]
        assert not any("secret" in (value or "") for value in values.values()), values
        # A second handshake once authenticated: ILLEGAL_SASL_STATE (no session expiry, so
        # nothing to re-authenticate, as in Kafka; test_sasl_reauth_clients.py has KIP-368).
        assert exchange(sock, 17, 1, {"mechanism": "PLAIN"}, 4).error_code == 34


def test_sasl_configuration_mistakes_are_one_line_usage_errors(tmp_path: Any) -> None:
    listener = "listeners=SASL_PLAINTEXT://127.0.0.1:0"
    cases = {
        ("-c", listener, "--port", "0"): "--host/--port cannot be given with listeners",
        ("-c", listener, "--host", "127.0.0.1"): "--host/--port cannot be given with listeners",
        ("-c", "listeners=FOO://:0"): "no security protocol defined for listener FOO",
        ("--port", "0", "--sasl-user", "a:b"): "--sasl-user needs a SASL listener",
        ("-c", listener, "--sasl-user", "nocolon"): "expected NAME:PASSWORD",
        ("-c", listener, "-c", "sasl.enabled.mechanisms=GSSAPI"): "Unsupported SASL mechanism",
        ("-c", listener, "-c", "listener.name.sasl_plaintext.plain.sasl.jaas.config=x"):
            "plain.sasl.jaas.config",
        ("-c", listener, "-c", "listener.name.ssl.sasl.enabled.mechanisms=PLAIN"):
            "no listener named SSL",
    }
    assert_usage_errors(tmp_path / "d", cases)


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_aiokafka_produces_and_consumes_in_a_group(
    sasl_kcoord: KcoordProcess, mechanism: str
) -> None:
    values = aio_round_trip(_python_client_config(sasl_kcoord, mechanism),
                            f"aio-{mechanism.lower()}")
    assert sorted(values) == [b"v0", b"v1", b"v2"]
