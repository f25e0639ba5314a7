"""``wire.fast_codec``: the hand-coded OffsetCommit and Heartbeat paths equal the construct
codec -- decoded requests field for field, encoded responses byte for byte -- over every
version and the field values Hypothesis picks; on frames the codec rejects they reject the
same way (the codec takes every shape the hand-coded path declines)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from construct import Container
from hypothesis import given, settings
from hypothesis import strategies as st

import wire
from wire import fast_codec
from wire.apis import offset_commit
from wire.fast_frames import UNKNOWN_TAGS
from wire.schema import UNKNOWN_TAGS as SCHEMA_UNKNOWN_TAGS

INT16 = st.integers(-(2**15), 2**15 - 1)
INT32 = st.integers(-(2**31), 2**31 - 1)
INT64 = st.integers(-(2**63), 2**63 - 1)
TEXT = st.text(max_size=12)
COMMIT_VERSIONS = st.integers(0, 10)
HEARTBEAT_VERSIONS = st.integers(0, 4)


def plain(value: Any) -> Any:
    """Containers as dicts, recursively (a Container compares by more than its items)."""
    if isinstance(value, dict | Container):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def same_decoding(frame: bytes) -> None:
    payload = frame[4:]
    try:
        expected = wire.decode_request(payload)
    except wire.CorruptFrame as exc:
        with pytest.raises(type(exc)) as raised:
            fast_codec.decode_request(payload)
        assert str(raised.value) == str(exc)
        return
    got = fast_codec.decode_request(payload)
    assert (got.api_key, got.api_version, got.correlation_id, got.client_id, got.spec) == (
        expected.api_key, expected.api_version, expected.correlation_id, expected.client_id,
        expected.spec)
    assert plain(got.body) == plain(expected.body)


partition = st.fixed_dictionaries({
    "partition_index": INT32,
    "committed_offset": INT64,
    "committed_leader_epoch": INT32,
    "commit_timestamp": INT64,
    "committed_metadata": st.none() | TEXT,
})
topic = st.fixed_dictionaries({
    "name": TEXT,
    "topic_id": st.uuids(),
    "partitions": st.lists(partition, max_size=5),
})
commit_request = st.fixed_dictionaries({
    "group_id": TEXT,
    "generation_id_or_member_epoch": INT32,
    "member_id": TEXT,
    "group_instance_id": st.none() | TEXT,
    "retention_time_ms": INT64,
    "topics": st.lists(topic, max_size=4),
})
heartbeat_request = st.fixed_dictionaries({
    "group_id": TEXT,
    "generation_id": INT32,
    "member_id": TEXT,
    "group_instance_id": st.none() | TEXT,
})


def test_unknown_tags_key_is_the_schemas() -> None:
    assert UNKNOWN_TAGS == SCHEMA_UNKNOWN_TAGS


@settings(max_examples=300, deadline=None)
@given(COMMIT_VERSIONS, INT32, st.none() | TEXT, commit_request)
def test_offset_commit_request_decodes_as_the_codec(
    version: int, correlation_id: int, client_id: str | None, body: dict[str, Any]
) -> None:
    same_decoding(wire.encode_request(8, version, correlation_id, client_id, body))


@settings(max_examples=200, deadline=None)
@given(HEARTBEAT_VERSIONS, INT32, st.none() | TEXT, heartbeat_request)
def test_heartbeat_request_decodes_as_the_codec(
    version: int, correlation_id: int, client_id: str | None, body: dict[str, Any]
) -> None:
    same_decoding(wire.encode_request(12, version, correlation_id, client_id, body))


@st.composite
def damaged(draw: st.DrawFn) -> bytes:
    """A valid OffsetCommit or Heartbeat frame, then cut, extended or with bytes changed."""
    if draw(st.booleans()):
        frame = wire.encode_request(8, draw(COMMIT_VERSIONS), 1, draw(st.none() | TEXT),
                                    draw(commit_request))
    else:
        frame = wire.encode_request(12, draw(HEARTBEAT_VERSIONS), 1, draw(st.none() | TEXT),
                                    draw(heartbeat_request))
    return _damage(draw, frame)


def _damage(draw: st.DrawFn, frame: bytes) -> bytes:
    """``frame`` cut, extended or with bytes changed, one to three times."""
    data = bytearray(frame)
    for _ in range(draw(st.integers(1, 3))):
        how = draw(st.sampled_from(["cut", "extend", "flip"]))
        if how == "cut":
            del data[draw(st.integers(12, len(data))):]
        elif how == "extend":
            data += draw(st.binary(min_size=1, max_size=4))
        elif len(data) > 12:
            data[draw(st.integers(12, len(data) - 1))] = draw(st.integers(0, 255))
    return bytes(data)


@settings(max_examples=500, deadline=None)
@given(damaged())
def test_damaged_frames_decode_or_fail_as_the_codec(frame: bytes) -> None:
    same_decoding(frame)


def test_message_and_topics_read_as_attributes() -> None:
    """Code outside the core reads decoded messages by attribute (routing: ``group_id``)."""
    body = {"group_id": "g", "generation_id_or_member_epoch": 1, "member_id": "m",
            "topics": [{"name": "t", "partitions": [{"partition_index": 4,
                                                     "committed_offset": 5}]}]}
    request = fast_codec.decode_request(wire.encode_request(8, 8, 3, "c", body)[4:])
    assert type(request.body) is Container
    assert request.body.group_id == "g"
    assert request.body.topics[0].name == "t"
    assert request.body.topics[0].partitions[0]["partition_index"] == 4
    heartbeat = {"group_id": "h", "generation_id": 2, "member_id": "m"}
    assert fast_codec.decode_request(
        wire.encode_request(12, 4, 3, "c", heartbeat)[4:]).body.generation_id == 2


def test_tagged_fields_are_left_to_the_codec() -> None:
    body = {"group_id": "g", "generation_id_or_member_epoch": 1, "member_id": "m",
            "topics": [{"name": "t", "partitions": [{"partition_index": 0,
                                                     "committed_offset": 5}]}],
            UNKNOWN_TAGS: {7: b"xy"}}
    frame = wire.encode_request(8, 8, 3, "c", body)
    same_decoding(frame)
    assert fast_codec.decode_request(frame[4:]).body[UNKNOWN_TAGS] == {7: b"xy"}


answer = st.fixed_dictionaries({"partition_index": INT32, "error_code": INT16})
answer_topic = st.fixed_dictionaries(
    {"name": TEXT, "partitions": st.lists(answer, max_size=5)},
    optional={"topic_id": st.uuids()},
)
commit_response = st.fixed_dictionaries(
    {"topics": st.lists(answer_topic, max_size=4)}, optional={"throttle_time_ms": INT32}
)


def same_encoding(api_key: int, version: int, correlation_id: int, body: Any) -> None:
    try:
        expected = wire.encode_response(api_key, version, correlation_id, body)
    except Exception as exc:
        with pytest.raises(type(exc)):
            fast_codec.encode_response(api_key, version, correlation_id, body)
        return
    assert fast_codec.encode_response(api_key, version, correlation_id, body) == expected


@settings(max_examples=300, deadline=None)
@given(COMMIT_VERSIONS, INT32, commit_response)
def test_offset_commit_response_encodes_as_the_codec(
    version: int, correlation_id: int, body: dict[str, Any]
) -> None:
    same_encoding(8, version, correlation_id, body)


@settings(max_examples=100, deadline=None)
@given(HEARTBEAT_VERSIONS, INT32, INT16, st.none() | INT32)
def test_heartbeat_response_encodes_as_the_codec(
    version: int, correlation_id: int, error_code: int, throttle: int | None
) -> None:
    body: dict[str, Any] = {"error_code": error_code}
    if throttle is not None:
        body["throttle_time_ms"] = throttle
    same_encoding(12, version, correlation_id, body)


@pytest.mark.parametrize("body", [
    {"topics": [{"name": "t", "partitions": [{"partition_index": 2**31, "error_code": 0}]}]},
    {"topics": [{"name": "t", "partitions": [{"partition_index": 1}]}]},
    {"topics": [{"name": "t", "partitions": [{"partition_index": 1, "error_code": 0,
                                              UNKNOWN_TAGS: {3: b"z"}}]}]},
    {"topics": [{"name": "t", "topic_id": uuid.uuid4(), "partitions": []}], UNKNOWN_TAGS: {}},
], ids=["out-of-range", "default-error", "unknown-tags", "top-level-tags"])
@pytest.mark.parametrize("version", [0, 3, 8, 10])
def test_shapes_left_to_the_codec_encode_as_the_codec(version: int, body: Any) -> None:
    same_encoding(8, version, 5, body)


# ------------------------------------------- v8/v9 in a consumer's shape, read in one step

# Strings around the one-byte compact length (126 bytes), partitions around 127.
SHORT_OR_LONG = st.text(max_size=3) | st.text(alphabet="aé", min_size=60, max_size=130)
consumer_partition = st.fixed_dictionaries({
    "partition_index": INT32,
    "committed_offset": INT64,
    "committed_leader_epoch": INT32,
    "committed_metadata": st.sampled_from(["", "", None]) | SHORT_OR_LONG,
})
consumer_commit = st.fixed_dictionaries({
    "group_id": SHORT_OR_LONG,
    "generation_id_or_member_epoch": INT32,
    "member_id": SHORT_OR_LONG,
    "group_instance_id": st.none() | SHORT_OR_LONG,
    "topics": st.lists(st.fixed_dictionaries({
        "name": SHORT_OR_LONG,
        "partitions": st.lists(consumer_partition, max_size=3),
    }), min_size=1, max_size=2),
})


def _consumer_shape(client_id: str | None, body: dict[str, Any]) -> bool:
    """Whether ``_consumer_frame`` reads this frame (else the general reader does)."""
    def short(s: str | None) -> bool:
        return s is None or len(s.encode()) < 127

    (topic,) = body["topics"] if len(body["topics"]) == 1 else (None,)
    return (client_id is not None and topic is not None
            and all(short(body[k]) for k in ("group_id", "member_id", "group_instance_id"))
            and body["group_id"] is not None and short(topic["name"])
            and len(topic["partitions"]) < 127)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from([8, 9]), INT32, st.none() | TEXT, consumer_commit)
def test_consumer_frame_decodes_as_the_codec(
    version: int, correlation_id: int, client_id: str | None, body: dict[str, Any]
) -> None:
    frame = wire.encode_request(8, version, correlation_id, client_id, body)
    same_decoding(frame)
    read = offset_commit._consumer_frame(frame[4:], dict)
    assert (read is not None) == _consumer_shape(client_id, body)


@st.composite
def damaged_consumer_frame(draw: st.DrawFn) -> bytes:
    """A v8/v9 consumer frame, then cut, extended or with bytes changed."""
    body = draw(consumer_commit)
    body["topics"] = body["topics"][:1]
    return _damage(draw, wire.encode_request(8, draw(st.sampled_from([8, 9])), 1, "c", body))


@settings(max_examples=300, deadline=None)
@given(damaged_consumer_frame())
def test_damaged_consumer_frames_decode_or_fail_as_the_codec(frame: bytes) -> None:
    same_decoding(frame)


@pytest.mark.parametrize("count", [0, 126, 127, 128])
def test_consumer_frame_partition_counts(count: int) -> None:
    """Up to 126 partitions the count takes one byte and ``_consumer_frame`` reads them."""
    body = {"group_id": "g", "generation_id_or_member_epoch": 3, "member_id": "m",
            "group_instance_id": None, "topics": [{"name": "t", "partitions": [
                {"partition_index": i, "committed_offset": i * 7, "committed_leader_epoch": -1,
                 "committed_metadata": "" if i % 2 else "m"} for i in range(count)]}]}
    frame = wire.encode_request(8, 9, 5, "c", body)
    same_decoding(frame)
    assert (offset_commit._consumer_frame(frame[4:], dict) is not None) == (count < 127)
