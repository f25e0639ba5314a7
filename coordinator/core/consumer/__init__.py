"""The consumer group protocol (KIP-848): the group and its members (``group``), the
heartbeat (``heartbeat`` with ``heartbeat_member`` and ``heartbeat_validation``), target
assignment (``assignment``), its records (``records``), describe (``describe``), classic members
inside a consumer group and online migration (``classic_members``, ``migration``).

This package's root re-exports only the pure algorithms, stdlib only and importing nothing
else of ``coordinator.core``: the server-side assignors ``uniform`` and ``range`` and the
reconciliation of a member towards its target assignment. Sources followed, all in apache/kafka
``group-coordinator/``: ``assignor/UniformAssignor``, ``UniformHomogeneousAssignmentBuilder``
(with KAFKA-18688), ``UniformHeterogeneousAssignmentBuilder`` (KAFKA-17710), ``RangeAssignor``
(KAFKA-16944), ``modern/consumer/CurrentAssignmentBuilder`` and ``modern/MemberState``
(Kafka 4.2: KAFKA-19431, KAFKA-19449, KAFKA-19974), ``ConsumerGroup.currentPartitionEpoch``.
"""

from collections.abc import Mapping
from typing import Final

from coordinator.core.consumer.range_assignor import (
    RANGE_ASSIGNOR_NAME,
    RangeAssignor,
    range_member_order,
)
from coordinator.core.consumer.reconciliation import (
    CurrentMemberAssignment,
    FencedMemberEpochError,
    MemberState,
    PartitionEpochs,
    PartitionOwnershipError,
    reconcile,
)
from coordinator.core.consumer.spec import (
    EMPTY_ASSIGNMENT,
    Assignment,
    GroupAssignment,
    GroupSpec,
    MemberSubscription,
    PartitionAssignor,
    PartitionAssignorError,
    SubscriptionType,
    TopicMetadata,
    assignment_of,
)
from coordinator.core.consumer.uniform import UNIFORM_ASSIGNOR_NAME, UniformAssignor

__all__ = [
    "ASSIGNORS",
    "EMPTY_ASSIGNMENT",
    "RANGE_ASSIGNOR_NAME",
    "UNIFORM_ASSIGNOR_NAME",
    "Assignment",
    "CurrentMemberAssignment",
    "FencedMemberEpochError",
    "GroupAssignment",
    "GroupSpec",
    "MemberState",
    "MemberSubscription",
    "PartitionAssignor",
    "PartitionAssignorError",
    "PartitionEpochs",
    "PartitionOwnershipError",
    "RangeAssignor",
    "SubscriptionType",
    "TopicMetadata",
    "UniformAssignor",
    "assignment_of",
    "range_member_order",
    "reconcile",
]

# The server-side assignors by name, in the order of group.consumer.assignors' default
# ("uniform,range"): the first is the default.
ASSIGNORS: Final[Mapping[str, PartitionAssignor]] = {
    UNIFORM_ASSIGNOR_NAME: UniformAssignor(),
    RANGE_ASSIGNOR_NAME: RangeAssignor(),
}
