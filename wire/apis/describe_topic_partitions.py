"""DescribeTopicPartitions: version 0 (KIP-966), flexible.

Request: the topics, a response partition limit and an optional cursor (topic name and
partition index) to continue from.

Response: per topic its partitions with leader, epochs, replicas, ISR, eligible leader
replicas, last known ELR and offline replicas, and the next cursor (null when done).
"""

from __future__ import annotations

from wire.fields import Field as F
from wire.fields import Message
from wire.registry import ApiSpec, register

REQUEST = Message(
    "DescribeTopicPartitionsRequest",
    api_key=75,
    valid="0",
    flexible="0+",
    fields=(
        F("topics", "[]", "0+", fields=(
            F("name", "string", "0+"),
        )),
        F("response_partition_limit", "int32", "0+", default=2000),
        F("cursor", "struct", "0+", nullable="0+", default="null", fields=(
            F("topic_name", "string", "0+"),
            F("partition_index", "int32", "0+"),
        )),
    ),
)

RESPONSE = Message(
    "DescribeTopicPartitionsResponse",
    api_key=75,
    valid="0",
    flexible="0+",
    fields=(
        F("throttle_time_ms", "int32", "0+"),
        F("topics", "[]", "0+", fields=(
            F("error_code", "int16", "0+"),
            F("name", "string", "0+", nullable="0+"),
            F("topic_id", "uuid", "0+"),
            F("is_internal", "bool", "0+", default=False),
            F("partitions", "[]", "0+", fields=(
                F("error_code", "int16", "0+"),
                F("partition_index", "int32", "0+"),
                F("leader_id", "int32", "0+"),
                F("leader_epoch", "int32", "0+", default=-1),
                F("replica_nodes", "[]int32", "0+"),
                F("isr_nodes", "[]int32", "0+"),
                F("eligible_leader_replicas", "[]int32", "0+", nullable="0+", default="null"),
                F("last_known_elr", "[]int32", "0+", nullable="0+", default="null"),
                F("offline_replicas", "[]int32", "0+"),
            )),
            F("topic_authorized_operations", "int32", "0+", default=-2147483648),
        )),
        F("next_cursor", "struct", "0+", nullable="0+", default="null", fields=(
            F("topic_name", "string", "0+"),
            F("partition_index", "int32", "0+"),
        )),
    ),
)

API = register(
    ApiSpec(api_key=75, name="DescribeTopicPartitions", request=REQUEST, response=RESPONSE)
)

