"""ElectLeaders: versions 0-2.

Request versions (Kafka's schema notes):
    Version 1 implements multiple leader election types, as described by KIP-460.
    Version 2 is the first flexible version.

Response versions:
    Version 1 adds a top-level error code.
    Version 2 is the first flexible version.
"""

from __future__ import annotations

from wire.fields import Field as F
from wire.fields import Message
from wire.registry import ApiSpec, register

REQUEST = Message(
    "ElectLeadersRequest",
    api_key=43,
    valid="0-2",
    flexible="2+",
    fields=(
        F("election_type", "int8", "1+"),
        F("topic_partitions", "[]", "0+", nullable="0+", fields=(
            F("topic", "string", "0+"),
            F("partitions", "[]int32", "0+"),
        )),
        F("timeout_ms", "int32", "0+", default=60000),
    ),
)

RESPONSE = Message(
    "ElectLeadersResponse",
    api_key=43,
    valid="0-2",
    flexible="2+",
    fields=(
        F("throttle_time_ms", "int32", "0+"),
        F("error_code", "int16", "1+"),
        F("replica_election_results", "[]", "0+", fields=(
            F("topic", "string", "0+"),
            F("partition_result", "[]", "0+", fields=(
                F("partition_id", "int32", "0+"),
                F("error_code", "int16", "0+"),
                F("error_message", "string", "0+", nullable="0+"),
            )),
        )),
    ),
)

API = register(ApiSpec(api_key=43, name="ElectLeaders", request=REQUEST, response=RESPONSE))

