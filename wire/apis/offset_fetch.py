"""OffsetFetch: versions 0-10.

Request versions (Kafka's schema notes):
    Version 0 was removed in Apache Kafka 4.0, Version 1 is the new baseline.
    In version 0, the request read offsets from ZK.
    Starting in version 1, the broker supports fetching offsets from the internal
      __consumer_offsets topic.
    Starting in version 2, the request can contain a null topics array to indicate that offsets
    for all topics should be fetched. It also returns a top level error code
    for group or coordinator level errors.
    Version 3, 4, and 5 are the same as version 2.
    Version 6 is the first flexible version.
    Version 7 is adding the require stable flag.
    Version 8 is adding support for fetching offsets for multiple groups at a time.
    Version 9 is the first version that can be used with the new consumer group protocol
      (KIP-848). It adds
    the MemberId and MemberEpoch fields. Those are filled in and validated when the new
      consumer protocol is used.
    Version 10 adds support for topic ids and removes support for topic names (KIP-848).

Response versions:
    Version 0 was removed in Apache Kafka 4.0, Version 1 is the new baseline.
    Version 1 is the same as version 0.
    Version 2 adds a top-level error code.
    Version 3 adds the throttle time.
    Starting in version 4, on quota violation, brokers send out responses before throttling.
    Version 5 adds the leader epoch to the committed offset.
    Version 6 is the first flexible version.
    Version 7 adds pending offset commit as new error response on partition level.
    Version 8 is adding support for fetching offsets for multiple groups
    Version 9 is the first version that can be used with the new consumer group protocol
      (KIP-848). The response is
    the same as version 8 but can return STALE_MEMBER_EPOCH and UNKNOWN_MEMBER_ID errors
      when the new consumer group
    protocol is used.
    Version 10 adds support for topic ids and removes support for topic names (KIP-848).
    It can return UNKNOWN_TOPIC_ID if topic IDs used and the topic is not found in metadata.
    Supported errors:
    - GROUP_AUTHORIZATION_FAILED (version 0+)
    - NOT_COORDINATOR (version 0+)
    - COORDINATOR_NOT_AVAILABLE (version 0+)
    - COORDINATOR_LOAD_IN_PROGRESS (version 0+)
    - GROUP_ID_NOT_FOUND (version 0+)
    - UNSTABLE_OFFSET_COMMIT (version 7+)
    - UNKNOWN_MEMBER_ID (version 9+)
    - STALE_MEMBER_EPOCH (version 9+)
    - UNKNOWN_TOPIC_ID (version 10+)
"""

from __future__ import annotations

from wire.fields import Field as F
from wire.fields import Message
from wire.registry import ApiSpec, register

REQUEST = Message(
    "OffsetFetchRequest",
    api_key=9,
    valid="0-10",
    flexible="6+",
    fields=(
        F("group_id", "string", "0-7"),
        F(
            "topics",
            "[]",
            "0-7",
            nullable="2-7",
            fields=(
                F("name", "string", "0-7"),
                F("partition_indexes", "[]int32", "0-7"),
            ),
        ),
        F(
            "groups",
            "[]",
            "8+",
            fields=(
                F("group_id", "string", "8+"),
                F("member_id", "string", "9+", nullable="9+", default="null"),
                F("member_epoch", "int32", "9+", default=-1),
                F(
                    "topics",
                    "[]",
                    "8+",
                    nullable="8+",
                    fields=(
                        F("name", "string", "8-9"),
                        F("topic_id", "uuid", "10+"),
                        F("partition_indexes", "[]int32", "8+"),
                    ),
                ),
            ),
        ),
        F("require_stable", "bool", "7+", default=False),
    ),
)

RESPONSE = Message(
    "OffsetFetchResponse",
    api_key=9,
    valid="0-10",
    flexible="6+",
    fields=(
        F("throttle_time_ms", "int32", "3+"),
        F(
            "topics",
            "[]",
            "0-7",
            fields=(
                F("name", "string", "0-7"),
                F(
                    "partitions",
                    "[]",
                    "0-7",
                    fields=(
                        F("partition_index", "int32", "0-7"),
                        F("committed_offset", "int64", "0-7"),
                        F("committed_leader_epoch", "int32", "5-7", default=-1),
                        F("metadata", "string", "0-7", nullable="0-7"),
                        F("error_code", "int16", "0-7"),
                    ),
                ),
            ),
        ),
        F("error_code", "int16", "2-7", default=0),
        F(
            "groups",
            "[]",
            "8+",
            fields=(
                F("group_id", "string", "8+"),
                F(
                    "topics",
                    "[]",
                    "8+",
                    fields=(
                        F("name", "string", "8-9"),
                        F("topic_id", "uuid", "10+"),
                        F(
                            "partitions",
                            "[]",
                            "8+",
                            fields=(
                                F("partition_index", "int32", "8+"),
                                F("committed_offset", "int64", "8+"),
                                F("committed_leader_epoch", "int32", "8+", default=-1),
                                F("metadata", "string", "8+", nullable="8+"),
                                F("error_code", "int16", "8+"),
                            ),
                        ),
                    ),
                ),
                F("error_code", "int16", "8+", default=0),
            ),
        ),
    ),
)

API = register(ApiSpec(api_key=9, name="OffsetFetch", request=REQUEST, response=RESPONSE))
