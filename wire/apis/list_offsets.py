"""ListOffsets: versions 0-11.

Request versions (Kafka's schema notes):
    Version 0 was removed in Apache Kafka 4.0, Version 1 is the new baseline.
    Version 1 removes MaxNumOffsets.  From this version forward, only a single
    offset can be returned.
    Version 2 adds the isolation level, which is used for transactional reads.
    Version 3 is the same as version 2.
    Version 4 adds the current leader epoch, which is used for fencing.
    Version 5 is the same as version 4.
    Version 6 enables flexible versions.
    Version 7 enables listing offsets by max timestamp (KIP-734).
    Version 8 enables listing offsets by local log start offset (KIP-405).
    Version 9 enables listing offsets by last tiered offset (KIP-1005).
    Version 10 enables async remote list offsets support (KIP-1075)
    Version 11 enables listing offsets by earliest pending upload offset (KIP-1023)

Response versions:
    Version 0 was removed in Apache Kafka 4.0, Version 1 is the new baseline.
    Version 1 removes the offsets array in favor of returning a single offset.
    Version 1 also adds the timestamp associated with the returned offset.
    Version 2 adds the throttle time.
    Starting in version 3, on quota violation, brokers send out responses before throttling.
    Version 4 adds the leader epoch, which is used for fencing.
    Version 5 adds a new error code, OFFSET_NOT_AVAILABLE.
    Version 6 enables flexible versions.
    Version 7 is the same as version 6 (KIP-734).
    Version 8 enables listing offsets by local log start offset.
    This is the earliest log start offset in the local log. (KIP-405).
    Version 9 enables listing offsets by last tiered offset (KIP-1005).
    Version 10 enables async remote list offsets support (KIP-1075)
    Version 11 enables listing offsets by earliest pending upload offset (KIP-1023)
"""

from __future__ import annotations

from wire.fields import Field as F
from wire.fields import Message
from wire.registry import ApiSpec, register

REQUEST = Message(
    "ListOffsetsRequest",
    api_key=2,
    valid="0-11",
    flexible="6+",
    fields=(
        F("replica_id", "int32", "0+"),
        F("isolation_level", "int8", "2+"),
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
                        F("current_leader_epoch", "int32", "4+", default=-1),
                        F("timestamp", "int64", "0+"),
                        F("max_num_offsets", "int32", "0", default=1),
                    ),
                ),
            ),
        ),
        F("timeout_ms", "int32", "10+"),
    ),
)

RESPONSE = Message(
    "ListOffsetsResponse",
    api_key=2,
    valid="0-11",
    flexible="6+",
    fields=(
        F("throttle_time_ms", "int32", "2+"),
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
                        F("old_style_offsets", "[]int64", "0"),
                        F("timestamp", "int64", "1+", default=-1),
                        F("offset", "int64", "1+", default=-1),
                        F("leader_epoch", "int32", "4+", default=-1),
                    ),
                ),
            ),
        ),
    ),
)

API = register(ApiSpec(api_key=2, name="ListOffsets", request=REQUEST, response=RESPONSE))
