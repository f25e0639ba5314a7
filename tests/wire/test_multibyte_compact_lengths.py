"""Compact lengths and counts of 128 or more take two varint bytes: the one-byte fast paths
of read_uvarint / read_string / read_array_count must hand them to the full reader."""

from __future__ import annotations

import uuid
from io import BytesIO

import pytest

from wire import decode_request, encode_request
from wire.fast_primitives import WireDecodeError, read_string


def test_long_compact_strings_and_arrays_round_trip() -> None:
    body = {
        "group_id": "g" * 200,
        "member_id": "m" * 127,  # length+1 = 128: the first two-byte length
        "member_epoch": 5,
        "subscribed_topic_names": [f"topic-{i}" for i in range(300)],
        "topic_partitions": [{"topic_id": uuid.UUID(int=1), "partitions": list(range(130))}],
    }
    decoded = decode_request(encode_request(68, 1, 9, "c" * 150, body)[4:])
    assert decoded.client_id == "c" * 150
    assert decoded.body["group_id"] == "g" * 200
    assert decoded.body["member_id"] == "m" * 127
    assert decoded.body["subscribed_topic_names"] == body["subscribed_topic_names"]
    assert decoded.body["topic_partitions"][0]["partitions"] == list(range(130))
    assert decoded.body["subscribed_topic_regex"] is None


@pytest.mark.parametrize("cut", [1, 2], ids=["length-missing", "second-byte-missing"])
def test_truncated_compact_length_is_rejected(cut: int) -> None:
    data = bytes([0x81, 0x01]) + b"x" * 128  # length+1 = 129
    assert read_string(BytesIO(data), True, True) == "x" * 128
    with pytest.raises(WireDecodeError, match="truncated varint"):
        read_string(BytesIO(data[: 2 - cut]), True, True)
