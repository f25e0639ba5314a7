"""``DATA_DIR/starts.jsonl``: one line per server start, so that restarts can be told
apart in the data directory's history (the metadata log's records say nothing of them).

Each line is a JSON object ``{"start_ms": <epoch ms>, "pid": <process id>}``, appended
by ``kcoord serve`` once it holds the data directory's lock and has opened the log (the
time is its clock at start, the one its records' timestamps continue from). The file is
informational: nothing replays it, and a line that cannot be written is only logged.
"""

from __future__ import annotations

import json
import os

__all__ = ["STARTS_FILE", "read_starts", "record_start"]

STARTS_FILE = "starts.jsonl"


def record_start(data_dir: str, start_ms: int, pid: int) -> None:
    """Append one start to ``data_dir``'s journal (OSError if it cannot be written)."""
    line = json.dumps({"start_ms": start_ms, "pid": pid}) + "\n"
    with open(os.path.join(data_dir, STARTS_FILE), "a", encoding="utf-8") as f:
        f.write(line)


def read_starts(data_dir: str) -> list[int] | None:
    """The start times recorded in ``data_dir`` (sorted); None without a journal (data
    written before kcoord kept one). Unreadable lines (a torn last line) are skipped."""
    try:
        with open(os.path.join(data_dir, STARTS_FILE), encoding="utf-8") as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        return None
    starts = []
    for line in lines:
        try:
            starts.append(int(json.loads(line)["start_ms"]))
        except (ValueError, KeyError, TypeError):
            continue
    return sorted(starts)
