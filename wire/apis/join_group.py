"""JoinGroup: versions 0-9.

Request versions (Kafka's schema notes):
    Version 1 adds RebalanceTimeoutMs. Version 2 and 3 are the same as version 1.
    Starting from version 4, the client needs to issue a second request to join group
    Starting from version 5, we add a new field called groupInstanceId to indicate member
      identity across restarts.
    with assigned id.
    Version 6 is the first flexible version.
    Version 7 is the same as version 6.
    Version 8 adds the Reason field (KIP-800).
    Version 9 is the same as version 8.
    Note: if RebalanceTimeoutMs is not present, SessionTimeoutMs should be
    used instead.  The default of -1 here is just intended as a placeholder.

Response versions:
    Version 1 is the same as version 0.
    Version 2 adds throttle time.
    Starting in version 3, on quota violation, brokers send out responses before throttling.
    Starting in version 4, the client needs to issue a second request to join group
    with assigned id.
    Version 5 is bumped to apply group.instance.id to identify member across restarts.
    Version 6 is the first flexible version.
    Starting from version 7, the broker sends back the Protocol Type to the client (KIP-559).
    Version 8 is the same as version 7.
    Version 9 adds the SkipAssignment field.
"""

from __future__ import annotations

from wire.fields import Field as F
from wire.fields import Message
from wire.registry import ApiSpec, register

REQUEST = Message(
    "JoinGroupRequest",
    api_key=11,
    valid="0-9",
    flexible="6+",
    fields=(
        F("group_id", "string", "0+"),
        F("session_timeout_ms", "int32", "0+"),
        F("rebalance_timeout_ms", "int32", "1+", default=-1),
        F("member_id", "string", "0+"),
        F("group_instance_id", "string", "5+", nullable="5+", default="null"),
        F("protocol_type", "string", "0+"),
        F(
            "protocols",
            "[]",
            "0+",
            fields=(
                F("name", "string", "0+"),
                F("metadata", "bytes", "0+"),
            ),
        ),
        F("reason", "string", "8+", nullable="8+", default="null"),
    ),
)

RESPONSE = Message(
    "JoinGroupResponse",
    api_key=11,
    valid="0-9",
    flexible="6+",
    fields=(
        F("throttle_time_ms", "int32", "2+"),
        F("error_code", "int16", "0+"),
        F("generation_id", "int32", "0+", default=-1),
        F("protocol_type", "string", "7+", nullable="7+", default="null"),
        F("protocol_name", "string", "0+", nullable="7+"),
        F("leader", "string", "0+"),
        F("skip_assignment", "bool", "9+", default=False),
        F("member_id", "string", "0+"),
        F(
            "members",
            "[]",
            "0+",
            fields=(
                F("member_id", "string", "0+"),
                F("group_instance_id", "string", "5+", nullable="5+", default="null"),
                F("metadata", "bytes", "0+"),
            ),
        ),
    ),
)

API = register(ApiSpec(api_key=11, name="JoinGroup", request=REQUEST, response=RESPONSE))
