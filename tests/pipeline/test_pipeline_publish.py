"""A run's output is published whole (``storage.pipeline.publish``): every entry staged aside
is swapped into the output, a concurrent reader always finds a complete version there,
and the replaced versions stay in ``.kcoord-previous`` until the next publish. No Spark."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from storage.pipeline import publish as publish_module
from storage.pipeline.publish import PREVIOUS_DIR, STAGING_DIR, publish, staging_dir


def _dataset(path: Path, version: int, parts: int = 3) -> None:
    """A dataset directory as Spark leaves it: part files, then ``_SUCCESS``."""
    path.mkdir(parents=True)
    for i in range(parts):
        (path / f"part-{i:05d}-v{version}.parquet").write_text(str(version))
    (path / "_SUCCESS").write_text("")


def _stage(out: Path, version: int) -> Path:
    staged = Path(staging_dir(str(out)))
    _dataset(staged / "offsets_latest", version)
    (staged / "report.md").write_text(f"run {version}")
    return staged


def _version(dataset: Path) -> set[str]:
    return {p.read_text() for p in dataset.iterdir() if p.suffix == ".parquet"}


@pytest.mark.parametrize("exchange", [True, False], ids=["exchange", "two-renames"])
def test_publish_swaps_every_entry_and_keeps_the_replaced_versions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exchange: bool
) -> None:
    if not exchange:
        monkeypatch.setattr(publish_module, "exchange", lambda a, b: False)
    out = tmp_path / "out"
    out.mkdir()
    assert publish(str(_stage(out, 1)), str(out)) == ["offsets_latest", "report.md"]
    assert _version(out / "offsets_latest") == {"1"}

    staged = _stage(out, 2)
    (staged / "plots").mkdir()  # an entry the output does not have yet
    publish(str(staged), str(out))
    assert _version(out / "offsets_latest") == {"2"}
    assert (out / "report.md").read_text() == "run 2"
    assert (out / "plots").is_dir()
    assert not (out / STAGING_DIR).exists()
    previous = out / PREVIOUS_DIR
    assert sorted(os.listdir(previous)) == ["offsets_latest", "report.md"]
    assert _version(previous / "offsets_latest") == {"1"}
    assert (previous / "report.md").read_text() == "run 1"


def test_a_crashed_runs_staging_directory_is_replaced(tmp_path: Path) -> None:
    leftover = tmp_path / STAGING_DIR / "offsets_latest" / "_temporary"
    leftover.mkdir(parents=True)
    staged = staging_dir(str(tmp_path))
    assert os.listdir(staged) == []


def test_a_reader_never_finds_a_dataset_missing_or_half_written(tmp_path: Path) -> None:
    if publish_module._RENAMEAT2 is None:
        pytest.skip("renameat2 is Linux's (glibc 2.28+); elsewhere the path is briefly missing")
    out = tmp_path / "out"
    out.mkdir()
    publish(str(_stage(out, 0)), str(out))
    seen: list[str] = []
    bad: list[object] = []
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            try:
                fd = os.open(out / "offsets_latest", os.O_RDONLY | os.O_DIRECTORY)
            except FileNotFoundError:
                bad.append("missing")
                continue
            try:
                names = os.listdir(fd)
                if os.fstat(fd).st_nlink == 0:
                    # Opened two publishes ago and retired since (a previous version is
                    # kept for one publish only): the reader was slower than the runs.
                    continue
            finally:
                os.close(fd)
            versions = {n.rsplit("-v", 1)[1] for n in names if n.endswith(".parquet")}
            if "_SUCCESS" not in names or len(names) != 4 or len(versions) != 1:
                bad.append(sorted(names))
            else:
                seen.append(versions.pop())

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for version in range(1, 150):
            publish(str(_stage(out, version)), str(out))
    finally:
        stop.set()
        reader.join(timeout=30)
    assert not bad, bad[:5]
    assert len(set(seen)) > 1  # the reader saw the output change under it
