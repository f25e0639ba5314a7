"""Many members joining at once (issue 33's burst: 1,000 groups x 10 members, scaled down):
every group forms in one generation with every member, as Kafka's InitialDelayedJoin forms
it -- the initial delay, extended once because group-mates arrived within it -- with one
JoinGroup per member (two with KIP-394's MEMBER_ID_REQUIRED) and no UNKNOWN_MEMBER_ID."""

from __future__ import annotations

import pytest
from harness import Harness
from harness_core import PROTOCOL_TYPE, PROTOCOLS, UNKNOWN_MEMBER_ID

from coordinator.config import CoordinatorConfig
from coordinator.core import ErrorCode

GROUPS = 100
MEMBERS = 10
DELAY_MS = 3000  # group.initial.rebalance.delay.ms, Kafka's default
SESSION_MS = 30_000
REBALANCE_MS = 60_000


def _burst_config() -> CoordinatorConfig:
    return CoordinatorConfig(group_initial_rebalance_delay_ms=DELAY_MS, group_max_size=50)


@pytest.mark.parametrize("api_version", [3, 9])
def test_a_burst_of_members_forms_every_group_in_one_generation(api_version: int) -> None:
    """The joins of every group arrive interleaved, 1 ms apart (a whole burst well within
    one initial delay); a v4+ join is sent again with the id MEMBER_ID_REQUIRED gave. After
    twice the initial delay every member has its generation-1 answer and every SyncGroup
    is answered without error; no member expired on the way."""
    h = Harness(config=_burst_config())
    tokens: dict[tuple[int, int], str] = {}
    for member in range(MEMBERS):
        for group in range(GROUPS):
            token = h.send_join_group(f"g{group}", UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS,
                                      session_timeout=SESSION_MS,
                                      rebalance_timeout=REBALANCE_MS, api_version=api_version)
            if api_version >= 4:
                first = h.reply(token)
                assert first.error_code == ErrorCode.MEMBER_ID_REQUIRED
                token = h.send_join_group(f"g{group}", first.member_id, PROTOCOL_TYPE,
                                          PROTOCOLS, session_timeout=SESSION_MS,
                                          rebalance_timeout=REBALANCE_MS,
                                          api_version=api_version)
            tokens[group, member] = token
            h.sleep(1)
    assert not any(h.answered(t) for t in tokens.values())
    # Every group's delay ends (the last group began GROUPS ms into the burst) ...
    h.sleep(DELAY_MS + GROUPS - GROUPS * MEMBERS + 1)
    assert not any(h.answered(t) for t in tokens.values())
    # ... then its one extension (its mates joined within the delay).
    h.sleep(DELAY_MS + 1)
    joined = {key: h.reply(token) for key, token in tokens.items()}
    assert {j.error_code for j in joined.values()} == {ErrorCode.NONE}
    assert {j.generation_id for j in joined.values()} == {1}
    for group in range(GROUPS):
        assert len(h.group(f"g{group}").members) == MEMBERS
    syncs = []
    for (group, _), j in joined.items():
        assignment = {m.member_id: b"a" for m in j.members} if j.members else None
        syncs.append(h.send_sync_group(f"g{group}", 1, j.member_id, assignment))
    assert {h.reply(t).error_code for t in syncs} == {ErrorCode.NONE}
    assert {h.state(f"g{group}") for group in range(GROUPS)} == {"Stable"}


def test_members_arriving_through_the_delay_extend_it_up_to_the_rebalance_timeout() -> None:
    """A group whose members keep arriving (one every 2 s, inside each 3 s delay) is held
    in its initial rebalance until the rebalance timeout (Kafka's InitialDelayedJoin), and
    none of the members parked meanwhile expires: all join generation 1 together."""
    h = Harness(config=_burst_config())
    rebalance_ms = 20_000
    tokens = []
    for _ in range(MEMBERS):  # 10 members over 18 s, the clock moving 1 ms at a time
        tokens.append(h.send_join_group("slow", UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS,
                                        session_timeout=SESSION_MS,
                                        rebalance_timeout=rebalance_ms, api_version=3))
        for _ in range(2000):
            h.sleep(1)
    for _ in range(rebalance_ms - 10 - h.now):
        h.sleep(1)
    assert not any(h.answered(t) for t in tokens)
    h.sleep(20)  # the rebalance timeout (plus the harness's 1 ms per timer firing)
    assert {h.reply(t).error_code for t in tokens} == {ErrorCode.NONE}
    assert {h.reply(t).generation_id for t in tokens} == {1}
    assert len(h.group("slow").members) == MEMBERS


def test_a_pending_member_rejoining_after_its_group_formed_joins_the_next_generation() -> None:
    """KIP-394: a member given an id (MEMBER_ID_REQUIRED) that sends its second JoinGroup
    only after its group's initial rebalance completed is still known (its pending id lives
    a session timeout): it is taken in by a rebalance, never answered UNKNOWN_MEMBER_ID."""
    h = Harness(config=_burst_config())
    first = h.send_join_group("late", UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS,
                              session_timeout=SESSION_MS, rebalance_timeout=REBALANCE_MS,
                              api_version=9)
    early = h.send_join_group("late", h.reply(first).member_id, PROTOCOL_TYPE, PROTOCOLS,
                              session_timeout=SESSION_MS, rebalance_timeout=REBALANCE_MS,
                              api_version=9)
    bounced = h.send_join_group("late", UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS,
                                session_timeout=SESSION_MS, rebalance_timeout=REBALANCE_MS,
                                api_version=9)
    late_id = h.reply(bounced).member_id
    h.sleep(DELAY_MS + 1)
    leader = h.reply(early)
    assert (leader.error_code, leader.generation_id) == (ErrorCode.NONE, 1)
    h.sleep(SESSION_MS - DELAY_MS - 2)  # just inside the pending id's session timeout
    late = h.send_join_group("late", late_id, PROTOCOL_TYPE, PROTOCOLS,
                             session_timeout=SESSION_MS, rebalance_timeout=REBALANCE_MS,
                             api_version=9)
    assert not h.answered(late)  # a rebalance started: the leader must rejoin
    rejoin = h.send_join_group("late", leader.member_id, PROTOCOL_TYPE, PROTOCOLS,
                               session_timeout=SESSION_MS, rebalance_timeout=REBALANCE_MS,
                               api_version=9)
    assert (h.reply(late).error_code, h.reply(late).generation_id) == (ErrorCode.NONE, 2)
    assert h.reply(rejoin).generation_id == 2
