"""ConsumerGroupHeartbeat: versions 0-1 (KIP-848, the consumer group protocol).

Request versions (Kafka's schema notes):
    Version 1 adds SubscribedTopicRegex (KIP-848), and requires the consumer to generate
      their own Member ID (KIP-1082).

Response versions: version 1 is the same as version 0 (it can answer
INVALID_REGULAR_EXPRESSION). Every version is flexible.
"""

from __future__ import annotations

from wire.fields import Field as F
from wire.fields import Message
from wire.registry import ApiSpec, register

_TOPIC_PARTITIONS = (
    F("topic_id", "uuid", "0+"),
    F("partitions", "[]int32", "0+"),
)

REQUEST = Message(
    "ConsumerGroupHeartbeatRequest",
    api_key=68,
    valid="0-1",
    flexible="0+",
    fields=(
        F("group_id", "string", "0+"),
        F("member_id", "string", "0+"),
        F("member_epoch", "int32", "0+"),
        F("instance_id", "string", "0+", nullable="0+", default="null"),
        F("rack_id", "string", "0+", nullable="0+", default="null"),
        F("rebalance_timeout_ms", "int32", "0+", default=-1),
        F("subscribed_topic_names", "[]string", "0+", nullable="0+", default="null"),
        F("subscribed_topic_regex", "string", "1+", nullable="1+", default="null"),
        F("server_assignor", "string", "0+", nullable="0+", default="null"),
        F("topic_partitions", "[]", "0+", nullable="0+", default="null",
          fields=_TOPIC_PARTITIONS),
    ),
)

RESPONSE = Message(
    "ConsumerGroupHeartbeatResponse",
    api_key=68,
    valid="0-1",
    flexible="0+",
    fields=(
        F("throttle_time_ms", "int32", "0+"),
        F("error_code", "int16", "0+"),
        F("error_message", "string", "0+", nullable="0+", default="null"),
        F("member_id", "string", "0+", nullable="0+", default="null"),
        F("member_epoch", "int32", "0+"),
        F("heartbeat_interval_ms", "int32", "0+"),
        F("assignment", "struct", "0+", nullable="0+", default="null",
          fields=(F("topic_partitions", "[]", "0+", fields=_TOPIC_PARTITIONS),)),
    ),
)

API = register(
    ApiSpec(api_key=68, name="ConsumerGroupHeartbeat", request=REQUEST, response=RESPONSE)
)
