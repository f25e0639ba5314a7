"""ConsumerGroupDescribe (69): describe consumer-protocol groups (KIP-848; the group core's
``coordinator/core/consumer/describe.py``), topic names read from the broker's topics."""

from __future__ import annotations

from coordinator.core.consumer.describe import handle_consumer_group_describe
from coordinator.server.acl_answers import filter_described_groups
from coordinator.server.api_support import WithCurrentTopics
from coordinator.server.route import Acl, AclOperation, EachKey, ResourceType, Route
from coordinator.txn.placement import OFFSETS_TOPIC
from wire.constants import ApiKey

__all__ = ["ROUTE", "consumer_group_describe"]

consumer_group_describe = WithCurrentTopics(
    handle_consumer_group_describe, "consumer_group_describe",
    "ConsumerGroupDescribe (topic names from the broker's topics).",
)


ROUTE = Route(
    ApiKey.CONSUMER_GROUP_DESCRIBE,
    consumer_group_describe,
    acl=(Acl(ResourceType.GROUP, AclOperation.DESCRIBE),),
    routing=EachKey(OFFSETS_TOPIC, "group_ids", "groups", "group_id"),
    read_only=True,
    core_handler=handle_consumer_group_describe,
    consumer_protocol=True,
    answer_filter=filter_described_groups,
)
