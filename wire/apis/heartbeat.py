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

from collections.abc import Callable, Mapping
from typing import Any

from wire.fast_frames import (
    I16,
    I32,
    UNKNOWN_TAGS,
    Malformed,
    compact_string,
    message_end,
    nullable_compact_string,
    nullable_string,
    request_header_end,
    string,
)
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


# ------------------------------------------------------------------ without construct
#
# The server's hot path (``wire/fast_codec.py``), as for OffsetCommit: the fields equal to
# the codec's (the message built by ``make``), struct-written answers; any other shape
# raises and goes to the codec. tests/wire/test_offset_commit_fast.py checks both against
# the codec.

_FLEXIBLE = 4


def decode_request_body(
    payload: bytes, version: int, make: Callable[..., Any] = dict
) -> tuple[str | None, Any]:
    """(client_id, body) of a Heartbeat request frame's payload."""
    flexible = version >= _FLEXIBLE
    client_id, pos = request_header_end(payload, flexible)
    read = compact_string if flexible else string
    group_id, pos = read(payload, pos)
    (generation,) = I32.unpack_from(payload, pos)
    member_id, pos = read(payload, pos + 4)
    instance_id: str | None = None
    if version >= 3:
        instance_id, pos = (nullable_compact_string if flexible else nullable_string)(
            payload, pos
        )
    message_end(payload, pos, flexible)
    return client_id, make(
        group_id=group_id,
        generation_id=generation,
        member_id=member_id,
        group_instance_id=instance_id,
    )


def encode_response_body(version: int, correlation_id: int, body: Mapping[str, Any]) -> bytes:
    """A size-prefixed Heartbeat response frame."""
    if UNKNOWN_TAGS in body:
        raise Malformed("unknown tagged fields")
    error = I16.pack(body["error_code"])
    if version == 0:
        return b"\x00\x00\x00\x06" + I32.pack(correlation_id) + error
    throttle = I32.pack(body.get("throttle_time_ms", 0))
    if version >= _FLEXIBLE:
        return b"\x00\x00\x00\x0c" + I32.pack(correlation_id) + b"\x00" + throttle + error + b"\x00"
    return b"\x00\x00\x00\x0a" + I32.pack(correlation_id) + throttle + error
