"""Segments behind URIs as the ``kcoord-log`` DataFrame, read through Spark itself.

Spark's ``binaryFile`` source reads each listed segment file with the cluster's Hadoop
filesystem (on the executors) and hands its bytes to a ``mapInArrow`` task that decodes
them with the Data Source's parser (:func:`storage.pipeline.vector_parse.segment_batches`,
``data=``) into the same Arrow batches and schema as the ``kcoord-log`` Data Source. Plain
local paths keep the Data Source (``open()`` in the task: no copy through the JVM).

Memory: ``binaryFile`` gives a whole file as one row, so a task holds one Arrow batch of
whole files (at most ``spark.sql.execution.arrow.maxBytesPerBatch``, 64 MiB by default,
or one larger file) and a copy of the file it parses: about twice the largest segment
(kcoord rolls segments at 64 MiB by default) plus 64 MiB. The local reader also parses a
whole file at a time, so the cost is a second copy, not a different model.

Executors need no access to the driver's files: only to the URIs.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa

from storage.directory import SegmentFile

from .arrow_rows import arrow_schema
from .hadoop_fs import HadoopFiles, RemoteInput
from .parse import DEFAULT_CHUNK_ENTRIES
from .source import FORMAT_NAME, spark_schema
from .uris import Location
from .vector_parse import segment_batches

__all__ = ["load_inputs", "read_failure", "read_segments", "render_report"]


def read_segments(
    spark: Any,
    inputs: Sequence[RemoteInput],
    strict: bool,
    chunk_entries: int = DEFAULT_CHUNK_ENTRIES,
) -> Any:
    """The ``kcoord-log`` DataFrame of the segments of ``inputs`` (listed on the driver),
    their bytes read by ``binaryFile``."""
    by_path: dict[str, SegmentFile] = {}
    for remote in inputs:
        by_path.update(zip(remote.qualified, remote.segments, strict=True))

    schema = arrow_schema()

    def decode(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            contents = batch.column("content")
            for i, path in enumerate(batch.column("path").to_pylist()):
                seg = by_path.get(path)
                if seg is None:  # Spark named the file differently from its listing
                    raise KeyError(f"kcoord-log: {path} was not listed as a segment")
                data = contents[i].as_py()
                yield from segment_batches(
                    seg, schema, strict=strict, chunk_entries=chunk_entries, data=data
                )

    files = spark.read.format("binaryFile").load(sorted(by_path))
    return files.select("path", "content").mapInArrow(decode, spark_schema())


def load_inputs(
    spark: Any, local: Sequence[str], remote: Sequence[RemoteInput], strict: bool
) -> Any:
    """One DataFrame of every input: local directories through the ``kcoord-log`` Data
    Source, URI inputs through :func:`read_segments`."""
    frames = []
    if local:
        frames.append(
            spark.read.format(FORMAT_NAME)
            .option("strict", "true" if strict else "false")
            .load(list(local))
        )
    if any(r.segments for r in remote):
        frames.append(read_segments(spark, remote, strict))
    if not frames:
        raise ValueError("no input holds a segment")
    out = frames[0]
    for frame in frames[1:]:
        out = out.unionByName(frame)
    return out


_FAILED_READ = re.compile(r"Encountered error while reading file (\S+?)\.?\s+(.*)")
_JAVA_READ = re.compile(
    r"((?:java\.io\.FileNotFoundException|org\.apache\.hadoop\.security\.AccessControlException"
    r"|java\.nio\.file\.AccessDeniedException|java\.io\.IOException)[^\n]*)"
)
_PYTHON_READ = re.compile(r"PipelineReadError: (.+)")


def read_failure(text: str) -> str | None:
    """What a failed read of the inputs says, when it failed because an input file could
    not be read (not because it is corrupt): the file and the reason; None otherwise."""
    found = _PYTHON_READ.findall(text)
    if found:
        return str(found[-1]).strip()
    failed = _FAILED_READ.search(text)
    cause = _JAVA_READ.findall(text)
    if failed is None and not cause:
        return None
    reason = str(cause[-1]).strip() if cause else failed.group(2).strip() if failed else ""
    if failed is not None:
        return f"cannot read {failed.group(1)}: {reason}"
    return f"cannot read an input file: {reason}"


def render_report(files: HadoopFiles, output: Location, render: Any) -> dict[str, str]:
    """Run ``render(directory)`` (which writes the report files and returns name -> path)
    in a local temporary directory and copy what it wrote to ``output`` with the Hadoop
    filesystem; returns name -> URI."""
    written: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="kcoord-report-") as tmp:
        made: dict[str, str] = render(tmp)
        for name, path in made.items():
            relative = os.path.relpath(path, tmp).replace(os.sep, "/")
            target = output.join(relative)
            with open(path, "rb") as f:
                files.write_bytes(target, f.read())
            written[name] = target
    return written
