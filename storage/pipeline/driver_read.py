"""Small inputs read on the driver: the same parser (:mod:`.vector_parse`) and Arrow
batches as the ``kcoord-log`` Data Source, handed to Spark as one Arrow table
(``SparkSession.createDataFrame``).

Spark's Python workers start on a Data Source's first task (seconds on a loaded machine,
the largest part of a cold run on a small input after the JVM itself); a few MiB of log
parse on the driver faster than that. Above :data:`.sizing.SMALL_INPUT_BYTES` of segment
files the pipeline reads through the Data Source (one task per segment), on any master.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from typing import Any

from storage.directory import find_segments

from .arrow_rows import arrow_schema, spark_schema
from .vector_parse import segment_batches

__all__ = ["GROUP_SCHEMA", "driver_frame", "driver_table", "segment_bytes"]


def segment_bytes(inputs: Sequence[str]) -> int:
    """Total size of the inputs' segment files (one that cannot be read counts 0: reading
    it reports it, naming it)."""
    total = 0
    for d in inputs:
        for seg in find_segments(d):
            with contextlib.suppress(OSError):
                total += os.path.getsize(seg.path)
    return total


def driver_frame(spark: Any, inputs: Sequence[str], strict: bool) -> Any:
    """The inputs as the Data Source's DataFrame, parsed here (PipelineInputError for a
    corrupt input with ``strict``)."""
    import pyarrow as pa

    schema = arrow_schema()
    batches: list[pa.RecordBatch] = []
    seen: set[str] = set()
    for path in inputs:
        directory = os.path.abspath(path)
        if directory in seen:
            continue
        seen.add(directory)
        for seg in find_segments(directory):
            batches.extend(segment_batches(seg, schema, strict=strict))
    table = pa.Table.from_batches(batches, schema=schema)
    return spark.createDataFrame(table, schema=spark_schema())


#: (data_dir, group) pairs, as :func:`driver_table` takes them.
GROUP_SCHEMA = (("data_dir", "string"), ("group", "string"))
_ARROW_TYPES = {"string": "string", "int": "int32", "bigint": "int64"}


def driver_table(
    spark: Any, rows: Sequence[tuple[Any, ...]], columns: Sequence[tuple[str, str]]
) -> Any:
    """A small DataFrame of ``rows`` (``columns``: (name, Spark type) with the types
    string, int, bigint; every column nullable), handed to Spark as Arrow: from a list of
    tuples Spark would start a Python worker just to unpickle them."""
    import pyarrow as pa

    schema = pa.schema([(name, getattr(pa, _ARROW_TYPES[kind])()) for name, kind in columns])
    data = [pa.array([row[i] for row in rows], type=field.type)
            for i, field in enumerate(schema)]
    return spark.createDataFrame(pa.Table.from_arrays(data, schema=schema))
