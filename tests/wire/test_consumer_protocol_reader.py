"""The one reader of the embedded ``consumer`` protocol (``wire.consumer_protocol``: online
migration, a classic group's subscribed topics, the log dump, the pipeline) and its
assignment writer agree with the schema-driven codec in ``wire.consumer_protocol_schema``,
and refuse malformed bytes."""

from __future__ import annotations

import pytest

from wire import consumer_protocol as embedded
from wire.consumer_protocol_schema import encode_assignment, encode_subscription


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4])
def test_embedded_protocol_agrees_with_the_wire_codec(version: int) -> None:
    blob = encode_subscription(min(version, 3), {
        "topics": ["foo", "bar"], "user_data": b"ud",
        "owned_partitions": [{"topic": "foo", "partitions": [1, 2]}],
        "generation_id": 7, "rack_id": "r1",
    })
    if version == 4:  # a newer version is read with the v3 layout, trailing bytes ignored
        blob = (4).to_bytes(2, "big") + blob[2:] + b"\x00\x01"
    got = embedded.decode_subscription(blob)
    assert got.topics == ("foo", "bar")
    assert got.owned_partitions == ((("foo", (1, 2)),) if version >= 1 else ())
    assert got.rack_id == ("r1" if version >= 3 else None)
    assert embedded.protocol_version(blob) == min(version, 3)
    partitions = (("foo", (0, 3)), ("bar", ()))
    ours = embedded.encode_assignment(min(version, 3), partitions)
    assert ours == encode_assignment(min(version, 3), {"assigned_partitions": [
        {"topic": t, "partitions": list(p)} for t, p in partitions], "user_data": None})
    assert embedded.decode_assignment(ours) == partitions


@pytest.mark.parametrize("blob", [b"", b"\x00", b"\xff\xff", b"\x00\x00\x00\x00\x00\x05a",
                                  b"\x00\x00\x7f\xff\xff\xff"])
def test_malformed_embedded_protocol_is_rejected(blob: bytes) -> None:
    with pytest.raises(embedded.MalformedEmbeddedProtocolError):
        embedded.decode_subscription(blob)
    with pytest.raises(embedded.MalformedEmbeddedProtocolError):
        embedded.decode_assignment(blob)


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_subscription_topics_reads_what_the_schema_writes(version: int) -> None:
    blob = encode_subscription(version, {
        "topics": ["foo", "bar"], "user_data": None, "owned_partitions": [],
        "generation_id": 1, "rack_id": None,
    })
    assert embedded.subscription_topics(blob) == {"foo", "bar"}
    # Only the topic list is read (as Kafka's computeSubscribedTopics): a torn tail is fine.
    assert embedded.subscription_topics(blob[:-1] if version else blob) == {"foo", "bar"}


def test_subscription_topics_reads_a_name_that_is_not_utf8_as_java_does() -> None:
    blob = b"\x00\x00" + b"\x00\x00\x00\x01" + b"\x00\x02a\xff" + b"\xff\xff\xff\xff"
    assert embedded.subscription_topics(blob) == {"a\ufffd"}
    with pytest.raises(embedded.MalformedEmbeddedProtocolError):
        embedded.decode_subscription(blob)  # migration reads strictly
