"""DescribeGroups: versions 0-6.

Request versions (Kafka's schema notes):
    Versions 1 and 2 are the same as version 0.
    Starting in version 3, authorized operations can be requested.
    Starting in version 4, the response will include group.instance.id info for members.
    Version 5 is the first flexible version.
    Version 6 returns error code GROUP_ID_NOT_FOUND if the group ID is not found (KIP-1043).

Response versions:
    Version 1 added throttle time.
    Starting in version 2, on quota violation, brokers send out responses before throttling.
    Starting in version 3, brokers can send authorized operations.
    Starting in version 4, the response will optionally include group.instance.id info for
      members.
    Version 5 is the first flexible version.
    Version 6 returns error code GROUP_ID_NOT_FOUND if the group ID is not found (KIP-1043).
    ProtocolData is currently only filled in if the group state is in the Stable state.
    N.B. If the group is in the Dead state, the members array will always be empty.
    This is currently only provided if the group is in the Stable state.
    This is currently only provided if the group is in the Stable state.
"""

from __future__ import annotations

from wire.fields import Field as F
from wire.fields import Message
from wire.registry import ApiSpec, register

REQUEST = Message(
    "DescribeGroupsRequest",
    api_key=15,
    valid="0-6",
    flexible="5+",
    fields=(
        F("groups", "[]string", "0+"),
        F("include_authorized_operations", "bool", "3+"),
    ),
)

RESPONSE = Message(
    "DescribeGroupsResponse",
    api_key=15,
    valid="0-6",
    flexible="5+",
    fields=(
        F("throttle_time_ms", "int32", "1+"),
        F(
            "groups",
            "[]",
            "0+",
            fields=(
                F("error_code", "int16", "0+"),
                F("error_message", "string", "6+", nullable="6+", default="null"),
                F("group_id", "string", "0+"),
                F("group_state", "string", "0+"),
                F("protocol_type", "string", "0+"),
                F("protocol_data", "string", "0+"),
                F(
                    "members",
                    "[]",
                    "0+",
                    fields=(
                        F("member_id", "string", "0+"),
                        F("group_instance_id", "string", "4+", nullable="4+", default="null"),
                        F("client_id", "string", "0+"),
                        F("client_host", "string", "0+"),
                        F("member_metadata", "bytes", "0+"),
                        F("member_assignment", "bytes", "0+"),
                    ),
                ),
                F("authorized_operations", "int32", "3+", default=-2147483648),
            ),
        ),
    ),
)

API = register(ApiSpec(api_key=15, name="DescribeGroups", request=REQUEST, response=RESPONSE))
