"""CreateTopics: versions 0-7.

Request versions (Kafka's schema notes):
    Versions 0-1 were removed in Apache Kafka 4.0, Version 2 is the new baseline.
    Version 1 adds validateOnly.
    Version 4 makes partitions/replicationFactor optional even when assignments are not
      present (KIP-464)
    Version 5 is the first flexible version.
    Version 5 also returns topic configs in the response (KIP-525).
    Version 6 is identical to version 5 but may return a THROTTLING_QUOTA_EXCEEDED error
    in the response if the topics creation is throttled (KIP-599).
    Version 7 is the same as version 6.

Response versions:
    Versions 0-1 were removed in Apache Kafka 4.0, Version 2 is the new baseline.
    Version 1 adds a per-topic error message string.
    Version 2 adds the throttle time.
    Starting in version 3, on quota violation, brokers send out responses before throttling.
    Version 4 makes partitions/replicationFactor optional even when assignments are not
      present (KIP-464).
    Version 5 is the first flexible version.
    Version 5 also returns topic configs in the response (KIP-525).
    Version 6 is identical to version 5 but may return a THROTTLING_QUOTA_EXCEEDED error
    in the response if the topics creation is throttled (KIP-599).
    Version 7 returns the topic ID of the newly created topic if creation is successful.
"""

from __future__ import annotations

from wire.fields import Field as F
from wire.fields import Message
from wire.registry import ApiSpec, register

REQUEST = Message(
    "CreateTopicsRequest",
    api_key=19,
    valid="0-7",
    flexible="5+",
    fields=(
        F(
            "topics",
            "[]",
            "0+",
            fields=(
                F("name", "string", "0+"),
                F("num_partitions", "int32", "0+"),
                F("replication_factor", "int16", "0+"),
                F(
                    "assignments",
                    "[]",
                    "0+",
                    fields=(
                        F("partition_index", "int32", "0+"),
                        F("broker_ids", "[]int32", "0+"),
                    ),
                ),
                F(
                    "configs",
                    "[]",
                    "0+",
                    fields=(
                        F("name", "string", "0+"),
                        F("value", "string", "0+", nullable="0+"),
                    ),
                ),
            ),
        ),
        F("timeout_ms", "int32", "0+", default=60000),
        F("validate_only", "bool", "1+", default=False),
    ),
)

RESPONSE = Message(
    "CreateTopicsResponse",
    api_key=19,
    valid="0-7",
    flexible="5+",
    fields=(
        F("throttle_time_ms", "int32", "2+"),
        F(
            "topics",
            "[]",
            "0+",
            fields=(
                F("name", "string", "0+"),
                F("topic_id", "uuid", "7+"),
                F("error_code", "int16", "0+"),
                F("error_message", "string", "1+", nullable="0+"),
                F("topic_config_error_code", "int16", "5+", tag=0, tagged="5+"),
                F("num_partitions", "int32", "5+", default=-1),
                F("replication_factor", "int16", "5+", default=-1),
                F(
                    "configs",
                    "[]",
                    "5+",
                    nullable="5+",
                    fields=(
                        F("name", "string", "5+"),
                        F("value", "string", "5+", nullable="5+"),
                        F("read_only", "bool", "5+"),
                        F("config_source", "int8", "5+", default=-1),
                        F("is_sensitive", "bool", "5+"),
                    ),
                ),
            ),
        ),
    ),
)

API = register(ApiSpec(api_key=19, name="CreateTopics", request=REQUEST, response=RESPONSE))
