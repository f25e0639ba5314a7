"""ListGroups: versions 0-5.

Request versions (Kafka's schema notes):
    Version 1 and 2 are the same as version 0.
    Version 3 is the first flexible version.
    Version 4 adds the StatesFilter field (KIP-518).
    Version 5 adds the TypesFilter field (KIP-848).

Response versions:
    Version 1 adds the throttle time.
    Starting in version 2, on quota violation, brokers send out
    responses before throttling.
    Version 3 is the first flexible version.
    Version 4 adds the GroupState field (KIP-518).
    Version 5 adds the GroupType field (KIP-848).
"""

from __future__ import annotations

from wire.fields import Field as F
from wire.fields import Message
from wire.registry import ApiSpec, register

REQUEST = Message(
    "ListGroupsRequest",
    api_key=16,
    valid="0-5",
    flexible="3+",
    fields=(
        F("states_filter", "[]string", "4+"),
        F("types_filter", "[]string", "5+"),
    ),
)

RESPONSE = Message(
    "ListGroupsResponse",
    api_key=16,
    valid="0-5",
    flexible="3+",
    fields=(
        F("throttle_time_ms", "int32", "1+"),
        F("error_code", "int16", "0+"),
        F(
            "groups",
            "[]",
            "0+",
            fields=(
                F("group_id", "string", "0+"),
                F("protocol_type", "string", "0+"),
                F("group_state", "string", "4+"),
                F("group_type", "string", "5+"),
            ),
        ),
    ),
)

API = register(ApiSpec(api_key=16, name="ListGroups", request=REQUEST, response=RESPONSE))
