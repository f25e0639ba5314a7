"""The five states and their legal previous states (ClassicGroupTest's transition tests)."""

from __future__ import annotations

import itertools

import pytest

from coordinator.core import IllegalTransitionError
from coordinator.core.classic.group import ClassicGroup
from coordinator.core.classic.state import (
    COMPLETING_REBALANCE,
    DEAD,
    EMPTY,
    PREPARING_REBALANCE,
    STABLE,
    VALID_PREVIOUS_STATES,
    GroupState,
    can_rebalance,
)

LEGAL = {
    (STABLE, PREPARING_REBALANCE), (COMPLETING_REBALANCE, PREPARING_REBALANCE),
    (EMPTY, PREPARING_REBALANCE), (PREPARING_REBALANCE, COMPLETING_REBALANCE),
    (COMPLETING_REBALANCE, STABLE), (PREPARING_REBALANCE, EMPTY),
    (STABLE, DEAD), (PREPARING_REBALANCE, DEAD), (COMPLETING_REBALANCE, DEAD), (EMPTY, DEAD),
    (DEAD, DEAD),
}


def _group(state: GroupState) -> ClassicGroup:
    return ClassicGroup("group-id", state, 0)


def _ok(start: GroupState, target: GroupState) -> None:
    group = _group(start)
    group.transition_to(target, 42)
    assert group.state is target
    assert group.previous_state is start
    assert group.current_state_timestamp == 42


def _illegal(start: GroupState, target: GroupState) -> None:
    group = _group(start)
    with pytest.raises(IllegalTransitionError):
        group.transition_to(target, 42)
    assert group.state is start


def test_state_names_are_kafkas() -> None:
    assert [s.value for s in GroupState] == [
        "Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead"]


@pytest.mark.parametrize(("start", "target"), list(itertools.product(GroupState, GroupState)),
                         ids=lambda s: s.value)
def test_transition_table_exhaustive(start: GroupState, target: GroupState) -> None:
    assert (start in VALID_PREVIOUS_STATES[target]) == ((start, target) in LEGAL)
    if (start, target) in LEGAL:
        _ok(start, target)
    else:
        _illegal(start, target)


def test_can_rebalance_when_stable() -> None:
    assert _group(STABLE).can_rebalance()


def test_can_rebalance_when_completing_rebalance() -> None:
    assert _group(COMPLETING_REBALANCE).can_rebalance()


def test_cannot_rebalance_when_preparing_rebalance() -> None:
    assert not _group(PREPARING_REBALANCE).can_rebalance()


def test_cannot_rebalance_when_dead() -> None:
    assert not _group(DEAD).can_rebalance()
    assert can_rebalance(EMPTY)


def test_stable_to_preparing_rebalance_transition() -> None:
    _ok(STABLE, PREPARING_REBALANCE)


def test_stable_to_dead_transition() -> None:
    _ok(STABLE, DEAD)


def test_awaiting_rebalance_to_preparing_rebalance_transition() -> None:
    _ok(COMPLETING_REBALANCE, PREPARING_REBALANCE)


def test_preparing_rebalance_to_dead_transition() -> None:
    _ok(PREPARING_REBALANCE, DEAD)


def test_preparing_rebalance_to_empty_transition() -> None:
    _ok(PREPARING_REBALANCE, EMPTY)


def test_empty_to_dead_transition() -> None:
    _ok(EMPTY, DEAD)


def test_awaiting_rebalance_to_stable_transition() -> None:
    _ok(COMPLETING_REBALANCE, STABLE)


def test_empty_to_stable_illegal_transition() -> None:
    _illegal(EMPTY, STABLE)


def test_stable_to_stable_illegal_transition() -> None:
    _illegal(STABLE, STABLE)


def test_empty_to_awaiting_rebalance_illegal_transition() -> None:
    _illegal(EMPTY, COMPLETING_REBALANCE)


def test_preparing_rebalance_to_preparing_rebalance_illegal_transition() -> None:
    _illegal(PREPARING_REBALANCE, PREPARING_REBALANCE)


def test_preparing_rebalance_to_stable_illegal_transition() -> None:
    _illegal(PREPARING_REBALANCE, STABLE)


def test_awaiting_rebalance_to_awaiting_rebalance_illegal_transition() -> None:
    _illegal(COMPLETING_REBALANCE, COMPLETING_REBALANCE)


def test_dead_to_dead_illegal_transition() -> None:
    # Despite the name, Kafka asserts Dead -> Dead is accepted: Dead is idempotent-terminal.
    _ok(DEAD, DEAD)


def test_dead_to_stable_illegal_transition() -> None:
    _illegal(DEAD, STABLE)


def test_dead_to_preparing_rebalance_illegal_transition() -> None:
    _illegal(DEAD, PREPARING_REBALANCE)


def test_dead_to_awaiting_rebalance_illegal_transition() -> None:
    _illegal(DEAD, COMPLETING_REBALANCE)
