"""A Hypothesis state machine of share consumers against the group core: joins, heartbeats
(some of whose answers are lost), subscription changes, leaves, session expiries, topic
growth, failed appends and restarts.

Invariants after every step: the live share group is what a replay of its records rebuilds;
the group epoch never decreases, nor does a member's epoch while it stays in the group; no
member's epoch is ahead of the group's; every member's assignment is within its
subscription. After ``settle`` (every client heartbeats until nothing changes) every
subscribed partition has a member, and the assignment is balanced: each partition is shared
by the same number of members (give or take one) when all subscribe alike."""

from __future__ import annotations

import uuid

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule
from share_group_harness import BAR, FOO, GROUP, SHARE_CONFIG, ShareHarness, assignment

from wire.constants import ErrorCode

CLIENTS = ("c0", "c1", "c2", "c3")
TOPIC_SETS = (("foo",), ("bar",), ("foo", "bar"))
SESSION_MS = SHARE_CONFIG.group_share_session_timeout_ms


class ShareClient:
    """What a share consumer knows: its member id and epoch."""

    def __init__(self, name: str, topics: tuple[str, ...]) -> None:
        self.member_id = f"{name}-{uuid.UUID(int=len(name) * 7919)}"
        self.topics = topics
        self.epoch = 0
        self.joined = False
        self.assigned: dict[uuid.UUID, list[int]] = {}


class ShareGroupMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.h = ShareHarness(foo=(FOO, 3), bar=(BAR, 2))
        self.clients: dict[str, ShareClient] = {}
        self.group_epoch = 0
        self.member_epochs: dict[str, int] = {}

    def _beat(self, client: ShareClient, *, lose: bool = False,
              topics: tuple[str, ...] | None = None) -> None:
        if not client.joined:
            answer = self.h.share_join(client.member_id, list(client.topics))
        else:
            answer = self.h.share_heartbeat(
                client.member_id, client.epoch,
                subscribed_topic_names=None if topics is None else list(topics))
        if answer.error_code in (ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.FENCED_MEMBER_EPOCH):
            client.joined, client.epoch, client.assigned = False, 0, {}  # rejoin from scratch
            return
        if answer.error_code != ErrorCode.NONE:  # a failed append: try again later
            return
        if topics is not None:
            client.topics = topics
        if lose:
            return
        client.joined = True
        client.epoch = answer.member_epoch
        got = assignment(answer)
        if got is not None:
            client.assigned = got

    @rule(name=st.sampled_from(CLIENTS), topics=st.sampled_from(TOPIC_SETS))
    def join(self, name: str, topics: tuple[str, ...]) -> None:
        if name not in self.clients:
            self.clients[name] = ShareClient(name, topics)
        self._beat(self.clients[name])

    @rule(name=st.sampled_from(CLIENTS), lose=st.booleans())
    def heartbeat(self, name: str, lose: bool) -> None:
        client = self.clients.get(name)
        if client is not None:
            self._beat(client, lose=lose)

    @rule(name=st.sampled_from(CLIENTS), topics=st.sampled_from(TOPIC_SETS))
    def resubscribe(self, name: str, topics: tuple[str, ...]) -> None:
        client = self.clients.get(name)
        if client is not None and client.joined:
            self._beat(client, topics=topics)

    @rule(name=st.sampled_from(CLIENTS))
    def leave(self, name: str) -> None:
        client = self.clients.pop(name, None)
        if client is not None and client.joined:
            self.h.share_heartbeat(client.member_id, -1)

    @rule(name=st.sampled_from(CLIENTS))
    def vanish(self, name: str) -> None:
        self.clients.pop(name, None)  # its session expires later

    @rule(ms=st.sampled_from([1_000, SESSION_MS // 2, SESSION_MS + 1]))
    def sleep(self, ms: int) -> None:
        self.h.sleep(ms)

    @rule()
    def grow_foo(self) -> None:
        count = self.h.topics["foo"][1]
        if count < 6:
            self.h.set_topics(foo=(FOO, count + 1), bar=(BAR, 2))

    @rule()
    def fail_next_append(self) -> None:
        self.h.fail_appends(ErrorCode.KAFKA_STORAGE_ERROR)

    @rule()
    def restart(self) -> None:
        self.h.append_errors.clear()
        self.h.crash_and_replay()

    @precondition(lambda self: bool(self.clients))
    @rule()
    def settle(self) -> None:
        self.h.append_errors.clear()
        for _ in range(4):
            self.h.sleep(SESSION_MS // 3)  # members no client speaks for expire
            for client in list(self.clients.values()):
                self._beat(client)
        for _ in range(4):
            for client in list(self.clients.values()):
                self._beat(client)
        group = self.h.coordinator.share_groups.get(GROUP)
        assert group is not None
        assert set(group.members) == {c.member_id for c in self.clients.values()}
        image = self.h.coordinator.topics_image
        counts: dict[tuple[uuid.UUID, int], int] = {}
        for client in self.clients.values():
            for topic_id, parts in client.assigned.items():
                assert image.by_id[topic_id] in client.topics
                for p in parts:
                    counts[(topic_id, p)] = counts.get((topic_id, p), 0) + 1
        subscribed = {(image.by_name[t][0], p) for c in self.clients.values()
                      for t in c.topics for p in range(image.by_name[t][1])}
        assert set(counts) == subscribed
        if len({c.topics for c in self.clients.values()}) == 1:
            assert max(counts.values()) - min(counts.values()) <= 1

    # ------------------------------------------------------------------ invariants

    @invariant()
    def live_equals_replay(self) -> None:
        self.h.assert_share_live_equals_replay()

    @invariant()
    def epochs_never_go_back(self) -> None:
        group = self.h.coordinator.share_groups.get(GROUP)
        if group is None:
            return
        assert group.group_epoch >= self.group_epoch
        self.group_epoch = group.group_epoch
        for mid, member in group.members.items():
            assert member.member_epoch <= group.group_epoch
            assert member.member_epoch >= self.member_epochs.get(mid, 0)
        self.member_epochs = {mid: m.member_epoch for mid, m in group.members.items()}
        for member in group.members.values():
            image = self.h.coordinator.topics_image
            subscribed = image.resolve(member.subscribed_topic_names, None)
            assert set(member.assigned) <= subscribed


ShareGroupMachine.TestCase.settings = settings(max_examples=60, stateful_step_count=30,
                                               deadline=None)
test_share_group_machine = ShareGroupMachine.TestCase
