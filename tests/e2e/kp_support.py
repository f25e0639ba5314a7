"""kafka-python consumers in threads, for the e2e tests."""

from __future__ import annotations

import threading
import time
from typing import Any

from kafka import KafkaConsumer, KafkaProducer
from kafka.errors import CommitFailedError, RebalanceInProgressError

#: Fast group settings for tests (the server allows 1 s sessions; 6 s is Kafka's default min).
FAST = {"session_timeout_ms": 6000, "heartbeat_interval_ms": 500}

#: kafka-python 3.0.12 has a leader-only race: when ``poll``'s timeout expires between the
#: JoinGroup and SyncGroup responses, the finished join is never completed
#: (``join_group_async`` returns early, the leader's ``need_rejoin()`` is already False, so
#: ``_on_join_complete`` never runs and heartbeats stay disabled until the session expires).
#: Against a coordinator answering in ~2 ms a 50-100 ms poll hits it now and then; a long
#: poll makes it rare.
POLL_MS = 1000


class ConsumerThread(threading.Thread):
    """A KafkaConsumer polling in its own thread; records what it consumed and owns."""

    def __init__(
        self, bootstrap: str, group: str, topic: str, *, commit: bool = True, **config: Any
    ) -> None:
        super().__init__(daemon=True)
        self.bootstrap = bootstrap
        self.group = group
        self.topic = topic
        self.commit = commit
        self.config = {**FAST, **config}
        self.records: list[tuple[int, int, bytes]] = []
        self.assignment: frozenset[int] = frozenset()
        self.generation = -1
        self.member_id = ""
        self.commit_failures = 0
        self.error: BaseException | None = None
        self._stop_event = threading.Event()
        self._close_on_stop = True
        self.consumer: KafkaConsumer | None = None
        self.lock = threading.Lock()

    def run(self) -> None:
        try:
            consumer = KafkaConsumer(
                bootstrap_servers=self.bootstrap,
                group_id=self.group,
                enable_auto_commit=False,
                auto_offset_reset="earliest",
                **self.config,
            )
            self.consumer = consumer
            consumer.subscribe([self.topic])
            while not self._stop_event.is_set():
                batch = consumer.poll(timeout_ms=POLL_MS)
                with self.lock:
                    for msgs in batch.values():
                        self.records.extend((m.partition, m.offset, m.value) for m in msgs)
                if batch and self.commit:
                    try:
                        consumer.commit()
                    except (CommitFailedError, RebalanceInProgressError):
                        self.commit_failures += 1
                self._observe(consumer)
            if self._close_on_stop:
                consumer.close()
        except BaseException as exc:
            self.error = exc

    def _observe(self, consumer: KafkaConsumer) -> None:
        generation = consumer._coordinator._generation
        self.assignment = frozenset(tp.partition for tp in consumer.assignment())
        self.generation = generation.generation_id
        self.member_id = generation.member_id

    def stop(self, close: bool = True, timeout: float = 30.0) -> None:
        """Stop polling; ``close`` (LeaveGroup for dynamic members) or just stop."""
        self._close_on_stop = close
        self._stop_event.set()
        self.join(timeout)
        assert not self.is_alive(), "consumer thread did not stop"
        if self.error is not None:
            raise AssertionError(f"consumer failed: {self.error!r}") from self.error


def produce(bootstrap: str, topic: str, count: int, prefix: str = "m") -> list[bytes]:
    """Produce ``count`` keyed messages (acks=all) and return their values."""
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5)
    values = [f"{prefix}-{i}".encode() for i in range(count)]
    for i, value in enumerate(values):
        producer.send(topic, key=str(i).encode(), value=value)
    producer.flush(timeout=30)
    producer.close(timeout=10)
    return values


def wait_for(condition: Any, timeout: float, what: str) -> float:
    """Poll until ``condition()``; the seconds it took. Fails after ``timeout``."""
    start = time.monotonic()
    while not condition():
        if time.monotonic() - start > timeout:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.05)
    return time.monotonic() - start
