"""IncrementalAlterConfigs: versions 0-1 (KIP-339).

Request versions (Kafka's schema notes):
    Version 1 is the first flexible version.

Response versions:
    Version 1 is the first flexible version.

Each config carries its operation: 0 SET, 1 DELETE, 2 APPEND, 3 SUBTRACT
(``wire.constants.AlterConfigOpType``).
"""

from __future__ import annotations

from wire.fields import Field as F
from wire.fields import Message
from wire.registry import ApiSpec, register

REQUEST = Message(
    "IncrementalAlterConfigsRequest",
    api_key=44,
    valid="0-1",
    flexible="1+",
    fields=(
        F("resources", "[]", "0+", fields=(
            F("resource_type", "int8", "0+"),
            F("resource_name", "string", "0+"),
            F("configs", "[]", "0+", fields=(
                F("name", "string", "0+"),
                F("config_operation", "int8", "0+"),
                F("value", "string", "0+", nullable="0+"),
            )),
        )),
        F("validate_only", "bool", "0+"),
    ),
)

RESPONSE = Message(
    "IncrementalAlterConfigsResponse",
    api_key=44,
    valid="0-1",
    flexible="1+",
    fields=(
        F("throttle_time_ms", "int32", "0+"),
        F("responses", "[]", "0+", fields=(
            F("error_code", "int16", "0+"),
            F("error_message", "string", "0+", nullable="0+"),
            F("resource_type", "int8", "0+"),
            F("resource_name", "string", "0+"),
        )),
    ),
)

API = register(
    ApiSpec(api_key=44, name="IncrementalAlterConfigs", request=REQUEST, response=RESPONSE)
)

