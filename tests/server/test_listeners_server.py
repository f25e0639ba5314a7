"""Several listeners at once (issue 29): every listener of every broker serves, and
Metadata, FindCoordinator and DescribeCluster answer with the addresses of the listener
the request came on (``advertised.listeners`` when given), as Kafka does. Raw frames over
real TCP, one server in process."""

from __future__ import annotations

from typing import Any

import pytest
import trio
from raw_client import RawClient

from coordinator.server.app import RunningServer, serve
from coordinator.server.options import build_options
from wire import ApiKey

pytestmark = pytest.mark.trio

TWO = {"listeners": "PLAINTEXT://127.0.0.1:0,INTERNAL://127.0.0.1:0",
       "listener.security.protocol.map": "INTERNAL:PLAINTEXT",
       "group.initial.rebalance.delay.ms": "0"}


async def _start(nursery: trio.Nursery, props: dict[str, str], **kwargs: Any) -> RunningServer:
    options = build_options(props, data_dir=None, topics=(("t", 2),), **kwargs)
    running: RunningServer = await nursery.start(serve, options)
    return running


async def _addresses(port: int) -> dict[str, Any]:
    client = await RawClient.connect(port)
    try:
        metadata = await client.request(ApiKey.METADATA, 12, {"topics": None})
        coordinator = await client.request(ApiKey.FIND_COORDINATOR, 4, {
            "key_type": 0, "coordinator_keys": ["g"]})
        cluster = await client.request(ApiKey.DESCRIBE_CLUSTER, 1, {
            "include_cluster_authorized_operations": False, "endpoint_type": 1})
    finally:
        await client.aclose()
    return {"metadata": sorted((b.node_id, b.host, b.port) for b in metadata.brokers),
            "coordinator": [(c.host, c.port) for c in coordinator.coordinators],
            "cluster": sorted((b.broker_id, b.host, b.port) for b in cluster.brokers)}


async def test_each_listener_answers_with_its_own_address(nursery: trio.Nursery) -> None:
    running = await _start(nursery, TWO)
    ports = running.listener_ports
    assert list(ports) == ["PLAINTEXT", "INTERNAL"] and len(set(ports.values())) == 2
    for name, port in ports.items():
        seen = await _addresses(port)
        assert seen["metadata"] == [(0, "127.0.0.1", port)], name
        assert seen["coordinator"] == [("127.0.0.1", port)], name
        assert seen["cluster"] == [(0, "127.0.0.1", port)], name


async def test_advertised_listeners_are_what_clients_are_told(nursery: trio.Nursery) -> None:
    running = await _start(nursery, {
        **TWO, "advertised.listeners": "INTERNAL://kafka-internal:29092,PLAINTEXT://:0"})
    internal = await _addresses(running.listener_ports["INTERNAL"])
    assert internal["metadata"] == [(0, "kafka-internal", 29092)]
    assert internal["coordinator"] == [("kafka-internal", 29092)]
    # An advertised entry without host and port: the bound ones.
    plaintext = await _addresses(running.listener_ports["PLAINTEXT"])
    assert plaintext["metadata"] == [(0, "127.0.0.1", running.listener_ports["PLAINTEXT"])]
    # DescribeConfigs reports both keys as given / as advertised.
    client = await RawClient.connect(running.port)
    described = await client.request(ApiKey.DESCRIBE_CONFIGS, 4, {"resources": [
        {"resource_type": 4, "resource_name": "0",
         "configuration_keys": ["listeners", "advertised.listeners"]}],
        "include_synonyms": False, "include_documentation": False})
    await client.aclose()
    values = {c.name: c.value for c in described.results[0].configs}
    assert values["listeners"] == TWO["listeners"]
    assert values["advertised.listeners"] == (
        f"PLAINTEXT://127.0.0.1:{running.listener_ports['PLAINTEXT']},"
        "INTERNAL://kafka-internal:29092")


async def test_every_broker_has_every_listener(nursery: trio.Nursery) -> None:
    running = await _start(nursery, TWO, brokers=2)
    brokers = running.brokers
    by_listener: dict[str, dict[int, int]] = {"PLAINTEXT": {}, "INTERNAL": {}}
    for node_id in (0, 1):
        for each in brokers.bound(node_id):
            by_listener[each.name][node_id] = each.port
    assert len({p for ports in by_listener.values() for p in ports.values()}) == 4
    for name, ports in by_listener.items():
        for node_id, port in ports.items():
            seen = await _addresses(port)
            # Both brokers, each at this listener's port: nothing of the other listener.
            assert seen["metadata"] == [(n, "127.0.0.1", p) for n, p in sorted(ports.items())], (
                name, node_id)
            assert seen["cluster"] == seen["metadata"]
            assert seen["coordinator"][0] in {("127.0.0.1", p) for p in ports.values()}


async def test_a_stopped_broker_starts_again_with_every_listener(nursery: trio.Nursery) -> None:
    running = await _start(nursery, TWO, brokers=2)
    brokers = running.brokers
    before = [(each.name, each.port) for each in brokers.bound(1)]
    await brokers.stop(1)
    assert brokers.bound(1) == []
    await brokers.start(1)
    assert [(each.name, each.port) for each in brokers.bound(1)] == before
    for _, port in before:
        seen = await _addresses(port)
        assert [node for node, _, _ in seen["metadata"]] == [0, 1]
