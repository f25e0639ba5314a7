"""FindCoordinator: versions 0-6.

Request versions (Kafka's schema notes):
    Version 1 adds KeyType.
    Version 2 is the same as version 1.
    Version 3 is the first flexible version.
    Version 4 adds support for batching via CoordinatorKeys (KIP-699)
    Version 5 adds support for new error code TRANSACTION_ABORTABLE (KIP-890).
    Version 6 adds support for share groups (KIP-932).
    For key type SHARE (2), the coordinator key format is "groupId:topicId:partition".

Response versions:
    Version 1 adds throttle time and error messages.
    Starting in version 2, on quota violation, brokers send out responses before throttling.
    Version 3 is the first flexible version.
    Version 4 adds support for batching via Coordinators (KIP-699)
    Version 5 adds support for new error code TRANSACTION_ABORTABLE (KIP-890).
    Version 6 adds support for share groups (KIP-932).
"""

from __future__ import annotations

from wire.fields import Field as F
from wire.fields import Message
from wire.registry import ApiSpec, register

REQUEST = Message(
    "FindCoordinatorRequest",
    api_key=10,
    valid="0-6",
    flexible="3+",
    fields=(
        F("key", "string", "0-3"),
        F("key_type", "int8", "1+", default=0),
        F("coordinator_keys", "[]string", "4+"),
    ),
)

RESPONSE = Message(
    "FindCoordinatorResponse",
    api_key=10,
    valid="0-6",
    flexible="3+",
    fields=(
        F("throttle_time_ms", "int32", "1+"),
        F("error_code", "int16", "0-3"),
        F("error_message", "string", "1-3", nullable="1-3"),
        F("node_id", "int32", "0-3"),
        F("host", "string", "0-3"),
        F("port", "int32", "0-3"),
        F(
            "coordinators",
            "[]",
            "4+",
            fields=(
                F("key", "string", "4+"),
                F("node_id", "int32", "4+"),
                F("host", "string", "4+"),
                F("port", "int32", "4+"),
                F("error_code", "int16", "4+"),
                F("error_message", "string", "4+", nullable="4+"),
            ),
        ),
    ),
)

API = register(ApiSpec(api_key=10, name="FindCoordinator", request=REQUEST, response=RESPONSE))
