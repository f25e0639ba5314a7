"""Produce: versions 3-13.

Request versions (Kafka's schema notes):
    Versions 0-2 were removed in Apache Kafka 4.0, version 3 is the new baseline. Due to a
      bug in librdkafka,
    these versions have to be included in the api versions response (see KAFKA-18659), but
      are rejected otherwise.
    See `ApiKeys.PRODUCE_API_VERSIONS_RESPONSE_MIN_VERSION` for more details.
    Version 1 and 2 are the same as version 0.
    Version 3 adds the transactional ID, which is used for authorization when attempting to
      write
    transactional data.  Version 3 also adds support for Kafka Message Format v2.
    Version 4 is the same as version 3, but the requester must be prepared to handle a
    KAFKA_STORAGE_ERROR.
    Version 5 and 6 are the same as version 3.
    Starting in version 7, records can be produced using ZStandard compression.  See KIP-110.
    Starting in Version 8, response has RecordErrors and ErrorMessage. See KIP-467.
    Version 9 enables flexible versions.
    Version 10 is the same as version 9 (KIP-951).
    Version 11 adds support for new error code TRANSACTION_ABORTABLE (KIP-890).
    Version 12 is the same as version 11 (KIP-890). Note when produce requests are used in
      transaction, if
    transaction V2 (KIP_890 part 2) is enabled, the produce request will also include the
      function for a
    AddPartitionsToTxn call. If V2 is disabled, the client can't use produce request version
      higher than 11 within
    a transaction.
    Version 13 replaces topic names with topic IDs (KIP-516). May return UNKNOWN_TOPIC_ID
      error code.

Response versions:
    Versions 0-2 were removed in Apache Kafka 4.0, version 3 is the new baseline. Due to a
      bug in librdkafka,
    these versions have to be included in the api versions response (see KAFKA-18659), but
      are rejected otherwise.
    See `ApiKeys.PRODUCE_API_VERSIONS_RESPONSE_MIN_VERSION` for more details.
    Version 1 added the throttle time.
    Version 2 added the log append time.
    Version 3 is the same as version 2.
    Version 4 added KAFKA_STORAGE_ERROR as a possible error code.
    Version 5 added LogStartOffset to filter out spurious OutOfOrderSequenceExceptions on
      the client.
    Version 8 added RecordErrors and ErrorMessage to include information about
    records that cause the whole batch to be dropped.  See KIP-467 for details.
    Version 9 enables flexible versions.
    Version 10 adds 'CurrentLeader' and 'NodeEndpoints' as tagged fields (KIP-951)
    Version 11 adds support for new error code TRANSACTION_ABORTABLE (KIP-890).
    Version 12 is the same as version 10 (KIP-890).
    Version 13 replaces topic names with topic IDs (KIP-516). May return UNKNOWN_TOPIC_ID
      error code.
"""

from __future__ import annotations

from wire.fields import Field as F
from wire.fields import Message
from wire.registry import ApiSpec, register

REQUEST = Message(
    "ProduceRequest",
    api_key=0,
    valid="3-13",
    flexible="9+",
    fields=(
        F("transactional_id", "string", "3+", nullable="3+", default="null"),
        F("acks", "int16", "0+"),
        F("timeout_ms", "int32", "0+"),
        F(
            "topic_data",
            "[]",
            "0+",
            fields=(
                F("name", "string", "0-12"),
                F("topic_id", "uuid", "13+"),
                F(
                    "partition_data",
                    "[]",
                    "0+",
                    fields=(
                        F("index", "int32", "0+"),
                        F("records", "records", "0+", nullable="0+"),
                    ),
                ),
            ),
        ),
    ),
)

RESPONSE = Message(
    "ProduceResponse",
    api_key=0,
    valid="3-13",
    flexible="9+",
    fields=(
        F(
            "responses",
            "[]",
            "0+",
            fields=(
                F("name", "string", "0-12"),
                F("topic_id", "uuid", "13+"),
                F(
                    "partition_responses",
                    "[]",
                    "0+",
                    fields=(
                        F("index", "int32", "0+"),
                        F("error_code", "int16", "0+"),
                        F("base_offset", "int64", "0+"),
                        F("log_append_time_ms", "int64", "2+", default=-1),
                        F("log_start_offset", "int64", "5+", default=-1),
                        F(
                            "record_errors",
                            "[]",
                            "8+",
                            fields=(
                                F("batch_index", "int32", "8+"),
                                F(
                                    "batch_index_error_message",
                                    "string",
                                    "8+",
                                    nullable="8+",
                                    default="null",
                                ),
                            ),
                        ),
                        F("error_message", "string", "8+", nullable="8+", default="null"),
                        F(
                            "current_leader",
                            "struct",
                            "10+",
                            tag=0,
                            tagged="10+",
                            fields=(
                                F("leader_id", "int32", "10+", default=-1),
                                F("leader_epoch", "int32", "10+", default=-1),
                            ),
                        ),
                    ),
                ),
            ),
        ),
        F("throttle_time_ms", "int32", "1+", default=0),
        F(
            "node_endpoints",
            "[]",
            "10+",
            tag=0,
            tagged="10+",
            fields=(
                F("node_id", "int32", "10+"),
                F("host", "string", "10+"),
                F("port", "int32", "10+"),
                F("rack", "string", "10+", nullable="10+", default="null"),
            ),
        ),
    ),
)

API = register(ApiSpec(api_key=0, name="Produce", request=REQUEST, response=RESPONSE))
