"""Several brokers in one process: who is live, who leads what, who coordinates what.

The brokers (node ids 0..N-1) share one coordinator runtime, one topic store and one clock;
this model is what makes them look like a Kafka cluster to clients:

- Partition p of every topic has the replicas p % N, p+1 % N, ... (the topic's replication
  factor of them, ``default.replication.factor`` unless it was created with one; at most N)
  and is first led by p % N at leader epoch 0. When its leader stops,
  the next live replica leads at the next epoch; with no live replica it is offline
  (leader -1) until a replica starts again. A restarted broker does not take leadership
  back by itself (``elect_preferred_leaders`` does, as Kafka's preferred leader election).
- A group's coordinator is the leader of its ``__consumer_offsets`` partition (Kafka's
  ``Utils.abs(groupId.hashCode()) % offsets.topic.num.partitions``), a transactional id's the
  leader of its ``__transaction_state`` partition, first partition % N. When that broker
  stops, the partition moves to the next live broker, which "loads" it: for
  ``coordinator.load.delay.ms`` its keys answer COORDINATOR_LOAD_IN_PROGRESS. A group's
  partition can be moved on purpose (``move_group``).

Pure bookkeeping: the server closes listeners and reloads moved groups
(``coordinator/server/brokers.py``). ``now`` is the Trio clock, in seconds.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from coordinator.server.identity import BrokerIdentity
from coordinator.txn.placement import (
    DEFAULT_OFFSETS_TOPIC_PARTITIONS,
    DEFAULT_TRANSACTION_STATE_PARTITIONS,
    OFFSETS_TOPIC,
    TRANSACTION_STATE_TOPIC,
    partition_for,
)
from wire.constants import ErrorCode

__all__ = ["Cluster", "ClusterError"]

TopicPartition = tuple[str, int]
#: A topic partition with its topic's replication factor (-1: the default).
Placed = tuple[str, int, int]


async def _nothing_to_write() -> None:
    """``Cluster.changed`` with no broker set: nothing persists the cluster state."""


class ClusterError(ValueError):
    """A control asked for something the cluster cannot do (an unknown node, the last
    live broker stopped); the message says what."""


class Cluster:
    """Liveness, partition leadership and coordinator placement (module docstring)."""

    def __init__(
        self,
        size: int,
        *,
        replication_factor: int = 1,
        offsets_partitions: int = DEFAULT_OFFSETS_TOPIC_PARTITIONS,
        transaction_partitions: int = DEFAULT_TRANSACTION_STATE_PARTITIONS,
        load_delay_ms: int = 0,
    ) -> None:
        if size < 1:
            raise ValueError(f"a cluster needs at least one broker, got {size}")
        self.size = size
        self.replication_factor = max(1, min(replication_factor, size))
        self.partitions = {OFFSETS_TOPIC: offsets_partitions,
                           TRANSACTION_STATE_TOPIC: transaction_partitions}
        self.load_delay_s = max(0, load_delay_ms) / 1000
        self.live: set[int] = set(range(size))
        #: Each broker's advertised address (filled in as their listeners bind).
        self.identities: dict[int, BrokerIdentity] = {}
        # Topic partitions whose leadership changed: (leader or -1, leader epoch).
        self._leaders: dict[TopicPartition, tuple[int, int]] = {}
        # Internal partitions whose coordinator moved away from partition % N.
        self._coordinators: dict[TopicPartition, int] = {}
        # Internal partitions loading on their new coordinator until this Trio time.
        self._loading: dict[TopicPartition, float] = {}
        # Topic partitions reassigned away from their default replicas.
        self._assigned: dict[TopicPartition, list[int]] = {}
        #: Awaited after a request changed leadership (ElectLeaders): the broker set
        #: writes ``cluster.json`` off the event loop (``brokers.BrokerSet``).
        self.changed: Callable[[], Awaitable[None]] = _nothing_to_write

    # ------------------------------------------------------------------ brokers

    def check_node(self, node_id: Any) -> int:
        """``node_id`` if it names a broker of this cluster (ClusterError otherwise)."""
        if isinstance(node_id, bool) or not isinstance(node_id, int):
            raise ClusterError(f"node id must be an integer, got {node_id!r}")
        if not 0 <= node_id < self.size:
            raise ClusterError(f"no broker {node_id}: node ids are 0..{self.size - 1}")
        return node_id

    def live_brokers(self) -> list[BrokerIdentity]:
        """The live brokers' identities, by node id."""
        return [self.identities[n] for n in sorted(self.live) if n in self.identities]

    def controller(self) -> int:
        """The lowest live node id (Kafka names one active controller)."""
        return min(self.live)

    # ------------------------------------------------------------------ topic partitions

    def replicas(self, partition: int, factor: int = -1, topic: str | None = None) -> list[int]:
        """The replicas of partition ``partition`` of a topic with ``factor`` replicas (-1:
        the default), preferred leader first; ``topic``'s reassigned ones if it was moved."""
        if topic is not None:
            assigned = self._assigned.get((topic, partition))
            if assigned is not None:
                return list(assigned)
        count = self.replication_factor if factor < 1 else min(factor, self.size)
        return [(partition + k) % self.size for k in range(count)]

    def leader(self, topic: str, partition: int) -> tuple[int, int]:
        """(leader node id or -1 when offline, leader epoch)."""
        moved = self._leaders.get((topic, partition))
        if moved is not None:
            return moved
        return partition % self.size, 0

    def in_sync(self, partition: int, factor: int = -1, topic: str | None = None) -> list[int]:
        """The live replicas (every replica is in sync: they share one log)."""
        return [r for r in self.replicas(partition, factor, topic) if r in self.live]

    def reassign(self, topic: str, partition: int, factor: int, target: list[int]) -> bool:
        """Move the partition to ``target`` replicas (registered brokers, checked by the
        caller), completing at once: they share one log, so the new replicas are in sync.
        A leader left out, or stopped, gives way to the first live target replica (else the
        partition is offline) at the next epoch. False when ``target`` is the current set."""
        if target == self.replicas(partition, factor, topic):
            return False
        if target == self.replicas(partition, factor):
            self._assigned.pop((topic, partition), None)
        else:
            self._assigned[(topic, partition)] = list(target)
        leader, epoch = self.leader(topic, partition)
        if leader not in target or leader not in self.live:
            successor = next((r for r in target if r in self.live), -1)
            self._leaders[(topic, partition)] = (successor, epoch + 1)
        return True

    def leadership_error(
        self, node_id: int, topic: str, partition: int, leader_epoch: int = -1
    ) -> ErrorCode:
        """What a produce, fetch or offset lookup on ``node_id`` gets (Kafka's
        ``Partition.checkCurrentLeaderEpoch`` then the leadership check)."""
        leader, epoch = self.leader(topic, partition)
        if leader_epoch >= 0 and leader_epoch != epoch and leader != -1:
            return (ErrorCode.FENCED_LEADER_EPOCH if leader_epoch < epoch
                    else ErrorCode.UNKNOWN_LEADER_EPOCH)
        if leader != node_id:
            return ErrorCode.NOT_LEADER_OR_FOLLOWER
        return ErrorCode.NONE

    # ------------------------------------------------------------------ coordinators

    def coordinator_partition(self, internal_topic: str, key: str) -> int:
        """The internal-topic partition owning ``key`` (Kafka's partitionFor)."""
        return partition_for(key, self.partitions[internal_topic])

    def _coordinator_of(self, tp: TopicPartition) -> int:
        return self._coordinators.get(tp, tp[1] % self.size)

    def partition_coordinator(self, internal_topic: str, partition: int) -> int:
        """The node coordinating (leading) partition ``partition`` of ``internal_topic``."""
        return self._coordinator_of((internal_topic, partition))

    def coordinator(self, internal_topic: str, key: str) -> int:
        """The node coordinating ``key`` (a group id or a transactional id)."""
        return self._coordinator_of(
            (internal_topic, self.coordinator_partition(internal_topic, key))
        )

    def coordinator_error(self, node_id: int, internal_topic: str, key: str,
                          now: float) -> ErrorCode:
        """NONE when ``node_id`` serves ``key`` now; NOT_COORDINATOR or
        COORDINATOR_LOAD_IN_PROGRESS otherwise."""
        tp = (internal_topic, self.coordinator_partition(internal_topic, key))
        if self._coordinator_of(tp) != node_id:
            return ErrorCode.NOT_COORDINATOR
        if now < self._loading.get(tp, 0.0):
            return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        return ErrorCode.NONE

    def loading(self, node_id: int, internal_topic: str, now: float) -> bool:
        """Whether ``node_id`` is still loading any partition of ``internal_topic``."""
        return any(tp[0] == internal_topic and now < until
                   and self._coordinator_of(tp) == node_id
                   for tp, until in self._loading.items())

    def _move_coordinator(self, tp: TopicPartition, node_id: int, now: float) -> None:
        if node_id == tp[1] % self.size:
            self._coordinators.pop(tp, None)
        else:
            self._coordinators[tp] = node_id
        if self.load_delay_s:
            self._loading[tp] = now + self.load_delay_s

    def move_group(self, group_id: str, node_id: int, now: float) -> int | None:
        """Move ``group_id``'s ``__consumer_offsets`` partition to ``node_id``; the partition
        moved, or None when it was already there."""
        self.check_node(node_id)
        if node_id not in self.live:
            raise ClusterError(f"broker {node_id} is stopped")
        partition = self.coordinator_partition(OFFSETS_TOPIC, group_id)
        tp = (OFFSETS_TOPIC, partition)
        if self._coordinator_of(tp) == node_id:
            return None
        self._move_coordinator(tp, node_id, now)
        return partition

    # ------------------------------------------------------------------ stop and start

    def _next_live(self, node_id: int) -> int:
        return next((node_id + k) % self.size for k in range(1, self.size)
                    if (node_id + k) % self.size in self.live)

    def stop(self, node_id: int, partitions: Iterable[Placed], now: float) -> list[int]:
        """Take ``node_id`` out: its topic partitions fail over to a live replica (or go
        offline), its coordinator partitions move to the next live broker. Returns the
        ``__consumer_offsets`` partitions that moved (their groups are reloaded)."""
        self.check_node(node_id)
        if node_id not in self.live:
            raise ClusterError(f"broker {node_id} is already stopped")
        if len(self.live) == 1:
            raise ClusterError(f"broker {node_id} is the last live broker; "
                               "stopping it would leave clients nothing to connect to")
        self.live.discard(node_id)
        for topic, partition, factor in partitions:
            leader, epoch = self.leader(topic, partition)
            if leader == node_id:
                successor = next(iter(self.in_sync(partition, factor, topic)), -1)
                self._leaders[(topic, partition)] = (successor, epoch + 1)
        moved: list[int] = []
        successor = self._next_live(node_id)
        for internal_topic, count in self.partitions.items():
            for partition in range(count):
                tp = (internal_topic, partition)
                if self._coordinator_of(tp) == node_id:
                    self._move_coordinator(tp, successor, now)
                    if internal_topic == OFFSETS_TOPIC:
                        moved.append(partition)
        return moved

    def check_stopped(self, node_id: Any) -> int:
        """``node_id`` if it names a stopped broker (ClusterError otherwise)."""
        self.check_node(node_id)
        if node_id in self.live:
            raise ClusterError(f"broker {node_id} is already running")
        return int(node_id)

    def start(self, node_id: int, partitions: Iterable[Placed]) -> None:
        """Bring ``node_id`` back; offline partitions it replicates come back led by it."""
        self.check_stopped(node_id)
        self.live.add(node_id)
        for topic, partition, factor in partitions:
            leader, epoch = self.leader(topic, partition)
            if leader == -1 and node_id in self.replicas(partition, factor, topic):
                self._leaders[(topic, partition)] = (node_id, epoch + 1)

    def elect_leader(self, topic: str, partition: int, factor: int = -1,
                     unclean: bool = False) -> ErrorCode:
        """One election, as Kafka's ``ReplicationControlManager.electLeader``: PREFERRED
        gives the partition to its first replica if that one is live (ELECTION_NOT_NEEDED
        when it leads already, PREFERRED_LEADER_NOT_AVAILABLE when it is stopped); UNCLEAN
        gives a leaderless partition any live replica (ELECTION_NOT_NEEDED when it has a
        leader, ELIGIBLE_LEADERS_NOT_AVAILABLE when no replica is live). A change bumps the
        leader epoch; NONE says one was made."""
        leader, epoch = self.leader(topic, partition)
        replicas = self.replicas(partition, factor, topic)
        if unclean:
            if leader != -1:
                return ErrorCode.ELECTION_NOT_NEEDED
            candidate = next((r for r in replicas if r in self.live), -1)
            if candidate == -1:
                return ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE
        else:
            candidate = replicas[0]
            if leader == candidate:
                return ErrorCode.ELECTION_NOT_NEEDED
            if candidate not in self.live:
                return ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE
        self._leaders[(topic, partition)] = (candidate, epoch + 1)
        return ErrorCode.NONE

    def elect_preferred_leaders(self, partitions: Iterable[Placed]) -> int:
        """Give every partition back to its preferred (first) replica where that one is
        live; the number of partitions whose leader changed."""
        return sum(self.elect_leader(topic, partition, factor) == ErrorCode.NONE
                   for topic, partition, factor in partitions)

    # ------------------------------------------------------------------ persistence

    def state(self) -> dict[str, Any]:
        """What survives a restart (``cluster.json``): leadership and leader epochs that
        moved, and coordinator partitions that moved. Leader epochs never go backwards for
        a client that outlives the process (librdkafka ignores metadata that goes back)."""
        return {
            "brokers": self.size,
            "leaders": [[t, p, leader, epoch] for (t, p), (leader, epoch) in
                        sorted(self._leaders.items())],
            "coordinators": [[t, p, node] for (t, p), node in sorted(self._coordinators.items())],
            "assignments": [[t, p, replicas] for (t, p), replicas in
                            sorted(self._assigned.items())],
        }

    def restore(self, state: Any) -> bool:
        """Take back a ``state()`` of the same broker count (False, and nothing changed,
        otherwise). Every broker starts live: a partition that was offline comes back led
        by its first replica at the next epoch. A file without ``assignments`` (written
        before reassignments existed) has none."""
        if not isinstance(state, dict) or state.get("brokers") != self.size:
            return False
        assigned = {(str(t), int(p)): [int(r) for r in replicas]
                    for t, p, replicas in state.get("assignments", ()) if replicas}
        leaders: dict[TopicPartition, tuple[int, int]] = {}
        for topic, partition, leader, epoch in state.get("leaders", ()):
            tp = (str(topic), int(partition))
            if leader == -1:
                leader, epoch = assigned.get(tp, [tp[1] % self.size])[0], int(epoch) + 1
            leaders[tp] = (int(leader), int(epoch))
        coordinators = {(str(t), int(p)): int(node)
                        for t, p, node in state.get("coordinators", ())}
        nodes = [*(n for n, _ in leaders.values()), *coordinators.values(),
                 *(r for replicas in assigned.values() for r in replicas)]
        if any(not 0 <= n < self.size for n in nodes):
            return False
        self._leaders, self._coordinators, self._assigned = leaders, coordinators, assigned
        return True

    def describe(self) -> list[dict[str, Any]]:
        """Every broker: id, address, live, and how many coordinator partitions it leads."""
        led: dict[int, int] = {}
        for internal_topic, count in self.partitions.items():
            for partition in range(count):
                node = self._coordinator_of((internal_topic, partition))
                led[node] = led.get(node, 0) + 1
        out = []
        for node_id in range(self.size):
            identity = self.identities.get(node_id)
            out.append({
                "node_id": node_id,
                "host": identity.host if identity else None,
                "port": identity.port if identity else None,
                "live": node_id in self.live,
                "coordinator_partitions": led.get(node_id, 0),
            })
        return out
