"""DescribeCluster: versions 0-2.

Request versions (Kafka's schema notes):
    Version 1 adds EndpointType for KIP-919 support.
    Version 2 adds IncludeFencedBrokers for KIP-1073 support.

Response versions:
    Version 1 adds the EndpointType field, and makes MISMATCHED_ENDPOINT_TYPE and
    UNSUPPORTED_ENDPOINT_TYPE valid top-level response error codes.
    Version 2 adds IsFenced field to Brokers for KIP-1073 support.
"""

from __future__ import annotations

from wire.fields import Field as F
from wire.fields import Message
from wire.registry import ApiSpec, register

REQUEST = Message(
    "DescribeClusterRequest",
    api_key=60,
    valid="0-2",
    flexible="0+",
    fields=(
        F("include_cluster_authorized_operations", "bool", "0+"),
        F("endpoint_type", "int8", "1+", default=1),
        F("include_fenced_brokers", "bool", "2+", default=False),
    ),
)

RESPONSE = Message(
    "DescribeClusterResponse",
    api_key=60,
    valid="0-2",
    flexible="0+",
    fields=(
        F("throttle_time_ms", "int32", "0+"),
        F("error_code", "int16", "0+"),
        F("error_message", "string", "0+", nullable="0+", default="null"),
        F("endpoint_type", "int8", "1+", default=1),
        F("cluster_id", "string", "0+"),
        F("controller_id", "int32", "0+", default=-1),
        F("brokers", "[]", "0+", fields=(
            F("broker_id", "int32", "0+"),
            F("host", "string", "0+"),
            F("port", "int32", "0+"),
            F("rack", "string", "0+", nullable="0+", default="null"),
            F("is_fenced", "bool", "2+", default=False),
        )),
        F("cluster_authorized_operations", "int32", "0+", default=-2147483648),
    ),
)

API = register(ApiSpec(api_key=60, name="DescribeCluster", request=REQUEST, response=RESPONSE))

