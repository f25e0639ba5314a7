"""ListConfigResources: versions 0-1 (KIP-1142; key 74, formerly
ListClientMetricsResources).

Request versions (Kafka's schema notes):
    Version 0 is used as ListClientMetricsResourcesRequest which only lists client
    metrics resources.
    Version 1 adds ResourceTypes field (KIP-1142). If there is no specified
    ResourceTypes, it should return all configuration resources.

Response versions:
    Version 0 is used as ListClientMetricsResourcesResponse which returns all client
    metrics resources.
    Version 1 adds ResourceType to ConfigResources (KIP-1142); its default, 16, is
    CLIENT_METRICS.
"""

from __future__ import annotations

from wire.fields import Field as F
from wire.fields import Message
from wire.registry import ApiSpec, register

REQUEST = Message(
    "ListConfigResourcesRequest",
    api_key=74,
    valid="0-1",
    flexible="0+",
    fields=(
        F("resource_types", "[]int8", "1+"),
    ),
)

RESPONSE = Message(
    "ListConfigResourcesResponse",
    api_key=74,
    valid="0-1",
    flexible="0+",
    fields=(
        F("throttle_time_ms", "int32", "0+"),
        F("error_code", "int16", "0+"),
        F("config_resources", "[]", "0+", fields=(
            F("resource_name", "string", "0+"),
            F("resource_type", "int8", "1+", default=16),
        )),
    ),
)

API = register(ApiSpec(api_key=74, name="ListConfigResources", request=REQUEST, response=RESPONSE))

