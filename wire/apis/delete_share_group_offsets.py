"""DeleteShareGroupOffsets: version 0 (KIP-932).

Request: the share group and the topics whose share-group offsets to delete.

Response: a top-level error and one result per topic. Errors: GROUP_AUTHORIZATION_FAILED,
NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS,
GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP, KAFKA_STORAGE_ERROR, INVALID_REQUEST,
UNKNOWN_SERVER_ERROR.
"""

from __future__ import annotations

from wire.fields import Field as F
from wire.fields import Message
from wire.registry import ApiSpec, register

REQUEST = Message(
    "DeleteShareGroupOffsetsRequest",
    api_key=92,
    valid="0",
    flexible="0+",
    fields=(
        F("group_id", "string", "0+"),
        F("topics", "[]", "0+", fields=(
            F("topic_name", "string", "0+"),
        )),
    ),
)

RESPONSE = Message(
    "DeleteShareGroupOffsetsResponse",
    api_key=92,
    valid="0",
    flexible="0+",
    fields=(
        F("throttle_time_ms", "int32", "0+"),
        F("error_code", "int16", "0+"),
        F("error_message", "string", "0+", nullable="0+", default="null"),
        F("responses", "[]", "0+", fields=(
            F("topic_name", "string", "0+"),
            F("topic_id", "uuid", "0+"),
            F("error_code", "int16", "0+"),
            F("error_message", "string", "0+", nullable="0+", default="null"),
        )),
    ),
)

API = register(
    ApiSpec(api_key=92, name="DeleteShareGroupOffsets", request=REQUEST, response=RESPONSE)
)
