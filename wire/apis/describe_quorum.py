"""DescribeQuorum: versions 0-2 (KIP-595).

Request versions (Kafka's schema notes):
    Version 1 adds additional fields in the response. The request is unchanged
    (KIP-836).
    Version 2 adds additional fields in the response. The request is unchanged
    (KIP-853).

Response versions:
    Version 1 adds LastFetchTimeStamp and LastCaughtUpTimestamp in ReplicaState
    (KIP-836).
    Version 2 adds ErrorMessage, Nodes, ErrorMessage in PartitionData,
    ReplicaDirectoryId in ReplicaState (KIP-853).
"""

from __future__ import annotations

from wire.fields import Field as F
from wire.fields import Message
from wire.registry import ApiSpec, register

REQUEST = Message(
    "DescribeQuorumRequest",
    api_key=55,
    valid="0-2",
    flexible="0+",
    fields=(
        F("topics", "[]", "0+", fields=(
            F("topic_name", "string", "0+"),
            F("partitions", "[]", "0+", fields=(
                F("partition_index", "int32", "0+"),
            )),
        )),
    ),
)

RESPONSE = Message(
    "DescribeQuorumResponse",
    api_key=55,
    valid="0-2",
    flexible="0+",
    fields=(
        F("error_code", "int16", "0+"),
        F("error_message", "string", "2+", nullable="2+"),
        F("topics", "[]", "0+", fields=(
            F("topic_name", "string", "0+"),
            F("partitions", "[]", "0+", fields=(
                F("partition_index", "int32", "0+"),
                F("error_code", "int16", "0+"),
                F("error_message", "string", "2+", nullable="2+"),
                F("leader_id", "int32", "0+"),
                F("leader_epoch", "int32", "0+"),
                F("high_watermark", "int64", "0+"),
                F("current_voters", "[]", "0+", fields=(
                    F("replica_id", "int32", "0+"),
                    F("replica_directory_id", "uuid", "2+"),
                    F("log_end_offset", "int64", "0+"),
                    F("last_fetch_timestamp", "int64", "1+", default=-1),
                    F("last_caught_up_timestamp", "int64", "1+", default=-1),
                )),
                F("observers", "[]", "0+", fields=(
                    F("replica_id", "int32", "0+"),
                    F("replica_directory_id", "uuid", "2+"),
                    F("log_end_offset", "int64", "0+"),
                    F("last_fetch_timestamp", "int64", "1+", default=-1),
                    F("last_caught_up_timestamp", "int64", "1+", default=-1),
                )),
            )),
        )),
        F("nodes", "[]", "2+", fields=(
            F("node_id", "int32", "2+"),
            F("listeners", "[]", "2+", fields=(
                F("name", "string", "2+"),
                F("host", "string", "2+"),
                F("port", "uint16", "2+"),
            )),
        )),
    ),
)

API = register(ApiSpec(api_key=55, name="DescribeQuorum", request=REQUEST, response=RESPONSE))

