"""What the broker does around the group coordinator (Kafka's ``KafkaApis`` for the group
APIs): the version quirks the core's model leaves out, and the questions only the broker's
topic store can answer.

- JoinGroup: before v7 the response's protocol_name is not nullable ("" instead of null).
- OffsetCommit / OffsetDelete: partitions of topics the broker does not have are answered
  here with UNKNOWN_TOPIC_OR_PARTITION and never reach the coordinator; OffsetCommit v10
  names topics by id (UNKNOWN_TOPIC_ID when one does not resolve).
- OffsetFetch: v0-7 carry one group at the top level (the core reads the v8+ shape), v0-1
  have no top-level error (it goes on every partition), v10 names topics by id.
- DescribeGroups v3+: authorized operations, an authorizer's business (without one, every
  group operation is allowed).
- ConsumerGroupHeartbeat / ConsumerGroupDescribe: the core reads the broker's topics from a
  ``TopicsImage`` (names, ids, partition counts); it is refreshed here whenever the topic
  store's version moved (Kafka hands its coordinator each new MetadataImage the same way).

Every other group API goes to the core untouched (``runtime.group_api``).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any

import wire
from coordinator.core import (
    ErrorCode,
    handle_describe_groups,
    handle_join_group,
    handle_offset_commit,
    handle_offset_delete,
    handle_offset_fetch,
)
from coordinator.core.consumer_describe import handle_consumer_group_describe
from coordinator.core.consumer_heartbeat import (
    handle_consumer_group_heartbeat,
    steady_heartbeat,
    steady_response,
)
from coordinator.core.offset_commit import commit_failed, inline_commit, session_renewed
from coordinator.core.topics_image import TopicsImage
from coordinator.server.context import RequestContext
from coordinator.server.runtime import CoordinatorRuntime, PendingReply
from storage.errors import append_error_of
from wire.consumer_group_heartbeat_codec import SteadyRequestBody

__all__ = [
    "GROUP_AUTHORIZED_OPERATIONS",
    "ReadyReply",
    "TopicView",
    "consumer_group_describe",
    "consumer_group_heartbeat",
    "describe_groups",
    "join_group",
    "offset_commit",
    "offset_delete",
    "offset_fetch",
]

ZERO_UUID = uuid.UUID(int=0)

# Bit set of AclOperation codes: READ (3), DELETE (6), DESCRIBE (8).
GROUP_AUTHORIZED_OPERATIONS = (1 << 3) | (1 << 6) | (1 << 8)

_NULLABLE_PROTOCOL_NAME_VERSION = 7  # JoinGroup
_TOPIC_IDS_VERSION = 10  # OffsetCommit and OffsetFetch
_ANY_PARTITION_COUNT = 2**31 - 1  # every partition exists without a topic store
_GROUPS_VERSION = 8  # OffsetFetch
_TOP_LEVEL_ERROR_VERSION = 2  # OffsetFetch


def _runtime(ctx: RequestContext) -> CoordinatorRuntime:
    runtime: CoordinatorRuntime = ctx.state.groups
    return runtime


def _replace(body: Any, **fields: Any) -> Any:
    """The decoded request with some fields replaced (the rest as decoded)."""
    return {**body, **fields}


class TopicView:
    """The questions the group APIs ask the broker's topic store. With no topic store (a
    coordinator-only server) every topic and partition exists and no topic id resolves."""

    __slots__ = ("_store",)

    def __init__(self, store: Any) -> None:
        self._store = store

    def partition_count(self, name: str) -> int | None:
        """Partitions of topic ``name``; None if it does not exist."""
        return _partition_count(self._store, name)

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


# --------------------------------------------------------------------------- JoinGroup


async def join_group(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any]:
    """JoinGroup, parked until the join phase completes."""
    response: dict[str, Any] = await _runtime(ctx).call(handle_join_group, ctx, request.body)
    if ctx.api_version < _NULLABLE_PROTOCOL_NAME_VERSION and response["protocol_name"] is None:
        response = {**response, "protocol_name": ""}
    return response


# --------------------------------------------------------------------------- OffsetCommit


def _partition_errors(partitions: Iterable[int], error: int) -> list[dict[str, int]]:
    return [{"partition_index": index, "error_code": error} for index in partitions]


class _OffsetCommit:
    """OffsetCommit: commit the partitions the broker has; refuse the others per partition.
    ``submit`` hands the commit to the coordinator at once and returns its pending reply,
    so a connection may take the next request while this one waits for the disk; the usual
    commit, when nothing is in flight, is written and answered at once (``_commit_inline``)."""

    __name__ = __qualname__ = "offset_commit"

    async def __call__(self, ctx: RequestContext, request: wire.DecodedRequest) -> Any:
        pending = self.submit(ctx, request)
        if pending is None:
            await _runtime(ctx).wait_loaded()
            pending = self.submit(ctx, request)
            assert pending is not None
        return await pending.wait()

    def submit(
        self, ctx: RequestContext, request: wire.DecodedRequest
    ) -> PendingReply | ReadyReply | None:
        body = request.body
        version = ctx.api_version
        by_id = version >= _TOPIC_IDS_VERSION
        state = ctx.state
        if not by_id and _all_exist(state.topics, body["topics"]):  # the common case
            runtime: CoordinatorRuntime = state.groups
            if not state.faults:
                ready = _commit_inline(runtime, body, version)
                if ready is not None:
                    return ready
            return runtime.submit(handle_offset_commit, ctx, body)
        view = TopicView(state.topics)
        refused: list[dict[str, Any]] = []
        valid: list[dict[str, Any]] = []
        untouched = not by_id
        for topic in body["topics"]:
            topic_id = topic["topic_id"] if by_id else ZERO_UUID
            name = view.name_of(topic_id) if by_id else topic["name"]
            count = None if name is None else view.partition_count(name)
            good = []
            bad: list[dict[str, int]] = []
            for p in topic["partitions"]:
                index = p["partition_index"]
                if name is None:
                    bad.append({"partition_index": index,
                                "error_code": ErrorCode.UNKNOWN_TOPIC_ID})
                elif count is None or not 0 <= index < count:
                    bad.append({"partition_index": index,
                                "error_code": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION})
                else:
                    good.append(p)
            if bad:
                untouched = False
                refused.append({"name": name or "", "topic_id": topic_id, "partitions": bad})
            if good:
                valid.append({"name": name, "partitions": good})
        if untouched and valid:  # the common case: every partition exists, topics by name
            return _runtime(ctx).submit(handle_offset_commit, ctx, body)
        if not valid:
            return PendingReply.answered({"topics": _merge(refused)})
        pending = _runtime(ctx).submit(handle_offset_commit, ctx, _replace(body, topics=valid))
        if pending is None:
            return None

        def merged(response: dict[str, Any]) -> dict[str, Any]:
            out = refused
            for t in response["topics"]:
                topic_id = view.id_of(t["name"]) if by_id else ZERO_UUID
                out.append({"name": t["name"], "topic_id": topic_id,
                            "partitions": list(t["partitions"])})
            return {"topics": _merge(out)}

        return pending.then(merged)


offset_commit = _OffsetCommit()


def _commit_inline(runtime: CoordinatorRuntime, body: Any, version: int) -> ReadyReply | None:
    """The usual commit without the runtime's bookkeeping: when the runtime may answer at
    once (nothing queued or being written) and the core's ``inline_commit`` takes the
    commit (an existing group, its checks passed), its records are appended here, applied
    once written, and the answer is ready: the answer, records, hard state and session
    deadline the handler gives the same request, without its Result, Reply, pending reply
    and the append's completion. A failed append answers as the handler's does; a sink
    that cannot write at once (the log busy with an fsync) leaves the commit to the
    handler (None)."""
    now_ms = runtime.answer_now_ms()
    if now_ms is None:
        return None
    engine = runtime.coordinator
    commit = inline_commit(engine, body, version, now_ms)
    if commit is None:
        return None
    records, response, member = commit
    written = runtime.append_now(records)
    if written is False:
        return None
    if member is not None:  # the handler renews the session whatever the append does
        runtime.arm_timer(*session_renewed(member, now_ms))
    if written is True:
        engine.store.apply_appended(records)
        return ReadyReply(response)
    return ReadyReply(commit_failed(response, append_error_of(written)))


def _partition_count(store: Any, name: str) -> int | None:
    """Partitions of topic ``name`` in the broker's topic store (any number without one);
    None if it does not exist."""
    if store is None:
        return _ANY_PARTITION_COUNT
    topic = store.get(name)
    return None if topic is None else len(topic.partitions)


def _all_exist(store: Any, topics: Iterable[Any]) -> bool:
    """Whether ``topics`` (by name) name partitions, all of which exist in the topic store
    (``TopicView.partition_count``; a commit of no partition at all is answered without
    the coordinator, as Kafka's broker does)."""
    some = False
    for topic in topics:
        count = _partition_count(store, topic["name"])
        if count is None:
            return False
        for p in topic["partitions"]:
            if not 0 <= p["partition_index"] < count:
                return False
            some = True
    return some


def _merge(topics: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One entry per topic (a topic can be split between refused and committed parts)."""
    merged: dict[tuple[str, Any], dict[str, Any]] = {}
    for t in topics:
        key = (t["name"], t["topic_id"])
        if key in merged:
            merged[key]["partitions"].extend(t["partitions"])
        else:
            merged[key] = t
    return list(merged.values())


# --------------------------------------------------------------------------- OffsetFetch


async def offset_fetch(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any]:
    """Fetch committed offsets of one group (v0-7) or several (v8+)."""
    body = request.body
    version = ctx.api_version
    if version < _GROUPS_VERSION:
        group = {"group_id": body["group_id"], "topics": body["topics"]}
        core = _replace(body, groups=[group])
        response = await _runtime(ctx).call(handle_offset_fetch, ctx, core)
        return _single_group(response["groups"][0], version, body["topics"])
    if version < _TOPIC_IDS_VERSION:
        fetched: dict[str, Any] = await _runtime(ctx).call(handle_offset_fetch, ctx, body)
        return fetched
    view = TopicView(ctx.state.topics)
    groups = []
    unknown_by_group: list[list[dict[str, Any]]] = []
    for g in body["groups"]:
        unknown: list[dict[str, Any]] = []
        topics = g["topics"]
        if topics is not None:
            known = []
            for t in topics:
                name = view.name_of(t["topic_id"])
                if name is None:
                    unknown.append(t)
                else:
                    known.append({"name": name, "partition_indexes": t["partition_indexes"]})
            topics = known
        groups.append({"group_id": g["group_id"], "topics": topics})
        unknown_by_group.append(unknown)
    response = await _runtime(ctx).call(handle_offset_fetch, ctx, _replace(body, groups=groups))
    return {
        "groups": [
            _with_topic_ids(group, view, unknown)
            for group, unknown in zip(response["groups"], unknown_by_group, strict=True)
        ]
    }


def _unfetched(partition: int, error: int) -> dict[str, Any]:
    return {"partition_index": partition, "committed_offset": -1, "committed_leader_epoch": -1,
            "metadata": "", "error_code": error}


def _single_group(group: dict[str, Any], version: int, requested: Any) -> dict[str, Any]:
    error = group["error_code"]
    if version < _TOP_LEVEL_ERROR_VERSION and error != ErrorCode.NONE:
        # No top-level error before v2: Kafka puts the group's error on every partition.
        return {"topics": [
            {"name": t["name"], "partitions": [_unfetched(p, error)
                                               for p in t["partition_indexes"]]}
            for t in requested or ()
        ]}
    return {"error_code": error, "topics": group["topics"]}


def _with_topic_ids(
    group: dict[str, Any], view: TopicView, unknown: list[dict[str, Any]]
) -> dict[str, Any]:
    topics: list[dict[str, Any]] = [
        {**t, "topic_id": view.id_of(t["name"])} for t in group["topics"]
    ]
    for t in unknown:
        topics.append({"name": "", "topic_id": t["topic_id"], "partitions": [
            _unfetched(p, ErrorCode.UNKNOWN_TOPIC_ID) for p in t["partition_indexes"]]})
    return {**group, "topics": topics}


# --------------------------------------------------------------------------- OffsetDelete


async def offset_delete(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any]:
    """Delete committed offsets of partitions no member of the group consumes."""
    body = request.body
    view = TopicView(ctx.state.topics)
    unknown: list[dict[str, Any]] = []
    valid: list[dict[str, Any]] = []
    for t in body["topics"]:
        count = view.partition_count(t["name"])
        good = []
        bad = []
        for p in t["partitions"]:
            index = p["partition_index"]
            if count is not None and 0 <= index < count:
                good.append(p)
            else:
                bad.append(index)
        if bad:
            unknown.append({"name": t["name"], "partitions": _partition_errors(
                bad, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)})
        if good:
            valid.append({"name": t["name"], "partitions": good})
    core = body if not unknown else _replace(body, topics=valid)
    response: dict[str, Any] = await _runtime(ctx).call(handle_offset_delete, ctx, core)
    if response["error_code"] != ErrorCode.NONE or not unknown:
        return response
    return {"error_code": ErrorCode.NONE, "topics": unknown + list(response["topics"])}


# --------------------------------------------------------------------------- DescribeGroups


async def describe_groups(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any]:
    """Describe groups: state, protocol and members (metadata/assignment when Stable)."""
    body = request.body
    response: dict[str, Any] = await _runtime(ctx).call(handle_describe_groups, ctx, body)
    if not body["include_authorized_operations"]:
        return response
    return {"groups": [
        {**g, "authorized_operations": GROUP_AUTHORIZED_OPERATIONS}
        if g["error_code"] == ErrorCode.NONE else g
        for g in response["groups"]
    ]}


# --------------------------------------------------------------------------- KIP-848


def refresh_topics_image(ctx: RequestContext) -> None:
    """Give the core the broker's topics if they changed since it last saw them."""
    store = ctx.state.topics
    if store is None:
        return
    engine = _runtime(ctx).coordinator
    if engine.topics_image.version == store.version:
        return
    topics = (store.get(name) for name in store.names())
    engine.topics_image = TopicsImage(
        ((topic.name, topic.topic_id, len(topic.partitions)) for topic in topics),
        version=store.version,
    )


class _WithTopics:
    """A KIP-848 API: the core sees the broker's current topics, then answers. ``submit``
    hands the request to the coordinator at once and returns its pending reply (a steady
    heartbeat's is ready at once: it writes no record), so a connection may pipeline
    ConsumerGroupHeartbeat as it does Heartbeat."""

    def __init__(self, handler: Any, name: str, doc: str) -> None:
        self._handler = handler
        self.__name__ = self.__qualname__ = name
        self.__doc__ = doc

    async def __call__(self, ctx: RequestContext, request: wire.DecodedRequest) -> Any:
        pending = self.submit(ctx, request)
        if pending is None:  # the coordinator is still loading its log
            return await _runtime(ctx).call(self._handler, ctx, request.body)
        return pending.result() if pending.ready() else await pending.wait()

    def submit(
        self, ctx: RequestContext, request: wire.DecodedRequest
    ) -> PendingReply | ReadyReply | None:
        return _with_current_topics(ctx).submit(self._handler, ctx, request.body)


def _with_current_topics(ctx: RequestContext) -> CoordinatorRuntime:
    """The runtime, its core holding the broker's current topics."""
    state = ctx.state
    runtime: CoordinatorRuntime = state.groups
    store = state.topics
    # The version check inline: every steady heartbeat passes it with nothing to refresh.
    if store is not None and runtime.coordinator.topics_image.version != store.version:
        refresh_topics_image(ctx)
    return runtime


class ReadyReply:
    """A reply made without the runtime's bookkeeping, ready at once (the connection's
    ``PendingAnswer``, as ``PendingReply``)."""

    __slots__ = ("response",)

    def __init__(self, response: Any) -> None:
        self.response = response

    def ready(self) -> bool:
        return True

    def result(self) -> Any:
        return self.response

    async def wait(self) -> Any:
        return self.response

    def discard(self) -> None:
        """Nothing to release."""


class _ConsumerGroupHeartbeat(_WithTopics):
    """ConsumerGroupHeartbeat, with a shortcut for the steady heartbeat (every optional
    field null, as the codec's ``SteadyRequestBody`` says): when the core's
    ``steady_heartbeat`` finds it steady and the runtime may answer at once, the member's
    session timer moves and the answer is made here, without the runtime's pending reply,
    Result, Reply and ScheduleTimer. It is the answer, session deadline and (no) records
    the core's handler gives the same request. Everything else, and everything while
    faults are injected, takes the handler."""

    def submit(
        self, ctx: RequestContext, request: wire.DecodedRequest
    ) -> PendingReply | ReadyReply | None:
        runtime = _with_current_topics(ctx)
        body = request.body
        if type(body) is SteadyRequestBody and not ctx.state.faults:
            now_ms = runtime.answer_now_ms()
            if now_ms is not None:
                steady = steady_heartbeat(runtime.coordinator, body["group_id"],
                                          body["member_id"], body["member_epoch"])
                if steady is not None:
                    runtime.arm_timer(steady.session_key,
                                      now_ms + steady.config.group_consumer_session_timeout_ms)
                    return ReadyReply(steady_response(steady))
        return runtime.submit(self._handler, ctx, body)


consumer_group_heartbeat = _ConsumerGroupHeartbeat(
    handle_consumer_group_heartbeat, "consumer_group_heartbeat",
    "ConsumerGroupHeartbeat against the broker's current topics.",
)
consumer_group_describe = _WithTopics(
    handle_consumer_group_describe, "consumer_group_describe",
    "ConsumerGroupDescribe (topic names from the broker's topics).",
)
