"""AlterUserScramCredentials: version 0 (KIP-554), flexible.

Request: SCRAM credential deletions (user, mechanism) and upsertions (user, mechanism,
iterations, salt, salted password); the client salts and hashes the password.

Response: one result (user, error code, error message) per user named.
"""

from __future__ import annotations

from wire.fields import Field as F
from wire.fields import Message
from wire.registry import ApiSpec, register

REQUEST = Message(
    "AlterUserScramCredentialsRequest",
    api_key=51,
    valid="0",
    flexible="0+",
    fields=(
        F("deletions", "[]", "0+", fields=(
            F("name", "string", "0+"),
            F("mechanism", "int8", "0+"),
        )),
        F("upsertions", "[]", "0+", fields=(
            F("name", "string", "0+"),
            F("mechanism", "int8", "0+"),
            F("iterations", "int32", "0+"),
            F("salt", "bytes", "0+"),
            F("salted_password", "bytes", "0+"),
        )),
    ),
)

RESPONSE = Message(
    "AlterUserScramCredentialsResponse",
    api_key=51,
    valid="0",
    flexible="0+",
    fields=(
        F("throttle_time_ms", "int32", "0+"),
        F("results", "[]", "0+", fields=(
            F("user", "string", "0+"),
            F("error_code", "int16", "0+"),
            F("error_message", "string", "0+", nullable="0+"),
        )),
    ),
)

API = register(
    ApiSpec(api_key=51, name="AlterUserScramCredentials", request=REQUEST, response=RESPONSE)
)

