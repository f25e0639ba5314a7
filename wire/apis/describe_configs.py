"""DescribeConfigs: versions 0-4.

Request versions (Kafka's schema notes):
    Version 1 adds IncludeSynonyms and removes IsDefault.
    Version 2 is the same as version 1.
    Version 4 enables flexible versions.

Response versions:
    Version 1 adds ConfigSource and the synonyms.
    Starting in version 2, on quota violation, brokers send out responses before throttling.
    Version 3 adds ConfigType and ConfigDocumentation.
    Version 4 enables flexible versions.
"""

from __future__ import annotations

from wire.fields import Field as F
from wire.fields import Message
from wire.registry import ApiSpec, register

REQUEST = Message(
    "DescribeConfigsRequest",
    api_key=32,
    valid="0-4",
    flexible="4+",
    fields=(
        F(
            "resources",
            "[]",
            "0+",
            fields=(
                F("resource_type", "int8", "0+"),
                F("resource_name", "string", "0+"),
                F("configuration_keys", "[]string", "0+", nullable="0+"),
            ),
        ),
        F("include_synonyms", "bool", "1+", default=False),
        F("include_documentation", "bool", "3+", default=False),
    ),
)

RESPONSE = Message(
    "DescribeConfigsResponse",
    api_key=32,
    valid="0-4",
    flexible="4+",
    fields=(
        F("throttle_time_ms", "int32", "0+"),
        F(
            "results",
            "[]",
            "0+",
            fields=(
                F("error_code", "int16", "0+"),
                F("error_message", "string", "0+", nullable="0+"),
                F("resource_type", "int8", "0+"),
                F("resource_name", "string", "0+"),
                F(
                    "configs",
                    "[]",
                    "0+",
                    fields=(
                        F("name", "string", "0+"),
                        F("value", "string", "0+", nullable="0+"),
                        F("read_only", "bool", "0+"),
                        F("is_default", "bool", "0"),
                        F("config_source", "int8", "1+", default=-1),
                        F("is_sensitive", "bool", "0+"),
                        F(
                            "synonyms",
                            "[]",
                            "1+",
                            fields=(
                                F("name", "string", "1+"),
                                F("value", "string", "1+", nullable="1+"),
                                F("source", "int8", "1+"),
                            ),
                        ),
                        F("config_type", "int8", "3+", default=0),
                        F("documentation", "string", "3+", nullable="0+"),
                    ),
                ),
            ),
        ),
    ),
)

API = register(ApiSpec(api_key=32, name="DescribeConfigs", request=REQUEST, response=RESPONSE))
