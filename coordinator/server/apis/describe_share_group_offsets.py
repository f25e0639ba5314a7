"""DescribeShareGroupOffsets (key 90), versions 0-1 (Kafka 4.2; v1 adds Lag, KIP-1226): each
share partition's start offset, as ``KafkaApis.handleDescribeShareGroupOffsetsRequest`` and
``GroupCoordinatorService.describeShareGroupOffsets``/``describeShareGroupAllOffsets`` serve
it, read from the share coordinator's durable state (``coordinator.share.offsets``).

- Like Kafka, the group need not exist: a partition with no share state, of an unknown
  topic, or beyond the topic's partitions answers start offset -1, leader epoch 0, lag -1,
  with no error (Kafka treats "no offset information" as absence of data, as OffsetFetch
  does). Unknown topics have the zero topic id and come after the known ones.
- Null topics: every partition the group initialized (its ShareGroupStatePartitionMetadata)
  or holds share state of; an empty list answers no topics.
- With an authorizer, as KafkaApis: a group one may not DESCRIBE answers
  GROUP_AUTHORIZATION_FAILED, a named topic one may not DESCRIBE TOPIC_AUTHORIZATION_FAILED
  (after the others); with null topics, such topics are left out.
- Lag: the partition's high watermark less the start offset less the records at or above
  it whose delivery is complete (acknowledged or archived), Kafka's
  ``computeShareGroupLagAndBuildResponse``; -1 without state.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

import wire
from coordinator.broker.topics import TopicStore
from coordinator.server.api_support import store_of
from coordinator.server.route import Acl, AclOperation, EachKey, Entries, ResourceType, Route
from coordinator.server.share_support import share_runtime_of
from coordinator.share.durable import SharePartitionKey
from coordinator.share.offsets import PartitionSummary, ReadSummaries, handle_read_summaries
from coordinator.txn.placement import OFFSETS_TOPIC
from wire import ErrorCode
from wire.constants import ApiKey

if TYPE_CHECKING:
    from coordinator.server.context import RequestContext

__all__ = ["ROUTE", "describe_share_group_offsets"]

_ZERO = uuid.UUID(int=0)


def _no_offset(index: int) -> dict[str, Any]:
    return {"partition_index": index, "start_offset": -1, "leader_epoch": 0, "lag": -1,
            "error_code": ErrorCode.NONE, "error_message": None}


def _initialized_keys(ctx: RequestContext, store: TopicStore, group_id: str) -> list[Any]:
    """The group's initialized share partitions and those with share state, as request
    topics (name, partitions), topics the broker no longer has left out."""
    by_topic: dict[uuid.UUID, set[int]] = {}
    shares = share_runtime_of(ctx)
    group = shares.groups.coordinator.share_groups.get(group_id)
    initialized = {} if group is None else group.initialized
    for topic_id, (_, known) in initialized.items():
        by_topic.setdefault(topic_id, set()).update(known)
    for key in shares.manager.coordinator.store.partitions:
        if key.group_id == group_id:
            by_topic.setdefault(key.topic_id, set()).add(key.partition)
    topics = []
    for topic_id, partitions in by_topic.items():
        topic = store.by_id(topic_id)
        if topic is not None:
            topics.append({"topic_name": topic.name, "partitions": sorted(partitions)})
    return sorted(topics, key=lambda t: t["topic_name"])


async def _describe_group(ctx: RequestContext, group: Any) -> dict[str, Any]:
    group_id = group.group_id
    store = store_of(ctx)
    requested = group.topics
    if requested is None:
        requested = _initialized_keys(ctx, store, group_id)
    known: list[tuple[str, uuid.UUID, list[int]]] = []
    unknown: list[dict[str, Any]] = []
    keys: list[SharePartitionKey] = []
    for topic in requested:
        name, partitions = topic["topic_name"], list(topic["partitions"])
        found = store.get(name)
        if found is None:
            unknown.append({"topic_name": name, "topic_id": _ZERO,
                            "partitions": [_no_offset(p) for p in partitions]})
            continue
        known.append((name, found.topic_id, partitions))
        keys.extend(SharePartitionKey(group_id, found.topic_id, p) for p in partitions)
    summaries: dict[SharePartitionKey, PartitionSummary | None] = {}
    if keys:
        summaries = await share_runtime_of(ctx).call(
            handle_read_summaries, ctx, ReadSummaries(tuple(keys)))
    topics = []
    for name, topic_id, partitions in known:
        answers = []
        for index in partitions:
            summary = summaries.get(SharePartitionKey(group_id, topic_id, index))
            log = store.partition(name, index)
            if summary is None or log is None:
                answers.append(_no_offset(index))
                continue
            answers.append({"partition_index": index, "start_offset": summary.start_offset,
                            "leader_epoch": summary.leader_epoch,
                            "lag": summary.lag(log.high_watermark),
                            "error_code": ErrorCode.NONE, "error_message": None})
        topics.append({"topic_name": name, "topic_id": topic_id, "partitions": answers})
    return {"group_id": group_id, "topics": topics + unknown, "error_code": ErrorCode.NONE,
            "error_message": None}


async def describe_share_group_offsets(
    ctx: RequestContext, request: wire.DecodedRequest
) -> dict[str, Any]:
    """Serve one DescribeShareGroupOffsets."""
    groups = [await _describe_group(ctx, group) for group in request.body.groups]
    return {"throttle_time_ms": 0, "groups": groups}


_GROUPS = Entries("groups", "group_id")

ROUTE = Route(
    ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS,
    describe_share_group_offsets,
    # Each group on its own, and each topic inside an allowed group on its own.
    acl=(Acl(ResourceType.GROUP, AclOperation.DESCRIBE, entries=(_GROUPS,)),
         Acl(ResourceType.TOPIC, AclOperation.DESCRIBE,
             entries=(Entries("topics", "topic_name", within=_GROUPS),))),
    routing=EachKey(OFFSETS_TOPIC, "groups", "groups", "group_id",
                    key_of=lambda g: str(g.group_id), error_entry={"topics": []}),
)
