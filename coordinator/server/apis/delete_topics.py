"""DeleteTopics (key 20), versions 0-6: by name (``topic_names``, v0-5) or by name or
topic id (``topics``, v6), with the checks of Kafka's ``ControllerApis.deleteTopics``:

- a name or id given twice: INVALID_REQUEST "Duplicate topic name." / "Duplicate topic id.";
- v6 entries with neither or both of name and id: INVALID_REQUEST;
- an unknown name: UNKNOWN_TOPIC_OR_PARTITION; an unknown id: UNKNOWN_TOPIC_ID;
- an internal topic (``__consumer_offsets``, ``__transaction_state``), by name or id:
  INVALID_REQUEST with kafka-topics' refusal (Kafka's controller would delete it; here the
  coordinators keep it, so it cannot go).

Deleting a topic drops its data and wakes fetches waiting on it (they answer
UNKNOWN_TOPIC_OR_PARTITION / UNKNOWN_TOPIC_ID). Answers follow the request's order.
"""

from __future__ import annotations

import uuid
from collections import Counter
from typing import TYPE_CHECKING, Any

import wire
from coordinator.broker.admin_limits import yield_between_topics
from coordinator.server.api_support import ZERO_UUID, store_of
from coordinator.server.internal_topics import (
    internal_topic,
    internal_topic_by_id,
    is_internal,
)
from coordinator.server.route import Acl, AclOperation, AnyOf, Entries, ResourceType, Route
from wire import ErrorCode
from wire.constants import ApiKey

if TYPE_CHECKING:
    from coordinator.server.context import RequestContext

__all__ = ["ROUTE", "handle"]

_BY_ID_VERSION = 6


def _result(
    name: str | None, topic_id: uuid.UUID, code: ErrorCode, message: str | None = None
) -> dict[str, Any]:
    return {"name": name, "topic_id": topic_id, "error_code": code, "error_message": message}


def _internal_refused(name: str, ctx: RequestContext) -> dict[str, Any]:
    """An internal topic is kept by the coordinators: it cannot be deleted (Kafka's
    controller would delete it; its kafka-topics tool refuses with this message)."""
    internal = internal_topic(name, ctx.state.config, ctx.state.identity.cluster_id)
    return _result(name, internal.topic_id, ErrorCode.INVALID_REQUEST,
                   f"Topic {name} is a kafka internal topic and is not allowed to be marked "
                   "for deletion.")


def _entries(request: wire.DecodedRequest) -> list[tuple[str | None, uuid.UUID]]:
    body = request.body
    if request.api_version < _BY_ID_VERSION:
        return [(name, ZERO_UUID) for name in body.topic_names]
    return [(t.name, t.topic_id) for t in body.topics]


async def handle(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any] | None:
    """Delete each named topic."""
    store = store_of(ctx)
    entries = _entries(request)
    names = Counter(
        name for name, topic_id in entries if name is not None and topic_id == ZERO_UUID
    )
    ids = Counter(topic_id for name, topic_id in entries if name is None and topic_id != ZERO_UUID)
    # A name resolving to an id also given by id: Kafka answers INVALID_REQUEST for the
    # name, nothing for the id, and deletes neither.
    conflicts: set[uuid.UUID] = set()
    for given in names:
        existing = store.get(given)
        if existing is not None and existing.topic_id in ids:
            conflicts.add(existing.topic_id)
    results: list[dict[str, Any]] = []
    reported: set[str | uuid.UUID] = set()
    for name, topic_id in entries:
        if results:
            await yield_between_topics()
        if name is None and topic_id == ZERO_UUID:
            results.append(
                _result(
                    None,
                    ZERO_UUID,
                    ErrorCode.INVALID_REQUEST,
                    "Neither topic name nor id were specified.",
                )
            )
        elif name is not None and topic_id != ZERO_UUID:
            results.append(
                _result(
                    name,
                    topic_id,
                    ErrorCode.INVALID_REQUEST,
                    "You may not specify both topic name and topic id.",
                )
            )
        elif name is not None:
            if name in reported:
                continue
            reported.add(name)
            if names[name] > 1:
                results.append(
                    _result(name, ZERO_UUID, ErrorCode.INVALID_REQUEST, "Duplicate topic name.")
                )
                continue
            topic = store.get(name)
            if is_internal(name):
                results.append(_internal_refused(name, ctx))
            elif topic is None:
                results.append(
                    _result(
                        name,
                        ZERO_UUID,
                        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                        "This server does not host this topic-partition.",
                    )
                )
            elif topic.topic_id in conflicts:
                results.append(
                    _result(
                        name,
                        topic.topic_id,
                        ErrorCode.INVALID_REQUEST,
                        "The provided topic name maps to an ID that was already supplied.",
                    )
                )
            else:
                store.delete_topic(name)
                results.append(_result(name, topic.topic_id, ErrorCode.NONE))
        else:
            if topic_id in reported or topic_id in conflicts:
                continue
            reported.add(topic_id)
            if ids[topic_id] > 1:
                results.append(
                    _result(None, topic_id, ErrorCode.INVALID_REQUEST, "Duplicate topic id.")
                )
                continue
            found = store.by_id(topic_id)
            internal = internal_topic_by_id(topic_id, ctx.state.config,
                                            ctx.state.identity.cluster_id)
            if internal is not None:
                results.append(_internal_refused(internal.name, ctx))
            elif found is None:
                results.append(
                    _result(
                        None,
                        topic_id,
                        ErrorCode.UNKNOWN_TOPIC_ID,
                        "This server does not host this topic ID.",
                    )
                )
            else:
                store.delete_topic(found.name)
                results.append(_result(found.name, topic_id, ErrorCode.NONE))
    return {"throttle_time_ms": 0, "responses": results}


ROUTE = Route(
    ApiKey.DELETE_TOPICS,
    handle,
    # Kafka's ControllerApis: DELETE on the cluster, else on each topic (a denied one
    # answers TOPIC_AUTHORIZATION_FAILED, the others are deleted).
    acl=(Acl(ResourceType.TOPIC, AclOperation.DESCRIBE, "topics named by id"),
         AnyOf((Acl(ResourceType.CLUSTER, AclOperation.DELETE),
                Acl(ResourceType.TOPIC, AclOperation.DELETE,
                    entries=(Entries("topic_names", ""), Entries("topics")))))),
)
