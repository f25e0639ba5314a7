"""Fetch: versions 4-18.

Request versions (Kafka's schema notes):
    Versions 0-3 were removed in Apache Kafka 4.0, Version 4 is the new baseline.
    Version 1 is the same as version 0.
    Starting in Version 2, the requester must be able to handle Kafka Log
    Message format version 1.
    Version 3 adds MaxBytes.  Starting in version 3, the partition ordering in
    the request is now relevant.  Partitions will be processed in the order
    they appear in the request.
    Version 4 adds IsolationLevel.  Starting in version 4, the requestor must be
    able to handle Kafka log message format version 2.
    Version 5 adds LogStartOffset to indicate the earliest available offset of
    partition data that can be consumed.
    Version 6 is the same as version 5.
    Version 7 adds incremental fetch request support.
    Version 8 is the same as version 7.
    Version 9 adds CurrentLeaderEpoch, as described in KIP-320.
    Version 10 indicates that we can use the ZStd compression algorithm, as
    described in KIP-110.
    Version 12 adds flexible versions support as well as epoch validation through
    the `LastFetchedEpoch` field
    Version 13 replaces topic names with topic IDs (KIP-516). May return UNKNOWN_TOPIC_ID
      error code.
    Version 14 is the same as version 13 but it also receives a new error called
      OffsetMovedToTieredStorageException(KIP-405)
    Version 15 adds the ReplicaState which includes new field ReplicaEpoch and the
      ReplicaId. Also,
    deprecate the old ReplicaId field and set its default value to -1. (KIP-903)
    Version 16 is the same as version 15 (KIP-951).
    Version 17 adds directory id support from KIP-853
    Version 18 adds high-watermark from KIP-1166

Response versions:
    Versions 0-3 were removed in Apache Kafka 4.0, Version 4 is the new baseline.
    Version 1 adds throttle time. Version 2 and 3 are the same as version 1.
    Version 4 adds features for transactional consumption.
    Version 5 adds LogStartOffset to indicate the earliest available offset of
    partition data that can be consumed.
    Starting in version 6, we may return KAFKA_STORAGE_ERROR as an error code.
    Version 7 adds incremental fetch request support.
    Starting in version 8, on quota violation, brokers send out responses before throttling.
    Version 9 is the same as version 8.
    Version 10 indicates that the response data can use the ZStd compression
    algorithm, as described in KIP-110.
    Version 12 adds support for flexible versions, epoch detection through the
      `TruncationOffset` field,
    and leader discovery through the `CurrentLeader` field
    Version 13 replaces the topic name field with topic ID (KIP-516).
    Version 14 is the same as version 13 but it also receives a new error called
      OffsetMovedToTieredStorageException (KIP-405)
    Version 15 is the same as version 14 (KIP-903).
    Version 16 adds the 'NodeEndpoints' field (KIP-951).
    Version 17 no changes to the response (KIP-853).
    Version 18 no changes to the response (KIP-1166)
"""

from __future__ import annotations

from wire.fields import Field as F
from wire.fields import Message
from wire.registry import ApiSpec, register

REQUEST = Message(
    "FetchRequest",
    api_key=1,
    valid="4-18",
    flexible="12+",
    fields=(
        F("cluster_id", "string", "12+", nullable="12+", default="null", tag=0, tagged="12+"),
        F("replica_id", "int32", "0-14", default=-1),
        F(
            "replica_state",
            "struct",
            "15+",
            tag=1,
            tagged="15+",
            fields=(
                F("replica_id", "int32", "15+", default=-1),
                F("replica_epoch", "int64", "15+", default=-1),
            ),
        ),
        F("max_wait_ms", "int32", "0+"),
        F("min_bytes", "int32", "0+"),
        F("max_bytes", "int32", "3+", default=2147483647),
        F("isolation_level", "int8", "4+", default=0),
        F("session_id", "int32", "7+", default=0),
        F("session_epoch", "int32", "7+", default=-1),
        F(
            "topics",
            "[]",
            "0+",
            fields=(
                F("topic", "string", "0-12"),
                F("topic_id", "uuid", "13+"),
                F(
                    "partitions",
                    "[]",
                    "0+",
                    fields=(
                        F("partition", "int32", "0+"),
                        F("current_leader_epoch", "int32", "9+", default=-1),
                        F("fetch_offset", "int64", "0+"),
                        F("last_fetched_epoch", "int32", "12+", default=-1),
                        F("log_start_offset", "int64", "5+", default=-1),
                        F("partition_max_bytes", "int32", "0+"),
                        F("replica_directory_id", "uuid", "17+", tag=0, tagged="17+"),
                        F(
                            "high_watermark",
                            "int64",
                            "18+",
                            default=9223372036854775807,
                            tag=1,
                            tagged="18+",
                        ),
                    ),
                ),
            ),
        ),
        F(
            "forgotten_topics_data",
            "[]",
            "7+",
            fields=(
                F("topic", "string", "7-12"),
                F("topic_id", "uuid", "13+"),
                F("partitions", "[]int32", "7+"),
            ),
        ),
        F("rack_id", "string", "11+", default=""),
    ),
)

RESPONSE = Message(
    "FetchResponse",
    api_key=1,
    valid="4-18",
    flexible="12+",
    fields=(
        F("throttle_time_ms", "int32", "1+"),
        F("error_code", "int16", "7+"),
        F("session_id", "int32", "7+", default=0),
        F(
            "responses",
            "[]",
            "0+",
            fields=(
                F("topic", "string", "0-12"),
                F("topic_id", "uuid", "13+"),
                F(
                    "partitions",
                    "[]",
                    "0+",
                    fields=(
                        F("partition_index", "int32", "0+"),
                        F("error_code", "int16", "0+"),
                        F("high_watermark", "int64", "0+"),
                        F("last_stable_offset", "int64", "4+", default=-1),
                        F("log_start_offset", "int64", "5+", default=-1),
                        F(
                            "diverging_epoch",
                            "struct",
                            "12+",
                            tag=0,
                            tagged="12+",
                            fields=(
                                F("epoch", "int32", "12+", default=-1),
                                F("end_offset", "int64", "12+", default=-1),
                            ),
                        ),
                        F(
                            "current_leader",
                            "struct",
                            "12+",
                            tag=1,
                            tagged="12+",
                            fields=(
                                F("leader_id", "int32", "12+", default=-1),
                                F("leader_epoch", "int32", "12+", default=-1),
                            ),
                        ),
                        F(
                            "snapshot_id",
                            "struct",
                            "12+",
                            tag=2,
                            tagged="12+",
                            fields=(
                                F("end_offset", "int64", "0+", default=-1),
                                F("epoch", "int32", "0+", default=-1),
                            ),
                        ),
                        F(
                            "aborted_transactions",
                            "[]",
                            "4+",
                            nullable="4+",
                            fields=(
                                F("producer_id", "int64", "4+"),
                                F("first_offset", "int64", "4+"),
                            ),
                        ),
                        F("preferred_read_replica", "int32", "11+", default=-1),
                        F("records", "records", "0+", nullable="0+"),
                    ),
                ),
            ),
        ),
        F(
            "node_endpoints",
            "[]",
            "16+",
            tag=0,
            tagged="16+",
            fields=(
                F("node_id", "int32", "16+"),
                F("host", "string", "16+"),
                F("port", "int32", "16+"),
                F("rack", "string", "16+", nullable="16+", default="null"),
            ),
        ),
    ),
)

API = register(ApiSpec(api_key=1, name="Fetch", request=REQUEST, response=RESPONSE))
