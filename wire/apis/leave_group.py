"""LeaveGroup: versions 0-5.

Request versions (Kafka's schema notes):
    Version 1 and 2 are the same as version 0.
    Version 3 defines batch processing scheme with group.instance.id + member.id for identity
    Version 4 is the first flexible version.
    Version 5 adds the Reason field (KIP-800).

Response versions:
    Version 1 adds the throttle time.
    Starting in version 2, on quota violation, brokers send out responses before throttling.
    Starting in version 3, we will make leave group request into batch mode and add
      group.instance.id.
    Version 4 is the first flexible version.
    Version 5 is the same as version 4.
"""

from __future__ import annotations

from wire.fields import Field as F
from wire.fields import Message
from wire.registry import ApiSpec, register

REQUEST = Message(
    "LeaveGroupRequest",
    api_key=13,
    valid="0-5",
    flexible="4+",
    fields=(
        F("group_id", "string", "0+"),
        F("member_id", "string", "0-2"),
        F(
            "members",
            "[]",
            "3+",
            fields=(
                F("member_id", "string", "3+"),
                F("group_instance_id", "string", "3+", nullable="3+", default="null"),
                F("reason", "string", "5+", nullable="5+", default="null"),
            ),
        ),
    ),
)

RESPONSE = Message(
    "LeaveGroupResponse",
    api_key=13,
    valid="0-5",
    flexible="4+",
    fields=(
        F("throttle_time_ms", "int32", "1+"),
        F("error_code", "int16", "0+"),
        F(
            "members",
            "[]",
            "3+",
            fields=(
                F("member_id", "string", "3+"),
                F("group_instance_id", "string", "3+", nullable="3+"),
                F("error_code", "int16", "3+"),
            ),
        ),
    ),
)

API = register(ApiSpec(api_key=13, name="LeaveGroup", request=REQUEST, response=RESPONSE))
