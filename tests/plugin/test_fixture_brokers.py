"""The fixture with several brokers (``@pytest.mark.kcoord_brokers(3)``): ``bootstraps``,
``coordinator_of``, ``stop_broker``, ``start_broker``, ``move_coordinator``; a restart keeps
every broker's port; with one broker (the default) the broker controls refuse."""

from __future__ import annotations

import socket
import uuid
from typing import Any

import pytest

import wire
from coordinator.server.cluster import ClusterError
from coordinator.testing import KcoordServer
from coordinator.txn.placement import partition_for


def reachable(address: str) -> bool:
    host, port = address.rsplit(":", 1)
    try:
        socket.create_connection((host, int(port)), timeout=2).close()
    except OSError:
        return False
    return True


@pytest.mark.kcoord_brokers(3)
def test_fixture_brokers_stop_start_and_move(kcoord: KcoordServer) -> None:
    bootstraps = kcoord.bootstraps
    assert len(bootstraps) == 3 and bootstraps[0] == kcoord.bootstrap
    assert all(reachable(b) for b in bootstraps)
    group = "fixture-group"
    home = partition_for(group, 50) % 3
    assert kcoord.coordinator_of(group) == home

    stopped = kcoord.stop_broker(home)
    assert stopped["node_id"] == home
    assert not reachable(bootstraps[home])
    assert kcoord.coordinator_of(group) == (home + 1) % 3
    with pytest.raises(ClusterError):
        kcoord.stop_broker(home)
    kcoord.start_broker(home)
    assert reachable(bootstraps[home])
    kcoord.move_coordinator(group, home)
    assert kcoord.coordinator_of(group) == home

    kcoord.restart()
    assert kcoord.bootstraps == bootstraps  # every broker back on its port
    assert all(reachable(b) for b in bootstraps)
    assert kcoord.coordinator_of(group) == home


def test_one_broker_refuses_the_broker_controls(kcoord: KcoordServer) -> None:
    assert kcoord.bootstraps == [kcoord.bootstrap]
    assert kcoord.coordinator_of("any") == 0
    with pytest.raises(RuntimeError, match="brokers=N"):
        kcoord.stop_broker(0)


def leaders(address: str, topic: str) -> list[tuple[int, int]]:
    """(leader, leader epoch) of each partition, from a Metadata v12 request."""
    host, port = address.rsplit(":", 1)
    body = {"topics": [{"name": topic, "topic_id": uuid.UUID(int=0)}],
            "allow_auto_topic_creation": False, "include_topic_authorized_operations": False}
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(wire.encode_request(3, 12, 1, "fixture-test", body))
        reader = wire.FrameReader()
        while (payload := reader.next_frame()) is wire.NEED_DATA:
            data = sock.recv(65536)
            assert data
            reader.receive_data(data)
        assert isinstance(payload, bytes)
        answer: Any = wire.decode_response(3, 12, payload)[1]
    return [(p.leader_id, p.leader_epoch) for p in answer.topics[0].partitions]


@pytest.mark.kcoord_brokers(3)
@pytest.mark.kcoord_config({"default.replication.factor": "2"})
def test_leadership_and_epochs_survive_a_restart(kcoord: KcoordServer) -> None:
    """Leader epochs never go backwards across a restart (librdkafka ignores metadata that
    goes back), and a moved coordinator stays moved."""
    kcoord.create_topic("t", 3)
    assert leaders(kcoord.bootstrap, "t") == [(0, 0), (1, 0), (2, 0)]
    kcoord.stop_broker(1)
    kcoord.move_coordinator("g", 2)
    assert leaders(kcoord.bootstrap, "t") == [(0, 0), (2, 1), (2, 0)]
    kcoord.restart()
    assert leaders(kcoord.bootstraps[1], "t") == [(0, 0), (2, 1), (2, 0)]
    assert kcoord.coordinator_of("g") == 2
    kcoord.elect_preferred_leaders()
    assert leaders(kcoord.bootstrap, "t") == [(0, 0), (1, 2), (2, 0)]


def test_an_unwritable_cluster_state_does_not_stop_the_controls(
    tmp_path: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """``cluster.json`` is a convenience for leader epochs across restarts: when it cannot
    be read or written (here a directory stands in its place) the controls still work,
    and the failure is reported."""
    data_dir = tmp_path / "data"
    (data_dir / "cluster.json").mkdir(parents=True)
    with (caplog.at_level("WARNING", logger="coordinator.server.brokers"),
          KcoordServer(data_dir=str(data_dir), brokers=2) as server):
        assert server.stop_broker(1)["node_id"] == 1
        assert not reachable(server.bootstraps[1])
        server.start_broker(1)
        assert reachable(server.bootstraps[1])
    messages = " ".join(r.getMessage() for r in caplog.records)
    assert "cluster.json unreadable" in messages
    assert "cannot write" in messages
