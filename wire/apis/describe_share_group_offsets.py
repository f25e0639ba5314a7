"""DescribeShareGroupOffsets: versions 0-1 (KIP-932).

Request versions (Kafka's schema notes):
    Version 0 is the initial version (KIP-932).
    Version 1 introduces Lag in the response (KIP-1226).

Response versions:
    Version 0 is the initial version (KIP-932).
    Version 1 introduces Lag (KIP-1226).
    Errors: GROUP_AUTHORIZATION_FAILED, TOPIC_AUTHORIZATION_FAILED, NOT_COORDINATOR,
    COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS, GROUP_ID_NOT_FOUND,
    INVALID_REQUEST, UNKNOWN_SERVER_ERROR.
"""

from __future__ import annotations

from wire.fields import Field as F
from wire.fields import Message
from wire.registry import ApiSpec, register

REQUEST = Message(
    "DescribeShareGroupOffsetsRequest",
    api_key=90,
    valid="0-1",
    flexible="0+",
    fields=(
        F("groups", "[]", "0+", fields=(
            F("group_id", "string", "0+"),
            F("topics", "[]", "0+", nullable="0+", fields=(
                F("topic_name", "string", "0+"),
                F("partitions", "[]int32", "0+"),
            )),
        )),
    ),
)

RESPONSE = Message(
    "DescribeShareGroupOffsetsResponse",
    api_key=90,
    valid="0-1",
    flexible="0+",
    fields=(
        F("throttle_time_ms", "int32", "0+"),
        F("groups", "[]", "0+", fields=(
            F("group_id", "string", "0+"),
            F("topics", "[]", "0+", fields=(
                F("topic_name", "string", "0+"),
                F("topic_id", "uuid", "0+"),
                F("partitions", "[]", "0+", fields=(
                    F("partition_index", "int32", "0+"),
                    F("start_offset", "int64", "0+"),
                    F("leader_epoch", "int32", "0+"),
                    F("lag", "int64", "1+", default=-1),
                    F("error_code", "int16", "0+"),
                    F("error_message", "string", "0+", nullable="0+", default="null"),
                )),
            )),
            F("error_code", "int16", "0+"),
            F("error_message", "string", "0+", nullable="0+", default="null"),
        )),
    ),
)

API = register(
    ApiSpec(api_key=90, name="DescribeShareGroupOffsets", request=REQUEST, response=RESPONSE)
)
