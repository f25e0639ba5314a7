"""Class-data sharing for the driver JVM: Spark's classes mapped from an archive instead
of loaded, verified and linked one by one at every start.

Java 17's dynamic AppCDS: a first run started with ``-XX:ArchiveClassesAtExit=FILE``
writes every class it loaded (the JDK's and Spark's jars') to FILE when the JVM exits;
later runs started with ``-XX:SharedArchiveFile=FILE`` map them. On this project's 2-core
machine that takes about 40 % off the JVM's start and the first session build. Writing
the archive (≈ 190 MB) costs the first run once: it waits for the JVM's dump at exit
(about a minute on a loaded 2-core machine).

The archive is the user's to choose: **off unless asked for** (it is ≈ 190 MB, and
writing it makes the first run's exit wait for the JVM's dump: about 20 s, up to a
minute on a loaded 2-core machine). ``kcoord pipeline --class-cache DIR`` or
``KCOORD_SPARK_CDS=DIR`` keeps it in DIR; ``KCOORD_SPARK_CDS=1`` in the per-user cache
directory (``$XDG_CACHE_HOME/kcoord/spark-cds``, ``~/.cache/...`` by default); unset or
``0``: none. The archive's path and size are printed when it is written and when a run
maps it. It is named by what it depends on (the PySpark version, the ``java`` binary and
its module image, Spark's jars directory), so an upgrade picks a new name (and the old
one is deleted). It is written under a temporary name and renamed into place only after
the JVM that wrote it exited cleanly (:func:`finish_archive`, at this process's exit),
so a reader never maps a half-written file. Whatever goes wrong, the JVM runs without
sharing: a missing archive is made, one the JVM rejects (stale jars, another classpath)
is ignored by the JVM itself, and an unwritable directory means no archive. The JVM's CDS
messages (warnings, on stdout otherwise) are switched off.
"""

from __future__ import annotations

import atexit
import contextlib
import glob
import hashlib
import os
import shutil
import subprocess
import sys
from typing import Any

__all__ = ["CDS_ENV", "archive_options", "archive_size_text", "cache_dir", "chosen_dir",
           "finish_archive", "java_binary"]

#: Environment variable: a directory for the archive, "1" for :func:`cache_dir`; unset or
#: "0": no archive (neither used nor made).
CDS_ENV = "KCOORD_SPARK_CDS"
#: The JVM's class-data-sharing log lines (warnings about classes it cannot archive, or
#: an archive it cannot use) are not for the user.
_QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off -Xlog:class+path=off"
#: How long this process waits at exit for the JVM writing a new archive.
DUMP_WAIT_S = 300.0

_pending: list[tuple[str, str]] = []  # (temporary file, final file) of this process


def cache_dir() -> str:
    """The per-user directory of the archives (``KCOORD_SPARK_CDS=1``)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "kcoord", "spark-cds")


def chosen_dir(directory: str | None = None) -> str | None:
    """Where the user asked for the archive: ``directory`` (``--class-cache``), else
    :data:`CDS_ENV`'s directory (``1``: :func:`cache_dir`); None: no archive."""
    if directory:
        return os.path.abspath(directory)
    value = os.environ.get(CDS_ENV, "").strip()
    if value in ("", "0"):
        return None
    return cache_dir() if value == "1" else os.path.abspath(value)


def archive_size_text(path: str) -> str:
    """``path``'s size, readable (``190 MB``)."""
    try:
        return f"{os.path.getsize(path) / 1e6:.0f} MB"
    except OSError:
        return "size unknown"


def java_binary() -> str | None:
    """The ``java`` Spark's launcher runs (``$JAVA_HOME/bin/java`` if ``JAVA_HOME`` is set,
    else the first on ``PATH``), resolved; None if there is none."""
    home = os.environ.get("JAVA_HOME")
    java = os.path.join(home, "bin", "java") if home else shutil.which("java")
    return os.path.realpath(java) if java and os.path.exists(java) else None


def _archive_name() -> str | None:
    """The archive's file name for this PySpark and this Java; None if unknown."""
    import pyspark

    java = java_binary()
    if java is None:
        return None
    jdk = os.path.dirname(os.path.dirname(java))
    jars = os.path.join(os.path.dirname(os.path.abspath(pyspark.__file__)), "jars")
    key = hashlib.sha256()
    key.update(pyspark.__version__.encode())
    for path in (java, os.path.join(jdk, "lib", "modules"), jars):
        try:
            stat = os.stat(path)
        except OSError:
            return None
        key.update(f"\0{path}\0{stat.st_size}\0{stat.st_mtime_ns}".encode())
    return f"spark-{pyspark.__version__}-{key.hexdigest()[:16]}.jsa"


def archive_options(directory: str | None = None, say: Any = None) -> str:
    """The driver JVM's options: use the archive in the chosen directory
    (:func:`chosen_dir`) if there is one, else make it (at exit); "" when none was asked
    for or none can be made. ``say``: called with a line naming the archive used."""
    directory = chosen_dir(directory)
    if directory is None:
        return ""
    name = _archive_name()
    if name is None:
        return ""
    archive = os.path.join(directory, name)
    if os.path.isfile(archive):
        if say is not None:
            say(f"JVM class cache {archive} ({archive_size_text(archive)})")
        return f"-XX:SharedArchiveFile={archive} {_QUIET}"
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError:
        return ""
    if not os.access(directory, os.W_OK | os.X_OK):
        return ""
    _remove_dead_temporaries(directory)
    temporary = f"{archive}.{os.getpid()}.tmp"
    _pending.append((temporary, archive))
    return f"-XX:ArchiveClassesAtExit={temporary} {_QUIET}"


def finish_archive(proc: Any, timeout: float = DUMP_WAIT_S) -> None:
    """If this process started a JVM that writes an archive: end the JVM (it exits when
    its stdin closes, as when Python exits), wait for it, and move the archive into
    place if the JVM exited cleanly; a failed or unfinished one is deleted. Registered
    at exit by :func:`register_finish`."""
    if not _pending:
        return
    temporary, archive = _pending.pop()
    clean = False
    if proc is not None:
        with contextlib.suppress(OSError, ValueError):
            print(f"kcoord pipeline: saving Spark's classes for faster starts to "
                  f"{archive} (once, about 20 s to a minute)", file=sys.stderr, flush=True)
        with contextlib.suppress(OSError, ValueError):
            if proc.stdin is not None:
                proc.stdin.close()
        try:
            clean = proc.wait(timeout=timeout) == 0
        except subprocess.TimeoutExpired:
            clean = False
    try:
        if clean and os.path.getsize(temporary) > 0:
            os.replace(temporary, archive)
            _remove_others(archive)
            with contextlib.suppress(OSError, ValueError):
                print(f"kcoord pipeline: JVM class cache {archive} "
                      f"({archive_size_text(archive)})", file=sys.stderr, flush=True)
            return
    except OSError:
        pass
    with contextlib.suppress(OSError):
        os.remove(temporary)


def _remove_dead_temporaries(directory: str) -> None:
    """Delete the half-written archives of processes that died writing them (the pid is
    in the name)."""
    for temporary in glob.glob(os.path.join(directory, "spark-*.jsa.*.tmp")):
        try:
            pid = int(temporary.rsplit(".", 2)[1])
        except ValueError:
            continue
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            with contextlib.suppress(OSError):
                os.remove(temporary)
        except OSError:  # alive (another user's, say)
            continue


def _remove_others(archive: str) -> None:
    """Delete the archives of other PySpark or Java versions."""
    for other in glob.glob(os.path.join(os.path.dirname(archive), "spark-*.jsa")):
        if other != archive:
            with contextlib.suppress(OSError):
                os.remove(other)


def register_finish(gateway: Any) -> None:
    """At this process's exit, finish the archive the JVM behind ``gateway`` writes (if
    it writes one)."""
    if _pending:
        atexit.register(finish_archive, getattr(gateway, "proc", None))
