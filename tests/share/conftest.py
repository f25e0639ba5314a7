"""Make the repository root importable when pytest is run without installing kcoord."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

_ROOT = str(Path(__file__).resolve().parents[2])
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

from share_server import ServerProcess, server_process  # noqa: E402


@pytest.fixture
def killable_server(tmp_path: Path) -> Iterator[ServerProcess]:
    """A ``kcoord serve`` process with topic ``t`` (1 partition), for the SIGKILL tests."""
    yield from server_process(tmp_path / "data")
