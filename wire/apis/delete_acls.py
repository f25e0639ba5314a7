"""DeleteAcls: versions 1-3.

Request versions (Kafka's schema notes):
    Version 0 was removed in Apache Kafka 4.0, Version 1 is the new baseline.
    Version 1 adds the pattern type.
    Version 2 enables flexible versions.
    Version 3 adds the user resource type.

Response versions:
    Version 0 was removed in Apache Kafka 4.0, Version 1 is the new baseline.
    Version 1 adds the resource pattern type.
    Starting in version 1, on quota violation, brokers send out responses before throttling.
    Version 2 enables flexible versions.
    Version 3 adds the user resource type.
"""

from __future__ import annotations

from wire.fields import Field as F
from wire.fields import Message
from wire.registry import ApiSpec, register

REQUEST = Message(
    "DeleteAclsRequest",
    api_key=31,
    valid="1-3",
    flexible="2+",
    fields=(
        F("filters", "[]", "0+", fields=(
            F("resource_type_filter", "int8", "0+"),
            F("resource_name_filter", "string", "0+", nullable="0+"),
            F("pattern_type_filter", "int8", "1+", default=3),
            F("principal_filter", "string", "0+", nullable="0+"),
            F("host_filter", "string", "0+", nullable="0+"),
            F("operation", "int8", "0+"),
            F("permission_type", "int8", "0+"),
        )),
    ),
)

RESPONSE = Message(
    "DeleteAclsResponse",
    api_key=31,
    valid="1-3",
    flexible="2+",
    fields=(
        F("throttle_time_ms", "int32", "0+"),
        F("filter_results", "[]", "0+", fields=(
            F("error_code", "int16", "0+"),
            F("error_message", "string", "0+", nullable="0+"),
            F("matching_acls", "[]", "0+", fields=(
                F("error_code", "int16", "0+"),
                F("error_message", "string", "0+", nullable="0+"),
                F("resource_type", "int8", "0+"),
                F("resource_name", "string", "0+"),
                F("pattern_type", "int8", "1+", default=3),
                F("principal", "string", "0+"),
                F("host", "string", "0+"),
                F("operation", "int8", "0+"),
                F("permission_type", "int8", "0+"),
            )),
        )),
    ),
)

API = register(ApiSpec(api_key=31, name="DeleteAcls", request=REQUEST, response=RESPONSE))

