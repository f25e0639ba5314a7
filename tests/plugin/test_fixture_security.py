"""Users and ACLs at run time through the test double and the HTTP control API (issue 29):
a user added with ``KcoordServer.add_user`` logs in over SASL_PLAINTEXT with PLAIN and both
SCRAMs, an ACL added with ``create_acls`` lets it produce, both survive a killed restart, and
the HTTP API's ``/users`` and ``/acls`` do the same without ever answering a password."""

from __future__ import annotations

import json
from typing import Any

import trio

from coordinator.server.app import RunningServer, serve
from coordinator.server.faults import FaultInjector
from coordinator.server.options import build_options
from coordinator.testing import KcoordServer
from coordinator.testing.control_http import serve_control

SECURED = {
    "listeners": "SASL_PLAINTEXT://127.0.0.1:0",
    "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
    "super.users": "User:admin",
}
WRITE_ORDERS = {"resource_type": "TOPIC", "resource_name": "orders", "principal": "User:alice",
                "operation": "WRITE"}


def _produce(server: KcoordServer, mechanism: str, password: str = "alice-secret") -> Any:
    import confluent_kafka

    reports: list[Any] = []
    producer = confluent_kafka.Producer({
        "bootstrap.servers": server.bootstrap, "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": mechanism, "sasl.username": "alice", "sasl.password": password,
        "message.timeout.ms": 10000})
    producer.produce("orders", b"x", on_delivery=lambda err, _msg: reports.append(err))
    producer.flush(15)
    assert reports, "no delivery report within 15 s"
    return reports[0]


def test_users_and_acls_added_at_run_time_survive_a_killed_restart() -> None:
    with KcoordServer(SECURED, topics={"orders": 1}) as server:
        server.add_user("alice", "alice-secret")
        assert _produce(server, "SCRAM-SHA-256").code() == 29  # TOPIC_AUTHORIZATION_FAILED
        server.create_acls(WRITE_ORDERS)
        for mechanism in ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"):
            assert _produce(server, mechanism) is None, mechanism
        assert server.acls() == [{**WRITE_ORDERS, "pattern_type": "LITERAL", "host": "*",
                                  "permission_type": "ALLOW"}]
        assert server.users() == [{"name": "alice", "credentials": [
            {"mechanism": "SCRAM-SHA-256", "iterations": 4096},
            {"mechanism": "SCRAM-SHA-512", "iterations": 4096}]}]
        server.restart(kill=True)
        # SCRAM credentials and ACLs are persisted; PLAIN users are not (as Kafka's JAAS).
        assert _produce(server, "SCRAM-SHA-512") is None
        assert server.delete_acls() == 1
        assert _produce(server, "SCRAM-SHA-256").code() == 29


async def test_users_and_acls_over_http() -> None:
    from test_control_http import call

    faults = FaultInjector()
    options = build_options({k: v for k, v in SECURED.items() if k != "listeners"},
                            host="127.0.0.1", port=0, data_dir=None, faults=faults)
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            running: RunningServer = await nursery.start(serve, options)
            port: int = await nursery.start(serve_control, running, faults, 0)
            status, added = await call(port, "POST", "/users",
                                       {"name": "carol", "password": "carol-secret"})
            assert (status, added) == (201, {"name": "carol"})
            status, users = await call(port, "GET", "/users")
            assert status == 200 and [u["name"] for u in users] == ["carol"]
            assert "carol-secret" not in json.dumps(users)
            assert (await call(port, "POST", "/users", {"name": "", "password": "x"}))[0] == 400
            status, _ = await call(port, "POST", "/acls", {"acls": [
                {**WRITE_ORDERS, "principal": "User:carol"}]})
            assert status == 201
            bad = await call(port, "POST", "/acls", {"acls": [{**WRITE_ORDERS,
                                                               "operation": "FLY"}]})
            assert bad[0] == 400 and "operation" in bad[1]["error"]
            status, acls = await call(port, "GET", "/acls")
            assert [a["principal"] for a in acls] == ["User:carol"]
            assert await call(port, "DELETE", "/acls") == (200, {"removed": 1})
            nursery.cancel_scope.cancel()
