"""AlterClientQuotas: versions 0-1 (KIP-546).

Request versions (Kafka's schema notes):
    Version 1 enables flexible versions.

Response versions:
    Version 1 enables flexible versions.

Quota values are float64; an op with ``remove`` true deletes the key.
"""

from __future__ import annotations

from wire.fields import Field as F
from wire.fields import Message
from wire.registry import ApiSpec, register

REQUEST = Message(
    "AlterClientQuotasRequest",
    api_key=49,
    valid="0-1",
    flexible="1+",
    fields=(
        F("entries", "[]", "0+", fields=(
            F("entity", "[]", "0+", fields=(
                F("entity_type", "string", "0+"),
                F("entity_name", "string", "0+", nullable="0+"),
            )),
            F("ops", "[]", "0+", fields=(
                F("key", "string", "0+"),
                F("value", "float64", "0+"),
                F("remove", "bool", "0+"),
            )),
        )),
        F("validate_only", "bool", "0+"),
    ),
)

RESPONSE = Message(
    "AlterClientQuotasResponse",
    api_key=49,
    valid="0-1",
    flexible="1+",
    fields=(
        F("throttle_time_ms", "int32", "0+"),
        F("entries", "[]", "0+", fields=(
            F("error_code", "int16", "0+"),
            F("error_message", "string", "0+", nullable="0+"),
            F("entity", "[]", "0+", fields=(
                F("entity_type", "string", "0+"),
                F("entity_name", "string", "0+", nullable="0+"),
            )),
        )),
    ),
)

API = register(ApiSpec(api_key=49, name="AlterClientQuotas", request=REQUEST, response=RESPONSE))

