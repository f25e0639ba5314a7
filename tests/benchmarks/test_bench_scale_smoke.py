"""bench_scale.py at a tiny scale, end to end (slow: about 30 s): both kinds of groups form
on kcoord, every classic and KIP-848 request is answered without an error, and each table
has its row."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).with_name("bench_scale.py")


@pytest.mark.slow
def test_a_tiny_fleet_of_classic_and_kip848_groups_runs_without_errors() -> None:
    run = subprocess.run(
        [sys.executable, str(SCRIPT), "--groups", "2", "--members", "3", "--processes", "1",
         "--consumer-groups", "2", "--seconds", "6"],
        capture_output=True, text=True, timeout=240, cwd=SCRIPT.parent, check=True)
    rows = [line.split(" | ") for line in run.stdout.splitlines()
            if line.startswith("| kcoord |")]
    classic, kip848 = rows[0], rows[1]
    assert classic[4] == "none" and int(classic[3]) > 0, run.stdout
    assert kip848[1] == "2 x 3" and kip848[5] == "none", run.stdout
    assert int(kip848[4]) > 0, run.stdout  # heartbeats and commits answered
