"""What the group-API handlers share: reaching the runtime and the topic store."""

from __future__ import annotations

import uuid
from typing import Any

from coordinator.server.context import RequestContext
from coordinator.server.runtime import CoordinatorRuntime

__all__ = ["ZERO_UUID", "TopicView", "client_host", "runtime", "topics"]

ZERO_UUID = uuid.UUID(int=0)


def runtime(ctx: RequestContext) -> CoordinatorRuntime:
    """The coordinator runtime of the server this request arrived at."""
    groups: Any = ctx.state.groups
    assert isinstance(groups, CoordinatorRuntime)
    return groups


def client_host(ctx: RequestContext) -> str:
    """The member's host as Kafka reports it (``InetAddress.toString``: "/127.0.0.1")."""
    return "/" + ctx.client_host


class TopicView:
    """The questions the group APIs ask the broker's topic store.

    With no topic store (a coordinator-only server) every topic and partition is taken to
    exist, and topic ids cannot be resolved.
    """

    __slots__ = ("_store",)

    def __init__(self, store: Any) -> None:
        self._store = store

    def partition_count(self, name: str) -> int | None:
        """Partitions of topic ``name``; None if it does not exist."""
        store = self._store
        if store is None:
            return 2**31 - 1
        topic = store.get(name)
        return None if topic is None else len(topic.partitions)

    def name_of(self, topic_id: uuid.UUID) -> str | None:
        """The name of the topic with this id, or None."""
        store = self._store
        if store is None or topic_id == ZERO_UUID:
            return None
        topic = store.by_id(topic_id)
        return None if topic is None else str(topic.name)

    def id_of(self, name: str) -> uuid.UUID:
        """The id of topic ``name`` (the zero UUID if unknown)."""
        store = self._store
        if store is None:
            return ZERO_UUID
        topic = store.get(name)
        return ZERO_UUID if topic is None else uuid.UUID(str(topic.topic_id))


def topics(ctx: RequestContext) -> TopicView:
    """The topic store of the server, seen through :class:`TopicView`."""
    return TopicView(ctx.state.topics)
