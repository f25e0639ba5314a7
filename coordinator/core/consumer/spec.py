"""What a server-side assignor reads and returns (Kafka's ``GroupSpec``, ``MemberSubscription``,
``SubscribedTopicDescriber`` and ``GroupAssignment``), as plain immutable values.

Topic ids are generic: anything hashable and ordered (kcoord passes ``uuid.UUID``; tests may use
strings). Partitions of one topic are a ``frozenset[int]``; an assignment maps topic id to
partitions and never holds an empty set.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Generic, Protocol, TypeAlias, TypeVar

__all__ = [
    "EMPTY_ASSIGNMENT",
    "Assignment",
    "GroupAssignment",
    "GroupSpec",
    "MemberSubscription",
    "PartitionAssignor",
    "PartitionAssignorError",
    "SubscriptionType",
    "TopicIdT",
    "TopicKey",
    "TopicMetadata",
    "assignment_of",
]


class TopicKey(Protocol):
    """A topic id: hashable and totally ordered (``uuid.UUID`` and ``str`` both qualify)."""

    def __hash__(self) -> int: ...

    def __lt__(self, other: Any, /) -> bool: ...


TopicIdT = TypeVar("TopicIdT", bound=TopicKey)

# topic id -> partitions; read-only by convention, never holding an empty set.
Assignment: TypeAlias = Mapping[TopicIdT, frozenset[int]]
# member id -> that member's assignment.
GroupAssignment: TypeAlias = dict[str, Mapping[TopicIdT, frozenset[int]]]

# Shared by every member with nothing assigned; assignors return it unchanged when possible.
EMPTY_ASSIGNMENT: Mapping[Any, frozenset[int]] = MappingProxyType({})


class PartitionAssignorError(Exception):
    """Kafka's PartitionAssignorException: the assignment cannot be computed (a member
    subscribes to a topic missing from the metadata, or partitions are left over)."""


class SubscriptionType(enum.Enum):
    """Kafka's SubscriptionType: whether every member subscribes to the same topics."""

    HOMOGENEOUS = "homogeneous"
    HETEROGENEOUS = "heterogeneous"


@dataclass(frozen=True, slots=True)
class TopicMetadata:
    """A topic as the assignor sees it (Kafka's TopicMetadata: name and partition count)."""

    name: str
    partition_count: int


def _empty_assignment() -> Mapping[Any, frozenset[int]]:
    return EMPTY_ASSIGNMENT


@dataclass(frozen=True, slots=True)
class MemberSubscription(Generic[TopicIdT]):
    """One member's input: its subscribed topic ids and its current target assignment
    (Kafka's MemberSubscriptionAndAssignmentImpl), plus the optional instance and rack ids."""

    subscribed_topic_ids: frozenset[TopicIdT]
    assignment: Mapping[TopicIdT, frozenset[int]] = field(default_factory=_empty_assignment)
    instance_id: str | None = None
    rack_id: str | None = None


@dataclass(frozen=True, slots=True)
class GroupSpec(Generic[TopicIdT]):
    """The whole input of one assignment: members by id and the subscribed topics' metadata.

    ``subscription_type`` follows Kafka (HOMOGENEOUS when every member subscribes to the same
    topics); left as None it is derived from the members' topic ids.
    """

    members: Mapping[str, MemberSubscription[TopicIdT]]
    topics: Mapping[TopicIdT, TopicMetadata]
    subscription_type: SubscriptionType | None = None

    def resolved_subscription_type(self) -> SubscriptionType:
        """The given subscription type, or HOMOGENEOUS iff all members' topic sets are equal."""
        if self.subscription_type is not None:
            return self.subscription_type
        first: frozenset[TopicIdT] | None = None
        for member in self.members.values():
            if first is None:
                first = member.subscribed_topic_ids
            elif member.subscribed_topic_ids != first:
                return SubscriptionType.HETEROGENEOUS
        return SubscriptionType.HOMOGENEOUS

    def partition_count(self, topic_id: TopicIdT) -> int:
        """The topic's partition count; PartitionAssignorError if the metadata lacks it."""
        topic = self.topics.get(topic_id)
        if topic is None:
            raise PartitionAssignorError(
                f"Members are subscribed to topic {topic_id} which doesn't exist in the "
                "topic metadata."
            )
        return topic.partition_count


class PartitionAssignor(Protocol):
    """A server-side assignor (Kafka's ConsumerGroupPartitionAssignor)."""

    @property
    def name(self) -> str: ...

    def assign(self, spec: GroupSpec[TopicIdT]) -> GroupAssignment[TopicIdT]: ...


def assignment_of(
    pairs: Iterable[tuple[TopicIdT, Iterable[int]]],
) -> dict[TopicIdT, frozenset[int]]:
    """An assignment from (topic id, partitions) pairs: merges repeats, drops empty topics."""
    merged: dict[TopicIdT, set[int]] = {}
    for topic_id, partitions in pairs:
        merged.setdefault(topic_id, set()).update(partitions)
    return {topic_id: frozenset(parts) for topic_id, parts in merged.items() if parts}
