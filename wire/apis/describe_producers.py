"""DescribeProducers: version 0 (KIP-664), flexible.

Request: the topics and partitions whose active producers to describe.

Response: per partition the active producers: id, epoch, last sequence, last timestamp,
coordinator epoch and the start offset of the ongoing transaction (-1 for none).
"""

from __future__ import annotations

from wire.fields import Field as F
from wire.fields import Message
from wire.registry import ApiSpec, register

REQUEST = Message(
    "DescribeProducersRequest",
    api_key=61,
    valid="0",
    flexible="0+",
    fields=(
        F("topics", "[]", "0+", fields=(
            F("name", "string", "0+"),
            F("partition_indexes", "[]int32", "0+"),
        )),
    ),
)

RESPONSE = Message(
    "DescribeProducersResponse",
    api_key=61,
    valid="0",
    flexible="0+",
    fields=(
        F("throttle_time_ms", "int32", "0+"),
        F("topics", "[]", "0+", fields=(
            F("name", "string", "0+"),
            F("partitions", "[]", "0+", fields=(
                F("partition_index", "int32", "0+"),
                F("error_code", "int16", "0+"),
                F("error_message", "string", "0+", nullable="0+", default="null"),
                F("active_producers", "[]", "0+", fields=(
                    F("producer_id", "int64", "0+"),
                    F("producer_epoch", "int32", "0+"),
                    F("last_sequence", "int32", "0+", default=-1),
                    F("last_timestamp", "int64", "0+", default=-1),
                    F("coordinator_epoch", "int32", "0+"),
                    F("current_txn_start_offset", "int64", "0+", default=-1),
                )),
            )),
        )),
    ),
)

API = register(ApiSpec(api_key=61, name="DescribeProducers", request=REQUEST, response=RESPONSE))

