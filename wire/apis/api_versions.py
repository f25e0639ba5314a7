"""ApiVersions: versions 0-4.

Request versions (Kafka's schema notes):
    Versions 0 through 2 of ApiVersionsRequest are the same.
    Version 3 is the first flexible version and adds ClientSoftwareName and
      ClientSoftwareVersion.
    Version 4 fixes KAFKA-17011, which blocked SupportedFeatures.MinVersion in the response
      from being 0.

Response versions:
    Version 1 adds throttle time to the response.
    Starting in version 2, on quota violation, brokers send out responses before throttling.
    Version 3 is the first flexible version. Tagged fields are only supported in the body but
    not in the header. The length of the header must not change in order to guarantee the
    backward compatibility.
    Starting from Apache Kafka 2.4 (KIP-511), ApiKeys field is populated with the supported
    versions of the ApiVersionsRequest when an UNSUPPORTED_VERSION error is returned.
    Version 4 fixes KAFKA-17011, which blocked SupportedFeatures.MinVersion from being 0.
"""

from __future__ import annotations

from wire.fields import Field as F
from wire.fields import Message
from wire.registry import ApiSpec, register

REQUEST = Message(
    "ApiVersionsRequest",
    api_key=18,
    valid="0-4",
    flexible="3+",
    fields=(
        F("client_software_name", "string", "3+"),
        F("client_software_version", "string", "3+"),
    ),
)

RESPONSE = Message(
    "ApiVersionsResponse",
    api_key=18,
    valid="0-4",
    flexible="3+",
    fields=(
        F("error_code", "int16", "0+"),
        F(
            "api_keys",
            "[]",
            "0+",
            fields=(
                F("api_key", "int16", "0+"),
                F("min_version", "int16", "0+"),
                F("max_version", "int16", "0+"),
            ),
        ),
        F("throttle_time_ms", "int32", "1+"),
        F(
            "supported_features",
            "[]",
            "3+",
            tag=0,
            tagged="3+",
            fields=(
                F("name", "string", "3+"),
                F("min_version", "int16", "3+"),
                F("max_version", "int16", "3+"),
            ),
        ),
        F("finalized_features_epoch", "int64", "3+", default=-1, tag=1, tagged="3+"),
        F(
            "finalized_features",
            "[]",
            "3+",
            tag=2,
            tagged="3+",
            fields=(
                F("name", "string", "3+"),
                F("max_version_level", "int16", "3+"),
                F("min_version_level", "int16", "3+"),
            ),
        ),
        F("zk_migration_ready", "bool", "3+", default=False, tag=3, tagged="3+"),
    ),
)

API = register(ApiSpec(api_key=18, name="ApiVersions", request=REQUEST, response=RESPONSE))
