"""CreateAcls: versions 1-3.

Request versions (Kafka's schema notes):
    Version 0 was removed in Apache Kafka 4.0, Version 1 is the new baseline.
    Version 1 adds resource pattern type.
    Version 2 enables flexible versions.
    Version 3 adds user resource type.

Response versions:
    Version 0 was removed in Apache Kafka 4.0, Version 1 is the new baseline.
    Starting in version 1, on quota violation, brokers send out responses before throttling.
    Version 2 enables flexible versions.
    Version 3 adds user resource type.
"""

from __future__ import annotations

from wire.fields import Field as F
from wire.fields import Message
from wire.registry import ApiSpec, register

REQUEST = Message(
    "CreateAclsRequest",
    api_key=30,
    valid="1-3",
    flexible="2+",
    fields=(
        F("creations", "[]", "0+", fields=(
            F("resource_type", "int8", "0+"),
            F("resource_name", "string", "0+"),
            F("resource_pattern_type", "int8", "1+", default=3),
            F("principal", "string", "0+"),
            F("host", "string", "0+"),
            F("operation", "int8", "0+"),
            F("permission_type", "int8", "0+"),
        )),
    ),
)

RESPONSE = Message(
    "CreateAclsResponse",
    api_key=30,
    valid="1-3",
    flexible="2+",
    fields=(
        F("throttle_time_ms", "int32", "0+"),
        F("results", "[]", "0+", fields=(
            F("error_code", "int16", "0+"),
            F("error_message", "string", "0+", nullable="0+"),
        )),
    ),
)

API = register(ApiSpec(api_key=30, name="CreateAcls", request=REQUEST, response=RESPONSE))

