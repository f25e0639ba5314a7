"""A kafka-python consumer in its own process, to be SIGKILLed by a test (a crash: no
LeaveGroup, no more heartbeats). Prints ``assigned N`` once it owns partitions."""

import sys
import time
import warnings

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from kafka import KafkaConsumer

bootstrap, group, topic, session_ms = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
consumer = KafkaConsumer(
    topic,
    bootstrap_servers=bootstrap,
    group_id=group,
    client_id="crasher",
    session_timeout_ms=session_ms,
    heartbeat_interval_ms=500,
    enable_auto_commit=False,
)
reported = False
deadline = time.monotonic() + 120
while time.monotonic() < deadline:
    consumer.poll(timeout_ms=200)
    if consumer.assignment() and not reported:
        print(f"assigned {len(consumer.assignment())}", flush=True)
        reported = True
