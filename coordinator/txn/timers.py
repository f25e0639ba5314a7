"""Keys of the transaction coordinator's timers: its two periodic jobs (Kafka's
``transaction-abort`` and ``transactionalId-expiration`` scheduler tasks)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ABORT_TIMED_OUT_TRANSACTIONS", "REMOVE_EXPIRED_TRANSACTIONAL_IDS", "TxnTimerKey"]


@dataclass(frozen=True, slots=True)
class TxnTimerKey:
    """One of the coordinator's periodic jobs."""

    name: str


ABORT_TIMED_OUT_TRANSACTIONS = TxnTimerKey("transaction-abort")
REMOVE_EXPIRED_TRANSACTIONAL_IDS = TxnTimerKey("transactionalId-expiration")
