"""``kcoord pipeline --follow``: flag combinations it refuses, each with one line and exit
status 2, before Spark starts."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from pipeline_support import NEEDS_EXTRA, commit, write

pytest.importorskip("pyspark", reason=NEEDS_EXTRA)

from storage.pipeline.cli import main


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--poll", "1"], "--poll needs --follow"),
        (["--follow", "--poll", "0"], "--poll must be a number of seconds above 0"),
        (["--follow", "--until", "0"], "--follow cannot take --until"),
        (["--follow", "--strict"], "--follow cannot take --strict"),
    ],
)
def test_bad_follow_flags_get_one_line_and_exit_2(
    tmp_path: Path, flags: list[str], message: str
) -> None:
    data = tmp_path / "data"
    write(str(data), [commit("g", "t", 0, 1, 1_700_000_000_000)])
    err = io.StringIO()
    status = main(["-q", "-i", str(data), "-o", str(tmp_path / "out"), *flags],
                  stdout=io.StringIO(), stderr=err)
    assert status == 2
    lines = err.getvalue().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"kcoord pipeline: error: {message}"), lines
    assert not (tmp_path / "out").exists()


def test_follow_refuses_uri_inputs(tmp_path: Path) -> None:
    err = io.StringIO()
    status = main(["-i", "hdfs://nn:8020/kcoord", "-o", str(tmp_path / "out"), "--follow"],
                  stdout=io.StringIO(), stderr=err)
    assert status == 2
    assert err.getvalue() == (
        "kcoord pipeline: error: --follow reads local data directories only (no URI inputs)\n")
