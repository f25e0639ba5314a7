"""What ``kcoord pipeline`` checks before it starts Spark, each failure one line (exit 2):
the ``pipeline`` extra is installed, there is a ``java`` to run, and a ``spark://`` master
answers. No Spark (nor pyarrow) is imported here.
"""

from __future__ import annotations

import importlib.util
import socket

from .jvm_cds import java_binary

__all__ = ["EXTRA_MODULES", "master_addresses", "missing_requirement", "unreachable_master"]

#: What the ``pipeline`` extra installs (import names).
EXTRA_MODULES = ("pyspark", "pyarrow", "pandas", "matplotlib")
#: How long to wait for a master's port to accept a connection.
MASTER_CONNECT_TIMEOUT_S = 5.0


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a module blocked (sys.modules[name] = None)
        return False


def missing_requirement() -> str | None:
    """Why the pipeline cannot run here (a module of the extra, or Java, missing), or
    None."""
    missing = [m for m in EXTRA_MODULES if not _installed(m)]
    if missing:
        return (f"the pipeline needs its extra: pip install 'kcoord[pipeline]' "
                f"(missing: {', '.join(missing)}); and Java 17")
    if java_binary() is None:
        return ("the pipeline needs Java 17: no java in $JAVA_HOME/bin or on PATH "
                "(install a JDK or JRE 17, e.g. apt-get install openjdk-17-jre-headless)")
    return None


def master_addresses(master: str) -> list[tuple[str, int]]:
    """The (host, port) pairs of a standalone master URL (``spark://h1:7077,h2:7077``);
    [] for any other master."""
    if not master.startswith("spark://"):
        return []
    out = []
    for part in master[len("spark://"):].split(","):
        host, _, port = part.strip().rpartition(":")
        if host and port.isdigit():
            out.append((host.strip("[]"), int(port)))
    return out


def unreachable_master(master: str, timeout: float = MASTER_CONNECT_TIMEOUT_S) -> str | None:
    """For a standalone master no address of which accepts a connection: the line
    saying so (Spark itself would retry for a minute and then blame its own shutdown);
    None otherwise (or for another kind of master)."""
    addresses = master_addresses(master)
    reasons = []
    for host, port in addresses:
        try:
            socket.create_connection((host, port), timeout=timeout).close()
            return None
        except OSError as exc:
            reasons.append(f"{host}:{port}: {exc.strerror or exc}")
    if not addresses:
        return None
    return f"the Spark master {master} is unreachable ({'; '.join(reasons)})"
