"""ListTransactions: versions 0-1.

Request versions (Kafka's schema notes):
    Version 1: adds DurationFilter to list transactions older than specified duration

Response versions:
    Version 1 is the same as version 0 (KIP-994).
"""

from __future__ import annotations

from wire.fields import Field as F
from wire.fields import Message
from wire.registry import ApiSpec, register

REQUEST = Message(
    "ListTransactionsRequest",
    api_key=66,
    valid="0-1",
    flexible="0+",
    fields=(
        F("state_filters", "[]string", "0+"),
        F("producer_id_filters", "[]int64", "0+"),
        F("duration_filter", "int64", "1+", default=-1),
    ),
)

RESPONSE = Message(
    "ListTransactionsResponse",
    api_key=66,
    valid="0-1",
    flexible="0+",
    fields=(
        F("throttle_time_ms", "int32", "0+"),
        F("error_code", "int16", "0+"),
        F("unknown_state_filters", "[]string", "0+"),
        F(
            "transaction_states",
            "[]",
            "0+",
            fields=(
                F("transactional_id", "string", "0+"),
                F("producer_id", "int64", "0+"),
                F("transaction_state", "string", "0+"),
            ),
        ),
    ),
)

API = register(ApiSpec(api_key=66, name="ListTransactions", request=REQUEST, response=RESPONSE))
