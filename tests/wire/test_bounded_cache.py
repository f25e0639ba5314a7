"""``wire.bounded_cache.BoundedCache``: a dict that never holds more than its limit, emptied
when full and a new entry comes; every hand-written "clear when full" memo uses it."""

from __future__ import annotations

from pathlib import Path

import pytest

from wire.bounded_cache import BoundedCache

ROOT = Path(__file__).resolve().parents[2]


def test_put_empties_a_full_cache_first() -> None:
    cache: BoundedCache[int, str] = BoundedCache(3)
    for n in range(3):
        assert cache.put(n, str(n)) == str(n)
    assert cache == {0: "0", 1: "1", 2: "2"}
    assert cache.get(1) == "1" and cache.get(9) is None
    cache.put(3, "3")
    assert cache == {3: "3"}
    for n in range(100):
        cache.put(n, "x")
        assert 0 < len(cache) <= 3


def test_a_cache_holds_something() -> None:
    with pytest.raises(ValueError):
        BoundedCache(0)


def test_no_hand_written_clear_when_full_cache_is_left() -> None:
    """No module clears a memo by hand when it reaches a size (``len(x) >= N: x.clear()``):
    they all use BoundedCache."""
    found = []
    for floor in ("wire", "storage", "coordinator"):
        for path in sorted((ROOT / floor).rglob("*.py")):
            if path.name == "bounded_cache.py":
                continue
            lines = path.read_text(encoding="utf-8").splitlines()
            for i, line in enumerate(lines[:-1]):
                if line.lstrip().startswith("if len(") and (">=" in line or ">" in line) \
                        and lines[i + 1].strip().endswith(".clear()"):
                    found.append(f"{path.relative_to(ROOT)}:{i + 1}")
    assert found == []
