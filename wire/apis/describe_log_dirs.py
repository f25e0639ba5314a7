"""DescribeLogDirs: versions 1-4.

Request versions (Kafka's schema notes):
    Version 0 was removed in Apache Kafka 4.0, Version 1 is the new baseline.
    Version 1 is the same as version 0.
    Version 2 is the first flexible version.
    Version 3 is the same as version 2 (new field in response).
    Version 4 is the same as version 2 (new fields in response).

Response versions:
    Version 0 was removed in Apache Kafka 4.0, Version 1 is the new baseline.
    Starting in version 1, on quota violation, brokers send out responses before throttling.
    Version 2 is the first flexible version.
    Version 3 adds the top-level ErrorCode field
    Version 4 adds the TotalBytes and UsableBytes fields
"""

from __future__ import annotations

from wire.fields import Field as F
from wire.fields import Message
from wire.registry import ApiSpec, register

REQUEST = Message(
    "DescribeLogDirsRequest",
    api_key=35,
    valid="1-4",
    flexible="2+",
    fields=(
        F("topics", "[]", "0+", nullable="0+", fields=(
            F("topic", "string", "0+"),
            F("partitions", "[]int32", "0+"),
        )),
    ),
)

RESPONSE = Message(
    "DescribeLogDirsResponse",
    api_key=35,
    valid="1-4",
    flexible="2+",
    fields=(
        F("throttle_time_ms", "int32", "0+"),
        F("error_code", "int16", "3+"),
        F("results", "[]", "0+", fields=(
            F("error_code", "int16", "0+"),
            F("log_dir", "string", "0+"),
            F("topics", "[]", "0+", fields=(
                F("name", "string", "0+"),
                F("partitions", "[]", "0+", fields=(
                    F("partition_index", "int32", "0+"),
                    F("partition_size", "int64", "0+"),
                    F("offset_lag", "int64", "0+"),
                    F("is_future_key", "bool", "0+"),
                )),
            )),
            F("total_bytes", "int64", "4+", default=-1),
            F("usable_bytes", "int64", "4+", default=-1),
        )),
    ),
)

API = register(ApiSpec(api_key=35, name="DescribeLogDirs", request=REQUEST, response=RESPONSE))

