"""group.max.size (KIP-389): mirrors of GroupCoordinatorTest.scala's max-size tests and the
Java-only over-capacity-on-load test."""

from __future__ import annotations

from harness import (
    DEFAULT_REBALANCE_TIMEOUT,
    DEFAULT_SESSION_TIMEOUT,
    GROUP_ID,
    GROUP_INITIAL_REBALANCE_DELAY,
    GROUP_MAX_SESSION_TIMEOUT,
    GROUP_MAX_SIZE,
    PROTOCOL_TYPE,
    PROTOCOLS,
    UNKNOWN_MEMBER_ID,
    Harness,
)

from coordinator.config import CoordinatorConfig
from coordinator.core import ErrorCode
from coordinator.core.classic.group import ClassicGroup
from coordinator.core.classic.group_member import Member
from coordinator.core.classic.state import STABLE


def test_join_group_should_receive_error_if_group_over_max_size(h: Harness) -> None:
    rebalance_timeout = GROUP_INITIAL_REBALANCE_DELAY * 2
    tokens = []
    for i in range(1, GROUP_MAX_SIZE + 1):
        tokens.append(h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS,
                                        rebalance_timeout=rebalance_timeout))
        if i != 1:
            h.sleep(GROUP_INITIAL_REBALANCE_DELAY)
    h.sleep(GROUP_INITIAL_REBALANCE_DELAY + 1)
    assert all(h.reply(t).error_code == ErrorCode.NONE for t in tokens)
    # The group is full.
    error = h.reply(h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS,
                                      rebalance_timeout=rebalance_timeout))
    assert error.error_code == ErrorCode.GROUP_MAX_SIZE_REACHED
    assert error.member_id == ""


def test_dynamic_members_join_group_with_max_size_and_required_known_member(h: Harness) -> None:
    n = GROUP_MAX_SIZE + 1
    first = [h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS,
                               require_known_member_id=True) for _ in range(n)]
    member_ids = [h.reply(t).member_id for t in first]
    second = [h.send_join_group(GROUP_ID, m, PROTOCOL_TYPE, PROTOCOLS,
                                require_known_member_id=True) for m in member_ids]
    h.sleep(GROUP_INITIAL_REBALANCE_DELAY + 1)
    h.sleep(GROUP_INITIAL_REBALANCE_DELAY + 1)
    errors = [h.reply(t).error_code for t in second]
    assert errors.count(ErrorCode.NONE) == GROUP_MAX_SIZE
    assert errors.count(ErrorCode.GROUP_MAX_SIZE_REACHED) == n - GROUP_MAX_SIZE
    # Accepted members can rejoin; the others are still rejected.
    again = [h.send_join_group(GROUP_ID, m, PROTOCOL_TYPE, PROTOCOLS,
                               require_known_member_id=True) for m in member_ids]
    assert [h.reply(t).error_code for t in again] == errors


def test_dynamic_members_join_group_with_max_size(h: Harness) -> None:
    n = GROUP_MAX_SIZE + 1
    tokens = [h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
              for _ in range(n)]
    h.sleep(GROUP_INITIAL_REBALANCE_DELAY + 1)
    h.sleep(GROUP_INITIAL_REBALANCE_DELAY + 1)
    results = [h.reply(t) for t in tokens]
    errors = [r.error_code for r in results]
    assert errors.count(ErrorCode.NONE) == GROUP_MAX_SIZE
    assert errors.count(ErrorCode.GROUP_MAX_SIZE_REACHED) == n - GROUP_MAX_SIZE
    again = [h.send_join_group(GROUP_ID, r.member_id, PROTOCOL_TYPE, PROTOCOLS) for r in results]
    assert [h.reply(t).error_code for t in again] == errors


def test_static_members_join_group_with_max_size(h: Harness) -> None:
    n = GROUP_MAX_SIZE + 1
    instance_ids = [f"instance-id-{i}" for i in range(1, n + 1)]
    tokens = [h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS, i)
              for i in instance_ids]
    h.sleep(GROUP_INITIAL_REBALANCE_DELAY + 1)
    h.sleep(GROUP_INITIAL_REBALANCE_DELAY + 1)
    results = [h.reply(t) for t in tokens]
    errors = [r.error_code for r in results]
    assert errors.count(ErrorCode.NONE) == GROUP_MAX_SIZE
    assert errors.count(ErrorCode.GROUP_MAX_SIZE_REACHED) == n - GROUP_MAX_SIZE
    again = [h.send_join_group(GROUP_ID, r.member_id, PROTOCOL_TYPE, PROTOCOLS, i)
             for i, r in zip(instance_ids, results, strict=True)]
    assert [h.reply(t).error_code for t in again] == errors


def test_dynamic_members_can_re_join_group_with_max_size_while_rebalancing(h: Harness) -> None:
    n = GROUP_MAX_SIZE + 1
    first = [h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS,
                               require_known_member_id=True) for _ in range(n)]
    member_ids = [h.reply(t).member_id for t in first]
    for m in member_ids:
        h.send_join_group(GROUP_ID, m, PROTOCOL_TYPE, PROTOCOLS, require_known_member_id=True)
    # Members can rejoin while rebalancing.
    rejoins = [h.send_join_group(GROUP_ID, m, PROTOCOL_TYPE, PROTOCOLS,
                                 require_known_member_id=True) for m in member_ids]
    h.sleep(GROUP_INITIAL_REBALANCE_DELAY + 1)
    h.sleep(GROUP_INITIAL_REBALANCE_DELAY + 1)
    errors = [h.reply(t).error_code for t in rejoins]
    assert errors.count(ErrorCode.NONE) == GROUP_MAX_SIZE
    assert errors.count(ErrorCode.GROUP_MAX_SIZE_REACHED) == n - GROUP_MAX_SIZE


def _stable_group_of(h: Harness, n: int, session_timeout: int) -> list[str]:
    group = h.add_group(ClassicGroup(GROUP_ID, STABLE, h.now))
    member_ids = [f"clientId-m{i}" for i in range(n)]
    for member_id in member_ids:
        group.add(Member(GROUP_ID, member_id, None, "clientId", "clientHost",
                         DEFAULT_REBALANCE_TIMEOUT, session_timeout, PROTOCOL_TYPE, PROTOCOLS),
                  None)
    return member_ids


def test_last_joining_members_are_kicked_out_when_re_joining_group_with_max_size(
    h: Harness,
) -> None:
    member_ids = _stable_group_of(h, GROUP_MAX_SIZE + 2, GROUP_MAX_SESSION_TIMEOUT)
    group = h.group()
    fx = h.coordinator.effects()
    h.coordinator.prepare_rebalance(group, h.now, "", fx)
    h.apply(fx.result())
    tokens = [h.send_join_group(GROUP_ID, m, PROTOCOL_TYPE, PROTOCOLS, None,
                                GROUP_MAX_SESSION_TIMEOUT, DEFAULT_REBALANCE_TIMEOUT)
              for m in member_ids]
    h.sleep(DEFAULT_REBALANCE_TIMEOUT + 1)
    errors = [h.reply(t).error_code for t in tokens]
    assert set(errors[:GROUP_MAX_SIZE]) == {ErrorCode.NONE}
    assert set(errors[GROUP_MAX_SIZE:]) == {ErrorCode.GROUP_MAX_SIZE_REACHED}
    for m in member_ids[GROUP_MAX_SIZE:]:
        assert m not in group.members


# --------------------------------------------------------------------------- Java-only tests


def test_on_loaded_exceed_group_max_size_triggers_rebalance() -> None:
    h = Harness()
    writer = Harness(config=CoordinatorConfig(
        group_min_session_timeout_ms=10, group_max_size=10,
        group_initial_rebalance_delay_ms=GROUP_INITIAL_REBALANCE_DELAY))
    tokens = [writer.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
              for _ in range(GROUP_MAX_SIZE + 1)]
    writer.sleep(GROUP_INITIAL_REBALANCE_DELAY + 1)
    writer.sleep(DEFAULT_REBALANCE_TIMEOUT + 1)
    leader = next(writer.reply(t) for t in tokens if writer.reply(t).leader ==
                  writer.reply(t).member_id)
    writer.sync_group_leader(GROUP_ID, leader.generation_id, leader.member_id, {})
    assert writer.state() == "Stable"
    assert writer.group().size == GROUP_MAX_SIZE + 1
    # Reload the log with a smaller group.max.size (GroupCoordinatorTest's 4).
    for record in writer.records:
        h.coordinator.replay(record)
    h.apply(h.coordinator.on_loaded(h.now))
    assert h.group().previous_state is STABLE  # loaded Stable, then over capacity
    assert h.state() == "PreparingRebalance"
    # Members rejoin; the last one is kicked out.
    group = h.group()
    rejoins = [h.send_join_group(GROUP_ID, m, PROTOCOL_TYPE, PROTOCOLS)
               for m in list(group.members)]
    errors = [h.reply(t).error_code for t in rejoins]
    assert errors == [ErrorCode.NONE] * GROUP_MAX_SIZE + [ErrorCode.GROUP_MAX_SIZE_REACHED]
    assert group.size == GROUP_MAX_SIZE
    assert h.state() == "CompletingRebalance"


def test_max_size_admission_counts_members_in_stable(h: Harness) -> None:
    tokens = [h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS,
                                session_timeout=DEFAULT_SESSION_TIMEOUT)
              for _ in range(GROUP_MAX_SIZE)]
    h.sleep(GROUP_INITIAL_REBALANCE_DELAY + 1)
    h.sleep(DEFAULT_REBALANCE_TIMEOUT + 1)
    results = [h.reply(t) for t in tokens]
    leader = next(r for r in results if r.leader == r.member_id)
    h.sync_group_leader(GROUP_ID, leader.generation_id, leader.member_id, {})
    assert h.state() == "Stable"
    # Existing members are accepted; a newcomer is not.
    follower = next(r for r in results if r.leader != r.member_id)
    assert h.reply(h.send_join_group(GROUP_ID, follower.member_id, PROTOCOL_TYPE,
                                     PROTOCOLS)).error_code == ErrorCode.NONE
    assert h.reply(h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE,
                                     PROTOCOLS)).error_code == ErrorCode.GROUP_MAX_SIZE_REACHED
