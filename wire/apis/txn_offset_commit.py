"""TxnOffsetCommit: versions 0-5.

Request versions (Kafka's schema notes):
    Version 1 is the same as version 0.
    Version 2 adds the committed leader epoch.
    Version 3 adds the member.id, group.instance.id and generation.id.
    Version 4 adds support for new error code TRANSACTION_ABORTABLE (KIP-890).
    Version 5 is the same as version 4 (KIP-890). Note when TxnOffsetCommit requests are used
      in transaction, if transaction V2 (KIP_890 part 2) is enabled, the TxnOffsetCommit
      request will also include the function for a AddOffsetsToTxn call. If V2 is disabled,
      the client can't use TxnOffsetCommit request version higher than 4 within a
      transaction.

Response versions:
    Starting in version 1, on quota violation, brokers send out responses before throttling.
    Version 2 is the same as version 1.
    Version 3 adds illegal generation, fenced instance id, and unknown member id errors.
    Version 4 adds support for new error code TRANSACTION_ABORTABLE (KIP-890).
    Version 5 is the same with version 3 (KIP-890).
"""

from __future__ import annotations

from wire.fields import Field as F
from wire.fields import Message
from wire.registry import ApiSpec, register

REQUEST = Message(
    "TxnOffsetCommitRequest",
    api_key=28,
    valid="0-5",
    flexible="3+",
    fields=(
        F("transactional_id", "string", "0+"),
        F("group_id", "string", "0+"),
        F("producer_id", "int64", "0+"),
        F("producer_epoch", "int16", "0+"),
        F("generation_id", "int32", "3+", default=-1),
        F("member_id", "string", "3+", default=""),
        F("group_instance_id", "string", "3+", nullable="3+", default="null"),
        F(
            "topics",
            "[]",
            "0+",
            fields=(
                F("name", "string", "0+"),
                F(
                    "partitions",
                    "[]",
                    "0+",
                    fields=(
                        F("partition_index", "int32", "0+"),
                        F("committed_offset", "int64", "0+"),
                        F("committed_leader_epoch", "int32", "2+", default=-1),
                        F("committed_metadata", "string", "0+", nullable="0+"),
                    ),
                ),
            ),
        ),
    ),
)

RESPONSE = Message(
    "TxnOffsetCommitResponse",
    api_key=28,
    valid="0-5",
    flexible="3+",
    fields=(
        F("throttle_time_ms", "int32", "0+"),
        F(
            "topics",
            "[]",
            "0+",
            fields=(
                F("name", "string", "0+"),
                F(
                    "partitions",
                    "[]",
                    "0+",
                    fields=(
                        F("partition_index", "int32", "0+"),
                        F("error_code", "int16", "0+"),
                    ),
                ),
            ),
        ),
    ),
)

API = register(ApiSpec(api_key=28, name="TxnOffsetCommit", request=REQUEST, response=RESPONSE))
