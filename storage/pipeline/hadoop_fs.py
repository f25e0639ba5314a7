"""The pipeline's filesystem layer for URIs: Hadoop's FileSystem API through Spark's JVM.

The driver resolves, checks and lists every URI input and the ``--output`` URI with the
Hadoop configuration of the running session (``spark.hadoop.*`` settings included), so any
filesystem the cluster is configured for works (``file``, ``hdfs``, ``s3a`` with
hadoop-aws, ``abfs`` with hadoop-azure, ...). A scheme Spark has no filesystem for, an
unreachable one, a missing input: :class:`PipelineLocationError`, one line, before any
work. Report files are written with ``FileSystem.create``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from storage.directory import SegmentFile, select_segments

from .uris import Location

__all__ = [
    "CONNECTOR_HINTS",
    "HadoopFiles",
    "PipelineLocationError",
    "RemoteInput",
    "java_error_text",
    "open_locations",
]

#: scheme -> the Hadoop module that provides its filesystem (for the error's hint)
CONNECTOR_HINTS = {
    "s3a": "hadoop-aws",
    "abfs": "hadoop-azure",
    "abfss": "hadoop-azure",
    "wasb": "hadoop-azure",
    "wasbs": "hadoop-azure",
    "gs": "gcs-connector",
    "oss": "hadoop-aliyun",
}


class PipelineLocationError(Exception):
    """An input or output the pipeline cannot use (exit status 2): one line naming it."""


def java_error_text(exc: BaseException) -> str:
    """``SimpleClassName: message`` of a JVM exception raised through Py4J (its first
    line), else the first line of ``exc``."""
    java = getattr(exc, "java_exception", None)
    if java is not None:
        try:
            name = str(java.getClass().getSimpleName())
            message = str(java.getMessage() or "").strip().splitlines()
            return f"{name}: {message[0]}" if message else name
        except Exception:  # the gateway is gone
            pass
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return lines[0] if lines else type(exc).__name__


@dataclass
class RemoteInput:
    """A URI input: its location, its segments and each segment's qualified path (the
    ``path`` Spark's ``binaryFile`` source reports) and size in bytes."""

    location: Location
    segments: list[SegmentFile] = field(default_factory=list)
    qualified: list[str] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)


class HadoopFiles:
    """Hadoop filesystems of a running SparkSession (driver side only)."""

    def __init__(self, spark: Any) -> None:
        self._jvm = spark._jvm
        self._conf = spark._jsparkSession.sessionState().newHadoopConf()

    def _path(self, text: str) -> Any:
        return self._jvm.org.apache.hadoop.fs.Path(text)

    def filesystem(self, text: str) -> Any:
        """The Hadoop FileSystem of ``text``; PipelineLocationError when Spark has none for
        its scheme or cannot reach it."""
        try:
            return self._path(text).getFileSystem(self._conf)
        except Exception as exc:
            detail = java_error_text(exc)
            missing_class = "ClassNotFoundException" in detail and "FileSystem" in detail
            if "No FileSystem for scheme" in detail or missing_class:
                scheme = text.partition(":")[0].lower()
                module = CONNECTOR_HINTS.get(scheme)
                hint = (
                    f"; {scheme}:// needs {module} on Spark's classpath, e.g. --conf "
                    f"spark.jars.packages=org.apache.hadoop:{module}:{self.hadoop_version()}"
                    if module and module.startswith("hadoop-")
                    else f"; add the {module} jar to Spark's classpath" if module
                    else ""
                )
                raise PipelineLocationError(
                    f"{text}: Spark has no filesystem for scheme {scheme!r}{hint}"
                ) from None
            raise PipelineLocationError(f"{text}: cannot reach its filesystem: {detail}") from None

    def hadoop_version(self) -> str:
        return str(self._jvm.org.apache.hadoop.util.VersionInfo.getVersion())

    def qualified(self, text: str) -> str:
        """``text`` as the filesystem names it (``file:/data/a``, ``hdfs://nn:8020/a``)."""
        fs = self.filesystem(text)
        return str(fs.makeQualified(self._path(text)).toString())

    def _status(self, text: str) -> Any:
        """The FileStatus of ``text``, None if it does not exist."""
        fs = self.filesystem(text)
        try:
            return fs.getFileStatus(self._path(text))
        except Exception as exc:
            detail = java_error_text(exc)
            if detail.startswith("FileNotFoundException"):
                return None
            raise PipelineLocationError(f"cannot read {text}: {detail}") from None

    def open_input(self, loc: Location) -> RemoteInput:
        """Check that ``loc`` is a directory and list its segments (PipelineLocationError:
        missing, not a directory, unreadable)."""
        status = self._status(loc.text)
        if status is None:
            raise PipelineLocationError(f"input {loc} does not exist")
        if not status.isDirectory():
            raise PipelineLocationError(f"input {loc} is not a directory")
        fs = self.filesystem(loc.text)
        try:
            listing = fs.listStatus(self._path(loc.text))
        except Exception as exc:
            raise PipelineLocationError(
                f"cannot read input {loc}: {java_error_text(exc)}"
            ) from None
        by_name = {
            str(st.getPath().getName()): (str(st.getPath().toString()), int(st.getLen()))
            for st in listing
            if not st.isDirectory()
        }
        segments = select_segments(loc.text, sorted(by_name))
        return RemoteInput(loc, segments, [by_name[s.name][0] for s in segments],
                           [by_name[s.name][1] for s in segments])

    def prepare_output(self, loc: Location) -> None:
        """Create the output directory (PipelineLocationError if it is a file or cannot be
        created)."""
        status = self._status(loc.text)
        if status is not None and not status.isDirectory():
            raise PipelineLocationError(f"cannot create {loc}: it is a file")
        if status is None:
            try:
                made = self.filesystem(loc.text).mkdirs(self._path(loc.text))
            except Exception as exc:
                raise PipelineLocationError(
                    f"cannot create {loc}: {java_error_text(exc)}"
                ) from None
            if not made:
                raise PipelineLocationError(f"cannot create {loc}")

    def write_bytes(self, text: str, data: bytes) -> None:
        """Write ``data`` as the file ``text`` (replacing it)."""
        stream = self.filesystem(text).create(self._path(text), True)
        try:
            step = 1 << 20
            for start in range(0, len(data), step):
                stream.write(bytearray(data[start : start + step]))
        finally:
            stream.close()


def open_locations(
    files: HadoopFiles, remote: list[Location], local: list[str], output: Location
) -> list[RemoteInput]:
    """Check the output first (its filesystem must exist, it must not be inside an input),
    then list every URI input; create the output if it is a URI. PipelineLocationError
    (one line) for anything unusable, before any work."""
    out_q = files.qualified(output.text)
    inputs = [files.open_input(loc) for loc in remote]
    for text in [*local, *(str(loc) for loc in remote)]:
        in_q = files.qualified(text).rstrip("/")
        if out_q == in_q or out_q.startswith(in_q + "/"):
            raise PipelineLocationError("--output must not be inside an input")
    if output.uri:
        files.prepare_output(output)
    return inputs
