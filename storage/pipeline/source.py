"""The ``kcoord-log`` PySpark Python Data Source: kcoord data directories as a DataFrame.

    from storage.pipeline.source import register
    register(spark)
    df = spark.read.format("kcoord-log").load(["/data/a", "/data/b"])   # or "a,b"
    df = spark.read.format("kcoord-log").option("strict", "true").load("/data/a")

Input partitions are segment files, small ones packed together (up to the option
``maxPartitionBytes``, default 4 MiB or an eighth of the input, whichever is more); each
task parses its segments with :mod:`storage.pipeline.vector_parse` (numpy over the entry
layout for offset commits, storage's codec for the rest) and yields
``pyarrow.RecordBatch`` es of at most ``chunkEntries`` entries (default 262144). The schema
is :data:`storage.pipeline.columns.COLUMNS`. Torn tails and (without ``strict``) corrupt
files show up as rows with ``record_type`` ``torn_tail`` / ``corrupt`` naming the file
and byte offset; with ``strict`` a corrupt file fails the job.

Options: ``path`` / ``paths`` (set by ``load``), ``strict`` (default false),
``chunkEntries``, ``maxPartitionBytes``. A schema given to the reader
(:func:`pruned_schema`) selects columns: only those are built and shipped to the JVM.
"""

from __future__ import annotations

import gc
import json
import os
from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.types import StructType

from storage.directory import SegmentFile, find_segments

from .arrow_rows import arrow_schema, chunk_batches, spark_schema, to_record_batch
from .parse import DEFAULT_CHUNK_ENTRIES
from .vector_parse import segment_batches

__all__ = [
    "FORMAT_NAME",
    "KcoordLogDataSource",
    "arrow_schema",
    "chunk_batches",
    "freeze_worker_heap",
    "pack_segments",
    "pruned_schema",
    "reader_schema",
    "register",
    "spark_schema",
    "split_paths",
    "to_record_batch",
]

FORMAT_NAME = "kcoord-log"

def split_paths(paths: str | Sequence[str]) -> list[str]:
    """Input directories from a comma-separated string, a JSON list or a list."""
    if isinstance(paths, str):
        text = paths.strip()
        if text.startswith("["):
            items = [str(p) for p in json.loads(text)]
        else:
            items = [text]
    else:
        items = [str(p) for p in paths]
    out: list[str] = []
    for item in items:
        out.extend(p.strip() for p in item.split(",") if p.strip())
    return out


#: Where :func:`freeze_worker_heap` froze the heap -> the pid of the process that did
#: (a forked child has another pid, so it freezes its own).
_FROZEN_AT: dict[str, int] = {}


def freeze_worker_heap(point: str) -> bool:
    """In a reused Spark Python worker (``SPARK_REUSE_WORKER`` set, Spark's default), move
    every object alive now into the collector's permanent generation, the first time
    the process reaches ``point``: before the first read, the modules the worker imported
    (pyspark, pyarrow, numpy, kcoord's); after it, those the parse imported lazily
    (``pyarrow.compute``, pandas through ``pyarrow.pandas_compat``). After each task the
    worker's loop (``pyspark.daemon``) runs a full ``gc.collect()`` that otherwise walks
    ≈ 94k such objects, ≈ 40 ms of CPU per task, and the automatic full collections
    during a parse walk them too. Objects made later are collected as before (and
    frozen ones are still freed when their reference count drops). True if this call
    froze the heap."""
    if not os.environ.get("SPARK_REUSE_WORKER") or _FROZEN_AT.get(point) == os.getpid():
        return False
    _FROZEN_AT[point] = os.getpid()
    gc.freeze()
    return True


def _truthy(value: str | None) -> bool:
    return str(value).strip().lower() in ("1", "true", "yes", "on")


class KcoordLogDataSource(DataSource):
    """``spark.read.format("kcoord-log").load(paths)``."""

    def __init__(self, options: dict[str, str]) -> None:
        # Spark makes the instance in its create_data_source worker (reused per job).
        freeze_worker_heap("create")
        super().__init__(options)

    @classmethod
    def name(cls) -> str:
        return FORMAT_NAME

    def schema(self) -> StructType:
        freeze_worker_heap("schema")
        return spark_schema()

    def reader(self, schema: StructType) -> KcoordLogReader:
        freeze_worker_heap("reader")
        options = self.options
        raw: list[str] = []
        if options.get("paths"):
            raw += split_paths(options["paths"])
        if options.get("path"):
            raw += split_paths(options["path"])
        if not raw:
            raise ValueError("kcoord-log: no input: load(path) or load([paths])")
        chunk = int(options.get("chunkEntries", DEFAULT_CHUNK_ENTRIES))
        if chunk < 1:
            raise ValueError(f"kcoord-log: chunkEntries must be positive, not {chunk}")
        pack = options.get("maxPartitionBytes")
        if pack is not None and int(pack) < 1:
            raise ValueError(f"kcoord-log: maxPartitionBytes must be positive, not {pack}")
        columns, nullable = _projection(schema)
        return KcoordLogReader(raw, _truthy(options.get("strict")), chunk, columns,
                               None if pack is None else int(pack), nullable)


class SegmentPartition(InputPartition):
    """Segment files to read in one task (consecutive ones of one or more directories)."""

    def __init__(self, segments: list[SegmentFile]) -> None:
        super().__init__(segments[0].path)
        self.segments = segments


#: Small segments are packed into one partition up to this many bytes, or an eighth of
#: the input if that is more (so a large input still makes several tasks).
PACK_BYTES = 4 * 1024 * 1024


def pack_segments(
    segments: list[SegmentFile], max_bytes: int | None = None
) -> list[list[SegmentFile]]:
    """Consecutive segments grouped into partitions of at most ``max_bytes`` of files
    (default: :data:`PACK_BYTES` or an eighth of the total, whichever is more); a larger
    segment is a partition of its own. A file that cannot be sized counts 0 (reading it
    reports it)."""
    sizes = []
    for seg in segments:
        try:
            sizes.append(os.path.getsize(seg.path))
        except OSError:
            sizes.append(0)
    if max_bytes is None:
        max_bytes = max(PACK_BYTES, -(-sum(sizes) // 8))
    groups: list[list[SegmentFile]] = []
    held = 0
    for seg, size in zip(segments, sizes, strict=True):
        if groups and held + size <= max_bytes:
            groups[-1].append(seg)
            held += size
        else:
            groups.append([seg])
            held = size
    return groups


class KcoordLogReader(DataSourceReader):
    """Plans the segment files of every input directory as partitions: small ones packed
    together (:func:`pack_segments`), each large one alone."""

    def __init__(self, paths: list[str], strict: bool, chunk_entries: int,
                 columns: list[str] | None = None, max_partition_bytes: int | None = None,
                 nullable: Sequence[str] = ()) -> None:
        self.paths = paths
        self.strict = strict
        self.chunk_entries = chunk_entries
        #: the columns to yield (a schema given to the reader), None for all
        self.columns = columns
        self.max_partition_bytes = max_partition_bytes
        #: non-nullable columns the given schema declares nullable (they are shipped so)
        self.nullable = tuple(nullable)

    def partitions(self) -> list[SegmentPartition]:
        segments: list[SegmentFile] = []
        seen: set[str] = set()
        for path in self.paths:
            directory = os.path.abspath(path)
            if directory in seen:
                continue
            seen.add(directory)
            if not os.path.isdir(directory):
                raise FileNotFoundError(f"kcoord-log: no such data directory: {path}")
            segments.extend(find_segments(directory))
        return [SegmentPartition(group)
                for group in pack_segments(segments, self.max_partition_bytes)]

    def read(self, partition: Any) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, SegmentPartition):
            # No segment at all: Spark still runs one task with InputPartition(None).
            return
        freeze_worker_heap("read")
        schema = reader_schema(self.columns, self.nullable)
        for seg in partition.segments:
            yield from segment_batches(
                seg, schema, strict=self.strict, chunk_entries=self.chunk_entries
            )
        freeze_worker_heap("after read")


def reader_schema(
    columns: Sequence[str] | None = None, nullable: Sequence[str] = ()
) -> pa.Schema:
    """The Arrow schema the reader yields: every column, or ``columns`` in that order;
    the columns in ``nullable`` declared nullable even where the data source's schema
    says they are not (as a schema given to the reader may declare them)."""
    full = arrow_schema()
    if columns is None and not nullable:
        return full
    return pa.schema([
        full.field(name).with_nullable(True) if name in nullable else full.field(name)
        for name in (full.names if columns is None else columns)
    ])


def pruned_schema(columns: Sequence[str]) -> StructType:
    """The schema of just ``columns`` (in the schema's order): given to the reader,
    ``spark.read.format("kcoord-log").schema(pruned_schema([...]))``, only those columns
    are shipped to the JVM (Spark does not prune a Python Data Source's columns itself)."""
    wanted = set(columns)
    unknown = wanted - {f.name for f in spark_schema().fields}
    if unknown:
        raise ValueError(f"kcoord-log: no such column(s): {', '.join(sorted(unknown))}")
    return StructType([f for f in spark_schema().fields if f.name in wanted])


def _projection(schema: StructType) -> tuple[list[str] | None, list[str]]:
    """The columns of a schema given to the reader (None: the whole schema) and those of
    them it declares nullable though the data source's schema does not (they are then
    shipped as nullable: Spark requires the batches' Arrow fields to be the schema's);
    ValueError for a column that is not the Data Source's, has another type, or is
    declared non-nullable where rows can hold null."""
    full = {f.name: f for f in spark_schema().fields}
    names = [f.name for f in schema.fields]
    looser: list[str] = []
    for f in schema.fields:
        ours = full.get(f.name)
        if ours is None or ours.dataType != f.dataType:
            raise ValueError(
                f"kcoord-log: column {f.name} {f.dataType.simpleString()} is not in the "
                "schema (see storage.pipeline.columns.COLUMNS)"
            )
        if ours.nullable and not f.nullable:
            raise ValueError(
                f"kcoord-log: column {f.name} can be null (declare it nullable)"
            )
        if f.nullable and not ours.nullable:
            looser.append(f.name)
    return (None if names == list(full) else names), looser


def register(spark: Any) -> None:
    """Register the ``kcoord-log`` format with ``spark`` (idempotent)."""
    spark.dataSource.register(KcoordLogDataSource)
