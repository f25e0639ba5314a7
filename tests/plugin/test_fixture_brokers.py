"""The fixture with several brokers (``@pytest.mark.kcoord_brokers(3)``): ``bootstraps``,
``coordinator_of``, ``stop_broker``, ``start_broker``, ``move_coordinator``; a restart keeps
every broker's port; with one broker (the default) the broker controls refuse."""

from __future__ import annotations

import socket

import pytest

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
