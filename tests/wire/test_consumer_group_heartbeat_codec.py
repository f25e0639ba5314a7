"""``wire.consumer_group_heartbeat_codec``: the construct-free ConsumerGroupHeartbeat path
decodes every request it accepts to the construct codec's values, writes every response it
accepts as the construct codec's bytes, and declines (None) every frame or body it does not
handle -- tagged fields, truncated or malformed frames, trailing bytes -- which
``wire.fast_codec`` (the server's entry point) then leaves to construct, which decodes,
encodes or refuses it as before."""

from __future__ import annotations

import struct
import uuid
from io import BytesIO
from typing import Any

import pytest
from construct import Container
from hypothesis import given, settings
from hypothesis import strategies as st

import wire
from wire import fast_codec
from wire.apis.consumer_group_heartbeat import REQUEST, RESPONSE
from wire.consumer_group_heartbeat_codec import (
    SteadyRequestBody,
    decode_request_body,
    encode_response_frame,
)
from wire.header import REQUEST_HEADER, RESPONSE_HEADER
from wire.schema import UNKNOWN_TAGS, message_struct

VERSIONS = (0, 1)
EXAMPLES = settings(max_examples=200, deadline=None, derandomize=True, database=None)

# Strings around the one-byte compact length (126 bytes) and beyond ASCII.
text = st.one_of(st.text(max_size=8), st.text(min_size=120, max_size=140),
                 st.sampled_from(["", "é", "консьюмер", "x" * 300]))
nullable_text = st.none() | text
int32 = st.integers(-(2**31), 2**31 - 1)
topic_partitions = st.lists(st.fixed_dictionaries({
    "topic_id": st.uuids(),
    "partitions": st.lists(int32, max_size=40),
}), max_size=4)


@st.composite
def request_bodies(draw: st.DrawFn) -> tuple[int, dict[str, Any]]:
    version = draw(st.sampled_from(VERSIONS))
    body: dict[str, Any] = {
        "group_id": draw(text),
        "member_id": draw(text),
        "member_epoch": draw(int32),
    }
    optional = {
        "instance_id": nullable_text,
        "rack_id": nullable_text,
        "rebalance_timeout_ms": int32,
        "subscribed_topic_names": st.none() | st.lists(text, max_size=4),
        "server_assignor": nullable_text,
        "topic_partitions": st.none() | topic_partitions,
    }
    if version >= 1:
        optional["subscribed_topic_regex"] = nullable_text
    for name, values in optional.items():
        if draw(st.booleans()):  # absent: the encoder writes the default (null, -1)
            body[name] = draw(values)
    return version, body


def construct_decode(payload: bytes) -> tuple[Container, Container]:
    """(header, body) as the construct codec alone decodes them."""
    version = struct.unpack_from(">h", payload, 2)[0]
    io = BytesIO(payload)
    header = message_struct(REQUEST_HEADER, 2).parse_stream(io)
    body = message_struct(REQUEST, version).parse_stream(io)
    return header, body


def construct_encode(version: int, correlation_id: int, body: dict[str, Any]) -> bytes:
    """The response frame as the construct codec alone writes it."""
    io = BytesIO()
    message_struct(RESPONSE_HEADER, 1).build_stream({"correlation_id": correlation_id}, io)
    message_struct(RESPONSE, version).build_stream(body, io)
    data = io.getvalue()
    return struct.pack(">i", len(data)) + data


# The fields a steady request leaves at their defaults (null; rebalance_timeout_ms -1).
STEADY_NULLS = ("instance_id", "rack_id", "subscribed_topic_names", "subscribed_topic_regex",
                "server_assignor", "topic_partitions")


def is_steady(body: Any) -> bool:
    """Whether a decoded request body has every field after member_epoch at its default."""
    return body["rebalance_timeout_ms"] == -1 and all(body[n] is None for n in STEADY_NULLS)


def assert_same_values(fast: Any, reference: Any) -> None:
    """Equal values of the same types (Container, list, UUID) all the way down; a request
    body is a SteadyRequestBody (a Container) exactly when it is steady."""
    if type(reference) is Container and "rebalance_timeout_ms" in reference:
        assert (type(fast) is SteadyRequestBody) == is_steady(reference), (fast, reference)
        assert isinstance(fast, Container)
    else:
        assert type(fast) is type(reference), (fast, reference)
    if isinstance(reference, dict):
        assert list(fast) == list(reference)  # same keys in the same order
        for name in reference:
            assert_same_values(fast[name], reference[name])
    elif isinstance(reference, list):
        assert len(fast) == len(reference)
        for a, b in zip(fast, reference, strict=True):
            assert_same_values(a, b)
    else:
        assert fast == reference


@EXAMPLES
@given(request_bodies(), nullable_text, int32)
def test_request_decodes_as_construct_does(
    drawn: tuple[int, dict[str, Any]], client_id: str | None, correlation_id: int
) -> None:
    version, body = drawn
    payload = wire.encode_request(68, version, correlation_id, client_id, body)[4:]
    header, reference = construct_decode(payload)
    fast = decode_request_body(payload)
    assert fast is not None
    assert fast[0] == header.client_id
    assert_same_values(fast[1], reference)
    decoded = fast_codec.decode_request(payload)  # the server's entry point takes the fast path
    assert (decoded.api_version, decoded.correlation_id) == (version, correlation_id)
    assert decoded.client_id == client_id
    assert_same_values(decoded.body, reference)


@pytest.mark.parametrize("version", VERSIONS)
def test_steady_heartbeat_has_every_optional_field_at_its_default(version: int) -> None:
    payload = wire.encode_request(68, version, 5, "rdkafka", {
        "group_id": "g", "member_id": "m", "member_epoch": 7})[4:]
    fast = decode_request_body(payload)
    assert fast is not None
    assert_same_values(fast[1], construct_decode(payload)[1])
    assert fast[1]["subscribed_topic_regex"] is None
    assert fast[1]["rebalance_timeout_ms"] == -1


@pytest.mark.parametrize("version", VERSIONS)
def test_steady_request_decoded_again_from_its_bytes(version: int) -> None:
    """A member's later steady heartbeats (the same bytes but the correlation id) are read
    from what the first one decoded to: equal values, a new body each time; a frame that
    differs before the correlation id (API key, version) is not taken for it."""
    body = {"group_id": "g", "member_id": "m-1", "member_epoch": 3}
    first = decode_request_body(wire.encode_request(68, version, 1, "rdkafka", body)[4:])
    again_payload = wire.encode_request(68, version, 2, "rdkafka", body)[4:]
    again = decode_request_body(again_payload)
    assert first is not None and again is not None
    assert again[0] == "rdkafka"
    assert_same_values(again[1], construct_decode(again_payload)[1])
    assert again[1] is not first[1]
    again[1]["member_epoch"] = 99  # a handler changing its body changes no later one
    later = decode_request_body(again_payload)
    assert later is not None and later[1]["member_epoch"] == 3
    other_api = struct.pack(">h", 12) + again_payload[2:]
    assert decode_request_body(other_api) is None
    other_version = again_payload[:2] + struct.pack(">h", 1 - version) + again_payload[4:]
    decoded = decode_request_body(other_version)  # a v0 tail read as v1 is not steady
    assert decoded is None or type(decoded[1]) is not SteadyRequestBody


def _with_header_tags(payload: bytes, tags: bytes) -> bytes:
    """The frame with its (empty) header tagged-field section replaced by ``tags``."""
    client_id_size = struct.unpack_from(">h", payload, 8)[0]
    at = 10 + max(client_id_size, 0)
    assert payload[at] == 0
    return payload[:at] + tags + payload[at + 1 :]


@EXAMPLES
@given(request_bodies(), st.sampled_from(["header", "body", "element"]),
       st.dictionaries(st.integers(0, 300), st.binary(max_size=5), min_size=1, max_size=3))
def test_tagged_fields_are_declined_and_decoded_by_construct(
    drawn: tuple[int, dict[str, Any]], where: str, tags: dict[int, bytes]
) -> None:
    version, body = drawn
    if where == "body":
        body = {**body, UNKNOWN_TAGS: tags}
    elif where == "element":
        body = {**body, "topic_partitions": [{"topic_id": uuid.UUID(int=3), "partitions": [1],
                                              UNKNOWN_TAGS: tags}]}
    payload = wire.encode_request(68, version, 1, "c", body)[4:]
    if where == "header":
        section = bytearray(bytes([len(tags)]))
        for tag in sorted(tags):
            section += bytes([tag]) if tag < 0x80 else bytes([tag & 0x7F | 0x80, tag >> 7])
            section += bytes([len(tags[tag])]) + tags[tag]
        payload = _with_header_tags(payload, bytes(section))
    assert decode_request_body(payload) is None
    header, reference = construct_decode(payload)
    decoded = fast_codec.decode_request(payload)
    assert decoded.client_id == header.client_id
    assert decoded.body == reference
    if where != "header":
        carrier = reference if where == "body" else reference.topic_partitions[0]
        assert carrier[UNKNOWN_TAGS] == tags


def _construct_outcome(payload: bytes) -> Any:
    try:
        return construct_decode(payload)
    except Exception:
        return None


@EXAMPLES
@given(request_bodies(), st.data())
def test_damaged_frames_are_declined_or_decoded_as_construct_does(
    drawn: tuple[int, dict[str, Any]], data: st.DataObject
) -> None:
    version, body = drawn
    payload = bytearray(wire.encode_request(68, version, 1, "c", body)[4:])
    damage = data.draw(st.sampled_from(["truncate", "flip", "append"]))
    if damage == "truncate":
        payload = payload[: data.draw(st.integers(0, len(payload) - 1))]
    elif damage == "flip":
        for _ in range(data.draw(st.integers(1, 3))):
            at = data.draw(st.integers(4, len(payload) - 1))  # keep the api key and version
            payload[at] = data.draw(st.integers(0, 255))
    else:
        payload += data.draw(st.binary(min_size=1, max_size=4))
    frame = bytes(payload)
    fast = decode_request_body(frame)
    reference = _construct_outcome(frame)
    if fast is None:
        if reference is None:
            with pytest.raises(wire.CorruptFrame):
                fast_codec.decode_request(frame)
        else:
            assert fast_codec.decode_request(frame).body == reference[1]
        return
    assert reference is not None, "the fast path accepted a frame construct refuses"
    assert fast[0] == reference[0].client_id
    assert_same_values(fast[1], reference[1])


@pytest.mark.parametrize("payload", [
    b"", b"\x00\x44", struct.pack(">hhih", 68, 2, 1, -1) + b"\x00",  # short; v2
    struct.pack(">hhih", 12, 4, 1, -1) + b"\x00",  # Heartbeat
    struct.pack(">hhih", 68, 1, 1, -2) + b"\x00",  # client id length -2
])
def test_other_frames_are_declined(payload: bytes) -> None:
    assert decode_request_body(payload) is None


assignments = st.none() | st.fixed_dictionaries({"topic_partitions": topic_partitions})


@st.composite
def response_bodies(draw: st.DrawFn) -> dict[str, Any]:
    fields = {
        "throttle_time_ms": int32,
        "error_code": st.integers(-(2**15), 2**15 - 1) | st.sampled_from(list(wire.ErrorCode)),
        "error_message": nullable_text,
        "member_id": nullable_text,
        "member_epoch": int32,
        "heartbeat_interval_ms": int32,
        "assignment": assignments,
    }
    return {name: draw(values) for name, values in fields.items() if draw(st.booleans())}


@EXAMPLES
@given(st.sampled_from(VERSIONS), int32, response_bodies())
def test_response_encodes_as_construct_does(
    version: int, correlation_id: int, body: dict[str, Any]
) -> None:
    expected = construct_encode(version, correlation_id, body)
    assert encode_response_frame(version, correlation_id, body) == expected
    assert fast_codec.encode_response(68, version, correlation_id, body) == expected


@pytest.mark.parametrize("version", VERSIONS)
def test_steady_answer_is_the_codec_bytes(version: int) -> None:
    body = {"error_code": 0, "member_id": "m-1", "member_epoch": 4,
            "heartbeat_interval_ms": 5000}
    frame = encode_response_frame(version, 12, body)
    assert frame == construct_encode(version, 12, body)
    correlation_id, decoded = wire.decode_response(68, version, frame[4:])  # type: ignore[index]
    assert correlation_id == 12
    assert decoded.assignment is None
    assert decoded.member_epoch == 4


@pytest.mark.parametrize("body", [
    {UNKNOWN_TAGS: {4: b"x"}},
    {"assignment": {"topic_partitions": [], UNKNOWN_TAGS: {1: b""}}},
    {"assignment": {"topic_partitions": [{"topic_id": uuid.UUID(int=1), "partitions": [],
                                          UNKNOWN_TAGS: {0: b"ab"}}]}},
    {"assignment": {}},  # construct writes its default, an empty topic_partitions
], ids=["body", "assignment", "element", "no-partitions"])
def test_responses_declined_are_left_to_construct(body: dict[str, Any]) -> None:
    assert encode_response_frame(1, 3, body) is None
    assert fast_codec.encode_response(68, 1, 3, body) == construct_encode(1, 3, body)


@pytest.mark.parametrize("body", [
    {"member_epoch": 2**31},
    {"error_message": 5},
    {"assignment": {"topic_partitions": [{"topic_id": "not a uuid", "partitions": []}]}},
], ids=["epoch-range", "message-type", "topic-id"])
def test_bodies_construct_refuses_are_refused_the_same(body: dict[str, Any]) -> None:
    assert encode_response_frame(1, 3, body) is None
    with pytest.raises(Exception) as from_construct:
        construct_encode(1, 3, body)
    with pytest.raises(type(from_construct.value)):
        fast_codec.encode_response(68, 1, 3, body)


@pytest.mark.parametrize("version", VERSIONS)
def test_steady_answers_kept_encoded_are_the_codec_bytes(version: int) -> None:
    """A steady answer is encoded once per member, epoch and interval; every later one is
    that with its own correlation id, byte for byte the codec's."""
    body = {"error_code": 0, "member_id": "m-kept", "member_epoch": 7,
            "heartbeat_interval_ms": 5000}
    for correlation_id in (1, -5, 2**31 - 1, 1):
        assert encode_response_frame(version, correlation_id, body) == construct_encode(
            version, correlation_id, body)
    for changed in ({"member_epoch": 8}, {"heartbeat_interval_ms": 3000},
                    {"member_id": "m-other"}, {"error_code": wire.ErrorCode.NONE}):
        other = {**body, **changed}
        assert encode_response_frame(version, 2, other) == construct_encode(version, 2, other)


@pytest.mark.parametrize("body", [
    # The kept answer's values, but not its four keys.
    {"error_code": 0, "member_id": "m-kept", "member_epoch": 7, "throttle_time_ms": 5000},
    {"error_code": 0, "member_id": "m-kept", "heartbeat_interval_ms": 5000,
     "error_message": None},
    {"error_code": 0, "member_id": "m-kept", "member_epoch": 7,
     "heartbeat_interval_ms": 5000, "assignment": None},
    {"error_code": 0, "member_epoch": 7, "heartbeat_interval_ms": 5000,
     "assignment": {"topic_partitions": []}},
], ids=["throttle", "message", "assignment-null", "no-member-id"])
def test_bodies_like_a_kept_answer_are_encoded_in_full(body: dict[str, Any]) -> None:
    kept = {"error_code": 0, "member_id": "m-kept", "member_epoch": 7,
            "heartbeat_interval_ms": 5000}
    encode_response_frame(1, 1, kept)
    assert encode_response_frame(1, 3, body) == construct_encode(1, 3, body)


@pytest.mark.parametrize("changed", [
    {"member_epoch": 7.0}, {"heartbeat_interval_ms": 5000.0}, {"error_code": 0.0},
], ids=["epoch", "interval", "error-code"])
def test_floats_equal_to_a_kept_answer_are_refused_as_construct_does(
    changed: dict[str, Any],
) -> None:
    kept = {"error_code": 0, "member_id": "m-kept", "member_epoch": 7,
            "heartbeat_interval_ms": 5000}
    encode_response_frame(1, 1, kept)
    body = {**kept, **changed}
    assert encode_response_frame(1, 3, body) is None
    with pytest.raises(Exception) as from_construct:
        construct_encode(1, 3, body)
    with pytest.raises(type(from_construct.value)):
        fast_codec.encode_response(68, 1, 3, body)


def test_kept_answers_are_bounded() -> None:
    from wire import consumer_group_heartbeat_codec as codec

    limit = codec._STEADY_ANSWERS.limit
    for epoch in range(limit + 10):
        body = {"error_code": 0, "member_id": "m-many", "member_epoch": epoch,
                "heartbeat_interval_ms": 5000}
        encode_response_frame(1, epoch, body)
    assert 0 < len(codec._STEADY_ANSWERS) <= limit
    assert encode_response_frame(1, 9, body) == construct_encode(1, 9, body)
