"""OffsetForLeaderEpoch: versions 2-4.

Request versions (Kafka's schema notes):
    Versions 0-1 were removed in Apache Kafka 4.0, Version 2 is the new baseline.
    Version 1 is the same as version 0.
    Version 2 adds the current leader epoch to support fencing.
    Version 3 adds ReplicaId (the default is -2 which conventionally represents a
    "debug" consumer which is allowed to see offsets beyond the high watermark).
    Followers will use this replicaId when using an older version of the protocol.
    Version 4 enables flexible versions.

Response versions:
    Versions 0-1 were removed in Apache Kafka 4.0, Version 2 is the new baseline.
    Version 1 added the leader epoch to the response.
    Version 2 added the throttle time.
    Version 3 is the same as version 2.
    Version 4 enables flexible versions.
"""

from __future__ import annotations

from wire.fields import Field as F
from wire.fields import Message
from wire.registry import ApiSpec, register

REQUEST = Message(
    "OffsetForLeaderEpochRequest",
    api_key=23,
    valid="2-4",
    flexible="4+",
    fields=(
        F("replica_id", "int32", "3+", default=-2),
        F("topics", "[]", "0+", fields=(
            F("topic", "string", "0+"),
            F("partitions", "[]", "0+", fields=(
                F("partition", "int32", "0+"),
                F("current_leader_epoch", "int32", "2+", default=-1),
                F("leader_epoch", "int32", "0+"),
            )),
        )),
    ),
)

RESPONSE = Message(
    "OffsetForLeaderEpochResponse",
    api_key=23,
    valid="2-4",
    flexible="4+",
    fields=(
        F("throttle_time_ms", "int32", "2+"),
        F("topics", "[]", "0+", fields=(
            F("topic", "string", "0+"),
            F("partitions", "[]", "0+", fields=(
                F("error_code", "int16", "0+"),
                F("partition", "int32", "0+"),
                F("leader_epoch", "int32", "1+", default=-1),
                F("end_offset", "int64", "0+", default=-1),
            )),
        )),
    ),
)

API = register(ApiSpec(api_key=23, name="OffsetForLeaderEpoch", request=REQUEST, response=RESPONSE))

