"""The ``kcoord-log`` PySpark Python Data Source: kcoord data directories as a DataFrame.

    from storage.pipeline.source import register
    register(spark)
    df = spark.read.format("kcoord-log").load(["/data/a", "/data/b"])   # or "a,b"
    df = spark.read.format("kcoord-log").option("strict", "true").load("/data/a")

One input partition per segment file; each task parses its segment with
:mod:`storage.pipeline.parse` (plain Python, the storage codec) and yields
``pyarrow.RecordBatch`` es of at most ``chunkEntries`` entries (default 65536). The
schema is :data:`storage.pipeline.parse.COLUMNS`. Torn tails and (without ``strict``)
corrupt files show up as rows with ``record_type`` ``torn_tail`` / ``corrupt`` naming
the file and byte offset; with ``strict`` a corrupt file fails the job.

Options: ``path`` / ``paths`` (set by ``load``), ``strict`` (default false),
``chunkEntries``. A schema given to the reader (:func:`pruned_schema`) selects columns:
only those are converted and shipped to the JVM.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DataType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from storage.directory import SegmentFile, find_segments

from .chunk import Chunk
from .columns import COLUMNS, MEMBER_FIELDS, OFFSET_COMMIT, Columns
from .parse import DEFAULT_CHUNK_ENTRIES, parse_segment_chunks

__all__ = [
    "FORMAT_NAME",
    "KcoordLogDataSource",
    "arrow_schema",
    "chunk_batches",
    "pruned_schema",
    "register",
    "spark_schema",
    "split_paths",
    "to_record_batch",
]

FORMAT_NAME = "kcoord-log"

_ASSIGNED = ArrayType(
    StructType([StructField("topic", StringType()), StructField("partition", IntegerType())])
)
_MEMBER = StructType(
    [
        StructField(name, {"string": StringType(), "int": IntegerType()}.get(kind, _ASSIGNED))
        for name, kind in MEMBER_FIELDS
    ]
)
_SPARK_TYPES: dict[str, DataType] = {
    "string": StringType(),
    "bigint": LongType(),
    "int": IntegerType(),
    "boolean": BooleanType(),
    "array<string>": ArrayType(StringType()),
}


def spark_schema() -> StructType:
    """The Data Source's schema as a Spark StructType (no JVM needed)."""
    fields = []
    for name, kind in COLUMNS:
        dtype = ArrayType(_MEMBER) if name == "members" else _SPARK_TYPES[kind]
        fields.append(StructField(name, dtype, nullable=True))
    return StructType(fields)


def _arrow_type(dtype: DataType) -> pa.DataType:
    if isinstance(dtype, StringType):
        return pa.string()
    if isinstance(dtype, LongType):
        return pa.int64()
    if isinstance(dtype, IntegerType):
        return pa.int32()
    if isinstance(dtype, BooleanType):
        return pa.bool_()
    if isinstance(dtype, ArrayType):
        return pa.list_(_arrow_type(dtype.elementType))
    if isinstance(dtype, StructType):
        return pa.struct([pa.field(f.name, _arrow_type(f.dataType)) for f in dtype.fields])
    raise TypeError(f"no Arrow type for {dtype}")  # pragma: no cover - schema is fixed


_ARROW_SCHEMA: pa.Schema | None = None


def arrow_schema() -> pa.Schema:
    """The schema as Arrow (what ``read`` yields)."""
    global _ARROW_SCHEMA
    if _ARROW_SCHEMA is None:
        _ARROW_SCHEMA = pa.schema(
            [pa.field(f.name, _arrow_type(f.dataType)) for f in spark_schema().fields]
        )
    return _ARROW_SCHEMA


def to_record_batch(cols: Columns) -> pa.RecordBatch:
    """One Columns dict (any subset of the schema) as an Arrow batch of the full schema."""
    schema = arrow_schema()
    n = len(cols["position"])
    arrays = []
    for field in schema:
        values = cols.get(field.name)
        if values is None:
            arrays.append(pa.nulls(n, field.type))
        else:
            arrays.append(pa.array(values, type=field.type))
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def _commit_batch(chunk: Chunk) -> pa.RecordBatch:
    """The chunk's offset commits as Arrow, without per-row Python lists for the constant
    and key columns (equal to ``to_record_batch(chunk.commit_columns())``)."""
    schema = arrow_schema()
    n = len(chunk.c_pos)
    keys = chunk.keys
    ids = pa.array(chunk.c_key, type=pa.int32())
    int64, int32, string = pa.int64(), pa.int32(), pa.string()
    commit_ts = pa.array(chunk.c_ts, type=int64)
    given = {
        "data_dir": pa.repeat(pa.scalar(chunk.seg.data_dir, string), n),
        "segment": pa.repeat(pa.scalar(chunk.seg.name, string), n),
        "position": pa.array(chunk.c_pos, type=int64),
        "log_index": pa.array(chunk.c_idx, type=int64),
        "record_type": pa.repeat(pa.scalar(OFFSET_COMMIT, string), n),
        "tombstone": pa.repeat(pa.scalar(False), n),
        "timestamp": commit_ts,
        "group": pa.array(keys.group, type=string).take(ids),
        "topic": pa.array(keys.topic, type=string).take(ids),
        "partition": pa.array(keys.partition, type=int32).take(ids),
        "offset": pa.array(chunk.c_off, type=int64),
        "leader_epoch": pa.array(chunk.c_epoch, type=int32),
        "metadata": (
            pa.array(chunk.metadata(), type=string)
            if chunk.c_meta
            else pa.repeat(pa.scalar("", string), n)
        ),
        "commit_timestamp": commit_ts,
        "expire_timestamp": (
            pa.array(chunk.expire_timestamps(), type=int64)
            if chunk.c_exp
            else pa.repeat(pa.scalar(-1, int64), n)
        ),
    }
    arrays = [given.get(f.name) or pa.nulls(n, f.type) for f in schema]
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def chunk_batches(chunk: Chunk) -> Iterator[pa.RecordBatch]:
    """A parsed chunk as Arrow record batches (one per record type present)."""
    if chunk.c_pos:
        yield _commit_batch(chunk)
    if chunk.t_pos:
        yield to_record_batch(chunk.tombstone_columns())
    if chunk.gm_rows:
        yield to_record_batch(chunk.group_metadata_columns())
    if chunk.ev_rows:
        yield to_record_batch(chunk.event_columns())
    if chunk.problems:
        yield to_record_batch(chunk.problem_columns())


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


def _truthy(value: str | None) -> bool:
    return str(value).strip().lower() in ("1", "true", "yes", "on")


class KcoordLogDataSource(DataSource):
    """``spark.read.format("kcoord-log").load(paths)``."""

    @classmethod
    def name(cls) -> str:
        return FORMAT_NAME

    def schema(self) -> StructType:
        return spark_schema()

    def reader(self, schema: StructType) -> KcoordLogReader:
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
        return KcoordLogReader(raw, _truthy(options.get("strict")), chunk,
                               _projection(schema))


class SegmentPartition(InputPartition):
    """One segment file to read."""

    def __init__(self, segment: SegmentFile) -> None:
        super().__init__(segment.path)
        self.segment = segment


class KcoordLogReader(DataSourceReader):
    """Plans one partition per segment file of every input directory."""

    def __init__(self, paths: list[str], strict: bool, chunk_entries: int,
                 columns: list[str] | None = None) -> None:
        self.paths = paths
        self.strict = strict
        self.chunk_entries = chunk_entries
        #: the columns to yield (a schema given to the reader), None for all
        self.columns = columns

    def partitions(self) -> list[SegmentPartition]:
        parts: list[SegmentPartition] = []
        seen: set[str] = set()
        for path in self.paths:
            directory = os.path.abspath(path)
            if directory in seen:
                continue
            seen.add(directory)
            if not os.path.isdir(directory):
                raise FileNotFoundError(f"kcoord-log: no such data directory: {path}")
            parts.extend(SegmentPartition(seg) for seg in find_segments(directory))
        return parts

    def read(self, partition: Any) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, SegmentPartition):
            # No segment at all: Spark still runs one task with InputPartition(None).
            return
        seg: SegmentFile = partition.segment
        for chunk in parse_segment_chunks(
            seg, strict=self.strict, chunk_entries=self.chunk_entries
        ):
            if self.columns is None:
                yield from chunk_batches(chunk)
            else:
                for batch in chunk_batches(chunk):
                    yield batch.select(self.columns)


def pruned_schema(columns: Sequence[str]) -> StructType:
    """The schema of just ``columns`` (in the schema's order): given to the reader,
    ``spark.read.format("kcoord-log").schema(pruned_schema([...]))``, only those columns
    are shipped to the JVM (Spark does not prune a Python Data Source's columns itself)."""
    wanted = set(columns)
    unknown = wanted - {f.name for f in spark_schema().fields}
    if unknown:
        raise ValueError(f"kcoord-log: no such column(s): {', '.join(sorted(unknown))}")
    return StructType([f for f in spark_schema().fields if f.name in wanted])


def _projection(schema: StructType) -> list[str] | None:
    """The columns of a schema given to the reader (None: the whole schema); ValueError
    for a column that is not the Data Source's or has another type."""
    full = {f.name: f.dataType for f in spark_schema().fields}
    names = [f.name for f in schema.fields]
    if names == list(full):
        return None
    for f in schema.fields:
        if full.get(f.name) != f.dataType:
            raise ValueError(
                f"kcoord-log: column {f.name} {f.dataType.simpleString()} is not in the "
                "schema (see storage.pipeline.columns.COLUMNS)"
            )
    return names


def register(spark: Any) -> None:
    """Register the ``kcoord-log`` format with ``spark`` (idempotent)."""
    spark.dataSource.register(KcoordLogDataSource)
