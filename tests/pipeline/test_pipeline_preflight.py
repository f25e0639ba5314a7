"""What ``kcoord pipeline`` says before Spark starts (issue 34 item 4): a missing
``pipeline`` extra or Java, or an unreachable master, is one line and exit status 2, no
traceback; progress lines never run into each other. None of this needs pyspark."""

from __future__ import annotations

import io
import re
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from pipeline_support import NEEDS_EXTRA, T0, commit, write

from storage.pipeline import cli
from storage.pipeline.preflight import master_addresses
from storage.pipeline.progress import Progress

ROOT = Path(__file__).resolve().parents[2]


def _log(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    write(str(data), [commit("g", "t", 0, 1, T0)])
    return data


def test_a_missing_extra_is_one_line_and_exit_2(tmp_path: Path) -> None:
    data = _log(tmp_path)
    # pyarrow (from pyspark[sql]) not installed: this interpreter cannot import it.
    code = ("import sys; sys.modules['pyarrow'] = None\n"
            "from coordinator.cli import main\n"
            f"sys.exit(main(['pipeline', '-i', {str(data)!r}, '-o', {str(tmp_path / 'o')!r}]))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120, cwd=ROOT)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "pip install 'kcoord[pipeline]'" in lines[0] and "pyarrow" in lines[0]
    assert "Traceback" not in result.stderr


def test_missing_java_is_one_line_and_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("pyspark", reason=NEEDS_EXTRA)
    pytest.importorskip("matplotlib", reason=NEEDS_EXTRA)
    data = _log(tmp_path)
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-jdk"))  # what Spark's launcher runs
    err = io.StringIO()
    assert cli.main(["-i", str(data), "-o", str(tmp_path / "o")], stderr=err) == 2
    lines = err.getvalue().strip().splitlines()
    assert len(lines) == 1 and "needs Java 17" in lines[0], err.getvalue()


def test_an_unreachable_master_is_named_not_blamed_on_java(tmp_path: Path) -> None:
    pytest.importorskip("pyspark", reason=NEEDS_EXTRA)
    pytest.importorskip("matplotlib", reason=NEEDS_EXTRA)
    data = _log(tmp_path)
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    master = f"spark://127.0.0.1:{port}"
    err = io.StringIO()
    began = time.monotonic()
    status = cli.main(["-i", str(data), "-o", str(tmp_path / "o"), "--master", master],
                      stderr=err)
    assert status == 2
    assert err.getvalue().strip() == (
        f"kcoord pipeline: error: the Spark master {master} is unreachable "
        f"(127.0.0.1:{port}: Connection refused)")
    assert time.monotonic() - began < 30  # not Spark's minute of registration retries


def test_master_addresses() -> None:
    assert master_addresses("spark://a:7077,b:7078") == [("a", 7077), ("b", 7078)]
    assert master_addresses("local[2]") == [] and master_addresses("yarn") == []


class _SlowOut(io.StringIO):
    """A stream that yields between writes, as a terminal under load does."""

    def write(self, text: str) -> int:
        n = super().write(text)
        time.sleep(0.001)
        return n


def test_progress_lines_from_threads_never_run_into_each_other() -> None:
    out = _SlowOut()
    progress = Progress(out, quiet=False)

    def steps(name: str) -> None:
        for i in range(20):
            progress.say(f"writing {name} step {i}")

    threads = [threading.Thread(target=steps, args=(n,)) for n in "abcd"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lines = out.getvalue().splitlines()
    assert len(lines) == 80
    assert all(re.fullmatch(r"\[\s*\d+\.\ds\] writing [abcd] step \d+", ln) for ln in lines)
