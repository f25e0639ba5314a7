"""ConsumerGroupHeartbeat (68): a consumer-protocol member joins, heartbeats, gets its
assignment and leaves (KIP-848; the group core's ``coordinator/core/consumer/heartbeat.py``),
against the broker's current topics.

The steady heartbeat (every optional field null) is the core's ``at_once`` Result: the
runtime moves the member's session timer and answers it inline when nothing is in flight
(``CoordinatorRuntime.submit``)."""

from __future__ import annotations

from coordinator.core.consumer.heartbeat import handle_consumer_group_heartbeat
from coordinator.server.api_support import WithCurrentTopics
from coordinator.server.route import Acl, AclOperation, OneKey, ResourceType, Route, field
from coordinator.txn.placement import OFFSETS_TOPIC
from wire.constants import ApiKey

__all__ = ["ROUTE", "consumer_group_heartbeat"]


consumer_group_heartbeat = WithCurrentTopics(
    handle_consumer_group_heartbeat, "consumer_group_heartbeat",
    "ConsumerGroupHeartbeat against the broker's current topics.",
)


ROUTE = Route(
    ApiKey.CONSUMER_GROUP_HEARTBEAT,
    consumer_group_heartbeat,
    # Kafka 4 checks the group only (the subscribed topics are not authorized here).
    acl=(Acl(ResourceType.GROUP, AclOperation.READ),),
    routing=OneKey(OFFSETS_TOPIC, field("group_id")),
    pipelined=True,
    consumer_protocol=True,
)
