"""The share coordinator's timer key: acquisition locks expire when it fires."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SHARE_LOCK_TIMER", "ShareLockTimerKey"]


@dataclass(frozen=True, slots=True)
class ShareLockTimerKey:
    """The earliest acquisition lock deadline over every share partition (one key, re-armed
    after every change: ``group.share.record.lock.duration.ms`` after an acquisition)."""


SHARE_LOCK_TIMER = ShareLockTimerKey()
