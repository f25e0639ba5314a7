"""DeleteGroups: versions 0-2.

Request versions (Kafka's schema notes):
    Version 1 is the same as version 0.
    Version 2 is the first flexible version.

Response versions:
    Starting in version 1, on quota violation, brokers send out responses before throttling.
    Version 2 is the first flexible version.
"""

from __future__ import annotations

from wire.fields import Field as F
from wire.fields import Message
from wire.registry import ApiSpec, register

REQUEST = Message(
    "DeleteGroupsRequest",
    api_key=42,
    valid="0-2",
    flexible="2+",
    fields=(F("groups_names", "[]string", "0+"),),
)

RESPONSE = Message(
    "DeleteGroupsResponse",
    api_key=42,
    valid="0-2",
    flexible="2+",
    fields=(
        F("throttle_time_ms", "int32", "0+"),
        F(
            "results",
            "[]",
            "0+",
            fields=(
                F("group_id", "string", "0+"),
                F("error_code", "int16", "0+"),
            ),
        ),
    ),
)

API = register(ApiSpec(api_key=42, name="DeleteGroups", request=REQUEST, response=RESPONSE))
