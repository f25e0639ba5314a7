"""The ``kcoord-log`` schema as Spark and Arrow types, and parsed chunks
(:class:`storage.pipeline.chunk.Chunk`) as Arrow record batches of it."""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
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

from .chunk import Chunk
from .columns import COLUMNS, MEMBER_FIELDS, NOT_NULL, OFFSET_COMMIT, Columns

__all__ = ["arrow_schema", "chunk_batches", "spark_schema", "to_record_batch"]

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
    """The Data Source's schema as a Spark StructType (no JVM needed): the columns of
    :data:`.columns.NOT_NULL` are not nullable, the others are."""
    fields = []
    for name, kind in COLUMNS:
        dtype = ArrayType(_MEMBER) if name == "members" else _SPARK_TYPES[kind]
        fields.append(StructField(name, dtype, nullable=name not in NOT_NULL))
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
            [pa.field(f.name, _arrow_type(f.dataType), nullable=f.nullable)
             for f in spark_schema().fields]
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
