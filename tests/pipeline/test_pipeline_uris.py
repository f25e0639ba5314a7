"""Pipeline inputs and outputs by URI (issue 16 item 1): parsing and normalising
locations (no Spark), then, on the shared ``local[2]`` session, Hadoop's filesystems
through the JVM: a scheme Spark has no filesystem for is refused with one line before any
work, missing inputs are named, a compaction swap is honoured in a URI listing, and a
segment that disappears before an executor reads it is reported as unreadable (naming the
file), not as corrupt. The file:// end-to-end comparison with the plain-path run is in
test_real_server_logs.py (real server data)."""

from __future__ import annotations

import io
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from pipeline_support import T0, commit, write

from storage.directory import find_segments
from storage.pipeline.uris import Location, is_uri, location, scheme_of


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("file:///data/a/", Location("file:///data/a", uri=True)),
        ("FILE:///data//a", Location("file:///data//a", uri=True)),
        ("hdfs://nn:8020/kcoord/", Location("hdfs://nn:8020/kcoord", uri=True)),
        ("s3a://bucket", Location("s3a://bucket", uri=True)),
        ("s3a://bucket/", Location("s3a://bucket", uri=True)),
        ("abfs://c@acct.dfs.core.windows.net/x", Location(
            "abfs://c@acct.dfs.core.windows.net/x", uri=True)),
        ("file:/data/a", Location("file:/data/a", uri=True)),
        ("/data/a/", Location("/data/a", uri=False)),
        ("a:b", Location(os.path.abspath("a:b"), uri=False)),  # a file name, not a scheme
        ("C:/x", Location(os.path.abspath("C:/x"), uri=False)),  # a drive letter
        ("data/x", Location(os.path.abspath("data/x"), uri=False)),
    ],
)
def test_locations_are_normalised(text: str, expected: Location) -> None:
    assert location(text) == expected
    assert is_uri(text) == expected.uri


def test_location_parts_and_bad_locations() -> None:
    assert scheme_of("S3A://b/x") == "s3a" and scheme_of("/x") is None
    assert scheme_of("1x://y") is None  # a scheme starts with a letter
    assert location("s3a://bucket").join("report.md") == "s3a://bucket/report.md"
    assert location("file:///d/").join("plots/a.png") == "file:///d/plots/a.png"
    assert location("/d").join("report.md") == os.path.join("/d", "report.md")
    for bad in ("", "  ", "file://", "file:///", "s3a:/"):
        with pytest.raises(ValueError):
            location(bad)


@pytest.mark.slow  # (a SparkSession: CI runs these in the pipeline step)
def test_an_unavailable_filesystem_is_refused_before_any_work(
    spark: Any, tmp_path: Path
) -> None:
    """s3a:// and abfs:// without their Hadoop modules on the classpath, an unknown
    scheme: exit 2 with one line naming the location (and the module to add); nothing
    is read or written."""
    from storage.pipeline import cli

    data = str(tmp_path / "data")
    write(data, [commit("g", "t", 0, 5, T0)])
    cases = {
        "s3a://bucket/out": "hadoop-aws",
        "abfs://c@acct.dfs.core.windows.net/out": "hadoop-azure",
        "nosuchfs://host/out": "no filesystem for scheme 'nosuchfs'",
    }
    for output, expected in cases.items():
        err = io.StringIO()
        status = cli.main(["-i", Path(data).as_uri(), "-o", output, "-q"],
                          stdout=io.StringIO(), stderr=err)
        lines = err.getvalue().strip().splitlines()
        assert status == 2, err.getvalue()
        assert len(lines) == 1 and lines[0].startswith(f"kcoord pipeline: error: {output}")
        assert expected in lines[0], lines[0]
    err = io.StringIO()
    status = cli.main(["-i", "s3a://bucket/kcoord", "-o", str(tmp_path / "out"), "-q"],
                      stdout=io.StringIO(), stderr=err)
    assert status == 2 and "s3a://bucket/kcoord" in err.getvalue()
    assert "hadoop-aws" in err.getvalue()
    assert not (tmp_path / "out" / "offsets_latest").exists()
    # A missing input, an output inside an input, a file as input: named, exit 2.
    segment = find_segments(data)[0].name
    for argv, expected in [
        (["-i", (tmp_path / "nope").as_uri(), "-o", str(tmp_path / "o")],
         f"input {(tmp_path / 'nope').as_uri()} does not exist"),
        (["-i", data, "-o", Path(data).as_uri() + "/out"],
         "--output must not be inside an input"),
        (["-i", f"{Path(data).as_uri()}/{segment}", "-o", str(tmp_path / "o")],
         f"input {Path(data).as_uri()}/{segment} is not a directory"),
    ]:
        err = io.StringIO()
        assert cli.main([*argv, "-q"], stdout=io.StringIO(), stderr=err) == 2
        assert err.getvalue().strip() == f"kcoord pipeline: error: {expected}"
    assert not os.path.exists(os.path.join(data, "out"))


@pytest.mark.slow  # (a SparkSession: CI runs these in the pipeline step)
def test_uri_listing_and_an_unreadable_segment(spark: Any, tmp_path: Path) -> None:
    """A URI input lists the same segments as storage's find_segments (a committed
    compaction swap replacing the segments it covers); a segment gone when its task
    reads it fails the read with the file named, classified as unreadable; by plain path
    the CLI says so (exit 1), not "corrupt"."""
    from storage.pipeline import cli
    from storage.pipeline.hadoop_fs import HadoopFiles
    from storage.pipeline.remote_source import read_failure, read_segments

    data = tmp_path / "data"
    write(str(data), [commit("g", "t", 0, p, T0 + p) for p in range(30)], segment_bytes=500)
    segments = find_segments(str(data))
    assert len(segments) >= 3
    # A committed compaction output covering the first two segments.
    swap = data / f"{segments[0].base:020d}-{segments[2].base:020d}.swap"
    shutil.copyfile(segments[0].path, swap)
    expected = [s.name for s in find_segments(str(data))]
    assert expected[0] == swap.name and segments[1].name not in expected

    files = HadoopFiles(spark)
    listed = files.open_input(location(data.as_uri()))
    assert [s.name for s in listed.segments] == expected
    assert [s.last for s in listed.segments] == [s.last for s in find_segments(str(data))]
    assert listed.segments[0].path == f"{data.as_uri()}/{swap.name}"

    df = read_segments(spark, [listed], strict=False)
    os.remove(data / expected[-1])
    with pytest.raises(Exception) as failed:
        df.count()
    text = read_failure(str(failed.value))
    assert text is not None and text.startswith("cannot read ")
    assert expected[-1] in text and "does not exist" in text
    assert read_failure("PipelineInputError: x: byte 24: CRC-32C mismatch") is None

    # By plain path (the kcoord-log Data Source's open() in the task): the same.
    local = tmp_path / "local"
    write(str(local), [commit("g", "t", 0, 1, T0)])
    gone = local / "00000000000000000009.log"
    gone.symlink_to(tmp_path / "nowhere.log")
    err = io.StringIO()
    status = cli.main(["-i", str(local), "-o", str(tmp_path / "out"), "-q"],
                      stdout=io.StringIO(), stderr=err)
    assert status == 1
    assert err.getvalue().strip() == (
        f"kcoord pipeline: error: unreadable input: cannot read {gone}: No such file or directory")
