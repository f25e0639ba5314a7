"""DeleteRecords: versions 0-2.

Request versions (Kafka's schema notes):
    Version 1 is the same as version 0.
    Version 2 is the first flexible version.

Response versions:
    Starting in version 1, on quota violation, brokers send out responses before throttling.
    Version 2 is the first flexible version.
"""

from __future__ import annotations

from wire.fields import Field as F
from wire.fields import Message
from wire.registry import ApiSpec, register

REQUEST = Message(
    "DeleteRecordsRequest",
    api_key=21,
    valid="0-2",
    flexible="2+",
    fields=(
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
                        F("offset", "int64", "0+"),
                    ),
                ),
            ),
        ),
        F("timeout_ms", "int32", "0+"),
    ),
)

RESPONSE = Message(
    "DeleteRecordsResponse",
    api_key=21,
    valid="0-2",
    flexible="2+",
    fields=(
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
                        F("low_watermark", "int64", "0+"),
                        F("error_code", "int16", "0+"),
                    ),
                ),
            ),
        ),
    ),
)

API = register(ApiSpec(api_key=21, name="DeleteRecords", request=REQUEST, response=RESPONSE))
