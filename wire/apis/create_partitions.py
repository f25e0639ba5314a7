"""CreatePartitions: versions 0-3.

Request versions (Kafka's schema notes):
    Version 1 is the same as version 0.
    Version 2 adds flexible version support
    Version 3 is identical to version 2 but may return a THROTTLING_QUOTA_EXCEEDED error
      in the response if the partitions creation is throttled (KIP-599).

Response versions:
    Starting in version 1, on quota violation, brokers send out responses before throttling.
    Version 2 adds flexible version support
    Version 3 is identical to version 2 but may return a THROTTLING_QUOTA_EXCEEDED error
      code.
"""

from __future__ import annotations

from wire.fields import Field as F
from wire.fields import Message
from wire.registry import ApiSpec, register

REQUEST = Message(
    "CreatePartitionsRequest",
    api_key=37,
    valid="0-3",
    flexible="2+",
    fields=(
        F(
            "topics",
            "[]",
            "0+",
            fields=(
                F("name", "string", "0+"),
                F("count", "int32", "0+"),
                F(
                    "assignments",
                    "[]",
                    "0+",
                    nullable="0+",
                    fields=(F("broker_ids", "[]int32", "0+"),),
                ),
            ),
        ),
        F("timeout_ms", "int32", "0+"),
        F("validate_only", "bool", "0+"),
    ),
)

RESPONSE = Message(
    "CreatePartitionsResponse",
    api_key=37,
    valid="0-3",
    flexible="2+",
    fields=(
        F("throttle_time_ms", "int32", "0+"),
        F(
            "results",
            "[]",
            "0+",
            fields=(
                F("name", "string", "0+"),
                F("error_code", "int16", "0+"),
                F("error_message", "string", "0+", nullable="0+", default="null"),
            ),
        ),
    ),
)

API = register(ApiSpec(api_key=37, name="CreatePartitions", request=REQUEST, response=RESPONSE))
