"""Shared fixtures for the storage tests."""

from __future__ import annotations

import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:  # the repo root, so `import storage` works without an install
    sys.path.insert(0, ROOT)


@pytest.fixture
def data_dir(tmp_path: object) -> str:
    """A fresh, not yet existing data directory."""
    return os.path.join(str(tmp_path), "data")
