"""Re-authentication (KIP-368) end to end: a ``kcoord serve`` whose SASL_PLAINTEXT listener
has ``connections.max.reauth.ms=2000``. Clients that re-authenticate when the broker
reports a session lifetime (librdkafka through confluent-kafka, kafka-python 3's
``kafka.net`` layer) keep producing and consuming for several lifetimes, each connection
re-authenticating in place (counted in the server's debug log); a client that does not is
closed on its first request after the session ends."""

from __future__ import annotations

import re
import socket
import time
import uuid
from typing import Any

import pytest
from e2e_support import KcoordProcess, exchange, peer_closed

import wire

# Real clients for tens of seconds: slow, run by CI after the default run (which stays
# under ten minutes on two cores).
pytestmark = pytest.mark.slow

LIFETIME_MS = 2000
RUN_S = 8.0
REAUTH_CONFIG = {
    "listeners": "SASL_PLAINTEXT://127.0.0.1:0",
    "connections.max.reauth.ms": str(LIFETIME_MS),
}
#: The gate's debug line for each completed re-authentication (``sasl_gate.py``).
REAUTHENTICATED = re.compile(r"connection (\d+) from \S+ re-authenticated as User:alice")
EXPIRED_CLOSE = "its SASL session expired without re-authentication"
EXPIRED = re.compile(r"closing connection (\d+) from \S+: " + EXPIRED_CLOSE)


@pytest.fixture
def reauth_kcoord(start_kcoord: Any) -> KcoordProcess:
    process: KcoordProcess = start_kcoord(
        config=REAUTH_CONFIG,
        extra_args=["--sasl-user", "alice:alice-secret", "--log-level", "debug"])
    return process


def _log(server: KcoordProcess) -> str:
    return server.stderr_path.read_text()


def _reauthentications(server: KcoordProcess) -> dict[int, int]:
    """Completed re-authentications per connection id, from the server's log."""
    counts: dict[int, int] = {}
    for match in REAUTHENTICATED.finditer(_log(server)):
        counts[int(match.group(1))] = counts.get(int(match.group(1)), 0) + 1
    return counts


def test_confluent_kafka_keeps_working_across_session_lifetimes(
    reauth_kcoord: KcoordProcess
) -> None:
    import confluent_kafka

    config = {"bootstrap.servers": reauth_kcoord.bootstrap, "security.protocol": "SASL_PLAINTEXT",
              "sasl.mechanism": "SCRAM-SHA-256", "sasl.username": "alice",
              "sasl.password": "alice-secret"}
    topic = f"reauth-ck-{uuid.uuid4().hex[:6]}"
    producer = confluent_kafka.Producer(config)
    consumer = confluent_kafka.Consumer({**config, "group.id": f"g-{topic}",
                                         "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    produced: list[bytes] = []
    consumed: list[bytes] = []
    errors: list[Any] = []
    end = time.monotonic() + RUN_S
    try:
        while time.monotonic() < end:
            value = b"v%d" % len(produced)
            producer.produce(topic, value, on_delivery=lambda err, _msg: err and errors.append(err))
            produced.append(value)
            producer.poll(0)
            message = consumer.poll(0.2)
            if message is not None:
                if message.error() is None:
                    consumed.append(message.value())
                elif message.error().code() != confluent_kafka.KafkaError._PARTITION_EOF:
                    errors.append(message.error())
        assert producer.flush(15) == 0
        deadline = time.monotonic() + 15
        while len(consumed) < len(produced) and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                consumed.append(message.value())
    finally:
        consumer.close()
    assert not errors, errors
    assert consumed == produced
    counts = _reauthentications(reauth_kcoord)
    # The producer's and the consumer's connections (and the group coordinator's)
    # re-authenticated about every 0.9 lifetime: at least twice in the 8 s, after a start
    # that takes about a second on a busy machine.
    assert len(counts) >= 2 and min(counts.values()) >= 2, (counts, reauth_kcoord.stderr())
    # None of them was closed for an expired session. (librdkafka's bootstrap connection,
    # if still open and idle, may miss its re-authentication by a few hundred ms -- Kafka
    # closes it too and librdkafka reconnects; nothing above failed for it.)
    expired = {int(m.group(1)) for m in EXPIRED.finditer(_log(reauth_kcoord))}
    assert not expired & set(counts), (expired, counts)


def test_kafka_python_keeps_working_across_session_lifetimes(
    reauth_kcoord: KcoordProcess
) -> None:
    import kafka

    config = {"bootstrap_servers": reauth_kcoord.bootstrap,
              "security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "SCRAM-SHA-512",
              "sasl_plain_username": "alice", "sasl_plain_password": "alice-secret"}
    topic = f"reauth-kp-{uuid.uuid4().hex[:6]}"
    producer = kafka.KafkaProducer(**config)
    sent = 0
    end = time.monotonic() + RUN_S / 2
    try:
        while time.monotonic() < end:
            producer.send(topic, b"v%d" % sent).get(timeout=10)
            sent += 1
            time.sleep(0.2)
    finally:
        producer.close(timeout=10)
    assert sent >= 10
    counts = _reauthentications(reauth_kcoord)
    assert counts and max(counts.values()) >= 1, (counts, reauth_kcoord.stderr())
    assert EXPIRED_CLOSE not in _log(reauth_kcoord), reauth_kcoord.stderr()


def test_kafkajs_keeps_working_across_session_lifetimes(reauth_kcoord: KcoordProcess) -> None:
    """kafkajs re-authenticates once its session is within ``reauthenticationThreshold``
    (default 10 s) of the lifetime: below a 2 s lifetime it is set to 1 s, since Kafka
    starts at most one re-authentication a second (the default would ask before every
    request, and Kafka answers the second handshake within a second ILLEGAL_SASL_STATE)."""
    import json
    import subprocess

    from e2e_support import KAFKAJS_DIR, kafkajs_node

    node = kafkajs_node()
    run = subprocess.run(
        [node, str(KAFKAJS_DIR / "reauth_produce.js"), reauth_kcoord.bootstrap,
         "scram-sha-256", "alice", "alice-secret", f"reauth-js-{uuid.uuid4().hex[:6]}",
         str(RUN_S / 2), "1000"],
        capture_output=True, text=True, timeout=120, check=False)
    assert run.returncode == 0, (run.stderr, reauth_kcoord.stderr())
    assert json.loads(run.stdout.strip().splitlines()[-1])["acknowledged"] >= 10
    counts = _reauthentications(reauth_kcoord)
    assert counts and max(counts.values()) >= 2, (counts, reauth_kcoord.stderr())
    assert EXPIRED_CLOSE not in _log(reauth_kcoord), reauth_kcoord.stderr()


def test_a_client_that_does_not_re_authenticate_is_closed(
    reauth_kcoord: KcoordProcess
) -> None:
    with socket.create_connection(("127.0.0.1", reauth_kcoord.port), timeout=10) as sock:
        assert exchange(sock, 17, 1, {"mechanism": "PLAIN"}).error_code == 0
        answer = exchange(sock, 36, 2, {"auth_bytes": b"\0alice\0alice-secret"}, 2)
        assert (answer.error_code, answer.session_lifetime_ms) == (0, LIFETIME_MS)
        assert exchange(sock, 3, 12, {"topics": []}, 3).brokers
        time.sleep(LIFETIME_MS / 1000 + 0.3)
        sock.sendall(wire.encode_request(3, 12, 4, "raw", {"topics": []}))  # Metadata
        assert peer_closed(sock)
    assert EXPIRED_CLOSE in _log(reauth_kcoord)
