"""Heartbeat: versions 0-4.

Request versions (Kafka's schema notes):
    Version 1 and version 2 are the same as version 0.
    Starting from version 3, we add a new field called groupInstanceId to indicate member
      identity across restarts.
    Version 4 is the first flexible version.

Response versions:
    Version 1 adds throttle time.
    Starting in version 2, on quota violation, brokers send out responses before throttling.
    Starting from version 3, heartbeatRequest supports a new field called groupInstanceId to
      indicate member identity across restarts.
    Version 4 is the first flexible version.
"""

from __future__ import annotations

from wire.fields import Field as F
from wire.fields import Message
from wire.registry import ApiSpec, register

REQUEST = Message(
    "HeartbeatRequest",
    api_key=12,
    valid="0-4",
    flexible="4+",
    fields=(
        F("group_id", "string", "0+"),
        F("generation_id", "int32", "0+"),
        F("member_id", "string", "0+"),
        F("group_instance_id", "string", "3+", nullable="3+", default="null"),
    ),
)

RESPONSE = Message(
    "HeartbeatResponse",
    api_key=12,
    valid="0-4",
    flexible="4+",
    fields=(
        F("throttle_time_ms", "int32", "1+"),
        F("error_code", "int16", "0+"),
    ),
)

API = register(ApiSpec(api_key=12, name="Heartbeat", request=REQUEST, response=RESPONSE))
