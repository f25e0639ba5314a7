"""kafka-python committers in their own process (run by test_crash_kill9.py).

    python kp_committer.py BOOTSTRAP TOPIC PARTITIONS GROUP:MODE [GROUP:MODE ...]

One thread per GROUP: a KafkaConsumer with ``enable_auto_commit=False`` that subscribes to
TOPIC (MODE ``subscribe``: a group member, commits carry its generation) or assigns itself
every partition (MODE ``assign``: simple-group commits), then calls ``commit()`` in a loop
with offsets 1, 2, 3, ... for every partition it owns. On stdout, one line per event:

    owns GROUP P,P,...     the partitions it commits to
    sent GROUP N           commit() of offset N is about to be called
    ack GROUP N            commit() of offset N returned: the server acknowledged it
    failed GROUP ERROR     commit() raised (expected once the server is killed); the thread ends

The process exits when every thread has ended. Running the client here rather than in the
pytest process keeps kafka-python's sockets out of it: 3.0.12 does not close a socket whose
connect() failed (``kafka/net/inet.py``), and reconnecting to a killed server makes many.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
import warnings

warnings.simplefilter("ignore")

from kafka import KafkaConsumer, TopicPartition  # noqa: E402
from kafka.structs import OffsetAndMetadata  # noqa: E402

_print_lock = threading.Lock()


def say(line: str) -> None:
    with _print_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def commit_loop(bootstrap: str, topic: str, partitions: int, group: str, mode: str) -> None:
    consumer = None
    try:
        consumer = KafkaConsumer(
            bootstrap_servers=bootstrap,
            group_id=group,
            enable_auto_commit=False,
            session_timeout_ms=10_000,
            heartbeat_interval_ms=1000,
            request_timeout_ms=5000,
            reconnect_backoff_max_ms=200,
        )
        if mode == "subscribe":
            consumer.subscribe([topic])
            deadline = time.monotonic() + 30
            while not consumer.assignment():
                if time.monotonic() > deadline:
                    raise TimeoutError("no assignment in 30s")
                consumer.poll(timeout_ms=100)
        else:
            consumer.assign([TopicPartition(topic, p) for p in range(partitions)])
        owned = sorted(consumer.assignment())
        say(f"owns {group} " + ",".join(str(tp.partition) for tp in owned))
        offset = 0
        while True:
            offset += 1
            say(f"sent {group} {offset}")
            consumer.commit({tp: OffsetAndMetadata(offset, "", -1) for tp in owned}, 3000)
            say(f"ack {group} {offset}")
    except Exception as exc:
        say(f"failed {group} {type(exc).__name__}: {exc}".replace("\n", " "))
    finally:
        if consumer is not None:
            with contextlib.suppress(Exception):
                consumer.close(autocommit=False, timeout_ms=1000)


def main(argv: list[str]) -> int:
    bootstrap, topic, partitions = argv[0], argv[1], int(argv[2])
    threads = []
    for spec in argv[3:]:
        group, mode = spec.split(":")
        thread = threading.Thread(
            target=commit_loop, args=(bootstrap, topic, partitions, group, mode), daemon=True
        )
        thread.start()
        threads.append(thread)
    for thread in threads:
        thread.join()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
