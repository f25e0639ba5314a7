"""AlterConfigs: versions 0-2.

Request versions (Kafka's schema notes):
    Version 1 is the same as version 0.
    Version 2 enables flexible versions.

Response versions:
    Starting in version 1, on quota violation brokers send out responses before
    throttling.
    Version 2 enables flexible versions.
"""

from __future__ import annotations

from wire.fields import Field as F
from wire.fields import Message
from wire.registry import ApiSpec, register

REQUEST = Message(
    "AlterConfigsRequest",
    api_key=33,
    valid="0-2",
    flexible="2+",
    fields=(
        F("resources", "[]", "0+", fields=(
            F("resource_type", "int8", "0+"),
            F("resource_name", "string", "0+"),
            F("configs", "[]", "0+", fields=(
                F("name", "string", "0+"),
                F("value", "string", "0+", nullable="0+"),
            )),
        )),
        F("validate_only", "bool", "0+"),
    ),
)

RESPONSE = Message(
    "AlterConfigsResponse",
    api_key=33,
    valid="0-2",
    flexible="2+",
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

API = register(ApiSpec(api_key=33, name="AlterConfigs", request=REQUEST, response=RESPONSE))

