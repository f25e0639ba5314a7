"""ConsumerGroupHeartbeat (API 68, v0-1) without construct: the server's hot path.

A consumer-protocol member heartbeats every few seconds with a frame that is mostly nulls
(Kafka's client leaves out every field that did not change); the answer to such a
heartbeat leaves out the assignment. This module reads such requests and writes the
answers with ``struct`` and slicing, three to four times faster than the compiled construct
codec (``wire/apis/consumer_group_heartbeat.py`` is the schema; this module follows it
field for field). ``wire.fast_codec`` (the server's decoder and encoder) tries it first,
with the readers of ``wire.fast_frames``:

- ``decode_request_body`` returns what the codec would decode (the client id and a
  ``Container`` holding every field, ``subscribed_topic_regex`` None in v0), or None for
  anything it does not handle: another API or version, a tagged field anywhere, trailing
  bytes, a truncated or malformed frame. The codec then decodes (or refuses) the frame
  itself, so a None changes nothing but the speed. A steady request (every field after
  the member epoch at its default) decodes to a ``SteadyRequestBody``, a ``Container``
  whose type tells the server so (its steady shortcut, in the route module
  ``coordinator/server/apis/consumer_group_heartbeat.py``); its values are kept by the
  frame's bytes after the correlation id, so the member's next heartbeats (the same bytes
  but that id) are looked up, not read again.
- ``encode_response_frame`` returns the codec's bytes for a response body (missing fields
  at their defaults), or None for a body it does not handle (unknown tagged fields, a value
  the codec would refuse), which the codec then encodes (or refuses) itself. The steady
  answer (error 0, the member's id, epoch and heartbeat interval, nothing else) is encoded
  once per member, epoch and interval and kept: each later one only writes its size and
  correlation id in front of the kept bytes.

``tests/wire/test_consumer_group_heartbeat_codec.py`` checks both against the construct
codec with Hypothesis, value for value and byte for byte.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Mapping
from typing import Any

from construct import Container

from wire.bounded_cache import BoundedCache
from wire.fast_frames import (
    Malformed,
    compact_string,
    encode_compact_string,
    nullable_compact_string,
    uvarint,
)
from wire.varint import encode_uvarint

__all__ = ["API_KEY", "SteadyRequestBody", "decode_request_body", "encode_response_frame"]

API_KEY = 68
_MAX_VERSION = 1
_REGEX_VERSION = 1  # subscribed_topic_regex is in v1+
_UNKNOWN_TAGS = "unknown_tagged_fields"  # wire.schema.UNKNOWN_TAGS (not imported: construct)

_HEADER = struct.Struct(">hhih")  # api key, version, correlation id, client id length
_I32 = struct.Struct(">i")
_HEADER_AND_THROTTLE = struct.Struct(">iiBih")  # size, correlation id, tags, throttle, error
_EPOCH_AND_INTERVAL = struct.Struct(">ii")
# What follows member_epoch in a steady heartbeat, by version: instance_id and rack_id null,
# rebalance_timeout_ms -1, subscribed_topic_names null, (v1: subscribed_topic_regex null,)
# server_assignor null, topic_partitions null, no tagged fields.
_STEADY_TAILS = (
    b"\x00\x00\xff\xff\xff\xff\x00\x00\x00\x00",
    b"\x00\x00\xff\xff\xff\xff\x00\x00\x00\x00\x00",
)


def _count(data: bytes, pos: int) -> tuple[int, int]:
    """A compact array's element count (-1 for null) at ``pos``."""
    size = data[pos]
    if size >= 0x80:
        size, pos = uvarint(data, pos)
    else:
        pos += 1
    if size - 1 > len(data) - pos:  # every element takes at least one byte
        raise Malformed("declined")
    return size - 1, pos


def _topic_partitions(data: bytes, pos: int, count: int) -> tuple[list[Container], int]:
    items = []
    for _ in range(count):
        end = pos + 16
        if end > len(data):
            raise Malformed("declined")
        topic_id = uuid.UUID(bytes=data[pos:end])
        n, pos = _count(data, end)
        if n < 0 or n * 4 > len(data) - pos:
            raise Malformed("declined")
        end = pos + n * 4
        partitions = list(struct.unpack(f">{n}i", data[pos:end]))
        if data[end] != 0:  # the element's tagged fields
            raise Malformed("declined")
        pos = end + 1
        items.append(Container(topic_id=topic_id, partitions=partitions))
    return items, pos


def _required_string(data: bytes, pos: int) -> tuple[str, int]:
    """A non-null compact string (group_id, member_id: a one-byte length read inline)."""
    size = data[pos]
    if 0 < size < 0x80 and pos + size <= len(data):
        return data[pos + 1 : pos + size].decode("utf-8"), pos + size
    return compact_string(data, pos)


def _names(data: bytes, pos: int, count: int) -> tuple[list[str], int]:
    names = []
    for _ in range(count):
        name, pos = _required_string(data, pos)
        names.append(name)
    return names, pos


def decode_request_body(payload: bytes) -> tuple[str | None, Container] | None:
    """(client id, body) of a ConsumerGroupHeartbeat request frame (without its size
    prefix) exactly as ``wire.codec`` decodes it, or None when this module does not handle
    the frame (see the module's docstring)."""
    if type(payload) is bytes:
        known = _STEADY_REQUESTS.get(payload[8:])
        if known is not None and payload.startswith(known[0]):
            _, client_id, group_id, member_id, member_epoch, version = known
            return client_id, _steady_body(group_id, member_id, member_epoch, version)
    try:
        return _decode(payload)
    except (Malformed, IndexError, ValueError, struct.error):  # UnicodeDecodeError: ValueError
        return None


# Steady requests decoded before, by the frame's bytes after the correlation id (the client
# id, the header's tags and the body): (the frame's first four bytes -- API key and version
# --, client id, group id, member id, member epoch, version). A member's steady heartbeats
# are the same bytes but for the correlation id, so each later one is a lookup. Filled by
# ``_decode`` from frames it read as steady; dropped whole at ``_MAX_STEADY_REQUESTS``.
_STEADY_REQUESTS: BoundedCache[bytes, tuple[bytes, str | None, str, str, int, int]] = (
    BoundedCache(4096))


def _decode(data: bytes) -> tuple[str | None, Container] | None:
    api_key, version, _, size = _HEADER.unpack_from(data)
    if api_key != API_KEY or not 0 <= version <= _MAX_VERSION:
        return None
    pos = _HEADER.size
    client_id: str | None = None
    if size >= 0:
        end = pos + size
        if end > len(data):
            return None
        client_id = data[pos:end].decode("utf-8")
        pos = end
    elif size != -1:
        return None
    if data[pos] != 0:  # the header's tagged fields
        return None
    group_id, pos = _required_string(data, pos + 1)
    member_id, pos = _required_string(data, pos)
    (member_epoch,) = _I32.unpack_from(data, pos)
    if data[pos + 4 :] == _STEADY_TAILS[version]:  # the steady heartbeat: nothing else set
        if type(data) is bytes:
            _STEADY_REQUESTS.put(data[8:], (
                data[:4], client_id, group_id, member_id, member_epoch, version))
        return client_id, _steady_body(group_id, member_id, member_epoch, version)
    instance_id, pos = nullable_compact_string(data, pos + 4)
    rack_id, pos = nullable_compact_string(data, pos)
    (rebalance_timeout_ms,) = _I32.unpack_from(data, pos)
    count, pos = _count(data, pos + 4)
    names = None
    if count >= 0:
        names, pos = _names(data, pos, count)
    regex = None
    if version >= _REGEX_VERSION:
        regex, pos = nullable_compact_string(data, pos)
    assignor, pos = nullable_compact_string(data, pos)
    count, pos = _count(data, pos)
    owned = None
    if count >= 0:
        owned, pos = _topic_partitions(data, pos, count)
    if pos + 1 != len(data) or data[pos] != 0:  # the body's tagged fields, nothing after
        return None
    body = Container(
        group_id=group_id,
        member_id=member_id,
        member_epoch=member_epoch,
        instance_id=instance_id,
        rack_id=rack_id,
        rebalance_timeout_ms=rebalance_timeout_ms,
        subscribed_topic_names=names,
    )
    if version >= _REGEX_VERSION:
        body["subscribed_topic_regex"] = regex
    body["server_assignor"] = assignor
    body["topic_partitions"] = owned
    if version < _REGEX_VERSION:
        body["subscribed_topic_regex"] = None  # the codec adds absent fields last
    return client_id, body


class SteadyRequestBody(Container):  # type: ignore[misc]  # construct is untyped
    """The body of a steady request: a ``Container`` equal to the codec's (same keys, same
    order, same values) whose every field after ``member_epoch`` is at its default (null,
    ``rebalance_timeout_ms`` -1), which its type tells the server without reading them:
    its class attribute ``steady`` (the group core reads it, without importing this
    module, instead of seven fields on every heartbeat)."""

    __slots__ = ()
    steady = True


# The bodies of steady requests by version, in the codec's key order (v0: the absent
# subscribed_topic_regex last); ``_steady_body`` copies one and fills in the three values.
_STEADY_BODIES = (
    SteadyRequestBody(
        group_id="", member_id="", member_epoch=0,
        instance_id=None, rack_id=None, rebalance_timeout_ms=-1,
        subscribed_topic_names=None, server_assignor=None, topic_partitions=None,
        subscribed_topic_regex=None,  # the codec adds absent fields last
    ),
    SteadyRequestBody(
        group_id="", member_id="", member_epoch=0,
        instance_id=None, rack_id=None, rebalance_timeout_ms=-1,
        subscribed_topic_names=None, subscribed_topic_regex=None, server_assignor=None,
        topic_partitions=None,
    ),
)


def _steady_body(
    group_id: str, member_id: str, member_epoch: int, version: int
) -> SteadyRequestBody:
    """The body of a request whose every optional field is null (at its default): a copy
    of the version's template (a third of the time of a Container built from keywords)."""
    body = SteadyRequestBody(_STEADY_BODIES[version])
    body["group_id"] = group_id
    body["member_id"] = member_id
    body["member_epoch"] = member_epoch
    return body


def _put_string(out: bytearray, value: str | None) -> None:
    """A nullable compact string."""
    if value is None:
        out.append(0)
    else:
        out += encode_compact_string(value)


def _put_assignment(out: bytearray, assignment: Mapping[str, Any]) -> None:
    if _UNKNOWN_TAGS in assignment:
        raise Malformed("declined")
    items = assignment["topic_partitions"]
    out.append(1)  # present
    out += encode_uvarint(len(items) + 1)
    for item in items:
        if _UNKNOWN_TAGS in item:
            raise Malformed("declined")
        topic_id: uuid.UUID = item["topic_id"]
        partitions = item["partitions"]
        out += topic_id.bytes
        out += encode_uvarint(len(partitions) + 1)
        out += struct.pack(f">{len(partitions)}i", *partitions)
        out.append(0)  # the element's tagged fields
    out.append(0)  # the assignment's tagged fields


# The steady answer (error 0, no message, the member's id, epoch and heartbeat interval, no
# assignment, no throttle) a member gets to each of its heartbeats, encoded once: what follows
# the correlation id, by (version, member id, member epoch, heartbeat interval). Filled from
# bodies of exactly those keys, an ``int`` error code 0 and epoch and interval of type ``int``
# and a ``str`` member id; a member's next epoch is a new entry (the whole cache is dropped
# when it reaches ``_MAX_STEADY_ANSWERS``).
_STEADY_ANSWERS: BoundedCache[tuple[int, str, int, int], bytes] = BoundedCache(4096)
_STEADY_KEYS = frozenset({"error_code", "member_id", "member_epoch", "heartbeat_interval_ms"})
_SIZE_AND_CORRELATION = struct.Struct(">ii")


def encode_response_frame(
    version: int, correlation_id: int, body: Mapping[str, Any]
) -> bytes | None:
    """The size-prefixed response frame ``wire.codec`` writes for ``body`` (fields it
    lacks at their defaults), or None when this module does not handle the body."""
    if len(body) == 4:
        get = body.get
        error = get("error_code")
        epoch = get("member_epoch")
        interval = get("heartbeat_interval_ms")
        # A hit is a body of exactly the four keys (a missing one reads None, never in a
        # key) holding ints (a float equal to an int would hit; the codec refuses floats).
        if (error == 0 and isinstance(error, int) and type(epoch) is int
                and type(interval) is int):
            tail = _STEADY_ANSWERS.get((version, get("member_id"), epoch, interval))  # type: ignore[arg-type]
            if tail is not None:
                return _SIZE_AND_CORRELATION.pack(len(tail) + 4, correlation_id) + tail
    frame = _encode(version, correlation_id, body)
    if frame is not None and len(body) == 4 and body.keys() == _STEADY_KEYS:
        _remember_steady(version, body, frame)
    return frame


def _remember_steady(version: int, body: Mapping[str, Any], frame: bytes) -> None:
    member_id = body["member_id"]
    epoch = body["member_epoch"]
    interval = body["heartbeat_interval_ms"]
    if (type(member_id) is str and type(epoch) is int and type(interval) is int
            and isinstance(body["error_code"], int) and body["error_code"] == 0):
        _STEADY_ANSWERS.put((version, member_id, epoch, interval), frame[8:])


def _encode(version: int, correlation_id: int, body: Mapping[str, Any]) -> bytes | None:
    if not 0 <= version <= _MAX_VERSION or _UNKNOWN_TAGS in body:
        return None
    get = body.get
    try:
        out = bytearray(_HEADER_AND_THROTTLE.pack(
            0, correlation_id, 0, get("throttle_time_ms", 0), get("error_code", 0)))
        _put_string(out, get("error_message"))
        _put_string(out, get("member_id"))
        out += _EPOCH_AND_INTERVAL.pack(get("member_epoch", 0), get("heartbeat_interval_ms", 0))
        assignment = get("assignment")
        if assignment is None:
            out += b"\xff\x00"  # null assignment, no tagged fields
        else:
            _put_assignment(out, assignment)
            out.append(0)
    except (Malformed, LookupError, TypeError, ValueError, AttributeError, struct.error):
        return None
    _I32.pack_into(out, 0, len(out) - 4)
    return bytes(out)
