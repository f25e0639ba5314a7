"""Placement of groups and transactional ids: Java's String.hashCode and Kafka's Utils.abs."""

from __future__ import annotations

import pytest

from coordinator.txn import java_string_hash, kafka_abs, partition_for

# Values of "...".hashCode() as Java computes them.
JAVA_HASHES = {
    "": 0,
    "a": 97,
    "g": 103,
    "Aa": 2112,
    "BB": 2112,
    "abc": 96354,
    "test": 3556498,
    "hello": 99162322,
    "Hello World": -862545276,
    "polygenelubricants": -(2**31),  # the famous Integer.MIN_VALUE
    "\u00e9t\u00e9": 227_742,  # 233*31^2 + 116*31 + 233: one UTF-16 unit per letter
    "\U0001f600": 1_772_899,  # 0xD83D*31 + 0xDE00: a surrogate pair is two units
}


@pytest.mark.parametrize(("text", "expected"), sorted(JAVA_HASHES.items()))
def test_java_string_hash(text: str, expected: int) -> None:
    assert java_string_hash(text) == expected


def test_kafka_abs_maps_integer_min_value_to_zero() -> None:
    assert kafka_abs(-(2**31)) == 0
    assert kafka_abs(-5) == 5 and kafka_abs(7) == 7


def test_partition_for_follows_kafka() -> None:
    assert partition_for("hello", 50) == 99162322 % 50 == 22
    assert partition_for("Hello World", 50) == 862545276 % 50 == 26
    # Math.abs would leave Integer.MIN_VALUE negative; Utils.abs makes it partition 0.
    assert partition_for("polygenelubricants", 50) == 0
    assert partition_for("g", 50) == 3
    with pytest.raises(ValueError):
        partition_for("g", 0)
