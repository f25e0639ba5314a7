"""DescribeClientQuotas: versions 0-1 (KIP-546).

Request versions (Kafka's schema notes):
    Version 1 enables flexible versions.

Response versions:
    Version 1 enables flexible versions.

Quota values are float64.
"""

from __future__ import annotations

from wire.fields import Field as F
from wire.fields import Message
from wire.registry import ApiSpec, register

REQUEST = Message(
    "DescribeClientQuotasRequest",
    api_key=48,
    valid="0-1",
    flexible="1+",
    fields=(
        F("components", "[]", "0+", fields=(
            F("entity_type", "string", "0+"),
            F("match_type", "int8", "0+"),
            F("match", "string", "0+", nullable="0+"),
        )),
        F("strict", "bool", "0+"),
    ),
)

RESPONSE = Message(
    "DescribeClientQuotasResponse",
    api_key=48,
    valid="0-1",
    flexible="1+",
    fields=(
        F("throttle_time_ms", "int32", "0+"),
        F("error_code", "int16", "0+"),
        F("error_message", "string", "0+", nullable="0+"),
        F("entries", "[]", "0+", nullable="0+", fields=(
            F("entity", "[]", "0+", fields=(
                F("entity_type", "string", "0+"),
                F("entity_name", "string", "0+", nullable="0+"),
            )),
            F("values", "[]", "0+", fields=(
                F("key", "string", "0+"),
                F("value", "float64", "0+"),
            )),
        )),
    ),
)

API = register(ApiSpec(api_key=48, name="DescribeClientQuotas", request=REQUEST, response=RESPONSE))

