"""The cluster model alone (``coordinator/server/cluster.py``): replica layout, failover
with epoch bumps, offline partitions, coordinator moves and loading, and the state that
survives a restart."""

from __future__ import annotations

import pytest

from coordinator.server.cluster import Cluster, ClusterError
from coordinator.txn.placement import partition_for
from wire import ErrorCode


def test_replicas_follow_the_factor_up_to_the_broker_count() -> None:
    cluster = Cluster(3, replication_factor=2)
    assert cluster.replicas(4) == [1, 2]
    assert cluster.replicas(4, 3) == [1, 2, 0]
    assert cluster.replicas(4, 7) == [1, 2, 0]
    assert Cluster(2, replication_factor=5).replicas(1) == [1, 0]


def test_failover_bumps_the_epoch_and_fences_stale_clients() -> None:
    cluster = Cluster(3, replication_factor=3)
    parts = [("t", p, -1) for p in range(3)]
    cluster.stop(0, parts, now=0.0)
    assert cluster.leader("t", 0) == (1, 1)
    assert cluster.leader("t", 1) == (1, 0)  # not led by the stopped broker: unchanged
    assert cluster.leadership_error(1, "t", 0, 0) == ErrorCode.FENCED_LEADER_EPOCH
    assert cluster.leadership_error(1, "t", 0, 2) == ErrorCode.UNKNOWN_LEADER_EPOCH
    assert cluster.leadership_error(2, "t", 0, 1) == ErrorCode.NOT_LEADER_OR_FOLLOWER
    assert cluster.leadership_error(1, "t", 0, -1) == ErrorCode.NONE
    assert cluster.in_sync(0) == [1, 2]


def test_one_replica_goes_offline_and_comes_back_with_its_broker() -> None:
    cluster = Cluster(2)
    parts = [("t", 0, -1), ("t", 1, -1)]
    cluster.stop(1, parts, now=0.0)
    assert cluster.leader("t", 1) == (-1, 1)
    assert cluster.leadership_error(0, "t", 1) == ErrorCode.NOT_LEADER_OR_FOLLOWER
    cluster.start(1, parts)
    assert cluster.leader("t", 1) == (1, 2)


def test_coordinators_move_to_the_next_live_broker_and_load() -> None:
    cluster = Cluster(3, load_delay_ms=500)
    group = next(g for g in (f"g{i}" for i in range(100)) if partition_for(g, 50) % 3 == 2)
    moved = cluster.stop(2, [], now=10.0)
    assert partition_for(group, 50) in moved
    assert cluster.coordinator("__consumer_offsets", group) == 0
    assert cluster.coordinator_error(0, "__consumer_offsets", group, 10.2) == (
        ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)
    assert cluster.loading(0, "__consumer_offsets", 10.2)
    assert cluster.coordinator_error(0, "__consumer_offsets", group, 10.6) == ErrorCode.NONE
    assert cluster.coordinator_error(1, "__consumer_offsets", group, 10.6) == (
        ErrorCode.NOT_COORDINATOR)
    with pytest.raises(ClusterError, match="is stopped"):
        cluster.move_group(group, 2, now=11.0)
    assert cluster.move_group(group, 0, now=11.0) is None  # already there


def test_state_survives_for_the_same_broker_count_only() -> None:
    cluster = Cluster(3)
    cluster.stop(1, [("t", 1, -1)], now=0.0)
    cluster.move_group("g", 0, now=0.0)
    state = cluster.state()
    again = Cluster(3)
    assert again.restore(state)
    assert again.leader("t", 1) == (1, 2)  # offline before: back on its replica, next epoch
    assert again.coordinator("__consumer_offsets", "g") == 0
    assert again.live == {0, 1, 2}
    assert not Cluster(4).restore(state)
    assert not Cluster(3).restore({"brokers": 3, "coordinators": [["__consumer_offsets", 0, 9]]})


def test_elect_leader_preferred_and_unclean() -> None:
    cluster = Cluster(3, replication_factor=2)
    assert cluster.elect_leader("t", 0, 2) == ErrorCode.ELECTION_NOT_NEEDED
    cluster.stop(0, [("t", 0, 2), ("u", 0, 1)], 0.0)
    assert cluster.leader("t", 0) == (1, 1)
    assert cluster.elect_leader("t", 0, 2) == ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE
    assert cluster.elect_leader("t", 0, 2, unclean=True) == ErrorCode.ELECTION_NOT_NEEDED
    # u-0 has one replica, on the stopped broker: no leader, none to elect.
    assert cluster.elect_leader("u", 0, 1, unclean=True) == (
        ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE)
    cluster.live.add(0)  # back without the start() hand-over
    assert cluster.elect_leader("u", 0, 1, unclean=True) == ErrorCode.NONE
    assert cluster.leader("u", 0) == (0, 2)
    assert cluster.elect_leader("t", 0, 2) == ErrorCode.NONE
    assert cluster.leader("t", 0) == (0, 2)
    assert cluster.elect_preferred_leaders([("t", 0, 2), ("u", 0, 1)]) == 0
