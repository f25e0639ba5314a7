"""AddPartitionsToTxn: versions 0-5.

Request versions (Kafka's schema notes):
    Version 1 is the same as version 0.
    Version 2 adds the support for new error code PRODUCER_FENCED.
    Version 3 enables flexible versions.
    Version 4 adds VerifyOnly field to check if partitions are already in transaction and
      adds support to batch multiple transactions. Versions 3 and below will be exclusively
      used by clients and versions 4 and above will be used by brokers.
    Version 5 adds support for new error code TRANSACTION_ABORTABLE (KIP-890).

Response versions:
    Starting in version 1, on quota violation brokers send out responses before throttling.
    Version 2 adds the support for new error code PRODUCER_FENCED.
    Version 3 enables flexible versions.
    Version 4 adds support to batch multiple transactions and a top level error code.
    Version 5 adds support for new error code TRANSACTION_ABORTABLE (KIP-890).
"""

from __future__ import annotations

from wire.fields import Field as F
from wire.fields import Message
from wire.registry import ApiSpec, register

# Kafka's commonStructs: the same topic and topic result in the v4+ batched form and the
# v0-3 client form.
_TOPIC = (
    F("name", "string", "0+"),
    F("partitions", "[]int32", "0+"),
)
_TOPIC_RESULT = (
    F("name", "string", "0+"),
    F(
        "results_by_partition",
        "[]",
        "0+",
        fields=(
            F("partition_index", "int32", "0+"),
            F("partition_error_code", "int16", "0+"),
        ),
    ),
)

REQUEST = Message(
    "AddPartitionsToTxnRequest",
    api_key=24,
    valid="0-5",
    flexible="3+",
    fields=(
        F(
            "transactions",
            "[]",
            "4+",
            fields=(
                F("transactional_id", "string", "4+"),
                F("producer_id", "int64", "4+"),
                F("producer_epoch", "int16", "4+"),
                F("verify_only", "bool", "4+", default=False),
                F(
                    "topics",
                    "[]",
                    "4+",
                    fields=_TOPIC,
                ),
            ),
        ),
        F("v3_and_below_transactional_id", "string", "0-3"),
        F("v3_and_below_producer_id", "int64", "0-3"),
        F("v3_and_below_producer_epoch", "int16", "0-3"),
        F(
            "v3_and_below_topics",
            "[]",
            "0-3",
            fields=_TOPIC,
        ),
    ),
)

RESPONSE = Message(
    "AddPartitionsToTxnResponse",
    api_key=24,
    valid="0-5",
    flexible="3+",
    fields=(
        F("throttle_time_ms", "int32", "0+"),
        F("error_code", "int16", "4+", default=0),
        F(
            "results_by_transaction",
            "[]",
            "4+",
            fields=(
                F("transactional_id", "string", "4+"),
                F(
                    "topic_results",
                    "[]",
                    "4+",
                    fields=_TOPIC_RESULT,
                ),
            ),
        ),
        F(
            "results_by_topic_v3_and_below",
            "[]",
            "0-3",
            fields=_TOPIC_RESULT,
        ),
    ),
)

API = register(ApiSpec(api_key=24, name="AddPartitionsToTxn", request=REQUEST, response=RESPONSE))
