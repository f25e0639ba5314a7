"""The server's background storage work in a child process (``storage.child_process``,
``snapshot_process``, ``compaction_process``): the same bytes as the work done in the
calling thread, side by side; a failing child leaves the log as it was and says why."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from storage.child_process import ChildFailed, run_child
from storage.compaction import CompactionPolicy, compact, swap_path
from storage.compaction_process import rewrite_in_child
from storage.errors import CompactionError
from storage.fs import FaultyFileSystem
from storage.live_snapshot import SNAPSHOT_FILE, load_snapshot
from storage.log import Log
from storage.records import (
    OffsetCommitKey,
    OffsetCommitValue,
    RebalanceEventKey,
    RebalanceEventValue,
    Record,
)
from storage.segment_summary import summary_path
from storage.snapshot_log import build_and_write, snapshot_log
from storage.snapshot_process import build_in_child

POLICY = CompactionPolicy(tombstone_retention_ms=10**12)


def _fill(log: Log, rounds: int) -> None:
    """Offsets overwritten round after round, a group's offsets deleted, events."""
    for r in range(rounds):
        log.append([Record(OffsetCommitKey(f"g{g}", "t", p), OffsetCommitValue(r * 10 + p))
                    for g in range(5) for p in range(4)])
        log.append([Record(RebalanceEventKey("g0"), RebalanceEventValue(
            "rebalance_end", 1_700_000_000_000 + r, r, reason="a member joined"))])
    log.append([Record(OffsetCommitKey("g4", "t", p), None) for p in range(4)])


def _two_logs(tmp_path: Path, rounds: int = 40) -> tuple[str, str]:
    here, there = str(tmp_path / "here"), str(tmp_path / "child")
    with Log.open(here, segment_bytes=2048) as log:
        _fill(log, rounds)
    shutil.copytree(here, there)
    return here, there


def _files(directory: str) -> dict[str, bytes]:
    out = {}
    for name in sorted(os.listdir(directory)):
        if name != "LOCK" and not name.startswith("."):
            with open(os.path.join(directory, name), "rb") as f:
                out[name] = f.read()
    return out


def test_the_child_writes_the_snapshot_the_thread_writes(tmp_path: Path) -> None:
    here, there = _two_logs(tmp_path)
    with Log.open(here) as log:
        made_here = snapshot_log(log)
    with Log.open(there) as log:
        made_there = snapshot_log(log, build=build_in_child)
    assert made_here is not None and made_there is not None
    assert made_there.covered == made_here.covered
    assert (made_there.live_bytes, made_there.event_bytes) == (
        made_here.live_bytes, made_here.event_bytes)
    with open(os.path.join(here, SNAPSHOT_FILE), "rb") as a, open(
            os.path.join(there, SNAPSHOT_FILE), "rb") as b:
        assert a.read() == b.read()
    # and a second one, built from the first and the tail after it
    for directory, build in ((here, build_and_write), (there, build_in_child)):
        with Log.open(directory) as log:
            _fill(log, 3)
            assert snapshot_log(log, build=build) is not None
    assert load_snapshot_bytes(here) == load_snapshot_bytes(there)


def load_snapshot_bytes(directory: str) -> bytes:
    with open(os.path.join(directory, SNAPSHOT_FILE), "rb") as f:
        return f.read()


def test_the_child_compacts_to_the_bytes_the_thread_does(tmp_path: Path) -> None:
    here, there = _two_logs(tmp_path)
    results = []
    for directory, rewrite in ((here, None), (there, rewrite_in_child)):
        with Log.open(directory, segment_bytes=2048) as log:
            results.append(compact(log, POLICY, now_ms=1_800_000_000_000, rewrite=rewrite))
            segments = [(s.base, s.size, s.count) for s in log.segments]
        results.append(segments)
    here_result, here_segments, there_result, there_segments = results
    assert here_result is not None and there_result is not None
    assert here_result.entries_after < here_result.entries_before
    assert dataclasses.replace(there_result, seconds=0.0) == dataclasses.replace(
        here_result, seconds=0.0)  # every count the same (not the time it took)
    assert there_segments == here_segments
    assert _files(there) == _files(here)  # segments and their summaries, byte for byte
    first = os.path.join(there, sorted(n for n in os.listdir(there) if n.endswith(".log"))[0])
    assert os.path.basename(summary_path(first)) in _files(there)  # the compacted one's
    with Log.open(there) as log, Log.open(here) as other:
        assert list(log.replay()) == list(other.replay())


def test_a_failing_child_leaves_the_log_as_it_was(tmp_path: Path) -> None:
    """A closed segment gone under the child: CompactionError naming why; nothing swapped,
    no temporary file left, the log still appends and replays."""
    directory = str(tmp_path / "log")
    with Log.open(directory, segment_bytes=2048) as log:
        _fill(log, 20)
        log.roll()
        closed = list(log.segments[:-1])
        before = _files(directory)
        missing = closed[-1].path + ".gone"
        broken = [*closed[:-1], type(closed[-1])(closed[-1].base, missing, closed[-1].size,
                                                 closed[-1].count)]
        with pytest.raises(CompactionError, match=r"No such file.*the log is unchanged"):
            rewrite_in_child(log.fs, directory, broken, log.segments[-1].base, POLICY,
                             1_800_000_000_000)
        assert _files(directory) == before
        assert not os.path.exists(swap_path(directory, closed[0].base, log.segments[-1].base))
        _fill(log, 1)
    with Log.open(directory) as log:
        assert len(list(log.replay())) > 0


def test_a_faulty_file_system_is_worked_on_in_the_calling_thread(tmp_path: Path) -> None:
    """The tests' fault injection lives in this process: a log on it snapshots and
    compacts here (its operations are this file system's), as a child would not see its
    faults."""
    fs = FaultyFileSystem()
    directory = str(tmp_path / "log")
    with Log.open(directory, segment_bytes=2048, fs=fs) as log:
        _fill(log, 20)
        fs.op_log.clear()
        assert snapshot_log(log, build=build_in_child) is not None
        assert "rename" in fs.op_log  # the snapshot's atomic write
        fs.op_log.clear()
        assert compact(log, POLICY, rewrite=rewrite_in_child) is not None
        assert fs.op_log.count("rename") >= 2  # .cleaned to .swap, .swap into place
    assert load_snapshot(fs, directory) is not None


def test_run_child_reports_a_failure_and_a_timeout() -> None:
    with pytest.raises(ChildFailed, match="No module named"):
        run_child("storage.no_such_module", {}, 60)
    with pytest.raises(ChildFailed, match="ran longer than"):
        run_child("this", {}, 0.001)  # (an interpreter takes longer than 1 ms to start)


def test_a_child_runs_at_nice_10_with_its_spec(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """On a busy machine the server's loop and its clients get the cores first."""
    (tmp_path / "kcoord_child_probe.py").write_text(
        "import json, os, sys\n"
        "spec = json.loads(sys.stdin.read())\n"
        "print(json.dumps({'nice': os.nice(0), 'echo': spec, 'main': __name__}))\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    out = json.loads(run_child("kcoord_child_probe", {"a": [1, 2]}, 60))
    assert out == {"nice": min(19, os.nice(0) + 10), "echo": {"a": [1, 2]}, "main": "__main__"}


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"  # a zombie is dead
    except FileNotFoundError:
        return True


@pytest.mark.skipif(sys.platform != "linux", reason="PR_SET_PDEATHSIG is Linux's")
def test_a_child_dies_with_its_parent(tmp_path: Path) -> None:
    """A compaction child must not outlive a SIGKILLed server: it could commit a swap file
    into a directory a new server has opened since."""
    (tmp_path / "kcoord_child_sleeper.py").write_text(
        "import os, sys, time\n"
        f"open({str(tmp_path / 'pid')!r}, 'w').write(str(os.getpid()))\n"
        "time.sleep(60)\n")
    parent = subprocess.Popen(
        [sys.executable, "-c", "from storage.child_process import run_child; "
         "run_child('kcoord_child_sleeper', {}, 120)"],
        env={**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{os.getcwd()}"})
    try:
        deadline = time.monotonic() + 30
        while not (tmp_path / "pid").exists() or not (tmp_path / "pid").read_text():
            assert time.monotonic() < deadline and parent.poll() is None
            time.sleep(0.02)
        child = int((tmp_path / "pid").read_text())
        assert not _gone(child)
        parent.send_signal(signal.SIGKILL)
        parent.wait(10)
        deadline = time.monotonic() + 10
        while not _gone(child):
            assert time.monotonic() < deadline, "the child outlived its parent"
            time.sleep(0.02)
    finally:
        parent.kill()
        parent.wait(10)
