"""OffsetDelete: versions 0-0.

Request versions (Kafka's schema notes):

Response versions:
"""

from __future__ import annotations

from wire.fields import Field as F
from wire.fields import Message
from wire.registry import ApiSpec, register

REQUEST = Message(
    "OffsetDeleteRequest",
    api_key=47,
    valid="0",
    flexible="none",
    fields=(
        F("group_id", "string", "0+"),
        F(
            "topics",
            "[]",
            "0+",
            fields=(
                F("name", "string", "0+"),
                F("partitions", "[]", "0+", fields=(F("partition_index", "int32", "0+"),)),
            ),
        ),
    ),
)

RESPONSE = Message(
    "OffsetDeleteResponse",
    api_key=47,
    valid="0",
    flexible="none",
    fields=(
        F("error_code", "int16", "0+"),
        F("throttle_time_ms", "int32", "0+"),
        F(
            "topics",
            "[]",
            "0+",
            fields=(
                F("name", "string", "0+"),
                F(
                    "partitions",
                    "[]",
                    "0+",
                    fields=(
                        F("partition_index", "int32", "0+"),
                        F("error_code", "int16", "0+"),
                    ),
                ),
            ),
        ),
    ),
)

API = register(ApiSpec(api_key=47, name="OffsetDelete", request=REQUEST, response=RESPONSE))
