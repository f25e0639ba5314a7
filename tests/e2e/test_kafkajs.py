"""kafkajs 2.2.4, the fifth real client: produces, forms a two-member group, consumes
everything, commits per message, describes the group and fetches its offsets."""

from __future__ import annotations

import json
import subprocess

from e2e_support import KAFKAJS_DIR, KcoordProcess, kafkajs_node
from kafka import KafkaConsumer, TopicPartition
from kafka.admin import KafkaAdminClient

COUNT = 120


def log_ends(bootstrap: str, partitions: list[int]) -> dict[int, int]:
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, request_timeout_ms=10_000)
    try:
        ends = consumer.end_offsets([TopicPartition("t12", p) for p in partitions])
        return {tp.partition: offset for tp, offset in ends.items()}
    finally:
        consumer.close()


def test_kafkajs_group_consumes_and_commits(kcoord: KcoordProcess) -> None:
    node = kafkajs_node()
    run = subprocess.run(
        [node, str(KAFKAJS_DIR / "group_run.js"), kcoord.bootstrap, "t12", "kafkajs", str(COUNT)],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout.strip().splitlines()[-1])

    # Both members owned a disjoint share of the 12 partitions before the produce.
    owned = [set(partitions) for partitions in result["owned"]]
    assert owned[0] and owned[1] and not owned[0] & owned[1]
    assert owned[0] | owned[1] == set(range(12))
    # Every message was seen; a redelivery after a rebalance is allowed, a loss is not.
    seen = result["seen"]
    assert {s["value"] for s in seen} == {f"js-{i}" for i in range(COUNT)}
    assert result["group"] == {"state": "Stable", "protocolType": "consumer", "members": 2}

    # What kafkajs committed is what kafkajs fetched back, and what kafka-python reads:
    # each partition's log end.
    ends = log_ends(kcoord.bootstrap, list(range(12)))
    assert sum(ends.values()) == COUNT
    fetched = {c["partition"]: c["offset"] for c in result["committed"]}
    expected = {p: end if end else -1 for p, end in ends.items()}
    assert fetched == expected
    admin = KafkaAdminClient(bootstrap_servers=kcoord.bootstrap, request_timeout_ms=10_000)
    try:
        offsets = admin.list_group_offsets({"kafkajs": None})["kafkajs"]
    finally:
        admin.close()
    assert {tp.partition: om.offset for tp, om in offsets.items()} == {
        p: end for p, end in ends.items() if end
    }
