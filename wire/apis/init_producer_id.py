"""InitProducerId: versions 0-5.

Request versions (Kafka's schema notes):
    Version 1 is the same as version 0.
    Version 2 is the first flexible version.
    Version 3 adds ProducerId and ProducerEpoch, allowing producers to try to resume after
      an INVALID_PRODUCER_EPOCH error
    Version 4 adds the support for new error code PRODUCER_FENCED.
    Version 5 adds support for new error code TRANSACTION_ABORTABLE (KIP-890).
    Version 6 adds support for 2PC (KIP-939).

Response versions:
    Starting in version 1, on quota violation, brokers send out responses before throttling.
    Version 2 is the first flexible version.
    Version 3 is the same as version 2.
    Version 4 adds the support for new error code PRODUCER_FENCED.
    Version 5 adds support for new error code TRANSACTION_ABORTABLE (KIP-890).
    Version 6 adds support for 2PC (KIP-939).
"""

from __future__ import annotations

from wire.fields import Field as F
from wire.fields import Message
from wire.registry import ApiSpec, register

REQUEST = Message(
    "InitProducerIdRequest",
    api_key=22,
    valid="0-5",
    flexible="2+",
    fields=(
        F("transactional_id", "string", "0+", nullable="0+"),
        F("transaction_timeout_ms", "int32", "0+"),
        F("producer_id", "int64", "3+", default=-1),
        F("producer_epoch", "int16", "3+", default=-1),
        F("enable2_pc", "bool", "6+", default=False),
        F("keep_prepared_txn", "bool", "6+", default=False),
    ),
)

RESPONSE = Message(
    "InitProducerIdResponse",
    api_key=22,
    valid="0-5",
    flexible="2+",
    fields=(
        F("throttle_time_ms", "int32", "0+"),
        F("error_code", "int16", "0+"),
        F("producer_id", "int64", "0+", default=-1),
        F("producer_epoch", "int16", "0+"),
        F("ongoing_txn_producer_id", "int64", "6+", default=-1),
        F("ongoing_txn_producer_epoch", "int16", "6+", default=-1),
    ),
)

API = register(ApiSpec(api_key=22, name="InitProducerId", request=REQUEST, response=RESPONSE))
