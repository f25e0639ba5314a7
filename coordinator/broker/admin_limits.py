"""Bounds on the work one admin request may ask for, as Kafka's controller bounds it.

Kafka's ``ReplicationControlManager`` refuses a CreateTopics whose topics add up to more
than ``MAX_PARTITIONS_PER_BATCH`` (10,000) partitions -- manual assignments counted by
their length, ``num_partitions`` -1 as ``num.partitions``, invalid counts as nothing --
with POLICY_VIOLATION "Excessively large number of partitions per request." for every
topic of the request, before any topic is created. Within a request that passes, the
handlers give the event loop back between topics (``yield_between_topics``), so a request
of many topics does not hold the other connections for its whole length.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import trio

from coordinator.broker.errors import BrokerError
from wire import ErrorCode

__all__ = ["MAX_PARTITIONS_PER_REQUEST", "check_partitions_per_request",
           "yield_between_topics"]

#: Kafka's ``ReplicationControlManager.MAX_PARTITIONS_PER_BATCH``.
MAX_PARTITIONS_PER_REQUEST = 10_000


def check_partitions_per_request(topics: Iterable[Any], default_partitions: int) -> None:
    """POLICY_VIOLATION when the CreateTopics ``topics`` add up to more partitions than
    one request may create."""
    total = 0
    for topic in topics:
        if topic.assignments:
            total += len(topic.assignments)
        elif topic.num_partitions == -1:
            total += default_partitions
        elif topic.num_partitions > 0:
            total += topic.num_partitions
        if total > MAX_PARTITIONS_PER_REQUEST:
            raise BrokerError(ErrorCode.POLICY_VIOLATION,
                              "Excessively large number of partitions per request.")


async def yield_between_topics() -> None:
    """Let the other connections run between two topics of one admin request."""
    await trio.lowlevel.checkpoint()
