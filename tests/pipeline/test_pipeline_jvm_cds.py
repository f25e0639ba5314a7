"""The driver JVM's class-data-sharing archive (storage.pipeline.jvm_cds), with a real
``java``: made at a JVM's exit, moved into place, then used; a missing, corrupt or
unwritable archive only means no sharing, and the JVM says nothing about it."""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

import pytest
from pipeline_support import NEEDS_EXTRA

pytest.importorskip("pyspark", reason=NEEDS_EXTRA)

from storage.pipeline import jvm_cds


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv(jvm_cds.CDS_ENV, "1")  # opted in, to the per-user directory
    monkeypatch.setattr(jvm_cds, "_pending", [])
    return tmp_path / "kcoord" / "spark-cds"


def java(options: str, capture: bool = True) -> subprocess.Popen[bytes]:
    """A JVM started with ``options`` (stdin a pipe, as Spark's): it loads a few classes,
    prints its version and exits."""
    out = subprocess.PIPE if capture else subprocess.DEVNULL
    return subprocess.Popen(
        ["java", *shlex.split(options), "-version"], stdin=subprocess.PIPE, stdout=out,
        stderr=out,
    )


def output(proc: subprocess.Popen[bytes]) -> str:
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    return (out + err).decode()


def test_first_run_makes_the_archive_later_runs_map_it(
    cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    options = jvm_cds.archive_options()
    assert "-XX:ArchiveClassesAtExit=" in options
    proc = java(options, capture=False)
    jvm_cds.finish_archive(proc)
    archives = list(cache.glob("spark-*.jsa"))
    assert len(archives) == 1 and archives[0].stat().st_size > 0
    assert not list(cache.glob("*.tmp"))  # the temporary was renamed, nothing left
    # Where it went and how big it is, said once it is written.
    assert f"JVM class cache {archives[0]} (" in capsys.readouterr().err

    said: list[str] = []
    options = jvm_cds.archive_options(say=said.append)
    assert options.startswith(f"-XX:SharedArchiveFile={archives[0]} ")
    assert said == [f"JVM class cache {archives[0]} "
                    f"({jvm_cds.archive_size_text(str(archives[0]))})"]
    assert jvm_cds._pending == []  # nothing to finish: the archive is only read
    text = output(java(options))
    assert "sharing" in text  # mapped
    assert "cds" not in text.lower() and "warning" not in text.lower()
    # -Xshare:on fails instead of running without the archive: this one is usable.
    output(java(options + " -Xshare:on"))


def test_a_corrupt_archive_is_ignored_silently(cache: Path) -> None:
    name = jvm_cds._archive_name()
    assert name is not None
    cache.mkdir(parents=True)
    (cache / name).write_bytes(b"not an archive" * 100)
    options = jvm_cds.archive_options()
    assert "SharedArchiveFile" in options
    text = output(java(options))
    assert "version" in text and "cds" not in text.lower() and "warning" not in text.lower()


def test_a_failed_dump_leaves_nothing(cache: Path) -> None:
    options = jvm_cds.archive_options()
    # The JVM exits with an error (an unknown option): no archive, no temporary.
    proc = java(options + " -XX:+NoSuchOptionForKcoordTests", capture=False)
    jvm_cds.finish_archive(proc)
    assert not list(cache.iterdir())


def test_dead_processes_temporaries_are_removed(cache: Path) -> None:
    cache.mkdir(parents=True)
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = cache / f"spark-0-x.jsa.{dead.pid}.tmp"
    stale.write_bytes(b"half")
    mine = cache / f"spark-0-x.jsa.{os.getpid()}.tmp"
    mine.write_bytes(b"in progress")
    jvm_cds.archive_options()
    assert not stale.exists() and mine.exists()


def test_unwritable_cache_or_disabled_means_no_options(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache.parent.mkdir(parents=True)
    cache.write_text("a file where the directory should be")
    assert jvm_cds.archive_options() == ""
    monkeypatch.setenv(jvm_cds.CDS_ENV, "0")
    assert jvm_cds.archive_options() == ""
    assert jvm_cds._pending == []


def test_no_archive_unless_asked_for(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(jvm_cds.CDS_ENV)
    assert jvm_cds.archive_options() == ""
    assert jvm_cds._pending == [] and not cache.exists()
    # --class-cache DIR (or KCOORD_SPARK_CDS=DIR) puts it in DIR, and says so once made.
    chosen = tmp_path / "chosen"
    options = jvm_cds.archive_options(str(chosen))
    assert f"-XX:ArchiveClassesAtExit={chosen}/" in options
    monkeypatch.setenv(jvm_cds.CDS_ENV, str(chosen))
    assert jvm_cds.chosen_dir() == str(chosen)
