"""ShareFetch: versions 1-2.

Request versions (Kafka's schema notes):
    Version 0 was used for early access of KIP-932 in Apache Kafka 4.0 but removed in
    Apache Kafka 4.1.
    Version 1 is the initial stable version (KIP-932).
    Version 2 introduces ShareAcquireMode and Renew acknowledgements (KIP-1206 and
    KIP-1222).

Response versions:
    Version 1 is the initial stable version (KIP-932).
    Version 2 is the same as version 1 (ShareAcquireMode and Renew acknowledgements are
    in the request).
    Supported errors for ErrorCode and AcknowledgeErrorCode:
    - GROUP_AUTHORIZATION_FAILED (version 0+)
    - TOPIC_AUTHORIZATION_FAILED (version 0+)
    - SHARE_SESSION_NOT_FOUND (version 0+)
    - INVALID_SHARE_SESSION_EPOCH (version 0+)
    - UNKNOWN_TOPIC_OR_PARTITION (version 0+)
    - NOT_LEADER_OR_FOLLOWER (version 0+)
    - UNKNOWN_TOPIC_ID (version 0+)
    - INVALID_RECORD_STATE (version 0+) - only for AcknowledgeErrorCode
    - KAFKA_STORAGE_ERROR (version 0+)
    - CORRUPT_MESSAGE (version 0+)
    - INVALID_REQUEST (version 0+)
    - UNKNOWN_SERVER_ERROR (version 0+)
"""

from __future__ import annotations

from wire.fields import Field as F
from wire.fields import Message
from wire.registry import ApiSpec, register

REQUEST = Message(
    "ShareFetchRequest",
    api_key=78,
    valid="1-2",
    flexible="0+",
    fields=(
        F("group_id", "string", "0+", nullable="0+", default="null"),
        F("member_id", "string", "0+", nullable="0+"),
        F("share_session_epoch", "int32", "0+"),
        F("max_wait_ms", "int32", "0+"),
        F("min_bytes", "int32", "0+"),
        F("max_bytes", "int32", "0+", default=2147483647),
        F("max_records", "int32", "1+"),
        F("batch_size", "int32", "1+"),
        F("share_acquire_mode", "int8", "2+", default=0),
        F("is_renew_ack", "bool", "2+", default=False),
        F("topics", "[]", "0+", fields=(
            F("topic_id", "uuid", "0+"),
            F("partitions", "[]", "0+", fields=(
                F("partition_index", "int32", "0+"),
                F("acknowledgement_batches", "[]", "0+", fields=(
                    F("first_offset", "int64", "0+"),
                    F("last_offset", "int64", "0+"),
                    F("acknowledge_types", "[]int8", "0+"),
                )),
            )),
        )),
        F("forgotten_topics_data", "[]", "0+", fields=(
            F("topic_id", "uuid", "0+"),
            F("partitions", "[]int32", "0+"),
        )),
    ),
)

RESPONSE = Message(
    "ShareFetchResponse",
    api_key=78,
    valid="1-2",
    flexible="0+",
    fields=(
        F("throttle_time_ms", "int32", "0+"),
        F("error_code", "int16", "0+"),
        F("error_message", "string", "0+", nullable="0+", default="null"),
        F("acquisition_lock_timeout_ms", "int32", "0+"),
        F("responses", "[]", "0+", fields=(
            F("topic_id", "uuid", "0+"),
            F("partitions", "[]", "0+", fields=(
                F("partition_index", "int32", "0+"),
                F("error_code", "int16", "0+"),
                F("error_message", "string", "0+", nullable="0+", default="null"),
                F("acknowledge_error_code", "int16", "0+"),
                F("acknowledge_error_message", "string", "0+", nullable="0+", default="null"),
                F("current_leader", "struct", "0+", fields=(
                    F("leader_id", "int32", "0+"),
                    F("leader_epoch", "int32", "0+"),
                )),
                F("records", "records", "0+", nullable="0+"),
                F("acquired_records", "[]", "0+", fields=(
                    F("first_offset", "int64", "0+"),
                    F("last_offset", "int64", "0+"),
                    F("delivery_count", "int16", "0+"),
                )),
            )),
        )),
        F("node_endpoints", "[]", "0+", fields=(
            F("node_id", "int32", "0+"),
            F("host", "string", "0+"),
            F("port", "int32", "0+"),
            F("rack", "string", "0+", nullable="0+", default="null"),
        )),
    ),
)

API = register(ApiSpec(api_key=78, name="ShareFetch", request=REQUEST, response=RESPONSE))

