"""What the coordinator runtime drives: a shard's contract (Kafka's ``CoordinatorShard``),
the server's marker writer, and the runtime's clock."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Protocol

from coordinator.core.result import Result
from coordinator.txn.messages import TxnMarker
from storage.records import Record
from wire.constants import ErrorCode

__all__ = ["MarkerWriter", "Shard", "wall_clock_ms"]


class Shard(Protocol):
    """A coordinator shard as the runtime drives it (Kafka's ``CoordinatorShard``)."""

    def replay(self, record: Record) -> None:
        """Apply one log record at load time."""

    def on_loaded(self, now_ms: int) -> Result:
        """Replay is over: serve, arm timers."""

    def append_done(self, result: Result, now_ms: int) -> Result:
        """``result.records`` are durable: apply them."""

    def append_failed(self, result: Result, error: ErrorCode, now_ms: int) -> Result:
        """``result.records`` were not written: revert, answer the mapped error."""

    def fire_timer(self, key: Any, now_ms: int) -> Result:
        """A deadline passed."""


class MarkerWriter(Protocol):
    """The server side of WriteTxnMarkers: control batches on topic partitions, staged
    offsets committed or dropped through the group shard. It reports back through
    ``CoordinatorRuntime.process_transactions``."""

    def write_markers(self, markers: Sequence[TxnMarker]) -> None:
        """Write the markers of these transactions (called synchronously by the runtime)."""


def wall_clock_ms() -> int:
    """Milliseconds since the epoch."""
    return time.time_ns() // 1_000_000
