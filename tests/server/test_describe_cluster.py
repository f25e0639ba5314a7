"""DescribeCluster (key 60) over raw frames: Kafka's endpoint-type errors per version, the
multi-broker model's controller and live brokers, and v2's fenced (stopped) brokers."""

from __future__ import annotations

from typing import Any

import pytest

from wire import ErrorCode

pytestmark = pytest.mark.trio

DESCRIBE_CLUSTER = 60
INT32_MIN = -(2**31)


def body(endpoint: int = 1, fenced: bool = False, operations: bool = False) -> dict[str, Any]:
    return {"include_cluster_authorized_operations": operations, "endpoint_type": endpoint,
            "include_fenced_brokers": fenced}


async def test_one_broker_is_its_own_controller(start_server: Any, connect: Any) -> None:
    running = await start_server({})
    client = await connect(running.port)
    for version in (0, 1, 2):
        got = await client.request(DESCRIBE_CLUSTER, version, body())
        assert got.error_code == ErrorCode.NONE and got.error_message is None
        assert got.controller_id == 0
        assert [(b.broker_id, b.port, b.rack) for b in got.brokers] == [(0, running.port, None)]
        assert got.cluster_authorized_operations == INT32_MIN
    asked = await client.request(DESCRIBE_CLUSTER, 2, body(operations=True))
    assert asked.cluster_authorized_operations == sum(1 << op for op in (5, 7, 8, 9, 10, 11, 12))


@pytest.mark.parametrize(("version", "endpoint", "code", "message"), [
    (1, 2, ErrorCode.MISMATCHED_ENDPOINT_TYPE,
     "The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type "
     "CONTROLLER"),
    (1, 0, ErrorCode.UNSUPPORTED_ENDPOINT_TYPE, "Unsupported endpoint type 0"),
    (2, 7, ErrorCode.UNSUPPORTED_ENDPOINT_TYPE, "Unsupported endpoint type 7"),
])
async def test_endpoint_types_other_than_broker_are_refused(
    start_server: Any, connect: Any, version: int, endpoint: int, code: ErrorCode, message: str
) -> None:
    running = await start_server({})
    client = await connect(running.port)
    got = await client.request(DESCRIBE_CLUSTER, version, body(endpoint))
    assert (got.error_code, got.error_message) == (code, message)
    assert list(got.brokers) == [] and got.controller_id == -1


async def test_several_brokers_stopped_ones_are_fenced(start_server: Any, connect: Any) -> None:
    running = await start_server({}, brokers=3)
    ports = running.brokers.ports
    client = await connect(ports[2])
    got = await client.request(DESCRIBE_CLUSTER, 2, body())
    assert got.controller_id == 0
    assert [(b.broker_id, b.port, b.is_fenced) for b in got.brokers] == [
        (n, ports[n], False) for n in range(3)]
    await running.brokers.stop(0)
    live = await client.request(DESCRIBE_CLUSTER, 2, body())
    assert live.controller_id == 1
    assert [b.broker_id for b in live.brokers] == [1, 2]
    fenced = await client.request(DESCRIBE_CLUSTER, 2, body(fenced=True))
    assert [(b.broker_id, b.is_fenced) for b in fenced.brokers] == [
        (0, True), (1, False), (2, False)]
    old = await client.request(DESCRIBE_CLUSTER, 1, body(fenced=True))
    assert [b.broker_id for b in old.brokers] == [1, 2]
    cluster_id = got.cluster_id
    metadata = await client.request(3, 12, {"topics": None, "allow_auto_topic_creation": False,
                                            "include_topic_authorized_operations": False})
    assert metadata.cluster_id == cluster_id and metadata.controller_id == live.controller_id
