"""ListPartitionReassignments: version 0 (KIP-455), flexible.

Request: a timeout and the topics and partitions to list, or null for every ongoing
reassignment.

Response: per reassigning partition its replicas, adding and removing replicas.
"""

from __future__ import annotations

from wire.fields import Field as F
from wire.fields import Message
from wire.registry import ApiSpec, register

REQUEST = Message(
    "ListPartitionReassignmentsRequest",
    api_key=46,
    valid="0",
    flexible="0+",
    fields=(
        F("timeout_ms", "int32", "0+", default=60000),
        F("topics", "[]", "0+", nullable="0+", default="null", fields=(
            F("name", "string", "0+"),
            F("partition_indexes", "[]int32", "0+"),
        )),
    ),
)

RESPONSE = Message(
    "ListPartitionReassignmentsResponse",
    api_key=46,
    valid="0",
    flexible="0+",
    fields=(
        F("throttle_time_ms", "int32", "0+"),
        F("error_code", "int16", "0+"),
        F("error_message", "string", "0+", nullable="0+"),
        F("topics", "[]", "0+", fields=(
            F("name", "string", "0+"),
            F("partitions", "[]", "0+", fields=(
                F("partition_index", "int32", "0+"),
                F("replicas", "[]int32", "0+"),
                F("adding_replicas", "[]int32", "0+"),
                F("removing_replicas", "[]int32", "0+"),
            )),
        )),
    ),
)

API = register(
    ApiSpec(api_key=46, name="ListPartitionReassignments", request=REQUEST, response=RESPONSE)
)

