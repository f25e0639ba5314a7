"""DeleteTopics: versions 0-6.

Request versions (Kafka's schema notes):
    Version 0 was removed in Apache Kafka 4.0, Version 1 is the new baseline.
    Versions 0, 1, 2, and 3 are the same.
    Version 4 is the first flexible version.
    Version 5 adds ErrorMessage in the response and may return a THROTTLING_QUOTA_EXCEEDED error
    in the response if the topics deletion is throttled (KIP-599).
    Version 6 reorganizes topics, adds topic IDs and allows topic names to be null.

Response versions:
    Version 0 was removed in Apache Kafka 4.0, Version 1 is the new baseline.
    Version 1 adds the throttle time.
    Starting in version 2, on quota violation, brokers send out responses before throttling.
    Starting in version 3, a TOPIC_DELETION_DISABLED error code may be returned.
    Version 4 is the first flexible version.
    Version 5 adds ErrorMessage in the response and may return a THROTTLING_QUOTA_EXCEEDED error
    in the response if the topics deletion is throttled (KIP-599).
    Version 6 adds topic ID to responses. An UNSUPPORTED_VERSION error code will be returned
      when attempting to
    delete using topic IDs when IBP < 2.8. UNKNOWN_TOPIC_ID error code will be returned when
      IBP is at least 2.8, but
    the topic ID was not found.
"""

from __future__ import annotations

from wire.fields import Field as F
from wire.fields import Message
from wire.registry import ApiSpec, register

REQUEST = Message(
    "DeleteTopicsRequest",
    api_key=20,
    valid="0-6",
    flexible="4+",
    fields=(
        F(
            "topics",
            "[]",
            "6+",
            fields=(
                F("name", "string", "6+", nullable="6+", default="null"),
                F("topic_id", "uuid", "6+"),
            ),
        ),
        F("topic_names", "[]string", "0-5"),
        F("timeout_ms", "int32", "0+"),
    ),
)

RESPONSE = Message(
    "DeleteTopicsResponse",
    api_key=20,
    valid="0-6",
    flexible="4+",
    fields=(
        F("throttle_time_ms", "int32", "1+"),
        F(
            "responses",
            "[]",
            "0+",
            fields=(
                F("name", "string", "0+", nullable="6+"),
                F("topic_id", "uuid", "6+"),
                F("error_code", "int16", "0+"),
                F("error_message", "string", "5+", nullable="5+", default="null"),
            ),
        ),
    ),
)

API = register(ApiSpec(api_key=20, name="DeleteTopics", request=REQUEST, response=RESPONSE))
