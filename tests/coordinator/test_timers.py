"""Timers: initial rebalance delay, rebalance timeout, join-phase extension, stale firings."""

from __future__ import annotations

from harness import (
    DEFAULT_REBALANCE_TIMEOUT,
    GROUP_ID,
    GROUP_INITIAL_REBALANCE_DELAY,
    PROTOCOL_TYPE,
    PROTOCOLS,
    UNKNOWN_MEMBER_ID,
    Harness,
)

from coordinator.config import CoordinatorConfig
from coordinator.core import (
    ErrorCode,
    HeartbeatTimerKey,
    JoinTimerKey,
    RetentionTimerKey,
    SyncTimerKey,
)
from coordinator.core.classic.state import DEAD


def test_should_delay_initial_rebalance_by_group_initial_rebalance_delay_on_empty_group(
    h: Harness,
) -> None:
    token = h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    h.sleep(GROUP_INITIAL_REBALANCE_DELAY // 2)
    assert not h.answered(token)
    h.sleep(GROUP_INITIAL_REBALANCE_DELAY // 2 + 1)
    assert h.reply(token).error_code == ErrorCode.NONE


def test_should_reset_rebalance_delay_when_new_member_joins_group_in_initial_rebalance(
    h: Harness,
) -> None:
    rebalance_timeout = GROUP_INITIAL_REBALANCE_DELAY * 3
    first = h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS,
                              rebalance_timeout=rebalance_timeout)
    h.sleep(GROUP_INITIAL_REBALANCE_DELAY - 1)
    second = h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS,
                               rebalance_timeout=rebalance_timeout)
    h.sleep(2)
    # Past the first delay: extended because a member arrived.
    h.sleep(GROUP_INITIAL_REBALANCE_DELAY // 2 + 1)
    assert not h.answered(first)
    assert not h.answered(second)
    h.sleep(GROUP_INITIAL_REBALANCE_DELAY // 2)
    assert h.reply(first).error_code == ErrorCode.NONE
    assert h.reply(second).error_code == ErrorCode.NONE


def test_should_delay_rebalance_upto_rebalance_timeout(h: Harness) -> None:
    rebalance_timeout = GROUP_INITIAL_REBALANCE_DELAY * 2
    first = h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS,
                              rebalance_timeout=rebalance_timeout)
    second = h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS,
                               rebalance_timeout=rebalance_timeout)
    h.sleep(GROUP_INITIAL_REBALANCE_DELAY + 1)
    third = h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS,
                              rebalance_timeout=rebalance_timeout)
    h.sleep(GROUP_INITIAL_REBALANCE_DELAY)
    assert not any(h.answered(t) for t in (first, second, third))
    # The delay is capped by the rebalance timeout even though a member just arrived.
    h.sleep(1)
    assert all(h.reply(t).error_code == ErrorCode.NONE for t in (first, second, third))


# --------------------------------------------------------------------------- Java-only tests


def test_complete_join_phase_in_empty_state_skips_rebalance() -> None:
    h = Harness(strict=False)
    token = h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS,
                              session_timeout=1000, rebalance_timeout=1000)
    assert not h.answered(token)
    group = h.group()
    assert group.generation_id == 0
    assert group.state.value == "PreparingRebalance"
    group.transition_to(DEAD, h.now)
    h.sleep(GROUP_INITIAL_REBALANCE_DELAY)
    assert group.generation_id == 0
    assert group.state is DEAD


def test_complete_join_phase_no_members_rejoined_extends_join_phase() -> None:
    h = Harness(strict=False)
    first_token = h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS,
                                    "first-instance-id", 30000, 10000)
    h.sleep(GROUP_INITIAL_REBALANCE_DELAY)
    first_id = h.reply(first_token).member_id
    second = h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS,
                               "second-instance-id", 30000, 10000)
    assert not h.answered(second)
    first = h.send_join_group(GROUP_ID, first_id, PROTOCOL_TYPE, PROTOCOLS, "first-instance-id",
                              30000, 10000)
    assert h.reply(first).error_code == h.reply(second).error_code == ErrorCode.NONE
    group = h.group()
    assert group.size == 2
    assert group.generation_id == 2

    # Trigger a rebalance that nobody rejoins.
    fx = h.coordinator.effects()
    h.coordinator.prepare_rebalance(group, h.now, "trigger rebalance", fx)
    h.apply(fx.result())
    assert group.state.value == "PreparingRebalance"
    assert group.num_awaiting_join == 0
    # As long as nobody rejoins, the join phase is extended by the rebalance timeout.
    for _ in range(2):
        h.sleep(10000)
        assert h.deadline(JoinTimerKey(GROUP_ID)) == h.now + 10000
    assert group.state.value == "PreparingRebalance"
    assert group.size == 2
    assert group.generation_id == 2
    # Both rejoin: the phase completes.
    a = h.send_join_group(GROUP_ID, first_id, PROTOCOL_TYPE, PROTOCOLS, "first-instance-id",
                          30000, 10000)
    b = h.send_join_group(GROUP_ID, h.reply(second).member_id, PROTOCOL_TYPE, PROTOCOLS,
                          "second-instance-id", 30000, 10000)
    assert h.reply(a).generation_id == h.reply(b).generation_id == 3
    assert group.state.value == "CompletingRebalance"


# --------------------------------------------------------------------------- keyed timers


def test_stale_timer_firings_are_ignored(h: Harness) -> None:
    join = h.dynamic_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    member_key = HeartbeatTimerKey(GROUP_ID, join.member_id)
    deadline = h.deadline(member_key)
    assert deadline is not None
    # Too early for the armed deadline, or never armed: nothing happens.
    for key in (member_key, JoinTimerKey(GROUP_ID), SyncTimerKey("nope"), RetentionTimerKey(),
                HeartbeatTimerKey("nope", "x")):
        result = h.coordinator.fire_timer(key, deadline - 1)
        assert result.records == result.replies == result.timers == ()
    assert join.member_id in h.group().members


def test_join_timer_is_cancelled_when_everyone_rejoins(h: Harness) -> None:
    join = h.dynamic_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    h.sync_group_leader(GROUP_ID, 1, join.member_id, {})
    other = h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    assert h.deadline(JoinTimerKey(GROUP_ID)) == h.now + DEFAULT_REBALANCE_TIMEOUT
    h.send_join_group(GROUP_ID, join.member_id, PROTOCOL_TYPE, PROTOCOLS)
    assert h.answered(other)
    assert h.deadline(JoinTimerKey(GROUP_ID)) is None
    assert h.deadline(SyncTimerKey(GROUP_ID)) == h.now + DEFAULT_REBALANCE_TIMEOUT


def test_rebalance_timeout_is_the_largest_member_rebalance_timeout(h: Harness) -> None:
    join = h.dynamic_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS,
                                rebalance_timeout=4000)
    h.sync_group_leader(GROUP_ID, 1, join.member_id, {})
    h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS,
                      rebalance_timeout=1000)
    assert h.deadline(JoinTimerKey(GROUP_ID)) == h.now + 4000


def test_zero_initial_delay_completes_join_at_once() -> None:
    h = Harness(config=CoordinatorConfig(group_min_session_timeout_ms=10,
                                         group_initial_rebalance_delay_ms=0))
    token = h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    assert h.reply(token).error_code == ErrorCode.NONE
    assert h.state() == "CompletingRebalance"


def test_initial_delay_only_applies_from_empty(h: Harness) -> None:
    join = h.dynamic_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    h.sync_group_leader(GROUP_ID, 1, join.member_id, {})
    # A leader rejoin of a Stable group completes at once: no initial delay.
    assert h.reply(h.send_join_group(GROUP_ID, join.member_id, PROTOCOL_TYPE,
                                     PROTOCOLS)).generation_id == 2
