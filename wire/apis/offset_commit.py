"""OffsetCommit: versions 0-10.

Request versions (Kafka's schema notes):
    Versions 0-1 were removed in Apache Kafka 4.0, Version 2 is the new baseline.
    Version 1 adds timestamp and group membership information, as well as the commit timestamp.
    Version 2 adds retention time.  It removes the commit timestamp added in version 1.
    Version 3 and 4 are the same as version 2.
    Version 5 removes the retention time, which is now controlled only by a broker
      configuration.
    Version 6 adds the leader epoch for fencing.
    version 7 adds a new field called groupInstanceId to indicate member identity across
      restarts.
    Version 8 is the first flexible version.
    Version 9 is the first version that can be used with the new consumer group protocol
      (KIP-848). The
    request is the same as version 8.
    Version 10 adds support for topic ids and removes support for topic names (KIP-848).

Response versions:
    Versions 0-1 were removed in Apache Kafka 4.0, Version 2 is the new baseline.
    Versions 1 and 2 are the same as version 0.
    Version 3 adds the throttle time to the response.
    Starting in version 4, on quota violation, brokers send out responses before throttling.
    Versions 5 and 6 are the same as version 4.
    Version 7 offsetCommitRequest supports a new field called groupInstanceId to indicate
      member identity across restarts.
    Version 8 is the first flexible version.
    Version 9 is the first version that can be used with the new consumer group protocol
      (KIP-848). The response is
    the same as version 8 but can return STALE_MEMBER_EPOCH when the new consumer group
      protocol is used and
    GROUP_ID_NOT_FOUND when the group does not exist for both protocols.
    Version 10 adds support for topic ids and removes support for topic names (KIP-848).
    Supported errors:
    - GROUP_AUTHORIZATION_FAILED (version 0+)
    - NOT_COORDINATOR (version 0+)
    - COORDINATOR_NOT_AVAILABLE (version 0+)
    - COORDINATOR_LOAD_IN_PROGRESS (version 0+)
    - ILLEGAL_GENERATION (version 1+)
    - UNKNOWN_MEMBER_ID (version 1+)
    - INVALID_COMMIT_OFFSET_SIZE (version 0+)
    - FENCED_MEMBER_EPOCH (version 7+)
    - GROUP_ID_NOT_FOUND (version 9+)
    - STALE_MEMBER_EPOCH (version 9+)
    - UNKNOWN_TOPIC_ID (version 10+)
"""

from __future__ import annotations

from wire.fields import Field as F
from wire.fields import Message
from wire.registry import ApiSpec, register

REQUEST = Message(
    "OffsetCommitRequest",
    api_key=8,
    valid="0-10",
    flexible="8+",
    fields=(
        F("group_id", "string", "0+"),
        F("generation_id_or_member_epoch", "int32", "1+", default=-1),
        F("member_id", "string", "1+"),
        F("group_instance_id", "string", "7+", nullable="7+", default="null"),
        F("retention_time_ms", "int64", "2-4", default=-1),
        F(
            "topics",
            "[]",
            "0+",
            fields=(
                F("name", "string", "0-9"),
                F("topic_id", "uuid", "10+"),
                F(
                    "partitions",
                    "[]",
                    "0+",
                    fields=(
                        F("partition_index", "int32", "0+"),
                        F("committed_offset", "int64", "0+"),
                        F("committed_leader_epoch", "int32", "6+", default=-1),
                        F("commit_timestamp", "int64", "1", default=-1),
                        F("committed_metadata", "string", "0+", nullable="0+"),
                    ),
                ),
            ),
        ),
    ),
)

RESPONSE = Message(
    "OffsetCommitResponse",
    api_key=8,
    valid="0-10",
    flexible="8+",
    fields=(
        F("throttle_time_ms", "int32", "3+"),
        F(
            "topics",
            "[]",
            "0+",
            fields=(
                F("name", "string", "0-9"),
                F("topic_id", "uuid", "10+"),
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

API = register(ApiSpec(api_key=8, name="OffsetCommit", request=REQUEST, response=RESPONSE))
