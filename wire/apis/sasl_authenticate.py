"""SaslAuthenticate: versions 0-2 (KIP-152).

Request versions (Kafka's schema notes):
    Version 1 is the same as version 0.
    Version 2 adds flexible version support.

Response versions:
    Version 1 adds the session lifetime (KIP-368: re-authentication).
    Version 2 adds flexible version support.
"""

from __future__ import annotations

from wire.fields import Field as F
from wire.fields import Message
from wire.registry import ApiSpec, register

REQUEST = Message(
    "SaslAuthenticateRequest",
    api_key=36,
    valid="0-2",
    flexible="2+",
    fields=(
        F("auth_bytes", "bytes", "0+"),
    ),
)

RESPONSE = Message(
    "SaslAuthenticateResponse",
    api_key=36,
    valid="0-2",
    flexible="2+",
    fields=(
        F("error_code", "int16", "0+"),
        F("error_message", "string", "0+", nullable="0+"),
        F("auth_bytes", "bytes", "0+"),
        F("session_lifetime_ms", "int64", "1+", default=0),
    ),
)

API = register(ApiSpec(api_key=36, name="SaslAuthenticate", request=REQUEST, response=RESPONSE))

