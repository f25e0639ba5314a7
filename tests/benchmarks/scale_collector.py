"""bench_scale.py's reading of kcoord's collector pauses: the line ``kcoord serve`` logs
when it stops (``coordinator/server/collector.py``), parsed, and its table."""

from __future__ import annotations

import re
from typing import Any

__all__ = ["collector_pauses", "collector_table"]

_PAUSES = re.compile(r"gen(\d) (\d+)/([\d.]+)/([\d.]+)/([\d.]+)/([\d.]+)")


def collector_pauses(log: str) -> dict[str, Any] | None:
    """What ``kcoord serve`` logged of its collector's pauses when it stopped (its whole
    life: the joins too), or None (Tansu: no collector)."""
    line = next((x for x in log.splitlines() if "collector pauses" in x), None)
    if line is None:
        return None
    each = {int(found[0]): (int(found[1]), *map(float, found[2:]))
            for found in _PAUSES.findall(line)}
    over = re.search(r"over [\d.]+ ms (\d+) \(CPU (\d+)\)", line)
    freed = re.search(r"freed (\d+) objects", line)
    sweeps = re.search(r"unfrozen (\d+) times", line)
    if not (each and over and freed and sweeps):
        raise RuntimeError(f"cannot read the collector's line: {line}")
    return {"generations": each, "long": int(over[1]), "long_cpu": int(over[2]),
            "full_freed": int(freed[1]), "sweeps": int(sweeps[1])}


def collector_table(collectors: list[tuple[str, dict[str, Any]]]) -> str:
    """The collector table: one row per broker that logged its pauses."""
    lines = ["\n| broker | collections gen0 / gen1 / gen2 | full: total / longest ms (CPU) | "
             "young: longest ms (CPU) | pauses > 20 ms (CPU) | objects the full ones freed | "
             "whole-heap sweeps |\n|---|---:|---:|---:|---:|---:|---:|"]
    for name, c in collectors:
        g = c["generations"]  # generation: count, total, longest, CPU total, CPU longest
        lines.append(
            f"| {name} | {g[0][0]} / {g[1][0]} / {g[2][0]} | {g[2][1]:.1f} / {g[2][2]:.1f} "
            f"({g[2][3]:.1f} / {g[2][4]:.1f}) | {max(g[0][2], g[1][2]):.1f} "
            f"({max(g[0][4], g[1][4]):.1f}) | {c['long']} ({c['long_cpu']}) | "
            f"{c['full_freed']} | {c['sweeps']} |")
    return "\n".join(lines)
