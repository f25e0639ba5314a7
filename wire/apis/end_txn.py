"""EndTxn: versions 0-5.

Request versions (Kafka's schema notes):
    Version 1 is the same as version 0.
    Version 2 adds the support for new error code PRODUCER_FENCED.
    Version 3 enables flexible versions.
    Version 4 adds support for new error code TRANSACTION_ABORTABLE (KIP-890).
    Version 5 enables bumping epoch on every transaction (KIP-890 Part 2)

Response versions:
    Starting in version 1, on quota violation, brokers send out responses before throttling.
    Version 2 adds the support for new error code PRODUCER_FENCED.
    Version 3 enables flexible versions.
    Version 4 adds support for new error code TRANSACTION_ABORTABLE (KIP-890).
    Version 5 enables bumping epoch on every transaction (KIP-890 Part 2), so producer ID and
      epoch are included in the response.
"""

from __future__ import annotations

from wire.fields import Field as F
from wire.fields import Message
from wire.registry import ApiSpec, register

REQUEST = Message(
    "EndTxnRequest",
    api_key=26,
    valid="0-5",
    flexible="3+",
    fields=(
        F("transactional_id", "string", "0+"),
        F("producer_id", "int64", "0+"),
        F("producer_epoch", "int16", "0+"),
        F("committed", "bool", "0+"),
    ),
)

RESPONSE = Message(
    "EndTxnResponse",
    api_key=26,
    valid="0-5",
    flexible="3+",
    fields=(
        F("throttle_time_ms", "int32", "0+"),
        F("error_code", "int16", "0+"),
        F("producer_id", "int64", "5+", default=-1),
        F("producer_epoch", "int16", "5+", default=-1),
    ),
)

API = register(ApiSpec(api_key=26, name="EndTxn", request=REQUEST, response=RESPONSE))
