"""The compaction statistics' map of live keys: key bytes -> size of the key's newest entry.

A plain ``dict[bytes, int]`` costs about 120 bytes per key (the key's bytes object, the
dict slot, its share of the table); at 10^6 committed partitions that was a third of the
server's memory (issue 33). Offset commit keys (key versions 0 and 1) end with the
partition as four bytes after a (group, topic) prefix that many keys share, so
:class:`LiveSizes` keeps them as one ``array('I')`` of sizes per prefix, indexed by
partition (0: no entry), about 4 bytes per key; every other key (and a commit key whose
partition is negative or far past the others of its prefix) goes to a plain dict. The split
of a key into (prefix, last four bytes) is one to one, so the map answers exactly what a
dict would, whatever the bytes mean.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator

__all__ = ["DENSE_GAP", "LiveSizes"]

#: A commit key's partition is kept in its prefix's array when it is below the array's
#: length plus this (the array grows up to it): a lone high partition stays in the dict.
DENSE_GAP = 64
_COMMIT_VERSIONS = (b"\x00\x00", b"\x00\x01")


def _zeros(count: int) -> array[int]:
    return array("I", bytes(4 * count))


class LiveSizes:
    """``dict[bytes, int]``'s ``put`` / ``pop`` / ``get`` / ``len`` / ``total`` / ``items``
    over live keys, sizes > 0 (see the module docstring)."""

    __slots__ = ("_dense", "_dense_count", "_other")

    def __init__(self, sizes: Iterable[tuple[bytes, int]] = ()) -> None:
        #: commit key prefix -> entry size per partition (0: none)
        self._dense: dict[bytes, array[int]] = {}
        self._dense_count = 0
        self._other: dict[bytes, int] = {}
        put = self.put
        for key, size in sizes:
            put(key, size)

    @staticmethod
    def _split(key: bytes) -> tuple[bytes, int] | None:
        """(prefix, partition) of a commit key (versions 0 and 1), None for other keys."""
        if len(key) < 6 or key[:2] not in _COMMIT_VERSIONS:
            return None
        return key[:-4], int.from_bytes(key[-4:], "big")

    def put(self, key: bytes, size: int) -> int:
        """Set ``key``'s size (> 0); the size it had (0: none)."""
        split = self._split(key)
        if split is not None:
            prefix, partition = split
            sizes = self._dense.get(prefix)
            length = 0 if sizes is None else len(sizes)
            other = self._other
            if partition < length + DENSE_GAP and (not other or key not in other):
                if sizes is None:
                    sizes = self._dense[prefix] = array("I")
                if partition >= length:
                    sizes.extend(_zeros(partition + 1 - length))
                old: int = sizes[partition]
                sizes[partition] = size
                if not old:
                    self._dense_count += 1
                return old
        previous = self._other.get(key, 0)
        self._other[key] = size
        return previous

    def pop(self, key: bytes) -> int:
        """Remove ``key``; the size it had (0: none)."""
        split = self._split(key)
        if split is not None:
            prefix, partition = split
            sizes = self._dense.get(prefix)
            if sizes is not None and partition < len(sizes) and sizes[partition]:
                old: int = sizes[partition]
                sizes[partition] = 0
                self._dense_count -= 1
                if not any(sizes):
                    del self._dense[prefix]
                return old
        return self._other.pop(key, 0)

    def get(self, key: bytes) -> int:
        """``key``'s size (0: not live)."""
        split = self._split(key)
        if split is not None:
            prefix, partition = split
            sizes = self._dense.get(prefix)
            if sizes is not None and partition < len(sizes) and sizes[partition]:
                return int(sizes[partition])
        return self._other.get(key, 0)

    def __len__(self) -> int:
        return self._dense_count + len(self._other)

    def total(self) -> int:
        """The sum of every live key's size."""
        return sum(sum(sizes) for sizes in self._dense.values()) + sum(self._other.values())

    def items(self) -> Iterator[tuple[bytes, int]]:
        """(key, size) of every live key (in no particular order)."""
        for prefix, sizes in self._dense.items():
            for partition, size in enumerate(sizes):
                if size:
                    yield prefix + partition.to_bytes(4, "big"), size
        yield from self._other.items()
