"""What ``kcoord serve`` checks before anything binds, so that ``kcoord listening`` is
never printed for a server that cannot start: the data directory (creatable, writable, not
locked by another kcoord), the control port (not a broker's Kafka port, free). Imports
nothing heavy: the CLI runs these before trio or the codecs load.
"""

from __future__ import annotations

import os

__all__ = ["StartupCheckError", "check_control_port", "check_data_dir", "check_unlocked",
           "port_problem"]


class StartupCheckError(Exception):
    """A start-up check failed: one line saying which flag and why (exit status 2)."""


def check_control_port(control: int | None, port: int, brokers: int) -> None:
    """The control port may not be one of the brokers' Kafka ports (``--port`` and, with
    ``--brokers N``, the N - 1 after it)."""
    if not control or not port:
        return
    if port <= control < port + brokers:
        flag = f" --brokers {brokers}" if brokers > 1 else ""
        raise StartupCheckError(f"--control-port {control} is broker {control - port}'s "
                                f"Kafka port (--port {port}{flag}); choose another port")


def check_data_dir(path: str) -> None:
    """The data directory must be a directory kcoord can create and write, and no other
    kcoord may hold its lock (checked before anything binds)."""
    if os.path.exists(path):
        if not os.path.isdir(path):
            raise StartupCheckError(f"--data-dir {path}: not a directory")
        if not os.access(path, os.W_OK | os.X_OK):
            raise StartupCheckError(f"--data-dir {path}: not writable")
    else:
        parent = os.path.dirname(os.path.abspath(path))
        while not os.path.exists(parent):
            parent = os.path.dirname(parent)
        if not os.path.isdir(parent) or not os.access(parent, os.W_OK | os.X_OK):
            raise StartupCheckError(f"--data-dir {path}: cannot be created in {parent}")
        try:  # os.access says yes to root where mkdir still fails (/proc, a read-only mount)
            os.makedirs(path, exist_ok=True)
            _fsync_dir(os.path.dirname(os.path.abspath(path)))
        except OSError as exc:
            raise StartupCheckError(f"--data-dir {path}: cannot be created: "
                              f"{exc.strerror or exc}") from None
    check_unlocked(path)


def _fsync_dir(path: str) -> None:
    """Make a new directory's entry durable (the log would have, had it created it)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def check_unlocked(path: str) -> None:
    """UsageError when another kcoord holds the data directory's lock (the log takes the
    lock itself once the server listens; this only looks)."""
    import fcntl

    from storage.directory import LOCK_NAME

    lock_path = os.path.join(path, LOCK_NAME)
    try:
        fd = os.open(lock_path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return
    except OSError as exc:
        raise StartupCheckError(f"--data-dir {path}: cannot open {lock_path}: "
                          f"{exc.strerror or exc}") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 32).decode("ascii", "replace").strip()
            pid = f" (pid {holder})" if holder.isdigit() else ""
            raise StartupCheckError(f"--data-dir {path}: in use by another kcoord{pid}; stop it or "
                              "choose another --data-dir") from None
        fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def port_problem(host: str, port: int) -> str | None:
    """Why ``host:port`` cannot be listened on (checked before anything else binds, so a
    busy --control-port is named as such), or None."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            return str(exc)
    return None
