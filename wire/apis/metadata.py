"""Metadata: versions 0-13.

Request versions (Kafka's schema notes):
    In version 0, an empty array indicates "request metadata for all topics."  In version 1 and
    higher, an empty array indicates "request metadata for no topics," and a null array is
      used to
    indicate "request metadata for all topics."
    Version 2 and 3 are the same as version 1.
    Version 4 adds AllowAutoTopicCreation.
    Starting in version 8, authorized operations can be requested for cluster and topic
      resource.
    Version 9 is the first flexible version.
    Version 10 adds topicId and allows name field to be null. However, this functionality
      was not implemented on the server.
    Versions 10 and 11 should not use the topicId field or set topic name to null.
    Version 11 deprecates IncludeClusterAuthorizedOperations field. This is now exposed
    by the DescribeCluster API (KIP-700).
    Version 12 supports topic Id.
    Version 13 supports top-level error code in the response.

Response versions:
    Version 1 adds fields for the rack of each broker, the controller id, and whether or not
      the topic is internal.
    Version 2 adds the cluster ID field.
    Version 3 adds the throttle time.
    Version 4 is the same as version 3.
    Version 5 adds a per-partition offline_replicas field. This field specifies
    the list of replicas that are offline.
    Starting in version 6, on quota violation, brokers send out responses before throttling.
    Version 7 adds the leader epoch to the partition metadata.
    Starting in version 8, brokers can send authorized operations for topic and cluster.
    Version 9 is the first flexible version.
    Version 10 adds topicId.
    Version 11 deprecates ClusterAuthorizedOperations. This is now exposed
    by the DescribeCluster API (KIP-700).
    Version 12 supports topicId.
    Version 13 supports top-level error code in the response.
"""

from __future__ import annotations

from wire.fields import Field as F
from wire.fields import Message
from wire.registry import ApiSpec, register

REQUEST = Message(
    "MetadataRequest",
    api_key=3,
    valid="0-13",
    flexible="9+",
    fields=(
        F(
            "topics",
            "[]",
            "0+",
            nullable="1+",
            fields=(
                F("topic_id", "uuid", "10+"),
                F("name", "string", "0+", nullable="10+"),
            ),
        ),
        F("allow_auto_topic_creation", "bool", "4+", default=True),
        F("include_cluster_authorized_operations", "bool", "8-10"),
        F("include_topic_authorized_operations", "bool", "8+"),
    ),
)

RESPONSE = Message(
    "MetadataResponse",
    api_key=3,
    valid="0-13",
    flexible="9+",
    fields=(
        F("throttle_time_ms", "int32", "3+"),
        F(
            "brokers",
            "[]",
            "0+",
            fields=(
                F("node_id", "int32", "0+"),
                F("host", "string", "0+"),
                F("port", "int32", "0+"),
                F("rack", "string", "1+", nullable="1+", default="null"),
            ),
        ),
        F("cluster_id", "string", "2+", nullable="2+", default="null"),
        F("controller_id", "int32", "1+", default=-1),
        F(
            "topics",
            "[]",
            "0+",
            fields=(
                F("error_code", "int16", "0+"),
                F("name", "string", "0+", nullable="12+"),
                F("topic_id", "uuid", "10+"),
                F("is_internal", "bool", "1+", default=False),
                F(
                    "partitions",
                    "[]",
                    "0+",
                    fields=(
                        F("error_code", "int16", "0+"),
                        F("partition_index", "int32", "0+"),
                        F("leader_id", "int32", "0+"),
                        F("leader_epoch", "int32", "7+", default=-1),
                        F("replica_nodes", "[]int32", "0+"),
                        F("isr_nodes", "[]int32", "0+"),
                        F("offline_replicas", "[]int32", "5+"),
                    ),
                ),
                F("topic_authorized_operations", "int32", "8+", default=-2147483648),
            ),
        ),
        F("cluster_authorized_operations", "int32", "8-10", default=-2147483648),
        F("error_code", "int16", "13+"),
    ),
)

API = register(ApiSpec(api_key=3, name="Metadata", request=REQUEST, response=RESPONSE))
