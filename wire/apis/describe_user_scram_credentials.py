"""DescribeUserScramCredentials: version 0 (KIP-554), flexible.

Request: the users to describe, or null for every user.

Response: a top-level error and, per user, an error and the (mechanism, iterations) of
each credential; salts and salted passwords are never returned.
"""

from __future__ import annotations

from wire.fields import Field as F
from wire.fields import Message
from wire.registry import ApiSpec, register

REQUEST = Message(
    "DescribeUserScramCredentialsRequest",
    api_key=50,
    valid="0",
    flexible="0+",
    fields=(
        F("users", "[]", "0+", nullable="0+", fields=(
            F("name", "string", "0+"),
        )),
    ),
)

RESPONSE = Message(
    "DescribeUserScramCredentialsResponse",
    api_key=50,
    valid="0",
    flexible="0+",
    fields=(
        F("throttle_time_ms", "int32", "0+"),
        F("error_code", "int16", "0+"),
        F("error_message", "string", "0+", nullable="0+"),
        F("results", "[]", "0+", fields=(
            F("user", "string", "0+"),
            F("error_code", "int16", "0+"),
            F("error_message", "string", "0+", nullable="0+"),
            F("credential_infos", "[]", "0+", fields=(
                F("mechanism", "int8", "0+"),
                F("iterations", "int32", "0+"),
            )),
        )),
    ),
)

API = register(
    ApiSpec(api_key=50, name="DescribeUserScramCredentials", request=REQUEST, response=RESPONSE)
)

