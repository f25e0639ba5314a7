"""ShareGroupHeartbeat: version 1 (KIP-932), flexible.

Request versions (Kafka's schema notes):
    Version 0 was used for early access of KIP-932 in Apache Kafka 4.0 but removed in
    Apache Kafka 4.1.
    Version 1 is the initial stable version (KIP-932).

Response versions: version 1 as the request. Errors: GROUP_AUTHORIZATION_FAILED,
NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS, INVALID_REQUEST,
UNKNOWN_MEMBER_ID, GROUP_MAX_SIZE_REACHED.
"""

from __future__ import annotations

from wire.fields import Field as F
from wire.fields import Message
from wire.registry import ApiSpec, register

REQUEST = Message(
    "ShareGroupHeartbeatRequest",
    api_key=76,
    valid="1",
    flexible="0+",
    fields=(
        F("group_id", "string", "0+"),
        F("member_id", "string", "0+"),
        F("member_epoch", "int32", "0+"),
        F("rack_id", "string", "0+", nullable="0+", default="null"),
        F("subscribed_topic_names", "[]string", "0+", nullable="0+", default="null"),
    ),
)

RESPONSE = Message(
    "ShareGroupHeartbeatResponse",
    api_key=76,
    valid="1",
    flexible="0+",
    fields=(
        F("throttle_time_ms", "int32", "0+"),
        F("error_code", "int16", "0+"),
        F("error_message", "string", "0+", nullable="0+", default="null"),
        F("member_id", "string", "0+", nullable="0+", default="null"),
        F("member_epoch", "int32", "0+"),
        F("heartbeat_interval_ms", "int32", "0+"),
        F("assignment", "struct", "0+", nullable="0+", default="null", fields=(
            F("topic_partitions", "[]", "0+", fields=(
                F("topic_id", "uuid", "0+"),
                F("partitions", "[]int32", "0+"),
            )),
        )),
    ),
)

API = register(ApiSpec(api_key=76, name="ShareGroupHeartbeat", request=REQUEST, response=RESPONSE))

