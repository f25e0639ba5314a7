"""SaslHandshake: versions 0-1.

Request versions (Kafka's schema notes):
    Version 1 supports SASL_AUTHENTICATE.
    NOTE: Version cannot be easily bumped due to incorrect client negotiation for clients
      <= 2.4. See https://issues.apache.org/jira/browse/KAFKA-9577

Response versions: version 1 is the same as version 0. Neither is flexible.
"""

from __future__ import annotations

from wire.fields import Field as F
from wire.fields import Message
from wire.registry import ApiSpec, register

REQUEST = Message(
    "SaslHandshakeRequest",
    api_key=17,
    valid="0-1",
    flexible="none",
    fields=(F("mechanism", "string", "0+"),),
)

RESPONSE = Message(
    "SaslHandshakeResponse",
    api_key=17,
    valid="0-1",
    flexible="none",
    fields=(
        F("error_code", "int16", "0+"),
        F("mechanisms", "[]string", "0+"),
    ),
)

API = register(ApiSpec(api_key=17, name="SaslHandshake", request=REQUEST, response=RESPONSE))
