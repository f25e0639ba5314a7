"""A kafka-python consumer in its own process (so a test can SIGKILL it: a real crash).

Usage: python kp_consumer_proc.py BOOTSTRAP GROUP TOPIC [INSTANCE_ID]
Prints one JSON line per assignment change: {"assignment": [...], "generation": N}.
"""

from __future__ import annotations

import json
import sys

from kafka import KafkaConsumer


def main() -> None:
    bootstrap, group, topic = sys.argv[1:4]
    instance_id = sys.argv[4] if len(sys.argv) > 4 else None
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap,
        group_id=group,
        group_instance_id=instance_id,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        session_timeout_ms=6000,
        heartbeat_interval_ms=500,
        client_id="crashable",
    )
    consumer.subscribe([topic])
    last = None
    while True:
        consumer.poll(timeout_ms=1000)  # see kp_support.POLL_MS
        current = sorted(tp.partition for tp in consumer.assignment())
        if current != last:
            last = current
            generation = consumer._coordinator._generation.generation_id
            print(json.dumps({"assignment": current, "generation": generation}), flush=True)


if __name__ == "__main__":
    main()
