"""AddOffsetsToTxn: versions 0-4.

Request versions (Kafka's schema notes):
    Version 1 is the same as version 0.
    Version 2 adds the support for new error code PRODUCER_FENCED.
    Version 3 enables flexible versions.
    Version 4 adds support for new error code TRANSACTION_ABORTABLE (KIP-890).

Response versions:
    Starting in version 1, on quota violation brokers send out responses before throttling.
    Version 2 adds the support for new error code PRODUCER_FENCED.
    Version 3 enables flexible versions.
    Version 4 adds support for new error code TRANSACTION_ABORTABLE (KIP-890).
"""

from __future__ import annotations

from wire.fields import Field as F
from wire.fields import Message
from wire.registry import ApiSpec, register

REQUEST = Message(
    "AddOffsetsToTxnRequest",
    api_key=25,
    valid="0-4",
    flexible="3+",
    fields=(
        F("transactional_id", "string", "0+"),
        F("producer_id", "int64", "0+"),
        F("producer_epoch", "int16", "0+"),
        F("group_id", "string", "0+"),
    ),
)

RESPONSE = Message(
    "AddOffsetsToTxnResponse",
    api_key=25,
    valid="0-4",
    flexible="3+",
    fields=(
        F("throttle_time_ms", "int32", "0+"),
        F("error_code", "int16", "0+"),
    ),
)

API = register(ApiSpec(api_key=25, name="AddOffsetsToTxn", request=REQUEST, response=RESPONSE))
