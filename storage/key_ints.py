"""A compact map of log keys to positive ints, for the maps the log keeps per live key.

A plain ``dict[bytes, int]`` costs about 120 bytes per key (the key's bytes object, the
dict slot, its share of the table, often the int); at 10^6 committed partitions the log's
two such maps (the compaction statistics' key -> newest entry size, the active segment
summary's key -> newest entry position) cost more than the offsets themselves (issue 33).
Offset commit keys (key versions 0 and 1) end with the partition as four bytes after a
(group, topic) prefix that many keys share, so :class:`KeyInts` keeps their values as one
``array`` per prefix, indexed by partition (0: no value), 4 or 8 bytes a key; every other
key (and a commit key whose partition is negative or far past the others of its prefix)
goes to a plain dict. Splitting a key into (prefix, last four bytes) is one to one, so the
map answers exactly what a dict would, whatever the bytes mean.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Sequence

__all__ = ["DENSE_GAP", "KeyInts", "commit_key"]

#: A commit key's partition is kept in its prefix's array when it is below the array's
#: length plus this (the array grows up to it): a lone high partition stays in the dict.
DENSE_GAP = 64
_COMMIT_VERSIONS = (b"\x00\x00", b"\x00\x01")


def commit_key(prefix: bytes, partition: int) -> bytes:
    """The key bytes of an offset commit key given as (prefix, partition)."""
    return prefix + partition.to_bytes(4, "big", signed=True)


class KeyInts:
    """``dict[bytes, int]``'s ``put`` / ``pop`` / ``get`` / ``len`` / ``items`` for values
    ``bias`` < v < ``bias`` + 2**(8 * itemsize of ``typecode``), kept less ``bias`` (see
    the module docstring)."""

    __slots__ = ("_bias", "_dense", "_dense_count", "_other", "_shadowed", "_typecode")

    def __init__(self, typecode: str = "I", bias: int = 0,
                 items: Iterable[tuple[bytes, int]] = ()) -> None:
        self._typecode = typecode
        self._bias = bias
        #: commit key prefix -> value less bias per partition (0: none)
        self._dense: dict[bytes, array[int]] = {}
        self._dense_count = 0
        self._other: dict[bytes, int] = {}
        #: prefixes some commit key of which is in ``_other`` (it wins over the array);
        #: never cleared: a stale one only sends that prefix's entries to ``put``
        self._shadowed: set[bytes] = set()
        put = self.put
        for key, value in items:
            put(key, value)

    def put(self, key: bytes, value: int) -> int:
        """Set ``key``'s value; the value it had (0: none)."""
        if len(key) >= 6 and key[:2] in _COMMIT_VERSIONS:
            prefix = key[:-4]
            partition = int.from_bytes(key[-4:], "big")
            values = self._dense.get(prefix)
            length = 0 if values is None else len(values)
            other = self._other
            if partition < length + DENSE_GAP and (not other or key not in other):
                if values is None:
                    values = self._dense[prefix] = array(self._typecode)
                if partition >= length:
                    values.extend(array(self._typecode, bytes(
                        values.itemsize * (partition + 1 - length))))
                old: int = values[partition]
                values[partition] = value - self._bias
                if not old:
                    self._dense_count += 1
                    return 0
                return old + self._bias
            self._shadowed.add(prefix)
        previous = self._other.get(key, 0)
        self._other[key] = value
        return previous

    def put_commits(
        self, entries: Sequence[tuple[bytes, int, int]], pos: int, positions: KeyInts | None,
    ) -> int:
        """For offset commit entries appended at ``pos`` ((key prefix, partition, entry
        size) each, as ``EncodedBatch.commit_keys``: the key is the prefix, a key version 0
        or 1 one, and the partition as four bytes): ``self.put(key, size)`` and
        ``positions.put(key, position of the entry)`` for each in order, in one pass (the
        log's live sizes and the active segment's newest positions); the sum of the sizes
        ``self`` had for them. The entries of one prefix come together (a commit's), with
        one prefix object: its arrays are found once; a key the arrays do not hold yet
        takes ``put``."""
        s_dense = self._dense
        s_bias = self._bias
        p_dense = {} if positions is None else positions._dense
        p_bias = 0 if positions is None else positions._bias
        last: bytes | None = None
        s_values: array[int] | None = None
        p_values: array[int] | None = None
        s_len = p_len = 0  # the arrays' lengths while ``last`` holds (0: none, or shadowed)
        had = s_added = p_added = 0
        for prefix, partition, size in entries:
            if prefix is not last:
                last = prefix
                s_values = s_dense.get(prefix)
                s_len = 0 if s_values is None or prefix in self._shadowed else len(s_values)
                if positions is not None:
                    p_values = p_dense.get(prefix)
                    p_len = (0 if p_values is None or prefix in positions._shadowed
                             else len(p_values))
            if 0 <= partition < s_len:  # as put, unless it grows or the dict has keys
                assert s_values is not None
                old = s_values[partition]
                s_values[partition] = size - s_bias
                if old:
                    had += old + s_bias
                else:
                    s_added += 1
            else:
                had += self.put(commit_key(prefix, partition), size)
                last = None  # the arrays of this prefix may be new
            if 0 <= partition < p_len:
                assert p_values is not None
                if not p_values[partition]:
                    p_added += 1
                p_values[partition] = pos - p_bias
            elif positions is not None:
                positions.put(commit_key(prefix, partition), pos)
                last = None
            pos += size
        self._dense_count += s_added
        if positions is not None:
            positions._dense_count += p_added
        return had

    def __setitem__(self, key: bytes, value: int) -> None:
        self.put(key, value)

    def pop(self, key: bytes) -> int:
        """Remove ``key``; the value it had (0: none)."""
        if len(key) >= 6 and key[:2] in _COMMIT_VERSIONS:
            prefix = key[:-4]
            partition = int.from_bytes(key[-4:], "big")
            values = self._dense.get(prefix)
            if values is not None and partition < len(values) and values[partition]:
                old: int = values[partition]
                values[partition] = 0
                self._dense_count -= 1
                if not any(values):
                    del self._dense[prefix]
                return old + self._bias
        return self._other.pop(key, 0)

    def get(self, key: bytes) -> int:
        """``key``'s value (0: none)."""
        if len(key) >= 6 and key[:2] in _COMMIT_VERSIONS:
            values = self._dense.get(key[:-4])
            partition = int.from_bytes(key[-4:], "big")
            if values is not None and partition < len(values) and values[partition]:
                return int(values[partition]) + self._bias
        return self._other.get(key, 0)

    def __len__(self) -> int:
        return self._dense_count + len(self._other)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, KeyInts):
            other = dict(other.items())
        return dict(self.items()) == other if isinstance(other, dict) else NotImplemented

    # mutable, like a dict
    __hash__ = None  # type: ignore[assignment]

    def total(self) -> int:
        """The sum of every value."""
        dense = sum(sum(values) for values in self._dense.values())
        return dense + self._bias * self._dense_count + sum(self._other.values())

    def items(self) -> Iterator[tuple[bytes, int]]:
        """(key, value) of every key (in no particular order)."""
        bias = self._bias
        for prefix, values in self._dense.items():
            for partition, value in enumerate(values):
                if value:
                    yield prefix + partition.to_bytes(4, "big"), value + bias
        yield from self._other.items()

