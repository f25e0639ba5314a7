"""A Hypothesis state machine of a consumer group's reconciliation: members join and leave,
topics grow, the uniform assignor recomputes the target, and members heartbeat with clients
that revoke promptly, slowly, or lose one response.

Invariants: no partition is ever held by two members, on the server (the PartitionEpochs
ledger refuses it) or on the clients; a client only owns what the server has it hold; member
epochs never go down; a single lost response never fences (Kafka's previous-epoch rule).
At the end every member converges to its target and every subscribed partition is assigned.
"""

from __future__ import annotations

import uuid

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from coordinator.core.consumer import (
    CurrentMemberAssignment,
    GroupSpec,
    MemberState,
    MemberSubscription,
    PartitionEpochs,
    TopicMetadata,
    UniformAssignor,
    reconcile,
)

TOPICS = [uuid.UUID(int=1), uuid.UUID(int=2), uuid.UUID(int=3)]
MEMBER_POOL = [f"m{i}" for i in range(6)]
Assignment = dict[uuid.UUID, frozenset[int]]


def contains(outer: Assignment, inner: Assignment) -> bool:
    return all(parts <= outer.get(t, frozenset()) for t, parts in inner.items())


def union(a: Assignment, b: Assignment) -> Assignment:
    return {t: a.get(t, frozenset()) | b.get(t, frozenset()) for t in a.keys() | b.keys()}


class Group(RuleBasedStateMachine):
    """The server side of one consumer group plus each member's client."""

    def __init__(self) -> None:
        super().__init__()
        self.counts: dict[uuid.UUID, int] = {}
        self.subscriptions: dict[str, frozenset[uuid.UUID]] = {}
        self.members: dict[str, CurrentMemberAssignment[uuid.UUID]] = {}
        self.target: dict[str, Assignment] = {}
        self.target_epoch = 0
        self.ledger: PartitionEpochs[uuid.UUID] = PartitionEpochs()
        # The client side: what each client owns and the epoch it last heard.
        self.owned: dict[str, Assignment] = {}
        self.client_epoch: dict[str, int] = {}
        self.lost_last_response: dict[str, bool] = {}
        self.highest_epoch: dict[str, int] = {}

    @initialize(counts=st.lists(st.integers(1, 8), min_size=len(TOPICS), max_size=len(TOPICS)))
    def create_topics(self, counts: list[int]) -> None:
        self.counts = dict(zip(TOPICS, counts, strict=True))

    def rebalance(self) -> None:
        """A group epoch bump: the target assignment is recomputed at the new epoch."""
        self.target_epoch += 1
        spec = GroupSpec(
            {
                m: MemberSubscription(self.subscriptions[m], self.target.get(m, {}))
                for m in self.members
            },
            {t: TopicMetadata(str(t), n) for t, n in self.counts.items()},
        )
        self.target = {m: dict(a) for m, a in UniformAssignor().assign(spec).items()}

    def heartbeat(self, member_id: str, outcome: str) -> None:
        """One ConsumerGroupHeartbeat: the epoch check, reconciliation, then the client."""
        old = self.members[member_id]
        owned = self.owned[member_id]
        epoch = self.client_epoch[member_id]
        # Kafka's throwIfMemberEpochIsInvalid: only the current epoch, or the previous one
        # with owned partitions inside the assignment (a lost response), is accepted.
        accepted = epoch == old.member_epoch or (
            epoch == old.previous_member_epoch and contains(dict(old.assigned_partitions), owned)
        )
        assert accepted, (member_id, epoch, old)
        new = reconcile(
            old,
            target_epoch=self.target_epoch,
            target=self.target[member_id],
            partition_epoch=self.ledger.epoch_of,
            owned=owned,
            subscribed_topic_ids=self.subscriptions[member_id],
        )
        self.ledger.update_member(old, new)
        self.members[member_id] = new
        self.lost_last_response[member_id] = outcome == "lost"
        if outcome == "prompt":
            # The client revokes what it lost and takes what it was given.
            self.owned[member_id] = dict(new.assigned_partitions)
            self.client_epoch[member_id] = new.member_epoch
        elif outcome == "slow":
            # It heard the response but has not finished revoking: it keeps what it had,
            # minus what it no longer has at all, and adds nothing yet.
            self.client_epoch[member_id] = new.member_epoch
            kept = union(dict(new.assigned_partitions), dict(new.partitions_pending_revocation))
            self.owned[member_id] = {
                t: parts & kept.get(t, frozenset()) for t, parts in owned.items()
            }

    @rule(
        member_id=st.sampled_from(MEMBER_POOL),
        topics=st.sets(st.sampled_from(TOPICS), min_size=1),
    )
    def join(self, member_id: str, topics: set[uuid.UUID]) -> None:
        if member_id in self.members:
            return
        self.subscriptions[member_id] = frozenset(topics)
        self.members[member_id] = CurrentMemberAssignment(MemberState.STABLE, 0, 0)
        self.owned[member_id] = {}
        self.client_epoch[member_id] = 0
        self.lost_last_response[member_id] = False
        self.rebalance()
        self.heartbeat(member_id, "prompt")

    @precondition(lambda self: self.members)
    @rule(data=st.data())
    def leave(self, data: st.DataObject) -> None:
        member_id = data.draw(st.sampled_from(sorted(self.members)))
        self.ledger.update_member(self.members.pop(member_id), None)
        for table in (self.owned, self.client_epoch, self.subscriptions, self.target):
            table.pop(member_id, None)
        self.rebalance()

    @precondition(lambda self: self.members)
    @rule(topic=st.sampled_from(TOPICS), more=st.integers(1, 3))
    def add_partitions(self, topic: uuid.UUID, more: int) -> None:
        self.counts[topic] += more
        self.rebalance()

    @precondition(lambda self: self.members)
    @rule(data=st.data(), outcome=st.sampled_from(["prompt", "prompt", "slow", "lost"]))
    def heartbeat_once(self, data: st.DataObject, outcome: str) -> None:
        member_id = data.draw(st.sampled_from(sorted(self.members)))
        if outcome == "lost" and self.lost_last_response[member_id]:
            outcome = "prompt"  # Kafka tolerates one lost response, not two in a row.
        self.heartbeat(member_id, outcome)

    @invariant()
    def no_partition_has_two_owners(self) -> None:
        seen: set[tuple[uuid.UUID, int]] = set()
        for member_id, state in self.members.items():
            held = union(dict(state.assigned_partitions), dict(state.partitions_pending_revocation))
            # A client only owns what the server has it hold...
            assert contains(held, self.owned[member_id]), member_id
            # ...and no two clients own the same partition.
            for topic_id, parts in self.owned[member_id].items():
                for partition in parts:
                    assert (topic_id, partition) not in seen
                    seen.add((topic_id, partition))

    @invariant()
    def epochs_only_grow(self) -> None:
        for member_id, state in self.members.items():
            assert state.member_epoch >= self.highest_epoch.get(member_id, 0)
            assert state.member_epoch <= self.target_epoch
            self.highest_epoch[member_id] = state.member_epoch

    def teardown(self) -> None:
        """With every client revoking promptly, all members reach their targets."""
        for _ in range(4):
            for member_id in sorted(self.members):
                self.heartbeat(member_id, "prompt")
        assigned: set[tuple[uuid.UUID, int]] = set()
        for member_id, state in self.members.items():
            assert state.state is MemberState.STABLE, (member_id, state)
            assert state.member_epoch == self.target_epoch
            assert dict(state.assigned_partitions) == self.target[member_id]
            assigned |= {(t, p) for t, parts in state.assigned_partitions.items() for p in parts}
        subscribed = set().union(*self.subscriptions.values()) if self.subscriptions else set()
        assert assigned == {(t, p) for t in subscribed for p in range(self.counts[t])}


Group.TestCase.settings = settings(max_examples=120, stateful_step_count=40, deadline=None)
TestReconciliation = Group.TestCase
