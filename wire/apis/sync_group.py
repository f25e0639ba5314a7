"""SyncGroup: versions 0-5.

Request versions (Kafka's schema notes):
    Versions 1 and 2 are the same as version 0.
    Starting from version 3, we add a new field called groupInstanceId to indicate member
      identity across restarts.
    Version 4 is the first flexible version.
    Starting from version 5, the client sends the Protocol Type and the Protocol Name
    to the broker (KIP-559). The broker will reject the request if they are inconsistent
    with the Type and Name known by the broker.

Response versions:
    Version 1 adds throttle time.
    Starting in version 2, on quota violation, brokers send out responses before throttling.
    Starting from version 3, syncGroupRequest supports a new field called groupInstanceId to
      indicate member identity across restarts.
    Version 4 is the first flexible version.
    Starting from version 5, the broker sends back the Protocol Type and the Protocol Name
    to the client (KIP-559).
"""

from __future__ import annotations

from wire.fields import Field as F
from wire.fields import Message
from wire.registry import ApiSpec, register

REQUEST = Message(
    "SyncGroupRequest",
    api_key=14,
    valid="0-5",
    flexible="4+",
    fields=(
        F("group_id", "string", "0+"),
        F("generation_id", "int32", "0+"),
        F("member_id", "string", "0+"),
        F("group_instance_id", "string", "3+", nullable="3+", default="null"),
        F("protocol_type", "string", "5+", nullable="5+", default="null"),
        F("protocol_name", "string", "5+", nullable="5+", default="null"),
        F(
            "assignments",
            "[]",
            "0+",
            fields=(
                F("member_id", "string", "0+"),
                F("assignment", "bytes", "0+"),
            ),
        ),
    ),
)

RESPONSE = Message(
    "SyncGroupResponse",
    api_key=14,
    valid="0-5",
    flexible="4+",
    fields=(
        F("throttle_time_ms", "int32", "1+"),
        F("error_code", "int16", "0+"),
        F("protocol_type", "string", "5+", nullable="5+", default="null"),
        F("protocol_name", "string", "5+", nullable="5+", default="null"),
        F("assignment", "bytes", "0+"),
    ),
)

API = register(ApiSpec(api_key=14, name="SyncGroup", request=REQUEST, response=RESPONSE))
