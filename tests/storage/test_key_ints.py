"""``KeyInts`` (the log's per-live-key maps: compaction statistics, the active segment's
summary) answers what a plain ``dict[bytes, int]`` would, for any keys, and costs a few
bytes per offset commit key."""

from __future__ import annotations

import tracemalloc
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from storage.key_ints import DENSE_GAP, KeyInts

_PREFIXES = [b"\x00\x01\x00\x01g\x00\x01t", b"\x00\x00\x00\x01g\x00\x01t", b"\x00\x01",
             b"\x00\x02\x00\x01g", b"\x00d", b""]
_PARTITIONS = st.one_of(st.integers(0, 3 * DENSE_GAP), st.integers(-(2**31), 2**31 - 1))
_KEYS = st.one_of(
    st.builds(lambda p, n: p + n.to_bytes(4, "big", signed=True), st.sampled_from(_PREFIXES),
              _PARTITIONS),
    st.binary(max_size=8),
)
_COMMIT_PREFIXES = _PREFIXES[:3]  # key versions 0 and 1
_OPS = st.lists(st.one_of(
    st.tuples(st.sampled_from(["put", "pop", "get"]), _KEYS, st.integers(1, 2**32 - 1)),
    st.tuples(st.just("put_commits"), st.lists(st.tuples(
        st.sampled_from(_COMMIT_PREFIXES), _PARTITIONS, st.integers(1, 2**31)), max_size=12),
        st.booleans())), max_size=200)


_A = b"\x00\x01\x00\x01g\x00\x01t"


@settings(max_examples=300, deadline=None)
@given(_OPS, st.sampled_from([("I", 0), ("Q", 0), ("Q", 7 << 40)]))
@example(ops=[("put", _A + bytes(4), 1), ("put_commits", [  # a lone high partition between
    (_A, 0, 1), (b"\x00\x00\x00\x01g\x00\x01t", 64, 1), (_A, 0, 1)], True)],  # two of a prefix
    kind=("I", 0))
@example(ops=[("put", _A + n.to_bytes(4, "big"), 1) for n in (0, 60, 200, 120, 180, 240)]
         + [("put_commits", [(_A, 200, 2), (_A, 1, 3)], True)],  # the array grew past 200,
         kind=("Q", 0))  # a partition the dict already held: the dict's key still wins
def test_answers_like_a_dict(ops: list[tuple[str, Any, Any]],
                             kind: tuple[str, int]) -> None:
    """Every operation answers as a dict's; ``put_commits`` as ``put`` of each entry's size
    in order and, given a second map, ``put`` of each entry's position in that one."""
    typecode, bias = kind
    ints = KeyInts(typecode, bias)
    spots = KeyInts("Q", 3 << 40)  # the second map of put_commits: positions
    model: dict[bytes, int] = {}
    spots_model: dict[bytes, int] = {}
    pos = (3 << 40) + 1
    for op, key, value in ops:
        if op == "put_commits":
            entries = [(prefix, n, v + bias) for prefix, n, v in key]
            had = 0
            start = pos
            for prefix, n, size in entries:
                k = prefix + n.to_bytes(4, "big", signed=True)
                had += model.get(k, 0)
                model[k] = size
                if value:
                    spots_model[k] = pos
                pos += size
            assert ints.put_commits(tuple(entries), start, spots if value else None) == had
            assert len(ints) == len(model)
            assert len(spots) == len(spots_model)
            continue
        value += bias
        if op == "put":
            assert ints.put(key, value) == model.get(key, 0)
            model[key] = value
        elif op == "pop":
            assert ints.pop(key) == model.pop(key, 0)
        else:
            assert ints.get(key) == model.get(key, 0)
        assert len(ints) == len(model)
    assert ints.total() == sum(model.values())
    assert sorted(ints.items()) == sorted(model.items())
    assert sorted(spots.items()) == sorted(spots_model.items())
    assert sorted(KeyInts(typecode, bias, model.items()).items()) == sorted(model.items())


def test_offset_commit_keys_cost_a_few_bytes_each() -> None:
    """10,000 commit keys (100 groups x 100 partitions): under 10 bytes a key with 4-byte
    values, under 14 with 8-byte ones (a dict of their bytes costs about 120)."""
    keys = [b"\x00\x01\x00\x08group-%02d\x00\x0ccommit-topic" % g + p.to_bytes(4, "big")
            for g in range(100) for p in range(100)]
    for typecode, limit in (("I", 10), ("Q", 14)):
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            ints = KeyInts(typecode)
            for key in keys:
                ints[key] = 74
            used = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
        assert len(ints) == len(keys)
        assert used / len(keys) < limit, (typecode, used / len(keys))
