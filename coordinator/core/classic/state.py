"""The five classic group states and the table of legal previous states.

Mirrors ``GroupMetadata.scala`` / ``ClassicGroupState.java``: every transition is checked
against ``VALID_PREVIOUS_STATES`` and an illegal one raises (Kafka's IllegalStateException).
Dead -> Dead is legal: Dead is idempotent-terminal.
"""

from __future__ import annotations

from enum import Enum

from coordinator.core.errors import IllegalTransitionError

__all__ = [
    "COMPLETING_REBALANCE",
    "DEAD",
    "EMPTY",
    "PREPARING_REBALANCE",
    "STABLE",
    "VALID_PREVIOUS_STATES",
    "GroupState",
    "assert_valid_transition",
    "can_rebalance",
]


class GroupState(Enum):
    """A classic group's state; the value is Kafka's name as shown by DescribeGroups."""

    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"

    @property
    def lower_name(self) -> str:
        """The lower-cased name ListGroups' states filter compares against (KIP-518)."""
        return _LOWER[self]


EMPTY = GroupState.EMPTY
PREPARING_REBALANCE = GroupState.PREPARING_REBALANCE
COMPLETING_REBALANCE = GroupState.COMPLETING_REBALANCE
STABLE = GroupState.STABLE
DEAD = GroupState.DEAD

_LOWER = {s: s.value.lower() for s in GroupState}

VALID_PREVIOUS_STATES: dict[GroupState, frozenset[GroupState]] = {
    EMPTY: frozenset({PREPARING_REBALANCE}),
    PREPARING_REBALANCE: frozenset({STABLE, COMPLETING_REBALANCE, EMPTY}),
    COMPLETING_REBALANCE: frozenset({PREPARING_REBALANCE}),
    STABLE: frozenset({COMPLETING_REBALANCE}),
    DEAD: frozenset({STABLE, PREPARING_REBALANCE, COMPLETING_REBALANCE, EMPTY, DEAD}),
}


def assert_valid_transition(group_id: str, current: GroupState, target: GroupState) -> None:
    """Raise IllegalTransitionError unless ``current`` may move to ``target``."""
    allowed = VALID_PREVIOUS_STATES[target]
    if current not in allowed:
        names = ",".join(sorted(s.value for s in allowed))
        raise IllegalTransitionError(
            f"Group {group_id} should be in the {names} states before moving to "
            f"{target.value} state. Instead it is in {current.value} state"
        )


def can_rebalance(state: GroupState) -> bool:
    """Kafka's canRebalance: a rebalance may start from Stable, CompletingRebalance or Empty."""
    return state in VALID_PREVIOUS_STATES[PREPARING_REBALANCE]
