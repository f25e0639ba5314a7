"""``BoundedCache``: the one memo of kcoord's hot paths -- a dict (lookups are a plain
``dict.get``) that is emptied when it is full and something new must go in.

Its users keep what repeats (encoded names, interned record keys, shared answers, steady
frames): all of it cheap to make again, so forgetting everything at once costs a few misses
and needs no recency bookkeeping on the hot path. At the bottom floor (``wire``) so every
floor can use it; pure Python, no I/O."""

from __future__ import annotations

from typing import TypeVar

__all__ = ["BoundedCache"]

K = TypeVar("K")
V = TypeVar("V")


class BoundedCache(dict[K, V]):
    """At most ``limit`` entries: ``put`` empties the cache first when it is full."""

    __slots__ = ("limit",)

    def __init__(self, limit: int) -> None:
        super().__init__()
        if limit < 1:
            raise ValueError(f"a cache holds at least one entry, not {limit}")
        #: The most entries held.
        self.limit = limit

    def put(self, key: K, value: V) -> V:
        """Remember ``value`` for ``key`` (emptying a full cache first); ``value``."""
        if len(self) >= self.limit:
            self.clear()
        self[key] = value
        return value
