"""AlterPartitionReassignments: versions 0-1 (KIP-455; version 1: KIP-860).

Request versions (Kafka's schema notes):
    Version 1 adds the ability to allow/disallow changing the replication factor as part
    of the request.

Response versions:
    Version 1 adds AllowReplicationFactorChange, whether changing the replication factor
    of any given partition as part of the request was allowed.
"""

from __future__ import annotations

from wire.fields import Field as F
from wire.fields import Message
from wire.registry import ApiSpec, register

REQUEST = Message(
    "AlterPartitionReassignmentsRequest",
    api_key=45,
    valid="0-1",
    flexible="0+",
    fields=(
        F("timeout_ms", "int32", "0+", default=60000),
        F("allow_replication_factor_change", "bool", "1+", default=True),
        F("topics", "[]", "0+", fields=(
            F("name", "string", "0+"),
            F("partitions", "[]", "0+", fields=(
                F("partition_index", "int32", "0+"),
                F("replicas", "[]int32", "0+", nullable="0+", default="null"),
            )),
        )),
    ),
)

RESPONSE = Message(
    "AlterPartitionReassignmentsResponse",
    api_key=45,
    valid="0-1",
    flexible="0+",
    fields=(
        F("throttle_time_ms", "int32", "0+"),
        F("allow_replication_factor_change", "bool", "1+", default=True),
        F("error_code", "int16", "0+"),
        F("error_message", "string", "0+", nullable="0+"),
        F("responses", "[]", "0+", fields=(
            F("name", "string", "0+"),
            F("partitions", "[]", "0+", fields=(
                F("partition_index", "int32", "0+"),
                F("error_code", "int16", "0+"),
                F("error_message", "string", "0+", nullable="0+"),
            )),
        )),
    ),
)

API = register(
    ApiSpec(api_key=45, name="AlterPartitionReassignments", request=REQUEST, response=RESPONSE)
)

