"""A confluent-kafka consumer with ``group.protocol=consumer`` in its own process (so a test
can SIGKILL it: a real crash).

Usage: python ck_consumer_proc.py BOOTSTRAP GROUP TOPIC
Prints one JSON line per assignment change: {"assignment": [...]}.
"""

from __future__ import annotations

import json
import sys

import confluent_kafka


def main() -> None:
    bootstrap, group, topic = sys.argv[1:4]
    consumer = confluent_kafka.Consumer({
        "bootstrap.servers": bootstrap, "group.id": group, "group.protocol": "consumer",
        "auto.offset.reset": "earliest"})
    owned: set[int] = set()

    def report() -> None:
        print(json.dumps({"assignment": sorted(owned)}), flush=True)

    def on_assign(_: object, parts: list[confluent_kafka.TopicPartition]) -> None:
        owned.update(p.partition for p in parts)
        report()

    def on_revoke(_: object, parts: list[confluent_kafka.TopicPartition]) -> None:
        owned.difference_update(p.partition for p in parts)
        report()

    consumer.subscribe([topic], on_assign=on_assign, on_revoke=on_revoke)
    while True:
        consumer.poll(0.1)


if __name__ == "__main__":
    main()
