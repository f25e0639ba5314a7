"""DescribeTransactions: versions 0-0.

Request versions (Kafka's schema notes):

Response versions:
"""

from __future__ import annotations

from wire.fields import Field as F
from wire.fields import Message
from wire.registry import ApiSpec, register

REQUEST = Message(
    "DescribeTransactionsRequest",
    api_key=65,
    valid="0",
    flexible="0+",
    fields=(F("transactional_ids", "[]string", "0+"),),
)

RESPONSE = Message(
    "DescribeTransactionsResponse",
    api_key=65,
    valid="0",
    flexible="0+",
    fields=(
        F("throttle_time_ms", "int32", "0+"),
        F(
            "transaction_states",
            "[]",
            "0+",
            fields=(
                F("error_code", "int16", "0+"),
                F("transactional_id", "string", "0+"),
                F("transaction_state", "string", "0+"),
                F("transaction_timeout_ms", "int32", "0+"),
                F("transaction_start_time_ms", "int64", "0+", default=-1),
                F("producer_id", "int64", "0+"),
                F("producer_epoch", "int16", "0+"),
                F(
                    "topics",
                    "[]",
                    "0+",
                    fields=(
                        F("topic", "string", "0+"),
                        F("partitions", "[]int32", "0+"),
                    ),
                ),
            ),
        ),
    ),
)

API = register(
    ApiSpec(api_key=65, name="DescribeTransactions", request=REQUEST, response=RESPONSE)
)
