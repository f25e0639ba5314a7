"""A real ``kcoord serve`` process for the server tests, started as users start it
(``python -m coordinator serve --port 0``), its log in a file."""

from __future__ import annotations

import os
import select
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import wire


@contextmanager
def kcoord_serve(args: Sequence[str], stderr_path: Path, python_flags: Sequence[str] = (),
                 ) -> Iterator[tuple[subprocess.Popen[str], int]]:
    """The process and the port it listens on (from its "listening" line); terminated on
    exit if it still runs."""
    env = {**os.environ, "PYTHONPATH": str(Path(wire.__file__).resolve().parents[1])}
    argv = [sys.executable, *python_flags, "-m", "coordinator", "serve", "--port", "0", *args]
    with open(stderr_path, "w+") as stderr:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=stderr, env=env, text=True)
        try:
            assert proc.stdout is not None
            ready, _, _ = select.select([proc.stdout], [], [], 60)
            assert ready, "the server printed no listening line within 60 s"
            line = proc.stdout.readline()  # "kcoord listening on HOST:PORT"
            yield proc, int(line.rsplit(":", 1)[1])
        finally:
            if proc.poll() is None:
                proc.terminate()
                proc.wait(timeout=30)
            if proc.stdout is not None:
                proc.stdout.close()
