"""A Hypothesis state machine of consumer-protocol clients against the core: joins, leaves,
heartbeats whose responses get lost, session expiries, topic changes, crashes and restarts.

Invariants after every step: no partition is held by two members; group and member epochs
only grow; the live group is what a replay of the log rebuilds. After ``settle`` (every
client heartbeats as a real one would until nothing changes, past the session timeout of
members no client speaks for any more) every subscribed partition is assigned, exactly
once."""

from __future__ import annotations

import uuid
from typing import Any

from consumer_harness import (
    BAR,
    FOO,
    GROUP,
    ConsumerHarness,
    assert_no_partition_has_two_owners,
    assignment,
)
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from coordinator.core import ErrorCode

CLIENTS = ("c0", "c1", "c2", "c3")
TOPIC_SETS = (("foo",), ("bar",), ("foo", "bar"))


class Client:
    """What a consumer knows: its member id, epoch and the partitions it owns."""

    def __init__(self, name: str, topics: tuple[str, ...]) -> None:
        self.member_id = f"{name}-{uuid.UUID(int=hash(name) & (2**64 - 1))}"
        self.topics = topics
        self.epoch = 0
        self.owned: dict[uuid.UUID, list[int]] = {}
        self.joined = False
        #: After a lost response a client sends a full heartbeat (as Kafka's clients do after
        #: a timeout), which always carries the assignment back.
        self.full_next = False


class ConsumerGroupMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.h = ConsumerHarness()
        self.clients: dict[str, Client] = {}
        self.group_epoch = 0
        self.member_epochs: dict[str, int] = {}

    # ------------------------------------------------------------------ the client's side

    def _beat(self, client: Client, *, lose: bool = False) -> Any:
        if not client.joined:
            answer = self.h.join(client.member_id, list(client.topics))
        elif client.full_next:
            answer = self.h.consumer_heartbeat(
                client.member_id, client.epoch, rebalance_timeout_ms=300_000,
                subscribed_topic_names=list(client.topics),
                topic_partitions=list(client.owned.items()))
        else:
            answer = self.h.consumer_heartbeat(
                client.member_id, client.epoch,
                topic_partitions=list(client.owned.items()))
        client.full_next = lose
        if lose:
            return answer
        if answer.error_code in (ErrorCode.FENCED_MEMBER_EPOCH, ErrorCode.UNKNOWN_MEMBER_ID):
            client.joined, client.epoch, client.owned = False, 0, {}
            return answer
        assert answer.error_code == ErrorCode.NONE, answer
        client.joined = True
        client.epoch = answer.member_epoch
        got = assignment(answer)
        if got is not None:
            client.owned = got
        return answer

    @rule(name=st.sampled_from(CLIENTS), topics=st.sampled_from(TOPIC_SETS))
    def start(self, name: str, topics: tuple[str, ...]) -> None:
        if name not in self.clients:
            self.clients[name] = Client(name, topics)
            self._beat(self.clients[name])

    @precondition(lambda self: self.clients)
    @rule(data=st.data())
    def heartbeat(self, data: st.DataObject) -> None:
        self._beat(self.clients[data.draw(st.sampled_from(sorted(self.clients)))])

    @precondition(lambda self: self.clients)
    @rule(data=st.data())
    def heartbeat_with_nothing_changed(self, data: st.DataObject) -> None:
        """A heartbeat with every optional field null (what clients send most)."""
        client = self.clients[data.draw(st.sampled_from(sorted(self.clients)))]
        if not client.joined:
            return
        answer = self.h.consumer_heartbeat(client.member_id, client.epoch)
        if answer.error_code != ErrorCode.NONE:
            client.joined, client.epoch, client.owned = False, 0, {}
            return
        client.epoch = answer.member_epoch
        got = assignment(answer)
        if got is not None:
            client.owned = got

    @precondition(lambda self: self.clients)
    @rule(data=st.data())
    def heartbeat_response_lost(self, data: st.DataObject) -> None:
        self._beat(self.clients[data.draw(st.sampled_from(sorted(self.clients)))], lose=True)

    @precondition(lambda self: self.clients)
    @rule(data=st.data())
    def leave(self, data: st.DataObject) -> None:
        name = data.draw(st.sampled_from(sorted(self.clients)))
        client = self.clients.pop(name)
        if client.joined:
            self.h.consumer_heartbeat(client.member_id, -1)

    @rule(ms=st.sampled_from([1_000, 20_000, 46_000]))
    def time_passes(self, ms: int) -> None:
        self.h.sleep(ms)

    @rule(foo=st.integers(1, 8))
    def topics_change(self, foo: int) -> None:
        self.h.set_topics(foo=(FOO, foo), bar=(BAR, 3))

    @rule()
    def crash_and_restart(self) -> None:
        self.h.crash_and_replay()

    @precondition(lambda self: self.clients)
    @rule()
    def settle(self) -> None:
        # A member the server still has but no client speaks for (fenced, then dropped by
        # its client without a leave) holds its partitions until its session times out, as
        # in Kafka: let that time pass while the live clients keep heartbeating.
        for _ in range(8):
            for client in list(self.clients.values()):
                self._beat(client)
            self.h.sleep(7_000)
        for _ in range(8):
            for client in list(self.clients.values()):
                self._beat(client)
        group = self.h.coordinator.consumer_groups.get(GROUP)
        assert group is not None
        assert group.state == "Stable", group.state
        wanted = {(t, p) for client in self.clients.values() for name in client.topics
                  for t, n in [self.h.topics[name]] for p in range(n)}
        held = [(t, p) for client in self.clients.values()
                for t, ps in client.owned.items() for p in ps]
        assert len(held) == len(set(held))
        assert set(held) == wanted

    # ------------------------------------------------------------------ invariants

    @invariant()
    def no_partition_has_two_owners(self) -> None:
        assert_no_partition_has_two_owners(self.h.coordinator.consumer_groups.get(GROUP))

    @invariant()
    def epochs_only_grow(self) -> None:
        group = self.h.coordinator.consumer_groups.get(GROUP)
        if group is None:
            return
        assert group.group_epoch >= self.group_epoch
        self.group_epoch = group.group_epoch
        assert group.assignment_epoch <= group.group_epoch
        for member_id, member in group.members.items():
            epoch = member.member_epoch
            assert epoch >= self.member_epochs.get(member_id, 0)
            self.member_epochs[member_id] = epoch

    @invariant()
    def live_equals_replay(self) -> None:
        self.h.assert_live_equals_replay()


ConsumerGroupMachine.TestCase.settings = settings(
    max_examples=200, stateful_step_count=40, deadline=None
)
TestConsumerGroupMachine = ConsumerGroupMachine.TestCase
