"""Placement of groups and transactional ids: Java's String.hashCode and Kafka's Utils.abs."""

from __future__ import annotations

from typing import Any

import pytest

from coordinator.txn.placement import java_string_hash, kafka_abs, partition_for

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


JAVA_PLACEMENT = """
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
public class Placement {
    public static void main(String[] args) throws Exception {
        for (String id : Files.readAllLines(Paths.get(args[0]), StandardCharsets.UTF_8)) {
            int h = id.hashCode();
            int abs = h == Integer.MIN_VALUE ? 0 : Math.abs(h);  // Kafka's Utils.abs
            System.out.println(abs % 50);
        }
    }
}
"""


def test_placement_equals_java_for_a_sample_of_group_ids(tmp_path: Any) -> None:
    """Issue 13: Java itself computes abs(id.hashCode()) % 50 for 500 ids (ASCII, accents,
    surrogate pairs, the Integer.MIN_VALUE case); the cluster places each the same way."""
    import random
    import shutil
    import subprocess

    from coordinator.server.cluster import Cluster

    java = shutil.which("java")
    if java is None:
        pytest.skip("no java on this machine (the JAVA_HASHES table above still checks)")
    rng = random.Random(13)
    alphabet = "abcXYZ09-_.é中\U0001f600"
    ids = ["polygenelubricants", "hello", "console-consumer-1234", "my-group"] + [
        "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 24))) for _ in range(496)
    ]
    (tmp_path / "Placement.java").write_text(JAVA_PLACEMENT)
    (tmp_path / "ids.txt").write_text("\n".join(ids) + "\n", encoding="utf-8")
    result = subprocess.run([java, str(tmp_path / "Placement.java"), str(tmp_path / "ids.txt")],
                            capture_output=True, text=True, timeout=120, check=True)
    expected = [int(line) for line in result.stdout.split()]
    assert len(expected) == len(ids)
    cluster = Cluster(3)
    assert [partition_for(i, 50) for i in ids] == expected
    assert [cluster.coordinator("__consumer_offsets", i) for i in ids] == [
        p % 3 for p in expected]
    assert [cluster.coordinator("__transaction_state", i) for i in ids] == [
        p % 3 for p in expected]
