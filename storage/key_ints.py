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

__all__ = ["DENSE_GAP", "KeyInts"]

#: A commit key's partition is kept in its prefix's array when it is below the array's
#: length plus this (the array grows up to it): a lone high partition stays in the dict.
DENSE_GAP = 64
_COMMIT_VERSIONS = (b"\x00\x00", b"\x00\x01")


class KeyInts:
    """``dict[bytes, int]``'s ``put`` / ``pop`` / ``get`` / ``len`` / ``items`` for values
    ``bias`` < v < ``bias`` + 2**(8 * itemsize of ``typecode``), kept less ``bias`` (see
    the module docstring)."""

    __slots__ = ("_bias", "_dense", "_dense_count", "_other", "_typecode")

    def __init__(self, typecode: str = "I", bias: int = 0,
                 items: Iterable[tuple[bytes, int]] = ()) -> None:
        self._typecode = typecode
        self._bias = bias
        #: commit key prefix -> value less bias per partition (0: none)
        self._dense: dict[bytes, array[int]] = {}
        self._dense_count = 0
        self._other: dict[bytes, int] = {}
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
        previous = self._other.get(key, 0)
        self._other[key] = value
        return previous

    def put_entries(
        self, keys: Sequence[tuple[bytes, int, bool]], pos: int, positions: KeyInts | None,
    ) -> int:
        """For entries appended at ``pos`` ((key bytes, entry size, tombstone) each, as
        ``EncodedBatch.keys``; no tombstone): ``self.put(key, size)`` and
        ``positions.put(key, position of the entry)`` for each in order, in one pass (the
        log's live sizes and the active segment's newest positions: a commit's keys split
        once, not once per map); the sum of the sizes ``self`` had for them. Keys of one
        prefix that come together (a commit's) find their arrays once; a key the arrays do
        not hold yet takes ``put``."""
        s_dense = self._dense
        s_other = self._other
        s_bias = self._bias
        p_dense = {} if positions is None else positions._dense
        p_other = {} if positions is None else positions._other
        p_bias = 0 if positions is None else positions._bias
        versions = _COMMIT_VERSIONS
        from_bytes = int.from_bytes
        last: bytes | None = None
        s_values: array[int] | None = None
        p_values: array[int] | None = None
        s_len = p_len = 0  # their lengths (0: none), fixed while ``last`` holds
        had = s_added = p_added = 0
        for key, size, _ in keys:
            if len(key) < 6 or not key.startswith(versions):
                had += self.put(key, size)
                if positions is not None:
                    positions.put(key, pos)
                pos += size
                continue
            prefix = key[:-4]
            partition = from_bytes(key[-4:], "big")
            if prefix != last:
                last = prefix
                s_values = s_dense.get(prefix)
                p_values = p_dense.get(prefix)
                s_len = 0 if s_values is None else len(s_values)
                p_len = 0 if p_values is None else len(p_values)
            if partition < s_len and not (s_other and key in s_other):  # as put, unless it grows
                assert s_values is not None
                old = s_values[partition]
                s_values[partition] = size - s_bias
                if old:
                    had += old + s_bias
                else:
                    s_added += 1
            else:
                had += self.put(key, size)
                last = None  # the arrays of this prefix may be new
            if positions is not None:
                if partition < p_len and not (p_other and key in p_other):
                    assert p_values is not None
                    if not p_values[partition]:
                        p_added += 1
                    p_values[partition] = pos - p_bias
                else:
                    positions.put(key, pos)
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

